"""A composed agent: one agent plays while many cards are left, another plays the round's last tricks.

An example of the agent interface (:mod:`agurk_env.agent`): an agent acts on a batch of
decisions, and a composed agent splits the batch by what the mover can see (here, the cards
left in its hand) and asks each part's agent (``Decision.select``). It also measures where a policy's play is
weakest: put the cheating ``oracle`` (which sees every hand) in charge of the last ``k``
tricks and the win rate shows what perfect play from there is worth; put a fair search there
(``pimc:eval=exact``, with or without a belief) and it shows whether the search recovers it.

    python examples/late_search.py --late 4 --search oracle --deals 300
    python examples/late_search.py --late 4 --search "pimc:eval=exact;belief=models" --deals 1000
    python examples/late_search.py --rules free_choice --set players=3 --set hand_size=5 \
        --set ace_lock=any --set limit=1 --set match_end=first_out --unit round \
        --policy zoo:free_choice-3x5-anyace-single --late 3 --search oracle --field pimc:eval=exact

Each run plays the composed agent in one seat against ``--field`` in the others on the same
duplicate deals as ``agurk evaluate --agents POLICY,guard,guard,guard --seed SEED`` (``--rules`` and
``--set`` as there; ``--set players=N`` for the table size).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from agents.registry import make_agent
from agents.tournament import tournament
from agents.tournament_stats import Unit
from agurk.cli.common import RULE_NOTES, add_options, from_args, resolve_rules
from agurk.game_options import TableOptions
from agurk_env.agent import Decision
from agurk_env.options import option


@dataclass(frozen=True, kw_only=True)
class LateOptions(TableOptions):
    """The command line: the two agents and where the second takes over, the field, the table, the tournament."""

    policy: str = "zoo:standard-4p"
    """the agent of the early tricks"""
    search: str = "oracle"
    """the agent of the last --late tricks"""
    late: int = option(4, low=1, metavar="K")
    """cards left in hand from which --search plays"""
    field: str = "guard"
    """the agent in every other seat"""
    unit: Unit = "match"
    """what the win rate scores"""
    deals: int = option(300, low=1, metavar="N")
    """deals in the tournament"""
    seed: int = option(1, low=0, metavar="S")
    """seed of the deals and agents"""


class Late:
    """``early`` plays while the mover holds more than ``k`` cards, ``late`` from then on."""

    def __init__(self, early: str, late: str, k: int) -> None:
        self.spec = f"{early} then {late} for the last {k} tricks"
        self.early, self.late, self.k = make_agent(early, 0, 0), make_agent(late, 0, 0), k
        self.sees_all = bool(getattr(self.late, "sees_all", False))

    def act(self, decision: Decision) -> np.ndarray:
        """Each game's card from the agent in charge of its stage of the round."""
        late = decision.hand.sum(axis=1) <= self.k
        out = np.empty(len(decision), dtype=np.int64)
        for agent, games in ((self.early, ~late), (self.late, late)):
            if games.any():
                out[games] = agent.act(decision.select(games))
        return out


def main() -> None:
    """Play the composed agent against the field and print its win rate and penalty per round."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_options(parser, LateOptions, notes=RULE_NOTES)
    args = from_args(LateOptions, parser.parse_args())
    rules = resolve_rules(args.rules, args.set)
    agent = Late(args.policy, args.search, args.late)
    started = time.perf_counter()
    result = tournament(rules, [agent] + [args.field] * (rules.players - 1), args.deals, args.seed, unit=args.unit)
    me, field = result.to_dict()["entries"][:2]
    low, high = me["win_rate_ci"]
    print(
        f"{agent.spec}: win rate {me['win_rate']:.3f} [{low:.3f}, {high:.3f}],"
        f" penalty/round {me['mean_penalty']:.2f} (each {args.field} {field['mean_penalty']:.2f};"
        f" {args.deals} deals, {time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
