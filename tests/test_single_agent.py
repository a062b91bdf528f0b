"""The single-agent views: gymnasium's and SB3's checkers, the batched VecEnv's invariants, a MaskablePPO smoke test."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from oracles import expected_observation, reference_at

from agents.registry import opponents
from agurk_env import engine, observation, sb3_vec_env, single_agent_env
from agurk_env.agent import RandomAgent
from agurk_env.engine import random_legal
from agurk_env.rewards import round_rewards
from agurk_env.rules import Rules

CASES = [
    ("standard", {}),
    ("lives", {"players": 3, "episode": "match", "seat": 1}),
    ("jokers", {"players": 6, "seat": 5}),
    ("every_trick", {"players": 2, "episode": "match"}),
]


@pytest.mark.parametrize(("preset", "options"), CASES)
def test_gymnasium_check_env(preset: str, options: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no render fps / no registry spec: advisory only
        check_env(single_agent_env(preset, render_mode="ansi", **options))


@pytest.mark.parametrize(("preset", "options"), CASES)
def test_sb3_check_env(preset: str, options: dict) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(single_agent_env(preset, **options), warn=True)


def _random_actions(venv, rng: np.random.Generator) -> np.ndarray:
    return random_legal(engine.pack(venv.action_masks()), rng)


@pytest.mark.parametrize(("preset", "options"), [("standard", {}), ("quick", {"players": 5}), ("lives", {})])
def test_vec_env_invariants(preset: str, options: dict) -> None:
    """Between steps every learner is to move; masks, observations and terminal observations are consistent."""
    n = 64
    venv = sb3_vec_env(n, rules=preset, **options)
    rules = venv.rules
    venv.seed(3)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    start_score = obs[:, _score_slot()].copy()
    done_count = 0
    for step in range(120):
        games = venv.games
        st = games.state
        assert (st.cur == games.seat).all() and not st.round_over.any()
        masks = venv.action_masks()
        assert masks.shape == (n, rules.num_actions) and masks.any(1).all()
        assert np.array_equal(masks, engine.legal_mask(rules, st))
        assert np.array_equal(np.stack(venv.env_method("action_masks")), masks)
        assert obs.shape == (n, observation.SIZE)
        for g in range(step % 8, n, 8):  # each learner's observation, rebuilt slice by slice from the state
            assert np.array_equal(obs[g], expected_observation(rules, st, g, int(games.seat[g]))), (step, g)
            assert np.flatnonzero(masks[g]).tolist() == reference_at(rules, st, g).legal(), (step, g)
        assert venv.observation_space.contains(obs[0])
        obs, rewards, dones, infos = venv.step(_random_actions(venv, rng))
        assert obs.dtype == np.float32 and rewards.dtype == np.float32 and dones.dtype == bool
        assert (rewards[~dones] == 0).all()
        for g in range(n):
            assert ("terminal_observation" in infos[g]) == dones[g]
            assert "illegal" not in infos[g]
        for g in np.flatnonzero(dones):
            last = infos[g]["terminal_observation"]
            assert venv.observation_space.contains(last)
            if not rules.rebuys:  # the score moved by this round's penalty (relative seat 0 is the learner)
                penalty = (last[_score_slot()] - start_score[g]) * rules.limit
                assert rewards[g] == pytest.approx(-penalty / rules.limit, abs=1e-5)
            start_score[g] = obs[g, _score_slot()]
        done_count += dones.sum()
    assert done_count >= n * 10


def _score_slot() -> int:
    """Index of the learner's own score in the observation vector."""
    probe = np.zeros(observation.SIZE, np.float32)
    observation.view(probe)["score"][0] = 1.0
    return int(np.flatnonzero(probe)[0])


def test_vec_env_is_deterministic_and_matches_the_gymnasium_env() -> None:
    def run(make, steps: int = 60) -> list[np.ndarray]:
        env = make()
        out = []
        rng = np.random.default_rng(1)
        if hasattr(env, "num_envs"):
            env.seed(9)
            out.append(env.reset()[0])
            for _ in range(steps):
                obs, r, d, info = env.step(_random_actions(env, rng))
                out += [info[0].get("terminal_observation", obs[0]), r[[0]]]
                if d[0]:
                    out.append(obs[0])
        else:
            obs, _ = env.reset(seed=9)
            out.append(obs)
            for _ in range(steps):
                action = random_legal(engine.pack(env.action_masks()[None]), rng)[0]
                obs, r, term, _, _ = env.step(action)
                out += [obs, np.array([r], np.float32)]
                if term:
                    out.append(env.reset()[0])
        return out

    a = run(lambda: sb3_vec_env(1, rules="danish21", players=5))
    b = run(lambda: sb3_vec_env(1, rules="danish21", players=5))
    c = run(lambda: single_agent_env("danish21", players=5))
    assert len(a) == len(b) == len(c)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_game_i_plays_match_i_of_the_seed() -> None:
    venv = sb3_vec_env(4, rules="standard", seat=2)
    venv.seed(21)
    venv.reset()
    direct = engine.init(Rules.preset("standard"), 4, 21)
    assert np.array_equal(venv.games.state.match_id, np.arange(4))
    # game i holds the engine's deal of (seed 21, match i, round 0); seat 1 has led trick 1 already
    played = venv.games.state.tricks[:, 0]
    assert np.array_equal(venv.games.state.hands + _counts(played, 13), direct.hands)


def _counts(played: np.ndarray, actions: int) -> np.ndarray:
    """``(B, P, A)`` counts of the cards in ``played`` ``(B, P)`` (-1 for none)."""
    out = np.zeros((*played.shape, actions), np.int8)
    b, p = np.nonzero(played >= 0)
    out[b, p, played[b, p]] = 1
    return out


def test_seat_and_opponents_options() -> None:
    venv = sb3_vec_env(16, rules="standard", seat=3, opponents=opponents("random,random,random", 4))
    venv.reset()
    assert (venv.games.seat == 3).all()
    venv.step(_random_actions(venv, np.random.default_rng(0)))
    free = sb3_vec_env(256, rules="standard")
    free.seed(0)
    free.reset()
    assert set(free.games.seat.tolist()) == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="opponent spec"):
        opponents("random,random", 4)
    with pytest.raises(ValueError, match="unknown agent"):
        opponents("nobody", 4)
    with pytest.raises(ValueError, match="3 agents"):
        sb3_vec_env(2, opponents=[RandomAgent(np.random.default_rng(0))] * 2)
    with pytest.raises(ValueError, match="seat"):
        single_agent_env(seat=4)


def test_illegal_actions() -> None:
    env = single_agent_env("standard", seat=0, illegal="raise")
    env.reset(seed=0)
    mask = env.action_masks()
    while mask.all():  # find a turn with an illegal held card or any illegal card
        env.step(int(np.flatnonzero(mask)[0]))
        mask = env.action_masks()
    bad = int(np.flatnonzero(~mask)[0])
    with pytest.raises(ValueError, match="learner"):
        env.step(bad)
    lenient = single_agent_env("standard", seat=0)
    lenient.reset(seed=0)
    mask = lenient.action_masks()
    while mask.all():
        lenient.step(int(np.flatnonzero(mask)[0]))
        mask = lenient.action_masks()
    _, _, _, _, info = lenient.step(int(np.flatnonzero(~mask)[0]))
    assert info["illegal"] is True


def test_match_episodes_end_with_a_placement_reward() -> None:
    venv = sb3_vec_env(128, rules="standard", episode="match")
    venv.seed(4)
    venv.reset()
    rng = np.random.default_rng(4)
    finals = []
    for _ in range(400):
        _, rewards, dones, _ = venv.step(_random_actions(venv, rng))
        assert (rewards[~dones] == 0).all()
        finals += rewards[dones].tolist()
    assert len(finals) > 100
    # places (shared places average) among 4 seats are worth multiples of 1/3 in [-1, 1]
    thirds = np.array(finals) * 3
    assert np.allclose(thirds, np.round(thirds), atol=1e-4) and np.abs(thirds).max() <= 3 + 1e-4
    assert -1.0 in finals and 1.0 in finals


def test_round_rewards_scale() -> None:
    rules = Rules.preset("standard")
    st = engine.init(rules, 1, 0)._replace(round_penalty=np.array([[0, 13, 0, 14]], np.int32))
    assert round_rewards(rules, st)[0].tolist() == pytest.approx([0.0, -13 / 30, 0.0, -14 / 30])


def test_render() -> None:
    env = single_agent_env("standard", seat=1, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "player_1 (learner) holds" in text and text.count("holds") == 1
    venv = sb3_vec_env(2, render_mode="ansi")
    venv.reset()
    assert "learner" in venv.render() and len(venv.env_method("render")) == 2


def _mean_round_penalty(venv, policy, rounds: int = 3) -> float:
    """Mean learner penalty points per round over ``rounds`` rounds of every game, on fixed seeds."""
    venv.seed(12345)
    obs = venv.reset()
    rng = np.random.default_rng(12345)
    total, episodes = 0.0, 0
    while episodes < venv.num_envs * rounds:
        masks = venv.action_masks()
        if policy is None:
            actions = random_legal(engine.pack(masks), rng)
        else:
            actions, _ = policy.predict(obs, action_masks=masks, deterministic=True)
        obs, rewards, dones, _ = venv.step(actions)
        total += float(rewards.sum())
        episodes += int(dones.sum())
    return -total / episodes * venv.rules.limit


def test_maskable_ppo_beats_random_opponents() -> None:
    """MaskablePPO on sb3_vec_env for 15k learner steps: its mean round penalty is well below random play's."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    venv = sb3_vec_env(128, rules="standard", opponents=opponents("random", 4))
    venv.seed(0)
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=28, batch_size=512, n_epochs=4, learning_rate=1e-3, gamma=1.0, seed=0, verbose=0
    )
    model.learn(15_000)
    test_env = sb3_vec_env(1024, rules="standard", opponents=opponents("random", 4))
    random_penalty = _mean_round_penalty(test_env, None)
    ppo_penalty = _mean_round_penalty(test_env, model)
    assert 2.0 < random_penalty < 3.5  # about 2.8 points per round for a random seat
    assert ppo_penalty < 0.75 * random_penalty, (ppo_penalty, random_penalty)


class _LowestCard:
    """A deterministic opponent on the Decision interface: the legal card with the lowest index."""

    sees_all = False

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.calls = 0

    def act(self, decision) -> np.ndarray:
        self.calls += 1
        return np.asarray(decision.legal).argmax(1)


def test_registered_agents_play_as_opponents() -> None:
    from agents.registry import register

    made: list[_LowestCard] = []

    def factory(spec: str, arg: str | None, rng: np.random.Generator) -> _LowestCard:
        made.append(_LowestCard(spec))
        return made[-1]

    register("test_lowest_card", factory, "test opponent: the lowest legal card")
    venv = sb3_vec_env(32, rules="standard", opponents=opponents("random,test_lowest_card,random", 4), seat=0)
    venv.seed(1)
    venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(30):
        venv.step(_random_actions(venv, rng))
        st = venv.games.state
        assert (st.cur == 0).all()
    assert made and made[-1].calls > 0
    before = len(made)
    mono = sb3_vec_env(8, rules="standard", opponents=opponents("test_lowest_card", 4), seat=1)  # one agent for all
    mono.reset()
    for _ in range(14):
        mono.step(_random_actions(mono, rng))
    assert sum(agent.calls for agent in made[before:]) > 14
