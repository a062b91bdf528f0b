"""``agurk agents``: list the agent specs that ``--agents`` takes."""

from __future__ import annotations

import argparse
from typing import Any

from agurk.cli.common import Formatter


def add_parser(sub: Any) -> None:
    """Register ``agurk agents`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "agents",
        help="list the agent specs that --agents takes",
        formatter_class=Formatter,
        description="List every agent spec, one line each: how it is written and what it does.",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List the agent specs, one line each."""
    from agents.registry import describe

    for line in describe():
        print(line)
    return 0
