"""MkDocs hook: the reference pages generated from the declarations themselves.

A page holding a line ``<!-- generated: NAME -->`` gets that line replaced by the text
:data:`GENERATORS` makes for ``NAME``: every command's ``--help`` (from the parsers of
:mod:`agurk.cli`), every agent kind (from :data:`agents.registry.AGENTS`), every rule option
and preset, and every training config key (their one declaration, read by
:func:`agurk_env.options.declared`). Nothing is copied by hand, so the pages cannot drift
from the code.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

MARKER = re.compile(r"^<!-- generated: ([a-z]+) -->$", re.M)
HELP_WIDTH = "84"
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
    """A value as code in a table cell (a pipe inside a code span does not split the cell; ``""`` when empty)."""
    return f"`{' '.join(str(text).split()) or chr(34) * 2}`"


def agents_reference() -> str:
    """Every agent kind (:func:`agents.registry.kinds`): how its spec is written, what it does, its options."""
    from agents.registry import kinds

    parts = []
    for kind in kinds():
        parts += [f"## `{kind['name']}`", f"`{kind['usage']}`: {kind['help']}"]
        if kind["options"]:
            rows = ["| option | type | default | meaning |", "|---|---|---|---|"]
            rows += [
                f"| `{o['name']}` | {_code(o['type'])} | {_code(o['default'])} | {_cell(o['doc'])} |"
                for o in kind["options"]
            ]
            parts.append("\n".join(rows))
    return "\n\n".join(parts)


def _options_table(cls: type, prefix: str = "") -> str:
    """The options of the option set ``cls`` (:func:`agurk_env.options.declared`; sections left out) as a table."""
    from agurk_env.options import declared

    rows = ["| option | allowed | default | meaning |", "|---|---|---|---|"]
    for name, declared_option in declared(cls).items():
        if dataclasses.is_dataclass(declared_option.type):
            continue
        allowed, default = declared_option.what(), declared_option.shown_default
        rows.append(f"| `{prefix}{name}` | {_cell(allowed)} | {_code(default)} | {_cell(declared_option.doc)} |")
    return "\n".join(rows)


def rules_reference() -> str:
    """Every rule option (allowed values, default, meaning) and every preset."""
    from agurk_env.rules import PRESETS, Rules

    presets = ["| preset | options over the defaults |", "|---|---|"]
    for name, options in PRESETS.items():
        changes = ", ".join(f"`{key}={value}`" for key, value in options.items()) or "(the defaults)"
        presets.append(f"| `{name}` | {changes} |")
    return "\n\n".join(["## Options", _options_table(Rules), "## Presets", "\n".join(presets)])


def config_reference() -> str:
    """Every key of a training config, section by section (``pool.self_play``...)."""
    from agurk_env.options import declared
    from training.config import Config, TableFamily

    parts = ["## Top-level keys", _options_table(Config)]
    for name, section in declared(Config).items():
        if dataclasses.is_dataclass(section.type):
            parts += [f"## `{name}`", section.doc, _options_table(section.type, f"{name}.")]
    doc = TableFamily.__doc__.splitlines()[0]
    parts += ["### `mixture.families.NAME`", doc, _options_table(TableFamily, "mixture.families.NAME.")]
    return "\n\n".join(parts)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "agents": agents_reference,
    "rules": rules_reference,
    "config": config_reference,
}
"""What each ``<!-- generated: NAME -->`` marker is replaced by."""


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace every generated-section marker of a page by its generated text."""
    return MARKER.sub(lambda match: GENERATORS[match.group(1)](), markdown)
