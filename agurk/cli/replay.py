"""``agurk replay``: step through a recorded match trick by trick, all hands shown."""

from __future__ import annotations

import argparse

from agurk.cli.common import CliError, Formatter, Subcommands


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk replay`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "replay",
        help="step through a recorded match trick by trick, all hands shown",
        formatter_class=Formatter,
        description="Show a match of a JSON Lines record file trick by trick: n/Enter next, p previous, q quit.",
        epilog="examples:\n  agurk replay runs/sim.jsonl --match 3\n  agurk replay runs/sim.jsonl --all",
    )
    p.add_argument("file", metavar="FILE.jsonl", help="a record file (agurk simulate --out, agurk play --record)")
    p.add_argument("--match", metavar="K", type=int, default=0, help="which record of the file, 0-based (default: 0)")
    p.add_argument("--all", action="store_true", help="print the whole match at once (non-interactive)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Show a recorded match trick by trick."""
    from agurk.replay import ReplayError, load_record, replay

    try:
        return replay(load_record(args.file, args.match), show_all=args.all)
    except ReplayError as e:
        raise CliError(str(e)) from None
