"""``AgurkRewardWrapper``: the AEC environment as one ``gymnasium.Env`` in which one policy plays every seat.

PettingZoo's stable-baselines3 action-mask tutorial wraps an AEC env so that one
``MaskablePPO`` plays every seat (self-play), through ``sb3_contrib``'s ``ActionMasker``.
Its wrapper returns, after each step, the reward the seat that just acted holds at that
moment, and ends the episode with that seat's termination. In Agurk a round's penalty
usually falls on a seat that did not play the last card (about 4 rounds in 5 under
``standard`` with random play), and then it reaches no one. This wrapper has the
tutorial wrapper's interface (``reset`` returns ``(observation, info)``, ``step`` the
gymnasium five-tuple, ``action_mask()`` the mask of the seat to move), is a
``gymnasium.Env`` (so ``ActionMasker`` takes it under gymnasium 1.x) and gives every
reward to the seat it belongs to:

* A step's reward is every reward the seat that acted got since its previous step
  (summed from the env's ``rewards`` after each card), its own last-trick penalty included.
* Every dead step of the AEC env (a seat whose episode is over: every seat at the end of
  an episode, one by one) is a step of its own: its observation is that seat's last one,
  its only legal action is 0 (any action is accepted and ignored), and its reward is
  what the seat got since its last card.
* ``terminated`` (or ``truncated``) comes with the last of those steps, when no agent is left.

So the rewards of the steps in which ``info["agent"]`` acted add up to that seat's return,
as the env's record gives it. Observations are the AEC env's ``"observation"`` vectors;
the observation and action spaces are those of ``player_0``.

Usage, as in the tutorial::

    env = AgurkRewardWrapper(agurk_env.env("standard"))
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO("MlpPolicy", env)
"""

from __future__ import annotations

import gymnasium
import numpy as np
from pettingzoo import AECEnv


class AgurkRewardWrapper(gymnasium.Env):
    """An Agurk AEC env (:func:`agurk_env.env`) as one ``gymnasium.Env`` in which one policy plays every seat."""

    def __init__(self, env: AECEnv) -> None:
        self.env = env
        first = env.possible_agents[0]
        self.observation_space = env.observation_space(first)["observation"]
        self.action_space: gymnasium.spaces.Discrete = env.action_space(first)
        self.metadata = env.metadata
        self.render_mode = getattr(env, "render_mode", None)
        self._pending: dict[str, float] = {}

    @property
    def agent_selection(self) -> str:
        """The agent whose step comes next."""
        return self.env.agent_selection

    def _dead(self, agent: str) -> bool:
        """Whether ``agent``'s episode is over (its next step is a dead step)."""
        return self.env.terminations[agent] or self.env.truncations[agent]

    def reset(self, *, seed: int | None = None, options: dict[str, object] | None = None) -> tuple[np.ndarray, dict]:
        """Reset the AEC env; the observation of the agent to move."""
        super().reset(seed=seed)
        self.env.reset(seed=seed, options=options)
        self._pending = dict.fromkeys(self.env.possible_agents, 0.0)
        agent = self.env.agent_selection
        return self.env.observe(agent)["observation"], {"agent": agent}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play ``action`` for the agent to move (ignored on a dead step); its reward since its previous step."""
        agent = self.env.agent_selection
        info = {**self.env.infos[agent], "agent": agent}
        truncated = self.env.truncations[agent]
        if self._dead(agent):
            self.env.step(None)
        else:
            self.env.step(action)
            for other, reward in self.env.rewards.items():
                self._pending[other] += reward
        reward, self._pending[agent] = self._pending[agent], 0.0
        over = not self.env.agents
        obs = self.env.observe(agent if over else self.env.agent_selection)["observation"]
        return obs, reward, over and not truncated, over and truncated, info

    def action_mask(self) -> np.ndarray:
        """``(A,)`` bool: the legal actions of the agent to move; only action 0 on a dead step."""
        agent = self.env.agent_selection
        if self._dead(agent):
            mask = np.zeros(self.action_space.n, bool)
            mask[0] = True
            return mask
        return self.env.observe(agent)["action_mask"].astype(bool)

    def render(self) -> str | None:
        """The AEC env's rendering."""
        return self.env.render()

    def close(self) -> None:
        """Close the AEC env."""
        self.env.close()
