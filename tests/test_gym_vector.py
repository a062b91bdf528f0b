"""The gymnasium ``VectorEnv`` (``gymnasium.make_vec("Agurk-v0")``): spaces, same-step auto-reset, seeds, and
equality with ``SyncVectorEnv`` over single envs and with the SB3 ``VecEnv`` on the same seeds."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv

import agurk_env
from agurk_env import engine, observation, sb3_vec_env, single_agent_env
from agurk_env.engine import random_legal
from agurk_env.single_agent import AgurkVectorEnv
from agurk_env.spaces import observation_box

CASES = [
    ("standard", {}),
    ("lives", {"players": 3, "episode": "match", "seat": 1}),
    ("jokers", {"players": 6, "seat": 5}),
    ("every_trick", {"players": 2, "episode": "match"}),
]


def _actions(masks: np.ndarray, rng: np.random.Generator, step: int) -> np.ndarray:
    """Random legal cards; every fifth step an illegal card where a game has one (played as the lowest legal)."""
    actions = random_legal(engine.pack(masks), rng)
    if step % 5 == 4:
        for g in np.flatnonzero(~masks.all(1)):
            actions[g] = np.flatnonzero(~masks[g])[0]
    return actions


@pytest.mark.parametrize("mode", [None, "vector_entry_point"])
@pytest.mark.parametrize(("preset", "options"), CASES)
def test_make_vec_builds_the_batched_env_with_its_spaces(preset: str, options: dict, mode: str | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # make_vec warns about a missing or wrong autoreset_mode
        venv = gymnasium.make_vec(agurk_env.GYMNASIUM_ID, num_envs=5, vectorization_mode=mode, rules=preset, **options)
    assert isinstance(venv, AgurkVectorEnv) and isinstance(venv, VectorEnv) and venv.num_envs == 5
    assert venv.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    rules, a = venv.rules, venv.rules.num_actions
    assert venv.single_observation_space == observation_box(rules)
    assert venv.single_action_space == gymnasium.spaces.Discrete(a)
    assert venv.observation_space.shape == (5, observation.SIZE) and venv.observation_space.dtype == np.float32
    assert venv.action_space == gymnasium.spaces.MultiDiscrete([a] * 5)
    single = single_agent_env(preset, **options)
    assert single.observation_space == venv.single_observation_space and single.action_space == venv.single_action_space
    obs, infos = venv.reset(seed=0)
    assert obs.shape == (5, observation.SIZE) and obs.dtype == np.float32 and venv.observation_space.contains(obs)
    assert set(infos) == {"action_mask", "_action_mask"} and infos["_action_mask"].all()
    assert np.array_equal(infos["action_mask"], venv.action_masks()) and infos["action_mask"].dtype == bool
    rng = np.random.default_rng(0)
    for step in range(30):
        obs, rewards, terminations, truncations, infos = venv.step(_actions(venv.action_masks(), rng, step))
        assert venv.observation_space.contains(obs)
        assert rewards.shape == terminations.shape == truncations.shape == (5,)
        assert terminations.dtype == truncations.dtype == bool and not truncations.any()
        assert np.array_equal(infos["action_mask"], venv.action_masks())
    venv.close()


@pytest.mark.parametrize(("preset", "options"), CASES)
def test_one_game_is_sync_vector_env_over_the_single_env(preset: str, options: dict) -> None:
    """Observations, rewards, terminations and every info key equal gymnasium's own same-step vectorization."""
    ours = gymnasium.make_vec("Agurk-v0", num_envs=1, rules=preset, **options)
    sync = SyncVectorEnv([lambda: single_agent_env(preset, **options)], autoreset_mode=AutoresetMode.SAME_STEP)
    rng = np.random.default_rng(5)
    ended = 0
    for seed in (11, None):  # a seeded reset, then an unseeded one in the middle of an episode
        a, b = ours.reset(seed=seed), sync.reset(seed=seed)
        assert data_equivalence(a, b, exact=True)
        for step in range(150):
            actions = _actions(ours.action_masks(), rng, step)
            a, b = ours.step(actions), sync.step(actions)
            assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1].astype(np.float32)), step
            assert data_equivalence(a[2:], b[2:], exact=True), (step, a[4], b[4])
            ended += int(a[2][0])
    assert ended >= 3


@pytest.mark.parametrize(("preset", "options"), [("standard", {}), ("lives", {"players": 3, "episode": "match"})])
def test_the_vector_env_is_the_sb3_vec_env(preset: str, options: dict) -> None:
    n = 16
    ours = gymnasium.make_vec("Agurk-v0", num_envs=n, rules=preset, **options)
    sb3 = sb3_vec_env(n, rules=preset, **options)
    obs, _ = ours.reset(seed=7)
    sb3.seed(7)
    assert np.array_equal(obs, sb3.reset())
    rng = np.random.default_rng(7)
    ended = 0
    for step in range(120):
        masks = ours.action_masks()
        assert np.array_equal(masks, sb3.action_masks())
        actions = _actions(masks, rng, step)
        obs, rewards, terminations, _, infos = ours.step(actions)
        sb3_obs, sb3_rewards, dones, sb3_infos = sb3.step(actions)
        assert np.array_equal(obs, sb3_obs) and np.array_equal(rewards, sb3_rewards)
        assert np.array_equal(terminations, dones)
        for g in range(n):
            last = sb3_infos[g].get("terminal_observation")
            assert (last is not None) == bool(infos.get("_final_obs", np.zeros(n, bool))[g])
            if last is not None:
                assert np.array_equal(infos["final_obs"][g], last)
            illegal = infos["final_info"]["illegal"][g] if terminations[g] else infos["illegal"][g]
            assert illegal == sb3_infos[g].get("illegal", False)
        ended += int(terminations.sum())
    assert ended >= n


def test_same_step_auto_reset_starts_the_next_episode_at_once() -> None:
    """A game that ended returns its next round's first observation; gymnasium's episode statistics count it so."""
    venv = gymnasium.wrappers.vector.RecordEpisodeStatistics(gymnasium.make_vec("Agurk-v0", num_envs=32, seat=0))
    games = venv.unwrapped.games
    venv.reset(seed=3)
    rng = np.random.default_rng(3)
    lengths = []
    for _ in range(40):
        _, rewards, terminations, _, infos = venv.step(random_legal(engine.pack(venv.unwrapped.action_masks()), rng))
        if terminations.any():
            st = games.state
            ended = np.flatnonzero(terminations)
            assert (st.hands[ended, 0].sum(1) == 7).all()  # the learner (seat 0) holds a whole new hand
            assert np.array_equal(infos["episode"]["r"][ended], rewards[ended])  # one reward per round episode
            lengths += infos["episode"]["l"][ended].tolist()
            assert not infos["final_info"]["action_mask"][ended].any()
    assert lengths and set(lengths) == {7}  # seven learner cards a round, counted in same-step mode


def test_seeds_deal_match_i_to_game_i_and_repeat() -> None:
    def run(seed: int | None, venv: AgurkVectorEnv | None = None) -> list[np.ndarray]:
        venv = venv or gymnasium.make_vec("Agurk-v0", num_envs=6, rules="danish21", players=5)
        out = [venv.reset(seed=seed)[0]]
        rng = np.random.default_rng(0)
        for _ in range(40):
            obs, rewards, terminations, _, _ = venv.step(random_legal(engine.pack(venv.action_masks()), rng))
            out += [obs, rewards, terminations]
        return out

    a, b, c = run(4), run(4), run(5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])
    venv = gymnasium.make_vec("Agurk-v0", num_envs=6)
    venv.reset(seed=4)
    assert np.array_equal(venv.games.state.match_id, np.arange(6))
    venv.reset()  # no seed: the next matches of the same seed
    assert np.array_equal(venv.games.state.match_id, np.arange(6, 12))
    unseeded = gymnasium.make_vec("Agurk-v0", num_envs=2)
    unseeded.reset()
    assert unseeded.games.state is not None


def test_render_and_errors() -> None:
    venv = gymnasium.make_vec("Agurk-v0", num_envs=3, render_mode="ansi", seat=1)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(3, np.int64))
    venv.reset(seed=0)
    texts = venv.render()
    assert len(texts) == 3 and all("player_1 (learner) holds" in text for text in texts)
    with pytest.raises(ValueError, match="render_mode"):
        gymnasium.make_vec("Agurk-v0", num_envs=2, render_mode="rgb_array")
    strict = gymnasium.make_vec("Agurk-v0", num_envs=2, illegal="raise", seat=0)
    strict.reset(seed=0)
    masks = strict.action_masks()
    while masks.all():
        strict.step(masks.argmax(1))  # the first legal card of each game
        masks = strict.action_masks()
    bad = np.where(masks.all(1), masks.argmax(1), (~masks).argmax(1))
    with pytest.raises(ValueError, match="learner"):
        strict.step(bad)
