"""One learner against opponent agents: gymnasium ``Env`` and ``VectorEnv``, and a stable-baselines3 ``VecEnv``.

All three are thin adapters over one core, :class:`~agurk_env.learner_games.LearnerGames`:
``n`` games in one engine state, a learner seat in each; after the learner's card the
opponents' cards are played, in the batch, until the learner is to move again in every
game. Episodes end and restart inside it (auto-reset), so the vector environments never
wait on a Python loop over games.

* :func:`single_agent_env` (``gymnasium.make("Agurk-v0")``) returns :class:`AgurkEnv`, a
  ``gymnasium.Env`` (one game).
* ``gymnasium.make_vec("Agurk-v0", num_envs=n)`` returns :class:`AgurkVectorEnv`, a
  ``gymnasium.vector.VectorEnv`` of ``n`` games (auto-reset ``AutoresetMode.SAME_STEP``).
* :func:`sb3_vec_env` returns an :class:`agurk_env.vec_env.AgurkVecEnv`, an SB3 ``VecEnv``
  of ``n_envs`` games (stable-baselines3 is imported only then).

All have ``action_masks()``, so ``sb3_contrib.MaskablePPO`` trains on the SB3 one directly.

Spaces: the observation is :func:`agurk_env.observation.observe` for the learner's seat
(``Box(0, high, (SIZE,), float32)``); the action ``i`` plays ``CARDS[i]``
(``Discrete(13)``, 14 with jokers). Rewards and episodes are those of
:mod:`agurk_env.rewards`: ``episode="round"`` gives ``-penalty / limit`` at the end of
each round and goes on with the next round of the match (a new match once the match is
over or the learner is out); ``episode="match"`` gives the placement reward when the
learner leaves the match or it ends.

Opponents (:data:`Opponents`): ``None`` (uniform random play, the default), agent specs
(``"guard"`` for every other seat, or ``"guard,pimc,random"``, one per seat after the
learner's, clockwise; built through :mod:`agurk_env.specs` by the agent package that
registered them, as ``agents.opponents(specs, players)`` does), one
:class:`~agurk_env.agent.Agent` for every other seat, ``players - 1`` agents for the seats
after the learner's, or a factory ``seed -> agent(s)`` called at every seeded reset, so
that the opponents' randomness follows the seed (specs are such a factory: the agent of the
``r``-th seat after the learner draws from ``default_rng([seed, r])``). ``seat`` fixes the
learner's seat; ``None`` draws it at random for each match.

Seeds: ``reset(seed=S)`` deals games ``0..n-1`` matches ``0..n-1`` of seed ``S`` (game
``i`` of a vector environment plays match ``i``; later matches take the next unused numbers, as
in the engine) and builds the opponents from ``S`` when they come from a factory (the
default random opponents draw from ``numpy.random.default_rng([S, 1])``).

Illegal actions: ``illegal="lowest"`` (the default) plays the first legal card in action
order instead and sets ``info["illegal"]``, so unmasked agents and the API checkers can
step; ``illegal="raise"`` raises ``ValueError`` like the AEC environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from agurk_env.install import install
from agurk_env.learner_games import Illegal, LearnerGames, Opponents
from agurk_env.render import RENDER_MODES
from agurk_env.rewards import Episode
from agurk_env.rules import Rules, RuleValue, check_choice

if TYPE_CHECKING:
    from agurk_env.vec_env import AgurkVecEnv

# ----------------------------------------------------------------------------- gymnasium


class AgurkEnv(gymnasium.Env):
    """One learner seat against opponent agents, as a ``gymnasium.Env`` (see the module docstring).

    ``info`` holds ``action_mask`` (bool) on every reset and step, and ``illegal`` on steps.
    """

    # gymnasium declares metadata on its instances, so no ClassVar here (mypy)
    metadata: dict[str, Any] = {"render_modes": RENDER_MODES}  # noqa: RUF012

    def __init__(
        self,
        rules: str | Rules = "standard",
        opponents: Opponents = None,
        seat: int | None = None,
        episode: Episode = "round",
        render_mode: str | None = None,
        illegal: Illegal = "lowest",
        **options: RuleValue,
    ) -> None:
        check_choice("render_mode", render_mode, [None, *RENDER_MODES])
        self.games = LearnerGames(rules, 1, opponents, seat, episode, illegal, **options)
        self.rules, self.render_mode = self.games.rules, render_mode
        self.observation_space, self.action_space = self.games.observation_space, self.games.action_space
        self._episode_over = True

    def reset(self, *, seed: int | None = None, options: dict[str, object] | None = None) -> tuple[np.ndarray, dict]:
        """Start an episode: match 0 of ``seed``; without a seed, the episode already dealt or the next match."""
        super().reset(seed=seed)
        if seed is not None:
            self.games.reset(seed)
        elif self.games.state is None:
            self.games.reset(int(self.np_random.integers(2**63 - 1)))
        elif not self._episode_over:
            self.games.reset()  # abandon the episode in play: the next match number
        self._episode_over = False
        return self.games.observe()[0], {"action_mask": self.action_masks()}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's card and the opponents' up to its next turn (or the episode's end)."""
        if self.games.state is None:
            raise RuntimeError("call reset() before step()")
        rewards, dones, illegal, terminal = self.games.step(np.asarray([action]))
        done = bool(dones[0])
        obs = terminal[0] if done else self.games.observe()[0]
        self._episode_over = done
        mask = np.zeros(self.rules.num_actions, bool) if done else self.action_masks()
        if self.render_mode == "human":
            self.render()
        return obs, float(rewards[0]), done, False, {"action_mask": mask, "illegal": bool(illegal[0])}

    def action_masks(self) -> np.ndarray:
        """``(A,)`` bool: the cards the learner may play now."""
        return self.games.action_masks()[0]

    def render(self) -> str | None:
        """The table as text (``"ansi"``) or printed (``"human"``)."""
        texts = _rendered(self.render_mode, self.games)
        return None if texts is None else texts[0]


def _rendered(render_mode: str | None, games: LearnerGames) -> tuple[str, ...] | None:
    """Every game's table as text (``"ansi"``), or printed (``"human"``); a warning without a render mode."""
    if render_mode is None:
        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
        return None
    if games.state is None:
        raise RuntimeError("call reset() before render()")
    texts = tuple(games.render(g) for g in range(games.n))
    if render_mode == "ansi":
        return texts
    print("\n".join(texts))
    return None


def single_agent_env(
    rules: str | Rules = "standard",
    opponents: Opponents = None,
    seat: int | None = None,
    *,
    episode: Episode = "round",
    render_mode: str | None = None,
    illegal: Illegal = "lowest",
    **options: RuleValue,
) -> AgurkEnv:
    """A ``gymnasium.Env`` where one learner plays ``opponents`` (see the module docstring).

    Args:
        rules: A preset name or a :class:`Rules`.
        opponents: ``None`` (random play), agent specs (``"guard,pimc,random"``), an agent, ``players - 1``
            agents, or a factory ``seed -> agents``.
        seat: The learner's seat; ``None`` draws one per match.
        episode: ``"round"`` or ``"match"`` (see :class:`AgurkEnv`).
        render_mode: ``None`` or one of the render modes.
        illegal: What an illegal action does: ``"lowest"`` or ``"raise"``.
        **options: Rule options (``players=5``, ...).
    """
    return AgurkEnv(rules, opponents, seat, episode, render_mode, illegal, **options)


# ----------------------------------------------------------------------------- gymnasium vector


class AgurkVectorEnv(VectorEnv):
    """``num_envs`` learner games on one batched engine state, as a ``gymnasium.vector.VectorEnv``.

    ``gymnasium.make_vec("Agurk-v0", num_envs=n, **kwargs)`` makes it (``kwargs`` as for
    :class:`AgurkEnv`). Auto-reset is ``AutoresetMode.SAME_STEP``, as the games restart
    inside :class:`LearnerGames`: a game whose episode ended returns its next episode's
    first observation, with the last one in ``infos["final_obs"]`` and that step's own info
    in ``infos["final_info"]`` (both flagged by ``infos["_final_obs"]``). ``infos`` holds
    ``action_mask`` (``(n, A)`` bool) after every reset and step, and ``illegal`` on steps,
    each key with its ``_key`` flags as gymnasium's vector infos have them: the infos are
    those of ``SyncVectorEnv`` over :class:`AgurkEnv` games in the same auto-reset mode.
    """

    # gymnasium declares metadata on its instances, so no ClassVar here (mypy)
    metadata: dict[str, Any] = {"render_modes": RENDER_MODES, "autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 1,
        rules: str | Rules = "standard",
        opponents: Opponents = None,
        seat: int | None = None,
        episode: Episode = "round",
        render_mode: str | None = None,
        illegal: Illegal = "lowest",
        **options: RuleValue,
    ) -> None:
        check_choice("render_mode", render_mode, [None, *RENDER_MODES])
        self.games = LearnerGames(rules, num_envs, opponents, seat, episode, illegal, **options)
        self.rules, self.num_envs, self.render_mode = self.games.rules, num_envs, render_mode
        self.single_observation_space = self.games.observation_space
        self.single_action_space = self.games.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

    def reset(self, *, seed: int | None = None, options: dict[str, object] | None = None) -> tuple[np.ndarray, dict]:
        """Start new matches in every game: matches ``0..num_envs-1`` of ``seed``, or the next ones."""
        super().reset(seed=seed)
        if seed is None and self.games.state is None:
            seed = int(self.np_random.integers(2**63 - 1))
        self.games.reset(seed)
        infos: dict[str, Any] = {}
        _put_info(infos, "action_mask", self.action_masks(), np.ones(self.num_envs, bool))
        return self.games.observe(), infos

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Play the learners' cards and the opponents' up to their next turns; ended episodes restart at once."""
        if self.games.state is None:
            raise RuntimeError("call reset() before step()")
        rewards, dones, illegal, terminal = self.games.step(actions)
        n = self.num_envs
        infos: dict[str, Any] = {}
        if dones.any():
            final_obs = np.full(n, None, object)
            for g, last in terminal.items():
                final_obs[g] = last
            final_info: dict[str, Any] = {}
            _put_info(final_info, "action_mask", np.zeros((n, self.rules.num_actions), bool), dones)
            _put_info(final_info, "illegal", illegal & dones, dones)
            infos.update(final_obs=final_obs, _final_obs=dones.copy(), final_info=final_info, _final_info=dones.copy())
        _put_info(infos, "action_mask", self.action_masks(), np.ones(n, bool))
        _put_info(infos, "illegal", illegal & ~dones, ~dones)
        if self.render_mode == "human":
            self.render()
        return self.games.observe(), rewards, dones, np.zeros(n, bool), infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, A)`` bool legal masks of the learners."""
        return self.games.action_masks()

    def render(self) -> tuple[str, ...] | None:
        """Every game as text (``"ansi"``), or printed (``"human"``)."""
        return _rendered(self.render_mode, self.games)


def _put_info(infos: dict[str, object], key: str, values: np.ndarray, flags: np.ndarray) -> None:
    """Put ``values`` of the games in ``flags`` under ``key`` (others zero) and ``flags`` under ``_key``, if any."""
    if flags.all():
        infos[key], infos[f"_{key}"] = values, flags.copy()
    elif flags.any():
        infos[key] = np.where(flags.reshape(-1, *[1] * (values.ndim - 1)), values, np.zeros_like(values))
        infos[f"_{key}"] = flags.copy()


# ----------------------------------------------------------------------------- stable-baselines3


def sb3_vec_env(
    n_envs: int,
    rules: str | Rules = "standard",
    opponents: Opponents = None,
    *,
    seat: int | None = None,
    episode: Episode = "round",
    render_mode: str | None = None,
    illegal: Illegal = "lowest",
    **options: RuleValue,
) -> AgurkVecEnv:
    """A stable-baselines3 ``VecEnv`` of ``n_envs`` games on the batched engine, with ``action_masks()``.

    It is :class:`agurk_env.vec_env.AgurkVecEnv` (that module imports stable-baselines3).

    Args:
        n_envs: Games in the batch (one learner each).
        rules: A preset name or a :class:`Rules`.
        opponents: ``None`` (random play), agent specs (``"guard,pimc,random"``), an agent, ``players - 1``
            agents, or a factory ``seed -> agents``.
        seat: The learner's seat; ``None`` draws one per match.
        episode: ``"round"`` or ``"match"`` (see :class:`AgurkEnv`).
        render_mode: ``None`` or one of the render modes.
        illegal: What an illegal action does: ``"lowest"`` or ``"raise"``.
        **options: Rule options (``players=5``, ...).
    """
    try:
        from agurk_env.vec_env import AgurkVecEnv
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError(f"sb3_vec_env needs stable-baselines3: {install('rl')} from the checkout") from e
    return AgurkVecEnv(n_envs, rules, opponents, seat, episode, render_mode, illegal, **options)
