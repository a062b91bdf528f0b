"""The values behind the hint button: the search's utility of each legal card, from what the mover may know.

The values are those of ``best``'s search (:func:`agents.best.search_for`) from the public view
(the mover's hand and the public facts only, as every fair agent sees them): the exact round
solver when few enough tricks are left under last-trick scoring, else rollouts; equal exact
values are shown as the solver gives them (``tie=lowest``), not settled by rollouts.
"""

from __future__ import annotations

import numpy as np

from agents.best import search_for
from agents.pimc import PENALTY_SCALE
from agents.search import PIMC, PimcOptions
from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.options import parse
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
    options = parse(PimcOptions, search_for(rules).partition(":")[2] or None)
    search = PIMC(rng, options, worlds=worlds, tie="lowest")
    utility = search.values(rules, d.public, d.legal)
    method = f"{'exact solver' if search.counts['exact'] else 'rollouts'}, {worlds} sampled deals"
    scale = 1.0 if rules.lives else PENALTY_SCALE
    legal = np.flatnonzero(d.legal[0]).tolist()
    return method, {CARDS[c]: round(float(utility[0, c]) * scale, 3) for c in legal}
