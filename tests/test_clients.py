"""Outside clients over whole matches: every seat's return, as each client reports it, equals the record's.

Tianshou's ``PettingZooEnv`` (and its ``Collector``, marked slow), RLlib's ``PettingZooEnv`` (through
its ``MultiAgentEpisode``), PettingZoo's ``turn_based_aec_to_parallel`` and the SB3 tutorial's
approach (:class:`AgurkRewardWrapper`, and ``MaskablePPO`` on it), in round and match episodes,
with the default ``env()`` settings. The expected returns come from ``record()`` alone:
``-penalty / limit`` per round, or the placement rewards (:mod:`agurk_env.rewards`) of the
match's rounds. Also ``gymnasium.make("Agurk-v0")``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pettingzoo.utils import BaseWrapper

import agurk_env
from agurk_env import engine
from agurk_env.rewards import placement_rewards
from agurk_env.rules import Rules
from agurk_env.wrappers import AgurkRewardWrapper

# (preset, options): eliminations within a few rounds (limit 5), rebuys, first_out, five seats and every-trick scoring
CONFIGS = [
    ("standard", {"limit": 5}),
    ("second_chance", {"limit": 8}),
    ("quick", {}),
    ("every_trick", {"players": 5}),
]
IDS = ["standard-limit5", "second_chance-limit8", "quick", "every_trick-5p"]
SEEDS = (0, 1, 2)
EPISODES = ("round", "match")


def _rules(preset: str, options: dict) -> Rules:
    return Rules.preset(preset, **options)


def _pick(mask: Any, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(np.asarray(mask))))


def _round_returns(rules: Rules, rnd: dict) -> np.ndarray:
    return -np.asarray(rnd["penalties"], np.float64) / rules.limit


def _match_returns(rules: Rules, record: dict) -> np.ndarray:
    """Every seat's placement rewards over the record's rounds (``placement_rewards`` on the record's facts)."""
    p = rules.players
    seats = np.arange(p)
    alive = np.ones(p, bool)
    total = np.zeros(p)
    blank = engine.init(rules, 1, 0)
    for i, rnd in enumerate(record["rounds"]):
        out = np.isin(seats, rnd["out"])
        alive &= ~out
        over = i == len(record["rounds"]) - 1
        winners = np.isin(seats, record["winners"]) & over
        end = blank._replace(alive=alive[None], out_now=out[None], winners=winners[None], match_over=np.array([over]))
        total += placement_rewards(rules, end)[1][0]
    return total


def _expected(rules: Rules, episode: str, record: dict) -> np.ndarray:
    """The returns of the episode that ended with ``record`` (its last round, or its whole match)."""
    assert "winners" in record or episode == "round"
    return _round_returns(rules, record["rounds"][-1]) if episode == "round" else _match_returns(rules, record)


def _whole_matches(
    rules: Rules, episode: str, reset: Callable[[int | None], None], play: Callable[[], np.ndarray], aec: Any
) -> None:
    """Episodes from ``reset(seed)`` to the end of that match for every seed, each checked against the record.

    Also checks that the matches had rounds after an elimination (none under ``first_out``).
    """
    later = 0
    for seed in SEEDS:
        reset(seed)
        while True:
            got = play()
            record = aec.unwrapped.record()
            np.testing.assert_allclose(got, _expected(rules, episode, record), atol=1e-6, err_msg=f"{seed} {episode}")
            if "winners" in record:
                break
            reset(None)
        rounds = record["rounds"]
        later += sum(any(r["out"] for r in rounds[:i]) for i in range(len(rounds)))
    assert (later > 0) == (rules.match_end != "first_out")


def _seat(agent: str) -> int:
    return int(agent.rsplit("_", 1)[1])


# ----------------------------------------------------------------------------- Tianshou


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize(("preset", "options"), CONFIGS, ids=IDS)
def test_tianshou_wrapper_returns(preset: str, options: dict, episode: str) -> None:
    """Tianshou's ``PettingZooEnv`` summed as its ``Collector`` does: reward vectors until ``term or trunc``."""
    from tianshou.env import PettingZooEnv

    rules = _rules(preset, options)
    aec = agurk_env.env(rules, episode=episode)
    client = PettingZooEnv(aec)
    rng = np.random.default_rng(0)
    state: dict[str, Any] = {}

    def reset(seed: int | None) -> None:
        state["obs"], _ = client.reset(seed=seed)

    def play() -> np.ndarray:
        got = np.zeros(rules.players)
        while True:
            state["obs"], rew, term, trunc, _ = client.step(_pick(state["obs"]["mask"], rng))
            got += rew
            if term or trunc:
                return got

    _whole_matches(rules, episode, reset, play, aec)


class _EpisodeRecords(BaseWrapper):
    """A transparent AEC wrapper that keeps the record of every episode when it ends (the Collector resets at once)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.records: list[dict] = []

    def step(self, action: Any) -> None:
        live = not (self.env.terminations[self.env.agent_selection] or self.env.truncations[self.env.agent_selection])
        self.env.step(action)
        if live and all(self.env.terminations[a] or self.env.truncations[a] for a in self.env.agents):
            self.records.append(self.env.unwrapped.record())


@pytest.mark.slow  # Tianshou's policies compile numba code on construction: about 10 s per process
@pytest.mark.parametrize("episode", EPISODES)
def test_tianshou_collector_returns(episode: str) -> None:
    """Tianshou's own bookkeeping: a ``Collector`` with random ``MultiAgentPolicy`` seats; its returns per episode."""
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, ReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    for preset, options in (CONFIGS[0], CONFIGS[3]):
        rules = _rules(preset, options)
        watched = _EpisodeRecords(agurk_env.env(rules, episode=episode))
        client = PettingZooEnv(watched)
        random_policy = MARLRandomDiscreteMaskedOffPolicyAlgorithm.Policy
        policy = MultiAgentPolicy({a: random_policy(client.action_space) for a in client.agents})
        policy.agent_idx = client.agent_idx
        # one env, one plain ReplayBuffer: a VectorReplayBuffer compiles numba code too
        collector = Collector(policy, DummyVectorEnv([lambda client=client: client]), ReplayBuffer(20_000))
        for seed in SEEDS:
            np.random.seed(seed)  # noqa: NPY002 (Tianshou's random policy draws from NumPy's global generator)
            collector.reset(gym_reset_kwargs={"seed": seed})
            watched.records.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # Tianshou's note that (n, P) returns are summarised flat
                returns = collector.collect(n_episode=12 if episode == "round" else 3).returns
            assert returns.shape == (len(watched.records), rules.players)
            for got, record in zip(returns, watched.records, strict=True):
                np.testing.assert_allclose(got, _expected(rules, episode, record), atol=1e-6)
            if episode == "match":
                np.testing.assert_allclose(returns.sum(1), 0.0, atol=1e-5)  # the winners' rewards are in


# ----------------------------------------------------------------------------- RLlib


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize(("preset", "options"), CONFIGS, ids=IDS)
def test_rllib_wrapper_and_episode_returns(preset: str, options: dict, episode: str) -> None:
    """RLlib's ``PettingZooEnv`` (no ``ray.init``): its rewards summed, and as ``MultiAgentEpisode`` counts them."""
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    rules = _rules(preset, options)
    aec = agurk_env.env(rules, episode=episode)
    client = PettingZooEnv(aec)
    rng = np.random.default_rng(0)
    first: dict[str, Any] = {}

    def reset(seed: int | None) -> None:
        first["obs"], first["infos"] = client.reset(seed=seed)

    def play() -> np.ndarray:
        obs = first["obs"]
        episode_ = MultiAgentEpisode(observation_space=client.observation_space, action_space=client.action_space)
        episode_.add_env_reset(observations=obs, infos=first["infos"])
        summed = np.zeros(rules.players)
        while True:
            (agent,) = obs  # only the agent to move is observed before the end
            action = {agent: _pick(obs[agent]["action_mask"], rng)}
            obs, rewards, terms, truncs, infos = client.step(action)
            episode_.add_env_step(obs, action, rewards, infos, terminateds=terms, truncateds=truncs)
            for a, r in rewards.items():
                summed[_seat(a)] += r
            if terms["__all__"] or truncs["__all__"]:
                break
        assert episode_.is_done
        counted = np.zeros(rules.players)
        for a, single in episode_.agent_episodes.items():
            counted[_seat(a)] = single.get_return()
        np.testing.assert_allclose(counted, summed, atol=1e-6)
        return summed

    _whole_matches(rules, episode, reset, play, aec)


# ----------------------------------------------------------------------------- PettingZoo's parallel view


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize(("preset", "options"), CONFIGS, ids=IDS)
def test_turn_based_aec_to_parallel_returns(preset: str, options: dict, episode: str) -> None:
    """Every agent acts from its own mask (``action_space.sample(mask)``: 0 when it has none); rewards summed."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    rules = _rules(preset, options)
    par = turn_based_aec_to_parallel(agurk_env.env(rules, episode=episode))
    state: dict[str, Any] = {}

    def reset(seed: int | None) -> None:
        state["obs"], _ = par.reset(seed=seed)
        if seed is not None:
            for s, a in enumerate(par.possible_agents):
                par.action_space(a).seed(seed * 16 + s)

    def play() -> np.ndarray:
        got = np.zeros(rules.players)
        while par.agents:
            obs = state["obs"]
            actions = {a: int(par.action_space(a).sample(obs[a]["action_mask"])) for a in par.agents}
            state["obs"], rewards, _, _, _ = par.step(actions)
            for a, r in rewards.items():
                got[_seat(a)] += r
        return got

    _whole_matches(rules, episode, reset, play, par)


# ----------------------------------------------------------------------------- SB3 tutorial approach


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize(("preset", "options"), CONFIGS, ids=IDS)
def test_reward_wrapper_gives_each_seat_its_return(preset: str, options: dict, episode: str) -> None:
    rules = _rules(preset, options)
    wrapped = AgurkRewardWrapper(agurk_env.env(rules, episode=episode))
    rng = np.random.default_rng(1)
    noops = []

    def play() -> np.ndarray:
        got = np.zeros(rules.players)
        while True:
            mask = wrapped.action_mask()
            assert mask.dtype == bool and mask.any()
            acting = wrapped.agent_selection
            obs, reward, terminated, truncated, info = wrapped.step(_pick(mask, rng))
            assert info["agent"] == acting and obs in wrapped.observation_space and not truncated
            got[_seat(acting)] += reward
            if terminated:
                noops.append(mask.tolist() == [True] + [False] * (mask.size - 1))
                return got

    _whole_matches(rules, episode, lambda seed: wrapped.reset(seed=seed), play, wrapped.env)
    assert all(noops)  # every episode ends with the seats' no-op steps


def test_reward_wrapper_steps_through_every_seat_at_the_end() -> None:
    wrapped = AgurkRewardWrapper(agurk_env.env("standard"))
    obs, info = wrapped.reset(seed=4)
    assert obs.shape == wrapped.observation_space.shape and info == {"agent": wrapped.agent_selection}
    actors = []
    terminated = False
    while not terminated:
        mask = wrapped.action_mask()
        _, _, terminated, _, info = wrapped.step(int(np.flatnonzero(mask)[-1]))  # on a no-op any action is ignored
        actors.append(info["agent"])
    assert len(actors) == 28 + 4 and sorted(actors[-4:]) == [f"player_{s}" for s in range(4)]
    assert set(info) == {"agent", "penalty", "score", "out"}


def test_maskable_ppo_learns_on_the_reward_wrapper() -> None:
    """The tutorial's setup: ``ActionMasker`` over the wrapper, ``MaskablePPO`` for every seat."""
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker

    torch.set_num_threads(1)
    wrapped = AgurkRewardWrapper(agurk_env.env("standard", episode="match", limit=5))
    wrapped.reset(seed=0)
    env = ActionMasker(wrapped, lambda e: e.action_mask())
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0)
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256


# ----------------------------------------------------------------------------- the earlier seats: what went wrong


def test_out_seats_leave_is_the_behaviour_the_clients_misread() -> None:
    """``out_seats="leave"``: Tianshou ends a match at the first elimination; the parallel view then offers no mask."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel
    from tianshou.env import PettingZooEnv

    rules = _rules("standard", {"limit": 5})
    client = PettingZooEnv(agurk_env.env(rules, episode="match", out_seats="leave"))
    rng = np.random.default_rng(0)
    obs, _ = client.reset(seed=0)
    got = np.zeros(rules.players)
    while True:
        obs, rew, term, trunc, _ = client.step(_pick(obs["mask"], rng))
        got += rew
        if term or trunc:
            break
    assert "winners" not in client.env.unwrapped.record() and got.sum() < 0 and got.max() == 0.0
    par = turn_based_aec_to_parallel(agurk_env.env(rules, episode="match", out_seats="leave"))
    obs, _ = par.reset(seed=0)
    while len(par.agents) == rules.players:
        actions = {a: _pick(obs[a]["action_mask"], rng) if obs[a]["action_mask"].any() else 0 for a in par.agents}
        obs, *_ = par.step(actions)
    assert par.agents and not any(obs[a]["action_mask"].any() for a in par.agents)  # the match goes on, no one may play


# ----------------------------------------------------------------------------- gymnasium.make


def test_gymnasium_make_and_env_checker() -> None:
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("Agurk-v0", rules="lives", players=3, episode="match", seat=1, render_mode="ansi")
    assert env.spec.id == agurk_env.GYMNASIUM_ID and env.unwrapped.rules.players == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # advisory only: no render fps
        check_env(env.unwrapped)
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space and info["action_mask"].any()
    obs, reward, _, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert obs in env.observation_space and isinstance(reward, float) and not truncated
