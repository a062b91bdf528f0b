"""``agurk bench operator``: how much one application of the rollout operator gains over the policy it rolls out.

Positions are drawn from the policy's own greedy self-play (every seat the policy, rounds
played to their end, each decision with a choice kept with probability :data:`KEEP`). At
each, every legal card is valued **on the true deal** by the same greedy policy rollouts the
operator uses (:class:`agents.guided.PolicyMoves` in :func:`agents.search.rollouts`): the card's utility when the policy
plays on at every seat. The operator (:func:`agents.guided.improve`) sees only what the mover
sees, samples ``worlds`` deals (uniform or belief-weighted) and picks its best card; the
policy picks its greedy card. The **gain** is the mean true-deal utility of the operator's card
minus the policy's: because the true deals are drawn as play draws them, it is an unbiased
estimate of what one improvement step is worth per decision in self-play against copies of the
policy (a positive gain is what expert iteration can learn). The **ceiling** is the best card on
the true deal (it sees every hand): the gain a perfect belief with infinitely many worlds could
at most reach. Utilities are pimc's round utility (:func:`agents.pimc.round_utility`: minus the
round penalty / 15, minus 2 for going out, plus 0.5 per other seat out); the gain is printed in
those units times 15 (penalty points, where nobody goes out), with a 95% normal interval.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.rules import Rules

if TYPE_CHECKING:
    from torch import nn

KEEP = 0.15
"""Share of the self-play decisions with a choice kept as positions (spread over the round)."""


class Gain(TypedDict):
    """A mean true-deal gain over the policy's card, in penalty points per decision, with its 95% interval."""

    gain: float
    ci: list[float]
    """``[low, high]``."""


class OperatorRow(TypedDict):
    """The operator at one ``(worlds, belief)``: its gain, how often it picks the policy's card, its time."""

    worlds: int
    belief: bool
    gain: float
    ci: list[float]
    agrees: float
    """The share of positions where the operator's card is the policy's."""
    ms_per_decision: float


class OperatorResult(TypedDict):
    """The ``agurk bench operator`` result (:func:`bench_operator`)."""

    positions: int
    ceiling: Gain
    """The best card on the true deal (it sees every hand)."""
    operators: list[OperatorRow]


def positions(rules: Rules, net: nn.Module, count: int, seed: int) -> engine.State:
    """``count`` positions with a choice from the policy's greedy self-play (seeded deals), one batched loop."""
    from agents.belief import concat
    from agents.guided import policy_moves  # torch is an optional dependency

    rng = np.random.default_rng([seed, 1])
    state = engine.init(rules, max(64, count // 4), seed)
    kept, have = [], 0
    while have < count:
        bits = engine.legal_bits(rules, state)
        choice = np.flatnonzero(engine.SET_SIZE[bits] > 1)
        pick = choice[rng.random(choice.size) < KEEP][: count - have]
        if pick.size:
            kept.append(state.take(pick))
            have += pick.size
        state = engine.advance(rules, engine.play(rules, state, policy_moves(rules, net, state, "greedy", rng)))
    return concat(kept)


def bench_operator(rules: Rules, policy: str, count: int, configs: list[tuple[int, bool]], seed: int) -> OperatorResult:
    """The policy's and the operator's true-deal utility per decision, for each ``(worlds, belief)`` in ``configs``."""
    from agents.guided import PolicyMoves, PolicyNets, improve, policy_moves  # torch
    from agents.pimc import PENALTY_SCALE
    from agents.search import rollouts

    net = PolicyNets(policy)(rules)
    state = positions(rules, net, count, seed)
    rng = np.random.default_rng([seed, 2])
    legal = engine.unpack(engine.legal_bits(rules, state), rules.num_actions)
    world, card, value = rollouts(rules, state, legal, PolicyMoves(lambda rules: net), rng)
    true = np.full(legal.shape, -np.inf)
    true[world, card] = value
    rows = np.arange(state.batch)
    mine = policy_moves(rules, net, state, "greedy", rng)

    def gain(choice: np.ndarray) -> Gain:
        d = (true[rows, choice] - true[rows, mine]) * PENALTY_SCALE
        half = 1.96 * d.std(ddof=1) / np.sqrt(d.size)
        return {"gain": float(d.mean()), "ci": [float(d.mean() - half), float(d.mean() + half)]}

    result: OperatorResult = {"positions": int(state.batch), "ceiling": gain(true.argmax(1)), "operators": []}
    public = Decision(rules, state, rows, engine.legal_bits(rules, state)).public  # what the mover sees
    for worlds, belief in configs:
        start = time.perf_counter()
        choice = improve(rules, net, public, legal, worlds, np.random.default_rng([seed, 3, worlds]), belief=belief)
        seconds = time.perf_counter() - start
        g = gain(choice.argmax(1))
        agrees = float(np.mean(choice.argmax(1) == mine))
        result["operators"].append(
            {
                "worlds": worlds,
                "belief": belief,
                "gain": g["gain"],
                "ci": g["ci"],
                "agrees": agrees,
                "ms_per_decision": 1000 * seconds / state.batch,
            }
        )
    return result
