"""``agurk leaderboard``'s work: its options, the agents and the folders checked, the tables played and rated.

:func:`run_leaderboard` takes the options the command parses (:class:`LeaderboardOptions`) and
returns the ``leaderboard.json`` object it writes into ``--out`` (:mod:`skill.leaderboard`), in the
stages the command shows: :func:`plan_board` (the agents checked), :func:`claim_board` (the output
and cache folders), :func:`play_board` (the tables not in the cache, the ratings, the files).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.command import Backends, Quiet, Seeded, TableOptions, command_line, worker_count
from agurk_env.options import REQUIRED, OptionError, option
from skill.leaderboard import (
    FILES,
    Design,
    LeaderboardPlan,
    Played,
    Progress,
    check_agents,
    leaderboard,
    plan_leaderboard,
    play_leaderboard,
    write_leaderboard,
)

if TYPE_CHECKING:
    from skill.people import PersonMatches

SETTINGS = ("rules", "deals", "seed", "batch", "design")
"""What a leaderboard in --out must share with this one to be replaced without --force (the agents may differ)."""
UNWRITTEN = ("workers", "cache", "force", "backend", "ray_address", "quiet")
"""Options the reproducing command leaves out: the files are the same with any of them."""


@dataclass(frozen=True, kw_only=True)
class LeaderboardOptions(TableOptions, Seeded, Backends, Quiet):
    """``agurk leaderboard``'s options (:func:`run_leaderboard`)."""

    agents: str = option(REQUIRED, metavar="SPEC,SPEC,...")
    """the agents to rate, each once, at least 2 (with --design subsets at least players; 'agurk agents' lists the
    specs)"""
    design: Design = "pairs"
    """which agents share a table: pairs, every pair of agents alone at it (half the seats each, mirrored at an odd
    count), so head to head depends on those two only and adding an agent plays its N pairs; subsets, every
    players-subset of different agents, a strength in mixed fields (adding an agent plays its C(N, players - 1)
    subsets)"""
    deals: int = option(100, low=1, metavar="D")
    """duplicate deals: each group of agents plays every one at every seating"""
    workers: int | None = option(None, low=1, metavar="W")
    """tables played side by side: local worker processes, or the CPUs of a local Ray instance (default: the CPU
    count). The numbers do not depend on it"""
    out: str = option("runs/leaderboard", metavar="DIR")
    """folder of leaderboard.json, leaderboard.md and leaderboard.png (one that holds other files, or a leaderboard
    with other rules, deals, seed or design, is refused without --force)"""
    cache: str | None = option(None, metavar="DIR")
    """table cache: every table played is kept here and read back by any later run, keyed by rules, agents,
    checkpoint contents, deals, seed and code (default: OUT/cache)"""
    force: bool = False
    """write into an --out folder that holds other files or a leaderboard with other settings"""
    people: str | None = option(None, metavar="DB")
    """also rate the people of this agurk serve --db file (read only) as person:NAME, from their duplicate matches at
    this table against these agents (the others are counted and left out)"""

    def cache_dir(self) -> Path:
        """The table cache: ``--cache``, else ``OUT/cache``."""
        return Path(self.cache) if self.cache else Path(self.out) / "cache"


@dataclass(frozen=True)
class BoardPlan:
    """A leaderboard checked before it plays: its options and the plan of its groups of tables."""

    options: LeaderboardOptions
    plan: LeaderboardPlan

    def command(self) -> str:
        """The ``agurk leaderboard`` command that reproduces the files (no --cache, --workers or --backend)."""
        given = dataclasses.replace(
            self.options, agents=",".join(self.plan.specs), set=[s.strip() for s in self.options.set]
        )
        return command_line("leaderboard", given, UNWRITTEN)


def plan_board(options: LeaderboardOptions) -> BoardPlan:
    """The leaderboard's plan, the backend and every agent spec checked first (:class:`OptionError`, one line)."""
    from agents.fit import check_fit
    from agents.registry import AgentSpecError, make_agent, split_specs

    options.tasks_backend()
    rules = options.resolve()
    try:
        specs = split_specs(options.agents)
        check_agents(specs, rules.players, options.design)
        check_fit([make_agent(spec, options.seed, 0) for spec in specs], rules)
        return BoardPlan(options, plan_leaderboard(rules, specs, options.deals, options.seed, options.design))
    except (AgentSpecError, ValueError) as e:
        raise OptionError(f"--agents: {e}") from None


def claim_board(board: BoardPlan) -> None:
    """Make --out the leaderboard's folder (new, empty, or one of the same settings; or ``force``), --cache too."""
    plan, options = board.plan, board.options
    settings = {
        "rules": plan.rules.to_dict(),
        "deals": plan.deals,
        "seed": plan.seed,
        "batch": plan.batch,
        "design": plan.design,
    }
    _claim(Path(options.out), json.loads(json.dumps(settings)), options.force)
    _writable("--cache", options.cache_dir())


def _writable(flag: str, folder: Path) -> None:
    """Make ``folder`` (and its parents), refusing one that cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OptionError(f"cannot write {flag} {str(folder)!r}: {e.strerror or e}") from None
    if not os.access(folder, os.W_OK):
        raise OptionError(f"cannot write {flag} {str(folder)!r}: it is not writable")


def _claim(out: Path, data: dict[str, Any], force: bool) -> None:
    """Make ``out`` the leaderboard's folder: new, empty, or with a leaderboard of the same settings (or ``force``)."""
    if out.exists() and not out.is_dir():
        raise OptionError(f"--out {str(out)!r} is a file, not a folder")
    _writable("--out", out)
    if force:
        return
    found = out / "leaderboard.json"
    if found.exists():
        try:
            old = json.loads(found.read_text())
        except (OSError, ValueError):
            old = {}
        if not isinstance(old, dict) or any(old.get(k) != data[k] for k in SETTINGS):
            raise OptionError(
                f"--out {str(out)!r} holds a leaderboard with other rules, deals, seed or design: give another "
                "folder, or add --force to replace its files"
            )
        return
    others = sorted(p.name for p in out.iterdir() if p.name not in ("cache", *FILES))
    if others:
        raise OptionError(
            f"--out {str(out)!r} holds other files ({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}): "
            "give a new or empty folder, or add --force to write into it"
        )


def play_board(
    board: BoardPlan, progress: Progress | None = None, people: Sequence[PersonMatches] = ()
) -> tuple[Played, dict[str, Any]]:
    """Play the tables not in the cache, rate the agents (and ``people``), write the files; what played, the JSON."""
    from skill.cache import TaskCache

    o = board.options
    cache = TaskCache(o.cache_dir())
    played = play_leaderboard(board.plan, worker_count(o.workers), o.tasks_backend(), cache, progress)
    board_rated = leaderboard(board.plan, played.tables, people)
    return played, write_leaderboard(board_rated, Path(o.out), board.command())


def run_leaderboard(
    options: LeaderboardOptions, progress: Progress | None = None, people: Sequence[PersonMatches] = ()
) -> dict[str, Any]:
    """``agurk leaderboard``: the agents of ``options`` (and ``people``) rated at its table; the files' JSON object."""
    board = plan_board(options)
    claim_board(board)
    return play_board(board, progress, people)[1]
