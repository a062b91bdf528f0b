"""``agurk simulate``'s work: its options, the agents built and fitted, and the matches' records.

:func:`simulate_records` takes the options the command parses (:class:`SimulateOptions`) and yields
the records the command writes, one per match in match order (:func:`agurk_env.simulate.simulate`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agents.command import Quiet, Seeded, TableOptions
from agurk_env.agent import Agent
from agurk_env.options import REQUIRED, OptionError, option
from agurk_env.records import MatchRecord
from agurk_env.rules import Rules


@dataclass(frozen=True, kw_only=True)
class SimulateOptions(TableOptions, Seeded, Quiet):
    """``agurk simulate``'s options (:func:`simulate_records`)."""

    agents: str = option("random", metavar="SPEC[,SPEC...]")
    """who plays: one agent spec for every seat, or a comma-separated spec per seat (exactly 'players' of them; seat 0
    deals the first round). 'agurk agents' lists every spec and its options"""
    matches: int = option(REQUIRED, low=1, metavar="N")
    """number of matches to play"""
    out: str = option(REQUIRED, metavar="FILE.jsonl")
    """output file, replaced once every match is written (an interruption leaves it as it was); its folder must
    exist; '-' writes to stdout"""
    batch: int | None = option(None, low=1, metavar="B")
    """matches played side by side by the engine. The deals never depend on it, but random agents' choices do: keep
    it fixed to reproduce a file"""
    with_legal: bool = False
    """add to every trick a 'legal' list: the legal cards of each play (larger files, for replay checks)"""


@dataclass(frozen=True)
class Simulation:
    """A simulation checked before it plays: its options, rules and one agent per seat."""

    options: SimulateOptions
    rules: Rules
    agents: list[Agent]


def plan_simulation(options: SimulateOptions) -> Simulation:
    """Build the agents and refuse now, not mid-game, one that cannot play the rules (a policy without their cards)."""
    from agents.fit import check_fit
    from agents.registry import AgentSpecError, make_agents

    rules = options.resolve()
    try:
        agents = make_agents(options.agents, rules.players, options.seed)
        check_fit(agents, rules)
    except AgentSpecError as e:
        raise OptionError(str(e)) from None
    return Simulation(options, rules, agents)


def play_simulation(plan: Simulation, progress: Callable[[int], None] | None = None) -> Iterator[MatchRecord]:
    """The planned matches' records in match order; ``progress(matches_done)`` as they end."""
    from agurk_env.simulate import simulate

    o = plan.options
    return simulate(plan.rules, plan.agents, o.matches, o.seed, o.batch, o.with_legal, progress)


def simulate_records(options: SimulateOptions, progress: Callable[[int], None] | None = None) -> Iterator[MatchRecord]:
    """``agurk simulate``: the records of the matches of ``options``, one per match in match order."""
    return play_simulation(plan_simulation(options), progress)
