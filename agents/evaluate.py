"""``agurk evaluate``'s work: its options, the entries checked, and the duplicate-deal tournament played.

:func:`evaluate` takes the options the command parses (:class:`EvaluateOptions`) and returns the
:class:`agents.tournament.TournamentResult` the command prints; :func:`plan_evaluation` checks
everything first (what the command reports before it plays).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agents.command import Backends, JsonFile, Quiet, Seeded, TableOptions, worker_count
from agents.seatings import Seating, seatings
from agents.tournament import TournamentResult, parse_entries, tournament
from agents.tournament_stats import Unit
from agurk_env.options import REQUIRED, OptionError, option
from agurk_env.rules import Rules

DEFAULT_EVAL_BATCH = 4096
"""``evaluate --batch`` default: matches played side by side in each rotation."""
MOST_WORKERS = 4
"""``--workers`` default: the CPU count, at most this."""


@dataclass(frozen=True, kw_only=True)
class EvaluateOptions(TableOptions, Seeded, JsonFile, Backends, Quiet):
    """``agurk evaluate``'s options (:func:`evaluate`)."""

    agents: str = option(REQUIRED, metavar="SPEC,SPEC,...")
    """the entries: exactly one agent spec per seat ('agurk agents' lists the specs)"""
    matches: int = option(REQUIRED, low=1, metavar="N")
    """number of deals; each is played once per seat"""
    batch: int = option(DEFAULT_EVAL_BATCH, low=1, metavar="B")
    """matches played side by side (lower it for search agents if memory is short). Random agents' choices depend
    on it: keep it fixed to reproduce a result"""
    bootstrap: int = option(1000, low=1, metavar="R")
    """bootstrap resamples for the CIs"""
    workers: int | None = option(None, low=1, metavar="W")
    """processes that play the tables side by side (default: the CPU count, at most 4); runs of fewer than 4000
    matches use one on the local backend. The numbers do not depend on it"""
    unit: Unit = "match"
    """what the win rate and rating score: whole matches or single rounds; the agents play the same matches either
    way"""
    seating: Seating = "auto"
    """the tables each deal is played at (see above)"""


@dataclass(frozen=True)
class EvaluationPlan:
    """An evaluation checked before it plays: its options, rules, entries and the number of tables per deal."""

    options: EvaluateOptions
    rules: Rules
    specs: list[str]
    tables: int


def plan_evaluation(options: EvaluateOptions) -> EvaluationPlan:
    """Check the rules, the backend and every entry (each built and fitted to the rules) before anything is played."""
    from agents.fit import check_fit
    from agents.registry import AgentSpecError, make_agents

    rules = options.resolve()
    options.tasks_backend()
    try:
        specs = parse_entries(options.agents, rules.players)
        check_fit(make_agents(",".join(specs), rules.players, options.seed), rules)
    except (AgentSpecError, ValueError) as e:
        raise OptionError(str(e)) from None
    return EvaluationPlan(options, rules, specs, len(seatings(specs, options.seating).tables))


def play_evaluation(plan: EvaluationPlan, progress: Callable[[int], None] | None = None) -> TournamentResult:
    """Play the planned tournament; ``progress(matches_done)`` counts over every table."""
    o = plan.options
    return tournament(
        plan.rules,
        plan.specs,
        o.matches,
        o.seed,
        batch=o.batch,
        resamples=o.bootstrap,
        progress=progress,
        workers=worker_count(o.workers, MOST_WORKERS),
        unit=o.unit,
        backend=o.tasks_backend(),
        seating=o.seating,
    )


def evaluate(options: EvaluateOptions, progress: Callable[[int], None] | None = None) -> TournamentResult:
    """``agurk evaluate``: the duplicate-deal tournament of ``options`` and its per-entry statistics."""
    return play_evaluation(plan_evaluation(options), progress)
