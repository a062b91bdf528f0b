"""Environment throughput: the AEC env beside PettingZoo's ``leduc_holdem_v4``, and the two vector envs.

:func:`bench_env` returns a plain dict (JSON-ready) for ``agurk bench env``. Every
figure is measured in the same process, one after the other, on one core (the CLI runs it
through :func:`agurk.bench.engine.pinned`, so that NumPy's thread pools are one thread each).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    import gymnasium
    from pettingzoo import AECEnv

    from agurk_env.rules import Rules


def aec_turns_per_s(make_env: Callable[[], AECEnv], seconds: float, seed: int = 0) -> dict[str, float]:
    """Random legal play with PettingZoo's standard loop for about ``seconds``.

    Each turn is ``last()``, a uniformly random card from the ``action_mask`` and
    ``step()``; the dead steps at an episode's end and the resets are timed but not
    counted as turns. Both environments run this same loop.
    """
    env = make_env()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    turns = episodes = 0
    start = time.perf_counter()
    while True:
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            turns += 1
        episodes += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
        env.reset()
    env.close()
    return {"turns": turns, "episodes": episodes, "seconds": elapsed, "turns_per_s": turns / elapsed}


def interleaved(
    makers: dict[str, Callable[[], AECEnv]], seconds: float, seed: int = 0, slices: int = 3
) -> dict[str, dict[str, float]]:
    """:func:`aec_turns_per_s` of every environment for about ``seconds`` each, in ``slices`` turns taken in rotation.

    Taking turns spreads a busy machine's changing load over all of them, so their ratios hold
    better than those of one measurement after the other.
    """
    totals = {name: {"turns": 0, "episodes": 0, "seconds": 0.0} for name in makers}
    for _ in range(slices):
        for name, make in makers.items():
            part = aec_turns_per_s(make, seconds / slices, seed)
            for key in ("turns", "episodes", "seconds"):
                totals[name][key] += part[key]
    return {name: {**t, "turns_per_s": t["turns"] / t["seconds"]} for name, t in totals.items()}


def _null_env(players: int = 4, tricks: int = 7, size: int = 0, actions: int = 13) -> AECEnv:
    """A do-nothing AEC env (wrapped like ours) with Agurk's shapes: the floor of the timing loop.

    Every turn it returns a fresh observation vector and mask and moves to the next agent;
    a round ends after ``players * tricks`` turns. No game, no rules: whatever an
    environment does per turn comes on top of this figure.
    """
    import gymnasium
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers

    from agurk_env.observation import SIZE

    class NullEnv(AECEnv):
        metadata: ClassVar[dict[str, Any]] = {"name": "null_v0", "render_modes": []}

        def __init__(self) -> None:
            super().__init__()
            self.possible_agents = [f"player_{i}" for i in range(players)]
            self._space = gymnasium.spaces.Discrete(actions)
            self._obs = np.zeros(size or SIZE, np.float32)
            self._mask = np.ones(actions, np.int8)

        def observation_space(self, agent: str) -> None:
            return None

        def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
            return self._space

        def observe(self, agent: str) -> dict[str, np.ndarray]:
            return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}

        def reset(self, seed: int | None = None, options: dict | None = None) -> None:
            self.agents = list(self.possible_agents)
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos = {a: {} for a in self.agents}
            self.agent_selection, self._turn = self.agents[0], 0

        def step(self, action: int | None) -> None:
            if self.terminations[self.agent_selection]:
                self._was_dead_step(action)
                return
            self._cumulative_rewards[self.agent_selection] = 0.0
            self._clear_rewards()
            self._turn += 1
            if self._turn == players * tricks:
                for agent in self.agents:
                    self.terminations[agent] = True
                    self.rewards[agent] = -1.0
            self.agent_selection = self.possible_agents[self._turn % players]
            self._accumulate_rewards()

    return wrappers.OrderEnforcingWrapper(NullEnv())


def vec_env_steps_per_s(
    n_envs: int, seconds: float, rules: str | Rules = "standard", seed: int = 0, api: str = "sb3"
) -> dict[str, float]:
    """A vector env of ``n_envs`` games stepped with random legal cards (random opponents) for about ``seconds``.

    ``api="sb3"`` steps ``sb3_vec_env(n_envs)``, ``api="gymnasium"`` steps
    ``gymnasium.make_vec("Agurk-v0", num_envs=n_envs)``: two adapters of the same learner
    games. A learner step is one learner card in one game, with every opponent card up to
    the learner's next turn, the observation, the auto-reset and the infos.
    """
    from agurk_env import engine

    if api == "sb3":
        from agurk_env.single_agent import sb3_vec_env

        venv = sb3_vec_env(n_envs, rules=rules)
        venv.seed(seed)
        venv.reset()
    else:
        import gymnasium

        from agurk_env import GYMNASIUM_ID

        venv = gymnasium.make_vec(GYMNASIUM_ID, num_envs=n_envs, rules=rules)
        venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = episodes = 0
    start = time.perf_counter()
    while True:
        dones = venv.step(engine.random_legal(engine.pack(venv.action_masks()), rng))[2]
        steps += 1
        episodes += int(dones.sum())
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "steps": steps * n_envs,
        "episodes": episodes,
        "seconds": elapsed,
        "steps_per_s": steps * n_envs / elapsed,
        "n_envs": n_envs,
    }


def bench_env(seconds: float = 3.0, rules: str = "standard", n_envs: int = 1024, seed: int = 0) -> dict[str, Any]:
    """AEC turns/s beside ``leduc_holdem_v4`` in the same run, and the SB3 and gymnasium vector envs' learner steps/s.

    Args:
        seconds: Time for each of the four measurements (the three AEC ones taken in turns, see
            :func:`interleaved`).
        rules: The preset the Agurk environments play.
        n_envs: Games in the measured vector envs.
        seed: Seed of the deals and of the random cards.

    Returns:
        ``turns_per_s`` (the Agurk AEC env, round episodes), ``leduc_turns_per_s`` (None when
        PettingZoo's classic extras are missing; ``leduc_error`` says why), ``ratio`` (Agurk
        over Leduc), ``sb3_steps_per_s`` and ``sb3_n_envs`` (None and ``sb3_error`` without
        stable-baselines3), ``gym_vector_steps_per_s`` (``gymnasium.make_vec``, right after it),
        ``floor_turns_per_s`` (a do-nothing AEC env with Agurk's shapes through the same
        wrapper and loop: no AEC env can beat it) and ``floor_ratio`` (over Leduc), with the
        raw counts under ``agurk``, ``leduc``, ``sb3`` and ``gym_vector``; ``compile``: the rules
        kernel's compile or cache load on import, before the timing (None without numba: plain Python).
    """
    from agurk_env import rules_kernel
    from agurk_env.aec_env import env

    compiled = rules_kernel.LOADED  # on import, before the timing: the compile is not a turn's cost
    makers: dict[str, Callable[[], Any]] = {"agurk": lambda: env(rules), "floor": _null_env}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # PettingZoo's old env-creation API notice
            from pettingzoo.classic import leduc_holdem_v4
    except ImportError as e:
        leduc_error = f"{e.name or 'a module it needs'} is not installed: pip install rlcard pygame-ce"
    else:
        leduc_error = None
        makers["leduc"] = leduc_holdem_v4.env
    rates = interleaved(makers, seconds, seed)
    agurk, floor = rates["agurk"], rates["floor"]
    result: dict[str, Any] = {"rules": rules, "seconds": seconds, "turns_per_s": agurk["turns_per_s"], "agurk": agurk}
    result["compile"] = compiled
    if leduc_error:
        result.update(leduc_turns_per_s=None, ratio=None, leduc_error=leduc_error)
    else:
        leduc = rates["leduc"]
        result.update(leduc_turns_per_s=leduc["turns_per_s"], ratio=agurk["turns_per_s"] / leduc["turns_per_s"])
        result["leduc"] = leduc
    result["floor_turns_per_s"] = floor["turns_per_s"]  # a do-nothing AEC env through the same loop
    if result["leduc_turns_per_s"]:
        result["floor_ratio"] = floor["turns_per_s"] / result["leduc_turns_per_s"]
    try:
        vec = vec_env_steps_per_s(n_envs, seconds, rules, seed)
    except ImportError as e:
        result.update(sb3_steps_per_s=None, sb3_n_envs=n_envs, sb3_error=f"{e}")
    else:
        result.update(sb3_steps_per_s=vec["steps_per_s"], sb3_n_envs=n_envs, sb3=vec)
    gym = vec_env_steps_per_s(n_envs, seconds, rules, seed, api="gymnasium")
    result.update(gym_vector_steps_per_s=gym["steps_per_s"], gym_vector=gym)
    return result
