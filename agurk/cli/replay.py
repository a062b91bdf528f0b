"""``agurk replay``: step through a recorded match trick by trick, all hands shown."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from agurk.cli.common import CliError, Formatter, Subcommands, add_options, from_args
from agurk_env.options import REQUIRED, option


@dataclass(frozen=True, kw_only=True)
class ReplayOptions:
    """``agurk replay``'s options."""

    file: str = option(REQUIRED, positional=True, metavar="FILE.jsonl")
    """a record file (agurk simulate --out, agurk play --record)"""
    match: int = option(0, metavar="K")
    """which record of the file, 0-based"""
    all: bool = False
    """print the whole match at once (non-interactive)"""


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk replay`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "replay",
        help="step through a recorded match trick by trick, all hands shown",
        formatter_class=Formatter,
        description="Show a match of a JSON Lines record file trick by trick: n/Enter next, p previous, q quit.",
        epilog="examples:\n  agurk replay runs/sim.jsonl --match 3\n  agurk replay runs/sim.jsonl --all",
    )
    add_options(p, ReplayOptions)
    p.set_defaults(func=run)


def run(namespace: argparse.Namespace) -> int:
    """Show a recorded match trick by trick."""
    from agurk.replay import ReplayError, load_record, replay

    args = from_args(ReplayOptions, namespace)
    try:
        return replay(load_record(args.file, args.match), show_all=args.all)
    except ReplayError as e:
        raise CliError(str(e)) from None
