"""The rollout operator (agents.guided.improve) and expert iteration (training/expert.py, ``algo: expert``).

- The operator reads public facts only: the same public view with other hidden hands gives the same values.
- Where every later card is forced its values are the exact solver's on the same worlds.
- More rollouts per world with greedy moves change nothing; weights of a game sum to one.
- The improved policy is a softmax over the legal cards only.
- Expert iteration: one config trains into a run folder, resumes, and the same seed gives the same data;
  a training phase lowers the cross entropy to the targets; bad ``expert.*`` keys are refused in one line.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from agents.guided import improve
from agents.pimc import exact_values, sample_worlds
from agents.policy import PolicyNet, load_checkpoint, masked_log_softmax
from agurk_env import engine, observation
from agurk_env.agent import Decision
from agurk_env.rules import Rules
from tests.test_guided import _positions
from tests.tiny_config import TINY
from training.config import ConfigError, config_from_dict, config_to_dict
from training.expert import Data, ExpertTrainer, Generations, fit
from training.resume import resume_checkpoint
from training.run import execute
from training.teacher import improved_policy


def _decision(rules: Rules, state: engine.State) -> Decision:
    bits = engine.legal_bits(rules, state)
    games = np.flatnonzero(engine.SET_SIZE[bits] > 1)
    return Decision(rules, state, games, bits[games])


def _net(seed: int = 0) -> PolicyNet:
    torch.manual_seed(seed)
    return PolicyNet(observation.SIZE, 13, [16]).eval()


def test_operator_does_not_depend_on_hidden_cards() -> None:
    rules = Rules.preset("standard")
    state = _positions(rules, 24, 5)  # mid-trick: the two seats after the mover hold as many cards
    d = _decision(rules, state)
    hands = state.hands.copy()  # the two seats after the mover swap hands where they are of one size
    rows = np.arange(state.batch)
    a, b = (state.cur + 1) % 4, (state.cur + 2) % 4
    ha, hb = hands[rows, a].copy(), hands[rows, b].copy()
    same = ha.sum(1) == hb.sum(1)
    hands[rows[same], a[same]], hands[rows[same], b[same]] = hb[same], ha[same]
    other = _decision(rules, engine.set_hands(rules, state, hands))
    assert not (other._state.hands == state.hands).all()
    net = _net()
    mine = improve(rules, net, d.public, d.legal, 4, np.random.default_rng(3), moves="sample")
    theirs = improve(rules, net, other.public, other.legal, 4, np.random.default_rng(3), moves="sample")
    np.testing.assert_array_equal(mine, theirs)
    assert np.isfinite(mine[d.legal]).all() and np.isneginf(mine[~d.legal]).all()


def test_operator_in_the_last_trick_is_the_exact_solver() -> None:
    rules = Rules.preset("standard", players=3, hand_size=4)
    state = _positions(rules, 64, 8)  # the last to play in the next-to-last trick: every later card is forced
    d = _decision(rules, state)
    assert len(d) and (state.trick_no[d.games] == rules.hand_size - 2).all()
    worlds = 6
    values = improve(rules, _net(), d.public, d.legal, worlds, np.random.default_rng(5))
    same = sample_worlds(rules, d.public, worlds, np.random.default_rng(5))  # the worlds improve drew
    exact = exact_values(rules, same, d.legal).mean(1)
    np.testing.assert_allclose(values[d.legal], exact[d.legal], atol=1e-12)


def test_more_greedy_rollouts_change_nothing() -> None:
    rules = Rules.preset("free_choice")
    state = _positions(rules, 16, 3)
    d = _decision(rules, state)
    net = _net(1)
    one = improve(rules, net, d.public, d.legal, 3, np.random.default_rng(2), rollouts=1)
    three = improve(rules, net, d.public, d.legal, 3, np.random.default_rng(2), rollouts=3)
    np.testing.assert_allclose(one, three)


def test_improved_policy_is_a_softmax_over_legal_cards() -> None:
    values = np.array([[-0.1, -np.inf, -0.3], [-np.inf, -0.5, -np.inf]])
    p = improved_policy(values, 0.1)
    np.testing.assert_allclose(p.sum(1), 1.0)
    assert p[0, 1] == 0 and p[1, 1] == 1.0
    np.testing.assert_allclose(p[0, 0] / p[0, 2], np.exp(2.0))


def _cfg(**over: object) -> dict[str, object]:
    expert = {"games": 16, "decisions": 300, "worlds": 2, "epochs": 1, "window": 2}
    return {**TINY, "algo": "expert", "preset": "standard", "total_steps": 600, "expert": expert, **over}


def test_same_seed_gives_the_same_generation() -> None:
    cfg = config_from_dict(_cfg(players=[3, 4]))
    datas = []
    for _ in range(2):
        gen = Generations(cfg, seed=4)
        datas.append(gen.play(_net(), np.random.default_rng(9), 13, 300)[0])
    a, b = datas
    assert len(a) >= 300
    for field in ("obs", "legal", "target", "reward"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert (a.target[~a.legal] == 0).all() and np.allclose(a.target.sum(1), 1)
    assert (a.reward <= 0).all() and (a.reward < 0).any()  # every decision got its round's reward


def test_a_generation_is_the_same_in_worker_processes() -> None:
    cfg = config_from_dict(_cfg(expert={"games": 8, "decisions": 120, "shards": 2, "worlds": 2}))
    here = ExpertTrainer(cfg).generate()[0]
    there = ExpertTrainer(config_from_dict(_cfg(expert={**cfg_expert(cfg), "workers": 2}))).generate()[0]
    assert len(here) >= 120
    for field in ("obs", "legal", "target", "reward"):
        np.testing.assert_array_equal(getattr(here, field), getattr(there, field))


def cfg_expert(cfg) -> dict[str, object]:
    return config_to_dict(cfg)["expert"]


def test_a_training_phase_lowers_the_cross_entropy() -> None:
    cfg = config_from_dict(_cfg(learning_rate=0.01, expert={"games": 16, "decisions": 300, "temperature": 0.01}))
    data = Generations(cfg, seed=2).play(_net(), np.random.default_rng(1), 13, 300)[0]
    net = _net(3)

    def kl() -> float:  # the cross entropy to the targets less their entropy
        with torch.no_grad():
            logp = masked_log_softmax(net(torch.from_numpy(data.obs))[0], torch.from_numpy(data.legal)).numpy()
        t = data.target
        return float((t * (np.log(np.maximum(t, 1e-30)) - logp)).sum(1).mean())

    before = kl()
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    for _ in range(20):
        fit(cfg, net, opt, data, torch.Generator().manual_seed(0))
    assert kl() < 0.7 * before


def test_expert_run_trains_evaluates_and_resumes(tmp_path) -> None:
    cfg = config_from_dict(_cfg())
    out = tmp_path / "run"
    summary = execute(cfg, out, None)
    assert summary["global_step"] >= 600 and summary["saved"]
    data = load_checkpoint(out / "checkpoints" / "latest.pt")
    assert data["algo"] == "expert" and (out / "checkpoints" / "best.pt").exists()
    assert (out / "eval.json").exists()
    more = config_from_dict(_cfg(total_steps=1200))
    resume = resume_checkpoint(str(out), more)
    again = execute(more, out, resume.data)
    assert again["start_step"] == summary["global_step"] and again["global_step"] >= 1200


def test_expert_run_can_start_from_a_checkpoint(tmp_path) -> None:
    first = tmp_path / "first"
    execute(config_from_dict(_cfg()), first, None)
    cfg = config_from_dict(_cfg(init=str(first), expert={"games": 8, "decisions": 100, "worlds": 2}))
    out = tmp_path / "second"
    execute(cfg, out, None)
    assert load_checkpoint(out / "checkpoints" / "latest.pt")["global_step"] >= 100
    # a resumed run continues from its own checkpoint: ``init`` is not read again (its file may be gone)
    shutil.rmtree(first)
    more = config_from_dict(_cfg(init=str(first), total_steps=1200, expert={"games": 8, "decisions": 100, "worlds": 2}))
    again = execute(more, out, resume_checkpoint(str(out), more).data)
    assert again["global_step"] >= 1200


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("worlds", 0, "expert.worlds must be an integer >= 1"),
        ("temperature", -1, "expert.temperature must be a number > 0"),
        ("moves", "mixed", "expert.moves must be one of greedy, sample"),
        ("wrld", 3, "unknown config key 'expert.wrld'"),
    ],
)
def test_bad_expert_keys_are_refused_in_one_line(key: str, value: object, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as err:
        config_from_dict(_cfg(), [f"expert.{key}={value}"])
    assert "\n" not in str(err.value)


def test_init_of_another_shape_is_refused(tmp_path) -> None:
    first = tmp_path / "first"
    execute(config_from_dict(_cfg()), first, None)
    from training.run import make_trainer

    cfg = config_from_dict(_cfg(hidden=[8], init=str(first)))
    with pytest.raises(ConfigError, match="does not fit the config"):
        make_trainer(cfg)


def test_data_concat_keeps_rows() -> None:
    parts = [Data(np.zeros((n, 2), np.float32), np.ones((n, 3), bool), np.zeros((n, 3)), np.zeros(n)) for n in (2, 3)]
    assert len(Data.concat(parts)) == 5
