"""One learner against opponent agents: gymnasium ``Env`` and ``VectorEnv``, and a stable-baselines3 ``VecEnv``.

All three are thin adapters over one core, :class:`LearnerGames`: ``n`` games in one
engine state, a learner seat in each; after the learner's card the opponents' cards are
played, in the batch, until the learner is to move again in every game. Episodes end and
restart inside it (auto-reset), so the vector environments never wait on a Python loop
over games.

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

import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from agurk_env import engine, observation, specs
from agurk_env.agent import Agent, RandomAgent, dispatch
from agurk_env.render import RENDER_MODES, illegal_message, render_text
from agurk_env.rewards import EPISODES, Episode, placement_rewards, round_rewards
from agurk_env.rules import Rules, RuleValue, check_choice, make_rules

if TYPE_CHECKING:
    from agurk_env.vec_env import AgurkVecEnv
from agurk_env.spaces import observation_box

Illegal = Literal["lowest", "raise"]
ILLEGAL: tuple[str, ...] = get_args(Illegal)
"""What an illegal learner action does: play the first legal card instead, or raise."""

Opponents = str | Agent | Sequence[Agent] | Callable[[int], Agent | Sequence[Agent]] | None
"""Who plays the other seats: see the module docstring."""

_FIRST = engine.KTH_MEMBER[:, 0].astype(np.int64)  # card set -> its first card in action order


def _random_opponents(seed: int) -> Agent:
    """The default opponents: one uniform random agent for every other seat, drawing from ``[seed, 1]``."""
    return RandomAgent(np.random.default_rng([seed, 1]))


def _seat_agents(found: Agent | Sequence[Agent], others: int) -> list[Agent]:
    """One agent per other seat from one agent or a sequence of ``others`` agents."""
    if isinstance(found, Agent):
        return [found] * others
    agents = list(found)
    if len(agents) != others or not all(isinstance(a, Agent) for a in agents):
        raise ValueError(f"opponents must be one agent or {others} agents (one per other seat), got {found!r}")
    return agents


class LearnerGames:
    """``n`` games on one batched engine state, each with one learner seat; opponents move in between.

    ``rules`` is a preset name or a :class:`Rules`, with rule ``options`` on top;
    ``observation_space`` and ``action_space`` are one game's. Call :meth:`reset` first.
    Between calls every game waits for its learner's card: :meth:`observe` and
    :meth:`legal_bits` describe that moment, :meth:`step` plays the learner's cards and
    everything up to the learner's next turn.
    """

    def __init__(
        self,
        rules: str | Rules,
        n: int,
        opponents: Opponents = None,
        seat: int | None = None,
        episode: Episode = "round",
        illegal: Illegal = "lowest",
        **options: RuleValue,
    ) -> None:
        check_choice("episode", episode, EPISODES)
        check_choice("illegal", illegal, ILLEGAL)
        rules = make_rules(rules, **options)
        p = rules.players
        if seat is not None and not 0 <= seat < p:
            raise ValueError(f"seat must be in 0..{p - 1} or None, not {seat!r}")
        if n < 1:
            raise ValueError(f"the number of games must be >= 1, not {n}")
        self.rules, self.n, self.episode, self.illegal = rules, n, episode, illegal
        self.fixed_seat = seat
        if opponents is None:
            opponents = _random_opponents
        elif isinstance(opponents, str):
            opponents = specs.opponents(opponents, p)
        self._factory = opponents if callable(opponents) and not isinstance(opponents, Agent) else None
        self.opponents: list[Agent] = [] if self._factory else _seat_agents(opponents, p - 1)
        self._actions = rules.num_actions
        self.observation_space = observation_box(rules)
        self.action_space = gymnasium.spaces.Discrete(rules.num_actions)
        self.state: engine.State | None = None
        self._bits: np.ndarray | None = None  # the learners' legal card sets, once computed
        self.seat = np.zeros(n, np.int64)

    # ------------------------------------------------------------------ setup

    def reset(self, seed: int | None = None) -> None:
        """Start new matches in every game: matches ``0..n-1`` of ``seed``, or the next ones of the current seed."""
        if seed is not None or self.state is None:
            seed = int(seed) if seed is not None else secrets.randbits(63)
            self._seed_rngs(seed)
            st = engine.init(self.rules, self.n, seed)
        else:
            st = engine.advance(self.rules, self.state, restart=np.ones(self.n, bool))
        self._draw_seats(np.arange(self.n))
        self.state, self._bits = self._to_learner(st), None

    def _seed_rngs(self, seed: int) -> None:
        """Build the opponents for ``seed`` (when they come from a factory) and the seat generator."""
        seed %= 2**63  # the agents' generators take seeds >= 0
        if self._factory is not None:
            self.opponents = _seat_agents(self._factory(seed), self.rules.players - 1)
        self._seat_rng = np.random.default_rng([seed, 0x5EA7])

    def _draw_seats(self, games: np.ndarray) -> None:
        """Give the learner of each of ``games`` its seat for a new match."""
        if self.fixed_seat is not None:
            self.seat[games] = self.fixed_seat
        else:
            self.seat[games] = self._seat_rng.integers(0, self.rules.players, games.size)

    # ------------------------------------------------------------------ the learner's view

    def legal_bits(self) -> np.ndarray:
        """``(n,)`` card sets the learners may play now."""
        if self._bits is None:
            self._bits = engine.legal_bits(self.rules, self.state)
        return self._bits

    def action_masks(self) -> np.ndarray:
        """``(n, A)`` bool legal masks of the learners."""
        return engine.unpack(self.legal_bits(), self._actions)

    def observe(self, games: np.ndarray | None = None) -> np.ndarray:
        """``(n, SIZE)`` float32 observations of the learners (or of ``games`` only)."""
        if games is None:
            return observation.observe(self.rules, self.state, self.seat)
        return observation.observe(self.rules, self.state.take(games), self.seat[games])

    # ------------------------------------------------------------------ stepping

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, np.ndarray]]:
        """Play the learners' cards, then everything up to their next turn.

        Returns ``(rewards, dones, illegal, terminal)``: float32 and bool ``(n,)`` arrays,
        and the last observation of each game whose episode ended, by game index (that
        game has already moved on to its next episode).
        """
        rules = self.rules
        actions = np.asarray(actions, dtype=np.int64).reshape(self.n)
        bits = self.legal_bits()
        in_range = (actions >= 0) & (actions < self._actions)
        illegal = ~in_range | ((bits >> np.where(in_range, actions, 0)) & 1 == 0)
        if illegal.any():
            if self.illegal == "raise":
                g = int(np.flatnonzero(illegal)[0])
                who = f"the learner (seat {int(self.seat[g])}) in game {g}"
                raise ValueError(illegal_message(who, actions[g], int(bits[g]), self._actions))
            actions = np.where(illegal, _FIRST[bits], actions)
        st = engine.play(rules, self.state, actions)
        rewards = np.zeros(self.n, np.float32)
        dones = np.zeros(self.n, bool)
        terminal: dict[int, np.ndarray] = {}
        while True:
            if st.round_over.any():
                st = self._end_rounds(st, rewards, dones, terminal)
            waiting = st.cur == self.seat
            if waiting.all():
                break
            st = self._opponents_play(st, waiting)
        self.state, self._bits = st, None
        return rewards, dones, illegal, terminal

    def _to_learner(self, st: engine.State) -> engine.State:
        """Play the opponents until every learner is to move (after a reset; no round can end)."""
        while True:
            waiting = st.cur == self.seat
            if waiting.all():
                return st
            st = self._opponents_play(st, waiting)

    def _opponents_play(self, st: engine.State, waiting: np.ndarray) -> engine.State:
        """One card in every game where an opponent is to move; the games in ``waiting`` are not played."""
        bits = engine.legal_bits(self.rules, st)
        owner = np.where(waiting, -1, (st.cur - self.seat) % self.rules.players - 1)
        actions = dispatch(self.rules, st, bits, self.opponents, owner)
        if not waiting.any():
            return engine.play(self.rules, st, actions)
        moving = np.flatnonzero(~waiting)
        return engine.play_in(self.rules, st, moving, actions[moving])

    def _end_rounds(
        self, st: engine.State, rewards: np.ndarray, dones: np.ndarray, terminal: dict[int, np.ndarray]
    ) -> engine.State:
        """Score the games whose round ended, record finished episodes, and deal their next round or match."""
        ended = st.round_over
        seat = self.seat
        rows = np.arange(self.n)
        if self.episode == "round":
            rewards += np.where(ended, round_rewards(self.rules, st)[rows, seat], 0.0)
            done = ended
        else:
            finished, placement = placement_rewards(self.rules, st)
            done = ended & finished[rows, seat]
            rewards += np.where(done, placement[rows, seat], 0.0)
        dones |= done
        idx = np.flatnonzero(done)
        if idx.size:
            last = observation.observe(self.rules, st.take(idx), seat[idx])
            terminal.update(zip(idx.tolist(), last, strict=True))
        restart = ended & (st.match_over | ~st.alive[rows, seat])
        if restart.any():
            self._draw_seats(np.flatnonzero(restart))
        return engine.advance(self.rules, st, restart=restart)

    def render(self, game: int = 0) -> str:
        """Game ``game`` as text, showing the learner's hand only."""
        names = [f"player_{s}" for s in range(self.rules.players)]
        names[int(self.seat[game])] += " (learner)"
        return render_text(self.rules, self.state, names, game=game, show=int(self.seat[game]))


# ----------------------------------------------------------------------------- gymnasium


class AgurkEnv(gymnasium.Env):
    """One learner seat against opponent agents, as a ``gymnasium.Env`` (see the module docstring).

    ``info`` holds ``action_mask`` (bool) on every reset and step, and ``illegal`` on steps.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": RENDER_MODES}

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
    rules: str | Rules = "standard", opponents: Opponents = None, seat: int | None = None, **options: RuleValue
) -> AgurkEnv:
    """A ``gymnasium.Env`` where one learner plays ``opponents`` (see the module docstring).

    Args:
        rules: A preset name or a :class:`Rules`.
        opponents: ``None`` (random play), agent specs (``"guard,pimc,random"``), an agent, ``players - 1``
            agents, or a factory ``seed -> agents``.
        seat: The learner's seat; ``None`` draws one per match.
        **options: ``episode``, ``render_mode``, ``illegal``, and rule options (``players=5``, ...).
    """
    return AgurkEnv(rules, opponents, seat, **options)


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

    metadata: ClassVar[dict[str, Any]] = {"render_modes": RENDER_MODES, "autoreset_mode": AutoresetMode.SAME_STEP}

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
    n_envs: int, rules: str | Rules = "standard", opponents: Opponents = None, **options: RuleValue
) -> AgurkVecEnv:
    """A stable-baselines3 ``VecEnv`` of ``n_envs`` games on the batched engine, with ``action_masks()``.

    It is :class:`agurk_env.vec_env.AgurkVecEnv` (that module imports stable-baselines3).

    Args:
        n_envs: Games in the batch (one learner each).
        rules: A preset name or a :class:`Rules`.
        opponents: ``None`` (random play), agent specs (``"guard,pimc,random"``), an agent, ``players - 1``
            agents, or a factory ``seed -> agents``.
        **options: ``seat``, ``episode``, ``render_mode``, ``illegal``, and rule options.
    """
    try:
        from agurk_env.vec_env import AgurkVecEnv
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError('sb3_vec_env needs stable-baselines3: pip install -e ".[rl]" from the checkout') from e
    return AgurkVecEnv(n_envs, rules, opponents, **options)
