"""``agurk bench operator``: the rollout operator's true-deal gain over the policy it rolls out."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.guided import PolicyNets
from agurk.bench.operator import bench_operator, positions
from agurk.cli import main
from agurk_env import engine
from agurk_env.rules import Rules

RULES = Rules.preset("standard", players=3, hand_size=5)
POLICY = "zoo:standard-3p"


def test_positions_are_decisions_with_a_choice_and_depend_only_on_the_seed() -> None:
    net = PolicyNets(POLICY)(RULES)
    a, b = positions(RULES, net, 50, seed=3), positions(RULES, net, 50, seed=3)
    assert a.batch == 50
    assert (engine.SET_SIZE[engine.legal_bits(RULES, a)] > 1).all()
    assert np.array_equal(a.hands, b.hands) and np.array_equal(a.cur, b.cur)
    assert not np.array_equal(a.hands, positions(RULES, net, 50, seed=4).hands)


def test_the_ceiling_bounds_every_operator_and_the_policy_gains_nothing_over_itself() -> None:
    result = bench_operator(RULES, POLICY, 60, [(4, False), (4, True)], seed=1)
    assert result["positions"] == 60
    ceiling = result["ceiling"]["gain"]
    assert ceiling >= 0
    for row in result["operators"]:
        assert row["gain"] <= ceiling + 1e-9
        assert row["ci"][0] <= row["gain"] <= row["ci"][1]
        assert 0 <= row["agrees"] <= 1
        if row["agrees"] == 1:
            assert row["gain"] == 0


def test_cli_prints_json_and_refuses_a_missing_policy(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "operator", "--set", "players=3", "--set", "hand_size=5", "--positions", "20"]
    assert main([*argv, "--policy", POLICY, "--worlds", "2", "--belief", "off", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [(r["worlds"], r["belief"]) for r in result["operators"]] == [(2, False)]
    assert main([*argv, "--policy", "zoo:no-such-policy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no shipped policy 'no-such-policy'" in err[0]
