"""examples/clone_agent.py: the recorder plays as its agent and keeps its choices; the fit learns them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from agents import zoo
from agents.heuristics import Heuristic
from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.rules import Rules

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "clone_agent.py"


def _module():
    spec = importlib.util.spec_from_file_location("examples_clone_agent", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_recorder_plays_as_its_agent_and_keeps_only_decisions_with_a_choice() -> None:
    rec = _module().Recorder(Heuristic("guard"))
    rules = Rules()
    state = engine.init(rules, 32, seed=4)
    kept = 0
    for _ in range(28):
        d = Decision(rules, state, np.arange(state.batch), engine.legal_bits(rules, state))
        want = Heuristic("guard").act(d)
        np.testing.assert_array_equal(rec.act(d), want)
        kept += int((d.legal.sum(1) > 1).sum())
        state = engine.advance(rules, engine.play(rules, state, want))
    data = rec.data()
    assert len(data["card"]) == kept > 0
    assert data["legal"][np.arange(kept), data["card"]].all()  # every kept card was legal
    assert (data["legal"].sum(1) > 1).all()


def test_the_fit_learns_the_recorded_plays() -> None:
    mod = _module()
    data = mod.record("shed", matches=24, seed=2)
    _, seen = mod.fit(str(zoo.path_of("standard-4p")), data, epochs=15, lr=3e-3)
    assert seen[-1] > seen[0] + 0.1, seen  # shed (the strongest legal card) is easy to learn; the policy is not it
