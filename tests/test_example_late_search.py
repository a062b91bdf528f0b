"""examples/late_search.py: the composed agent asks its early agent while the hand is long and its late one after."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from agents.heuristics import Heuristic
from agents.tournament import tournament
from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.rules import Rules

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "late_search.py"


def _module():
    spec = importlib.util.spec_from_file_location("examples_late_search", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pickling (the tournament copies its agents) looks the class up by name
    spec.loader.exec_module(module)
    return module


def test_each_stage_of_the_round_is_played_by_its_agent() -> None:
    late = _module().Late("shed", "guard", 3)
    rules = Rules()
    state = engine.init(rules, 64, seed=2)
    compared = 0
    while not state.round_over.all() and compared < 28:
        d = Decision(rules, state, np.arange(state.batch), engine.legal_bits(rules, state))
        short = d.hand.sum(axis=1) <= 3
        want = np.where(short, Heuristic("guard").act(d), Heuristic("shed").act(d))
        np.testing.assert_array_equal(late.act(d), want)
        compared += 1
        state = engine.advance(rules, engine.play(rules, state, want))
    assert compared == 28  # every play of the round, both stages


def test_it_plays_a_tournament_and_the_oracle_late_lifts_a_heuristic() -> None:
    module = _module()
    rules = Rules()
    plain = tournament(rules, [module.Late("shed", "shed", 4), "guard", "guard", "guard"], 40, 1)
    lifted = tournament(rules, [module.Late("shed", "oracle", 4), "guard", "guard", "guard"], 40, 1)
    assert lifted.entries[0].win_rate > plain.entries[0].win_rate
