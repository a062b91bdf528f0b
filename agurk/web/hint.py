"""The values behind the hint button: the search's utility of each legal card, from what the mover may know.

The worlds are sampled from the public view (the mover's hand and the public facts only,
as every fair agent sees them), then valued as ``best``'s search values them: by the exact
round solver when few enough tricks are left under last-trick scoring, else by rollouts.
"""

from __future__ import annotations

import numpy as np

from agents.pimc import PENALTY_SCALE, exact_tricks, exact_utility, rollout_utility, sample_worlds
from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.rules import CARDS, Rules

HINT_WORLDS = 16
"""Sampled deals per hint (the searches' default)."""


def search_values(
    rules: Rules, state: engine.State, bits: np.ndarray, rng: np.random.Generator, worlds: int = HINT_WORLDS
) -> tuple[str, dict[str, float]]:
    """``(method, {card: value})`` for the player to move in game 0: higher is better.

    Without lives a value is minus the mean round penalty over the worlds (the solver's) or
    the rollouts' utility times :data:`agents.pimc.PENALTY_SCALE` (going out charged), so it
    reads in penalty points; in lives mode, minus the chance of losing a life.
    """
    d = Decision(rules, state, np.zeros(1, np.int64), bits)
    sampled = sample_worlds(rules, d.public, worlds, rng)
    exact = rules.scoring == "last_trick" and int(d.hand.sum()) <= exact_tricks(rules)
    if exact:
        utility, method = exact_utility(rules, sampled, d.legal), f"exact solver, {worlds} sampled deals"
    else:
        utility, method = rollout_utility(rules, sampled, d.legal, "mixed", rng), f"rollouts, {worlds} sampled deals"
    scale = 1.0 if rules.lives else PENALTY_SCALE
    legal = np.flatnonzero(d.legal[0]).tolist()
    return method, {CARDS[c]: round(float(utility[0, c]) * scale, 3) for c in legal}
