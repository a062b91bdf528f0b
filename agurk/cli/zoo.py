"""``agurk zoo``: list the shipped policies, or export a training run into the zoo."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agurk.cli.common import CliError, Formatter
from agurk_env.rules import PRESETS


def add_parser(sub: Any) -> None:
    """Register ``agurk zoo`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "zoo",
        help="list the shipped policies (zoo:PRESET), or export a run into the zoo",
        formatter_class=Formatter,
        description=(
            "Without arguments: list the shipped policies, one per preset (the agent spec zoo:PRESET;\n"
            "plain 'zoo' plays the policy of the preset in play). 'agurk zoo export RUN --preset P'\n"
            "writes the weights-only copy of a run's best checkpoint as the zoo's P.pt (package data\n"
            "next to agents/zoo/); docs/zoo.md has the command that trains each one."
        ),
        epilog="examples:\n  agurk zoo\n  agurk zoo export runs/zoo-standard --preset standard",
    )
    p.add_argument("action", nargs="?", choices=["list", "export"], default="list", help="what to do (default: list)")
    p.add_argument("run", nargs="?", help="export: the run folder (its best checkpoint) or a checkpoint file")
    p.add_argument("--preset", help="export: the preset the policy is shipped for")
    p.add_argument("--out", help="export: write here instead of the zoo folder")
    p.add_argument("--force", action="store_true", help="export: replace an existing policy")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List the zoo, or export a run into it."""
    try:
        from agents import zoo
        from agents.policy import CheckpointError
    except ImportError as e:
        raise CliError(f'the zoo needs torch: pip install -e ".[rl]" ({e.name} missing)') from None
    if args.action == "list":
        if args.run or args.preset or args.out or args.force:
            raise CliError("agurk zoo (list) takes no other arguments")
        rows = zoo.describe()
        if not rows:
            print("the zoo is empty")
        for row in rows:
            widths = "x".join(str(h) for h in row["hidden"])
            name, decisions, size = f"zoo:{row['preset']}", row["decisions"], row["bytes"]
            print(f"{name:<20} {decisions:>12,} decisions  hidden {widths:<8} {size:>9,} bytes")
        return 0
    if not args.run or not args.preset:
        raise CliError("agurk zoo export needs a RUN and --preset PRESET")
    out = Path(args.out) if args.out else zoo.ZOO / f"{args.preset}.pt"
    if args.preset not in PRESETS:
        raise CliError(f"no preset {args.preset!r}; presets: {', '.join(PRESETS)}")
    if out.exists() and not args.force:
        raise CliError(f"{str(out)!r} exists; add --force to replace it")
    try:
        size = zoo.export(args.run, out)
    except CheckpointError as e:
        raise CliError(str(e)) from None
    print(f"wrote {out} ({size:,} bytes)")
    return 0
