"""``agurk rules``: list the rule presets, or show one preset's resolved options."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from agurk.cli.common import (
    RULE_NOTES,
    Formatter,
    JsonFlag,
    Subcommands,
    add_options,
    from_args,
    resolve_rules,
    rules_label,
    stdout_console,
)
from agurk.game_options import TableOptions
from agurk_env.options import option
from agurk_env.rules import PRESETS, Rules, RuleValue


@dataclass(frozen=True, kw_only=True)
class RulesOptions(TableOptions, JsonFlag):
    """``agurk rules``'s options: the preset is a positional, none by default (then the table of presets)."""

    rules: str | None = option(None, positional=True, metavar="PRESET")
    """preset to resolve (default: none)"""


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk rules`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "rules",
        help="list the rule presets, or show one preset's resolved options",
        formatter_class=Formatter,
        description=(
            "Without PRESET: a table of the presets and the options in which each, resolved, differs\n"
            "from the defaults. With PRESET and/or --set: every option of the resolved rules, as\n"
            "'agurk simulate --rules PRESET --set ...' would play them."
        ),
        epilog="examples:\n  agurk rules\n  agurk rules every_trick\n  agurk rules danish21 --set players=6 --json",
    )
    add_options(p, RulesOptions, notes=RULE_NOTES, docs={"json": "print the table as one JSON object"})
    p.set_defaults(func=run)


def _fmt_value(value: RuleValue) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def run(namespace: argparse.Namespace) -> int:
    """Show the presets, or one preset's resolved options."""
    args = from_args(RulesOptions, namespace)
    if args.rules is None and not args.set:
        return _show_presets(args.json)
    rules = resolve_rules(args.rules, args.set)
    defaults = Rules().to_dict()
    resolved = rules.to_dict()
    if args.json:
        print(json.dumps(resolved))
        return 0
    from rich.table import Table

    table = Table(title=f"rules: {rules_label(args.rules, args.set)}", title_justify="left")
    table.add_column("option", style="bold")
    table.add_column("value")
    table.add_column("default", style="dim")
    for name, value in resolved.items():
        text = _fmt_value(value)
        if value != defaults[name]:
            text = f"[yellow]{text} *[/]"
        table.add_row(name, text, _fmt_value(defaults[name]))
    console = stdout_console()
    console.print(table)
    console.print("* differs from the defaults; docs/RULES.md explains every option.", highlight=False)
    return 0


def differences(preset: str) -> dict[str, RuleValue]:
    """The options in which ``preset``, resolved, differs from the defaults (implied ones too: ``ace_points=1``)."""
    defaults = Rules().to_dict()
    return {k: v for k, v in Rules.preset(preset).to_dict().items() if v != defaults[k]}


def _show_presets(as_json: bool) -> int:
    defaults = Rules().to_dict()
    differ = {name: differences(name) for name in PRESETS}
    if as_json:
        print(json.dumps({"defaults": defaults, "presets": PRESETS, "differences": differ}))
        return 0
    from rich.table import Table

    table = Table(title="Agurk rule presets", title_justify="left")
    table.add_column("preset", style="bold", no_wrap=True)
    table.add_column("options that differ from the defaults")
    for name, diff in differ.items():
        table.add_row(name, ", ".join(f"{k}={_fmt_value(v)}" for k, v in diff.items()) or "(none: the defaults)")
    console = stdout_console()
    console.print(table)
    console.print(
        "defaults: " + ", ".join(f"{k}={_fmt_value(v)}" for k, v in defaults.items()),
        highlight=False,
    )
    console.print("Show one preset resolved: agurk rules PRESET [--set OPTION=VALUE ...]", highlight=False)
    return 0
