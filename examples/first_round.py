"""How an agent plays round 1 of whole matches beside single rounds, on the same deals.

A network trained on single rounds and on matches sees the match's rules (its limit, how it
ends) in its observation, so it may play the same first deal differently. This plays round 1
of ``deals`` matches of each ``--seeds`` seed twice: under the rules as given (matches to the
limit) and as single rounds (``limit=1``, ``match_end=first_out``). ``--agent`` sits in each
seat in turn against ``--field`` in the others. It prints, for both, the agent's mean penalty
in round 1, the field's, and the gap (the field's minus the agent's, with its standard error).

    python examples/first_round.py --agent zoo:universal --rules free_choice --set players=3 \
        --set hand_size=5 --set ace_lock=any --deals 2000 --seeds 5,6
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from agents.registry import make_agent
from agurk.cli.common import RULE_NOTES, add_options, from_args, resolve_rules
from agurk.game_options import TableOptions
from agurk_env import engine
from agurk_env.agent import act_seats
from agurk_env.options import option
from agurk_env.rules import Rules


@dataclass(frozen=True, kw_only=True)
class FirstRoundOptions(TableOptions):
    """The command line: the table (``--rules``, ``--set``), the agent, its field, the deals and the seeds."""

    agent: str = "zoo:universal"
    """the agent measured"""
    field: str = "pimc:eval=exact"
    """the other seats"""
    deals: int = option(1000, low=1, metavar="N")
    """deals per seed and seat"""
    seeds: list[int] = option([0], low=0, metavar="S,S", joined=True)
    """the seeds"""


def first_round_gap(rules: Rules, agent: str, field: str, deals: int, seeds: list[int]) -> dict[str, float]:
    """Round 1 of ``deals`` matches per seed and seat: the mean penalties of ``agent`` and ``field``, and the gap."""
    mine, theirs = [], []
    for seed in seeds:
        for seat in range(rules.players):
            specs = [field] * rules.players
            specs[seat] = agent
            agents = [make_agent(s, seed * 10 + seat, i) for i, s in enumerate(specs)]
            state = engine.init(rules, deals, seed)
            while not state.round_over.all():  # every deal's round 1 ends on the same card
                state = engine.play(rules, state, act_seats(rules, state, engine.legal_bits(rules, state), agents))
            penalty = state.round_penalty.astype(float)
            mine.append(penalty[:, seat])
            theirs.append(np.delete(penalty, seat, axis=1).mean(1))
    a, f = np.concatenate(mine), np.concatenate(theirs)
    gap = f - a
    return {"agent": a.mean(), "field": f.mean(), "gap": gap.mean(), "gap_se": gap.std() / np.sqrt(gap.size)}


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and print both figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser, FirstRoundOptions, notes=RULE_NOTES)
    args = from_args(FirstRoundOptions, parser.parse_args(argv))
    rules = resolve_rules(args.rules, args.set)
    seeds = args.seeds
    for name, table in (("matches", rules), ("single rounds", rules.replace(limit=1, match_end="first_out"))):
        r = first_round_gap(table, args.agent, args.field, args.deals, seeds)
        print(
            f"{name:>13}: {args.agent} {r['agent']:.3f}, {args.field} {r['field']:.3f}, "
            f"gap {r['gap']:+.3f} (se {r['gap_se']:.3f})"
        )


if __name__ == "__main__":
    main()
