"""The gymnasium observation space of the Agurk observation, shared by every environment."""

from __future__ import annotations

import functools

import gymnasium
import numpy as np

from agurk_env import engine, observation
from agurk_env.rules import Rules


@functools.lru_cache(maxsize=64)
def _high(rules: Rules) -> np.ndarray:
    """Upper bounds of every observation entry under ``rules`` (all entries are >= 0)."""
    assert rules.ace_points is not None  # resolved by Rules itself
    most = max(13, rules.ace_points, 15 if rules.jokers else 0)
    per_round = most * (rules.hand_size if rules.scoring == "every_trick" else 1)
    # a seat's score: below the limit (or at it, with exceed) before a round, plus one round;
    # in lives mode a seat scores in at most `lives` rounds (each costs a life)
    score = rules.lives * per_round if rules.lives else rules.limit + per_round
    high = np.ones(observation.SIZE, np.float32)
    parts = observation.view(high)
    parts["score"][:] = score / rules.limit
    parts["rebuys"][:] = max(1, rules.rebuys)
    first = observation.observe(rules, engine.init(rules, 1, 0))[0]  # the constant rule slices
    return np.maximum(high, first)


def observation_box(rules: Rules) -> gymnasium.spaces.Box:
    """The ``Box`` of the observation vector under ``rules`` (a new object)."""
    return gymnasium.spaces.Box(0.0, _high(rules), (observation.SIZE,), np.float32)
