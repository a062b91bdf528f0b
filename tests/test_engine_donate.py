"""Donated steps (``play``/``advance`` with ``donate=True``) give exactly the states of pure steps."""

from __future__ import annotations

import numpy as np
import pytest

from agurk_env import engine
from agurk_env.engine import random_legal
from agurk_env.rules import Rules


@pytest.mark.parametrize("preset", ["standard", "every_trick", "lives", "small_ace", "second_chance"])
def test_donated_steps_match_pure_steps(preset: str) -> None:
    rules = Rules.preset(preset, players=5)
    pure = engine.init(rules, 64, seed=4)
    donated = engine.init(rules, 64, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(400):
        actions = random_legal(engine.legal_bits(rules, pure), rng)
        pure = engine.advance(rules, engine.play(rules, pure, actions))
        donated = engine.advance(rules, engine.play(rules, donated, actions, donate=True), donate=True)
        for name, a, b in zip(engine.State._fields, pure, donated, strict=True):
            assert np.array_equal(a, b), name
    state = engine.init(rules, 8, seed=1)  # and a pure step leaves its input untouched
    snapshot = [np.copy(v) for v in state if isinstance(v, np.ndarray)]
    engine.advance(rules, engine.play(rules, state, random_legal(engine.legal_bits(rules, state), rng)))
    after = [v for v in state if isinstance(v, np.ndarray)]
    assert all(np.array_equal(a, b) for a, b in zip(snapshot, after, strict=True))
