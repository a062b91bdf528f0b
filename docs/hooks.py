"""MkDocs hook: the reference pages generated from the declarations themselves.

A page holding a line ``<!-- generated: NAME -->`` gets that line replaced by the text
:data:`GENERATORS` makes for ``NAME``: every command's ``--help`` (from the parsers of
:mod:`agurk.cli`), every agent kind (from :data:`agents.registry.AGENTS`), and every rule
option and preset (from :mod:`agurk_env.rules`). Nothing is copied by hand, so the pages
cannot drift from the code.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

MARKER = re.compile(r"^<!-- generated: ([a-z]+) -->$", re.M)
HELP_WIDTH = "100"
"""Columns of the rendered ``--help`` texts (argparse reads ``COLUMNS``), so every build is the same."""


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommand parsers of ``parser``, by name, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command and nested subcommand below ``parser``, depth first, with its full name."""
    for name, child in _subcommands(parser).items():
        yield " ".join((*words, name)), child
        yield from _commands(child, (*words, name))


def _help_section(name: str, parser: argparse.ArgumentParser) -> str:
    """A heading and the parser's ``--help`` in a text block."""
    return f"## {name}\n\n```text\n{parser.format_help().strip()}\n```"


def cli_reference() -> str:
    """Each command's ``--help``, exactly as ``agurk COMMAND --help`` prints it."""
    from agurk.cli import build_parser

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        parser = build_parser()
        parts = [_help_section("agurk", parser)]
        parts += [_help_section(name, command) for name, command in _commands(parser, ("agurk",))]
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return "\n\n".join(parts)


def _cell(text: Any) -> str:
    """A value as one Markdown table cell (pipes escaped, lines joined)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: Any) -> str:
    """A value as code in a table cell (a pipe inside a code span does not split the cell)."""
    return f"`{' '.join(str(text).split())}`"


def agents_reference() -> str:
    """Every registered agent kind: how its spec is written and what it does."""
    from agents.registry import AGENTS

    rows = ["| spec | what it is |", "|---|---|"]
    rows += [f"| {_code(kind.usage)} | {_cell(kind.help)} |" for kind in AGENTS.values()]
    return "\n".join(rows)


def _field_docs() -> dict[str, str]:
    """The docstring of every :class:`agurk_env.rules.Rules` field, read from the source by griffe."""
    import griffe

    rules = griffe.load("agurk_env.rules", search_paths=["."])["Rules"]
    return {name: member.docstring.value for name, member in rules.members.items() if member.docstring}


def rules_reference() -> str:
    """Every rule option (type, default, allowed values, meaning) and every preset."""
    from agurk_env.rules import CHOICES, PRESETS, Rules

    docs = _field_docs()
    defaults = Rules()
    rows = ["| option | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for field in dataclasses.fields(Rules):
        allowed = ", ".join(_code(value) for value in CHOICES.get(field.name, ()))
        kind = "choice" if field.name in CHOICES else _code(field.type)
        default = _code(getattr(defaults, field.name))
        rows.append(f"| `{field.name}` | {kind} | {default} | {allowed} | {_cell(docs.get(field.name, ''))} |")
    presets = ["| preset | options over the defaults |", "|---|---|"]
    for name, options in PRESETS.items():
        changes = ", ".join(f"`{key}={value}`" for key, value in options.items()) or "(the defaults)"
        presets.append(f"| `{name}` | {changes} |")
    return "\n\n".join(["## Options", "\n".join(rows), "## Presets", "\n".join(presets)])


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "agents": agents_reference,
    "rules": rules_reference,
}
"""What each ``<!-- generated: NAME -->`` marker is replaced by."""


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace every generated-section marker of a page by its generated text."""
    return MARKER.sub(lambda match: GENERATORS[match.group(1)](), markdown)
