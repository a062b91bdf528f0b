"""examples/first_round.py: round 1 of matches and single rounds are played on the same deals."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from agurk_env.rules import Rules

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "first_round.py"


def _module():
    spec = importlib.util.spec_from_file_location("examples_first_round", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass looks its module up by name
    spec.loader.exec_module(module)
    return module


def test_the_same_agent_everywhere_has_no_gap_and_the_penalties_are_round_ones() -> None:
    first_round_gap = _module().first_round_gap
    rules = Rules().replace(players=3)
    same = first_round_gap(rules, "guard", "guard", 50, [0, 1])
    assert same["gap"] == pytest.approx(0.0) and same["agent"] == pytest.approx(same["field"])
    assert 0 < same["agent"] < 15  # one round's penalty: at most an ace per seat


def test_a_weaker_agent_trails_its_field_in_round_1() -> None:
    first_round_gap = _module().first_round_gap
    r = first_round_gap(Rules().replace(players=3), "random", "guard", 200, [0])
    assert r["gap"] < -2 * r["gap_se"]  # random takes more points than guard on the same deals


def test_the_command_prints_both_rule_sets(capsys: pytest.CaptureFixture[str]) -> None:
    _module().main(["--set", "players=3", "--agent", "random", "--field", "guard", "--deals", "20"])
    out = capsys.readouterr().out
    assert "matches: random" in out and "single rounds: random" in out
