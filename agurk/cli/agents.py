"""``agurk agents``: list the agent specs that ``--agents`` takes."""

from __future__ import annotations

import argparse

from agurk.cli.common import Formatter, Subcommands


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk agents`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "agents",
        help="list the agent specs that --agents takes",
        formatter_class=Formatter,
        description=(
            "List every agent spec: how it is written, what it does, and the options it declares\n"
            "(KEY=VALUE, separated by ';': pimc:worlds=32;eval=exact) with their defaults."
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List the agent specs and their options, in 80 columns."""
    from agents.registry import describe

    for line in describe():
        print(line)
    return 0
