"""A table's and a new game's options, declared once: ``agurk play``'s command line and the web's new-game request.

Each field is one option (:mod:`agurk_env.options`): its type, default, bounds, metavar and, in the
docstring under it, its help. :func:`agurk.cli.common.add_options` makes the argparse options of a
command from it, and the web app checks a ``POST /api/games`` body against it (its request adds
``mode`` and ``players``); both end in the same :class:`agurk.match.Match`.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.command import TableOptions  # declared below the application, for the library calls
from agurk_env.options import option


@dataclass(frozen=True)
class GameOptions(TableOptions):
    """A new game: its table, the agents in the other seats, the person's seat and the seed."""

    opponents: str = option("best", metavar="SPEC[,SPEC...]")
    """the agents: one spec for every other seat, or one per other seat in seat order; best is the strongest fair
    agent measured for the table (a policy trained for it, the exact search or the zoo): 'agurk agents' says which,
    and lists the others"""
    seat: int = option(0, low=0, metavar="N")
    """your seat, 0 the first dealer, players - 1 the last"""
    seed: int = option(0, low=0, metavar="S")
    """seed of the deals and agents"""
