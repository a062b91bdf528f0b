"""``AgurkVecEnv``: the single-learner games of :mod:`agurk_env.single_agent` as a stable-baselines3 ``VecEnv``.

A module of its own because it imports stable-baselines3 (the ``rl`` extra);
:func:`agurk_env.single_agent.sb3_vec_env` imports it on first use. Every game is one
game of :class:`~agurk_env.learner_games.LearnerGames`: ``n_envs`` games on one engine
state, restarting inside it (``terminal_observation`` in the info of a game that ended).
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices

from agurk_env.learner_games import Illegal, LearnerGames, Opponents
from agurk_env.render import RENDER_MODES
from agurk_env.rewards import Episode
from agurk_env.rules import Rules, RuleValue, check_choice


class AgurkVecEnv(VecEnv):
    """An SB3 ``VecEnv`` of ``n_envs`` Agurk games on one batched engine state (see :func:`sb3_vec_env`)."""

    def __init__(
        self,
        n_envs: int,
        rules: str | Rules = "standard",
        opponents: Opponents = None,
        seat: int | None = None,
        episode: Episode = "round",
        render_mode: str | None = None,
        illegal: Illegal = "lowest",
        **options: RuleValue,
    ) -> None:
        check_choice("render_mode", render_mode, [None, *RENDER_MODES])
        self.games = LearnerGames(rules, n_envs, opponents, seat, episode, illegal, **options)
        self.rules, self.render_mode = self.games.rules, render_mode
        self._actions: np.ndarray | None = None
        super().__init__(n_envs, self.games.observation_space, self.games.action_space)

    def reset(self) -> np.ndarray:
        """Start new matches in every game (seed from :meth:`seed` if set) and return the observations."""
        self.games.reset(self._seeds[0])
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self.games.observe()

    def step_async(self, actions: np.ndarray) -> None:
        """Store the learners' actions for :meth:`step_wait`."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Play the stored actions; finished games restart (``terminal_observation`` in their info)."""
        if self._actions is None:
            raise RuntimeError("step_async() must come before step_wait()")
        rewards, dones, illegal, terminal = self.games.step(self._actions)
        self._actions = None
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for g, last in terminal.items():
            infos[g]["terminal_observation"] = last
            infos[g]["TimeLimit.truncated"] = False
        if illegal.any():
            for g in np.flatnonzero(illegal).tolist():
                infos[g]["illegal"] = True
        return self.games.observe(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """``(n_envs, A)`` bool legal masks of the learners."""
        return self.games.action_masks()

    def close(self) -> None:
        """Nothing to release."""

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Use ``seed`` for the next reset: game ``i`` plays match ``i`` of that one seed."""
        if seed is None:
            seed = secrets.randbits(63)
        self._seeds = [int(seed)] * self.num_envs
        return list(self._seeds)

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        """The game indices an SB3 ``indices`` argument names."""
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int | np.integer):
            return [int(indices)]
        return [int(i) for i in indices]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[object]:
        """The attribute of this (shared) environment, once per game named."""
        value = getattr(self, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: object, indices: VecEnvIndices = None) -> None:
        """Set an attribute on this (shared) environment."""
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: object, indices: VecEnvIndices = None, **method_kwargs: object
    ) -> list[object]:
        """``action_masks``: each game's mask; ``render``: each game's text; other methods: called once per game."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            return list(self.action_masks()[idx])
        if method_name == "render":
            return [self.games.render(g) for g in idx]
        method = getattr(self, method_name)
        return [method(*method_args, **method_kwargs) for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """No game is wrapped."""
        return [False] * len(self._indices(indices))

    def get_images(self) -> list[None]:
        """No images: render as text."""
        return [None] * self.num_envs

    # SB3 annotates render as returning an image; this env renders text ("ansi") or prints it ("human")
    def render(self, mode: str | None = None) -> str | None:  # type: ignore[override]
        """Game 0 as text (``"ansi"``) or printed (``"human"``)."""
        mode = mode or self.render_mode
        if mode is None or self.games.state is None:
            return None
        text = self.games.render(0)
        if mode == "ansi":
            return text
        print(text)
        return None
