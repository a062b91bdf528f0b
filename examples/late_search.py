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

import numpy as np

from agents.registry import make_agent
from agents.tournament import tournament
from agents.tournament_stats import UNITS
from agurk.cli.common import add_rules_options, resolve_rules
from agurk_env.agent import Decision


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
    parser.add_argument("--policy", default="zoo:standard-4p", help="the agent of the early tricks")
    parser.add_argument("--search", default="oracle", help="the agent of the last --late tricks")
    parser.add_argument("--late", type=int, default=4, help="cards left in hand from which --search plays")
    parser.add_argument("--field", default="guard", help="the agent in every other seat")
    add_rules_options(parser)
    parser.add_argument("--unit", choices=UNITS, default="match", help="what the win rate scores")
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
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
