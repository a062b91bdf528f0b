"""The teacher of expert iteration (training/teacher.py) and expert iteration on a mixture of tables.

- ``teacher: best`` learns where ``best`` plays a search from that search's values (the same agent, seeded alike),
  where it plays a shipped network from that network's probabilities (their argmax is ``best``'s card).
- ``teacher: rollout`` is the rollout operator, as before.
- An expert generation on a mixture draws its tables from the families, and the same seed gives the same data.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.guided import improve
from agents.policy import PolicyNet
from agents.registry import make_agent
from agurk_env import engine, observation
from agurk_env.agent import Decision
from agurk_env.rules import CARDS, Rules
from tests.test_guided import _positions
from tests.tiny_config import TINY
from training.config import ConfigError, ExpertConfig, config_from_dict
from training.expert import Generations
from training.teacher import Teachers, improved_policy

pytest.importorskip("torch")


def _decision(rules: Rules, plies: int = 5) -> Decision:
    state = _positions(rules, 24, plies)
    bits = engine.legal_bits(rules, state)
    games = np.flatnonzero(engine.SET_SIZE[bits] > 1)
    return Decision(rules, state, games, bits[games])


def _net(actions: int = 13) -> PolicyNet:
    torch.manual_seed(0)
    return PolicyNet(observation.SIZE, actions, [16]).eval()


def test_best_teaches_with_the_search_it_plays_there() -> None:
    rules = Rules.preset("quick")  # best plays pimc there (agents.best.SEARCH_STRONGER)
    d = _decision(rules)
    teachers = Teachers("best", 7)
    assert teachers.spec(rules) == "pimc"
    target = teachers.target(_net(), d, np.random.default_rng(0), ExpertConfig())
    values = make_agent("pimc", 7, 0).values(rules, d.public, d.legal)
    np.testing.assert_allclose(target, improved_policy(values, 0.05))
    assert (target[~d.legal] == 0).all() and np.allclose(target.sum(1), 1)


def test_best_teaches_with_the_network_it_plays_there() -> None:
    rules = Rules.preset("standard")
    d = _decision(rules)
    teachers = Teachers("best", 7)
    assert teachers.spec(rules).startswith("zoo:")
    target = teachers.target(_net(), d, np.random.default_rng(0), ExpertConfig())
    assert (target[~d.legal] == 0).all() and np.allclose(target.sum(1), 1)
    played = make_agent("best", 7, 0).act(d)
    np.testing.assert_array_equal(target.argmax(1), played)
    assert (target.max(1) < 1).any()  # probabilities, not the played card alone


def test_rollout_teacher_is_the_rollout_operator() -> None:
    rules = Rules.preset("standard", players=3)
    d = _decision(rules)
    target = Teachers("rollout", 1).target(_net(), d, np.random.default_rng(4), ExpertConfig(worlds=3, temperature=0.1))
    values = improve(rules, _net(), d.public, d.legal, 3, np.random.default_rng(4))
    np.testing.assert_allclose(target, improved_policy(values, 0.1))


def _mixture_cfg(**expert: object) -> dict[str, object]:
    families = {
        "hard": {"presets": ["every_trick"], "players": [4]},
        "std": {"presets": ["standard", "swedish"], "players": [3, 4]},
    }
    ex = {"games": 8, "decisions": 150, "worlds": 2, "teacher": "best", **expert}
    return {**TINY, "algo": "expert", "preset": "standard", "expert": ex, "mixture": {"families": families, "slots": 3}}


def test_expert_generation_on_a_mixture_draws_its_tables() -> None:
    cfg = config_from_dict(_mixture_cfg())
    assert cfg.actions() == len(CARDS)
    first, second = Generations(cfg, seed=3), Generations(cfg, seed=3)
    assert len(first.rule_sets) == 3 and first.rule_sets == second.rule_sets
    assert {r.scoring for r in Generations(cfg, seed=5).rule_sets} <= {"every_trick", "last_trick"}
    a = first.play(_net(len(CARDS)), np.random.default_rng(1), len(CARDS), 150)[0]
    b = second.play(_net(len(CARDS)), np.random.default_rng(1), len(CARDS), 150)[0]
    assert len(a) >= 150 and (a.target[~a.legal] == 0).all() and np.allclose(a.target.sum(1), 1)
    for field in ("obs", "legal", "target", "reward"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_unknown_teacher_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"expert\.teacher must be one of rollout, best") as err:
        config_from_dict(_mixture_cfg(teacher="oracle"))
    assert "\n" not in str(err.value)


def test_teacher_searches_leave_the_other_searches_to_the_universal_file() -> None:
    teachers = Teachers("best", 7, ["pimc"])
    assert teachers.spec(Rules.preset("quick")) == "pimc"
    assert teachers.spec(Rules.preset("last_trick_only")) == "zoo:universal"  # best plays pimc:eval=exact there
    assert teachers.spec(Rules.preset("standard")) == Teachers("best", 7).spec(Rules.preset("standard"))
    d = _decision(Rules.preset("last_trick_only"))
    target = teachers.target(_net(), d, np.random.default_rng(0), ExpertConfig())
    played = make_agent("zoo", 7, 0).act(d)
    np.testing.assert_array_equal(target.argmax(1), played)
