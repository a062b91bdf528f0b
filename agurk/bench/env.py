"""Environment throughput: the AEC env beside PettingZoo's ``leduc_holdem_v4``, and the two vector envs.

:func:`bench_env` returns a JSON-ready dict (:class:`EnvResult`) for ``agurk bench env``. Every
figure is measured in the same process, one after the other, on one core (the CLI runs it
through :func:`agurk.bench.engine.pinned`, so that NumPy's thread pools are one thread each).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

import numpy as np

if TYPE_CHECKING:
    import gymnasium
    from pettingzoo import AECEnv

    from agurk_env.rules import Rules
    from agurk_env.single_agent import AgurkVectorEnv
    from agurk_env.vec_env import AgurkVecEnv


class AecRates(TypedDict):
    """Random legal play through an AEC env (:func:`aec_turns_per_s`)."""

    turns: int
    episodes: int
    seconds: float
    turns_per_s: float


class VecRates(TypedDict):
    """Learner steps of a vector env (:func:`vec_env_steps_per_s`)."""

    steps: int
    """Learner steps in all: the vector env's steps times ``n_envs``."""
    episodes: int
    seconds: float
    steps_per_s: float
    n_envs: int


class EnvResult(TypedDict, total=False):
    """The ``agurk bench env`` result (:func:`bench_env`); every key is there but those marked "only".

    Not ``total`` so that it is built in its JSON order, the optional keys between the others.
    """

    rules: str | Rules
    seconds: float
    turns_per_s: float
    """The Agurk AEC env's turns per second (round episodes)."""
    agurk: AecRates
    compile: dict[str, float | bool] | None
    """The rules kernel's compile or cache load on import (:data:`agurk_env.rules_kernel.LOADED`)."""
    leduc_turns_per_s: float | None
    """``None`` when PettingZoo's classic extras are missing."""
    ratio: float | None
    """Agurk over Leduc."""
    leduc_error: str
    """Only without Leduc: why."""
    leduc: AecRates
    """Only with Leduc."""
    floor_turns_per_s: float
    """A do-nothing AEC env with Agurk's shapes through the same wrapper and loop."""
    floor_ratio: float
    """Only with Leduc: the floor over Leduc."""
    sb3_steps_per_s: float | None
    sb3_n_envs: int
    sb3_error: str
    """Only without stable-baselines3: why."""
    sb3: VecRates
    """Only with stable-baselines3."""
    gym_vector_steps_per_s: float
    gym_vector: VecRates


def aec_turns_per_s(make_env: Callable[[], AECEnv], seconds: float, seed: int = 0) -> AecRates:
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
) -> dict[str, AecRates]:
    """:func:`aec_turns_per_s` of every environment for about ``seconds`` each, in ``slices`` turns taken in rotation.

    Taking turns spreads a busy machine's changing load over all of them, so their ratios hold
    better than those of one measurement after the other.
    """
    parts: dict[str, list[AecRates]] = {name: [] for name in makers}
    for _ in range(slices):
        for name, make in makers.items():
            parts[name].append(aec_turns_per_s(make, seconds / slices, seed))
    out: dict[str, AecRates] = {}
    for name, measured in parts.items():
        turns, elapsed = sum(m["turns"] for m in measured), sum((m["seconds"] for m in measured), 0.0)
        episodes = sum(m["episodes"] for m in measured)
        out[name] = {"turns": turns, "episodes": episodes, "seconds": elapsed, "turns_per_s": turns / elapsed}
    return out


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
            self.infos: dict[str, dict[str, object]] = {a: {} for a in self.agents}
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
) -> VecRates:
    """A vector env of ``n_envs`` games stepped with random legal cards (random opponents) for about ``seconds``.

    ``api="sb3"`` steps ``sb3_vec_env(n_envs)``, ``api="gymnasium"`` steps
    ``gymnasium.make_vec("Agurk-v0", num_envs=n_envs)``: two adapters of the same learner
    games. A learner step is one learner card in one game, with every opponent card up to
    the learner's next turn, the observation, the auto-reset and the infos.
    """
    from agurk_env import engine

    venv: AgurkVecEnv | AgurkVectorEnv
    if api == "sb3":
        from agurk_env.single_agent import sb3_vec_env

        venv = sb3_vec_env(n_envs, rules=rules)
        venv.seed(seed)
        venv.reset()
    else:
        import gymnasium

        from agurk_env import GYMNASIUM_ID
        from agurk_env.single_agent import AgurkVectorEnv

        gym_venv = gymnasium.make_vec(GYMNASIUM_ID, num_envs=n_envs, rules=rules)
        assert isinstance(gym_venv, AgurkVectorEnv)  # the id's vector entry point
        venv = gym_venv
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


def bench_env(seconds: float = 3.0, rules: str | Rules = "standard", n_envs: int = 1024, seed: int = 0) -> EnvResult:
    """AEC turns/s beside ``leduc_holdem_v4`` in the same run, and the SB3 and gymnasium vector envs' learner steps/s.

    Args:
        seconds: Time for each of the four measurements (the three AEC ones taken in turns, see
            :func:`interleaved`).
        rules: The preset (or the rules) the Agurk environments play.
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
    makers: dict[str, Callable[[], AECEnv]] = {"agurk": lambda: env(rules), "floor": _null_env}
    leduc_error: str | None
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
    result: EnvResult = {"rules": rules, "seconds": seconds, "turns_per_s": agurk["turns_per_s"], "agurk": agurk}
    result["compile"] = compiled
    if leduc_error:
        result["leduc_turns_per_s"], result["ratio"], result["leduc_error"] = None, None, leduc_error
    else:
        leduc = rates["leduc"]
        result["leduc_turns_per_s"] = leduc["turns_per_s"]
        result["ratio"] = agurk["turns_per_s"] / leduc["turns_per_s"]
        result["leduc"] = leduc
    result["floor_turns_per_s"] = floor["turns_per_s"]  # a do-nothing AEC env through the same loop
    if leduc_turns := result["leduc_turns_per_s"]:
        result["floor_ratio"] = floor["turns_per_s"] / leduc_turns
    try:
        vec = vec_env_steps_per_s(n_envs, seconds, rules, seed)
    except ImportError as e:
        result["sb3_steps_per_s"], result["sb3_n_envs"], result["sb3_error"] = None, n_envs, f"{e}"
    else:
        result["sb3_steps_per_s"], result["sb3_n_envs"], result["sb3"] = vec["steps_per_s"], n_envs, vec
    gym = vec_env_steps_per_s(n_envs, seconds, rules, seed, api="gymnasium")
    result["gym_vector_steps_per_s"], result["gym_vector"] = gym["steps_per_s"], gym
    return result


def env_lines(result: EnvResult, table: str) -> list[str]:
    """``agurk bench env``'s text: every figure of :func:`agurk.bench.env.bench_env`, or why it is missing."""

    def rate(value: float | None, error: str | None) -> str:
        return f"{'n/a':>12} ({error})" if value is None else f"{value:>12,.0f}"

    lines = [f"rules          {table}"]
    warm = result["compile"]
    if warm:
        how = "loaded from numba's cache" if warm["from_cache"] else "compiled (first call; cached on disk after)"
        lines.append(f"rules kernel   {warm['seconds']:>12.2f} s {how}, before the timing")
    path = "compiled rules kernel" if warm else "the rules kernel as plain Python, numba not installed"
    lines.append(f"AEC env        {result['turns_per_s']:>12,.0f} turns/s (random legal play, one game; {path})")
    leduc = rate(result.get("leduc_turns_per_s"), result.get("leduc_error"))
    lines.append(f"leduc_holdem   {leduc} turns/s (PettingZoo leduc_holdem_v4, same loop)")
    if result.get("ratio") is not None:
        lines.append(f"ratio          {result['ratio']:>12.2f}x  (Agurk AEC / Leduc)")
    beside = f"; {result['floor_ratio']:.2f}x Leduc" if result.get("floor_ratio") is not None else ""
    lines.append(
        f"floor          {result['floor_turns_per_s']:>12,.0f} turns/s (a do-nothing AEC env with Agurk's shapes,"
        f" same wrapper and loop: no AEC env beats it{beside})"
    )
    sb3, games = rate(result.get("sb3_steps_per_s"), result.get("sb3_error")), result["sb3_n_envs"]
    lines.append(f"sb3_vec_env    {sb3} learner steps/s ({games} games, random opponents)")
    gym = result["gym_vector_steps_per_s"]
    lines.append(f"gym_vector_env {gym:>12,.0f} learner steps/s (gymnasium.make_vec, the same {games} games)")
    return lines
