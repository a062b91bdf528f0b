"""The single-learner games: ``n`` games on one engine state, a learner seat in each, opponents in between.

:class:`LearnerGames` is the one core of the single-learner environments of
:mod:`agurk_env.single_agent` (the gymnasium ``Env`` and ``VectorEnv``) and of
:mod:`agurk_env.vec_env` (the stable-baselines3 ``VecEnv``). After the learner's card the
opponents' cards are played, in the batch, until the learner is to move again in every game;
episodes end and restart inside it. Its opponents, seeds, episodes and illegal actions are
described in :mod:`agurk_env.single_agent`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Literal, get_args

import gymnasium
import numpy as np

from agurk_env import engine, observation, seeds, specs
from agurk_env.agent import Agent, RandomAgent, dispatch
from agurk_env.render import illegal_message, render_text
from agurk_env.rewards import EPISODES, Episode, placement_rewards, round_rewards
from agurk_env.rules import Rules, RuleValue, check_choice, make_rules
from agurk_env.spaces import observation_box

Illegal = Literal["lowest", "raise"]
ILLEGAL: tuple[str, ...] = get_args(Illegal)
"""What an illegal learner action does: play the first legal card instead, or raise."""

Opponents = str | Agent | Sequence[Agent] | Callable[[int], Agent | Sequence[Agent]] | None
"""Who plays the other seats: see :mod:`agurk_env.single_agent`."""

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
        self._factory: Callable[[int], Agent | Sequence[Agent]] | None = None
        self.opponents: list[Agent] = []
        if callable(opponents) and not isinstance(opponents, Agent):
            self._factory = opponents
        else:
            self.opponents = _seat_agents(opponents, p - 1)
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
        self._seat_rng = np.random.default_rng([seed, seeds.SEATS])

    def _draw_seats(self, games: np.ndarray) -> None:
        """Give the learner of each of ``games`` its seat for a new match."""
        if self.fixed_seat is not None:
            self.seat[games] = self.fixed_seat
        else:
            self.seat[games] = self._seat_rng.integers(0, self.rules.players, games.size)

    @property
    def _live_state(self) -> engine.State:
        """The engine state of the games in play (:meth:`reset` first)."""
        if self.state is None:
            raise RuntimeError("call reset() first")
        return self.state

    # ------------------------------------------------------------------ the learner's view

    def legal_bits(self) -> np.ndarray:
        """``(n,)`` card sets the learners may play now."""
        if self._bits is None:
            self._bits = engine.legal_bits(self.rules, self._live_state)
        return self._bits

    def action_masks(self) -> np.ndarray:
        """``(n, A)`` bool legal masks of the learners."""
        return engine.unpack(self.legal_bits(), self._actions)

    def observe(self, games: np.ndarray | None = None) -> np.ndarray:
        """``(n, SIZE)`` float32 observations of the learners (or of ``games`` only)."""
        if games is None:
            return observation.observe(self.rules, self._live_state, self.seat)
        return observation.observe(self.rules, self._live_state.take(games), self.seat[games])

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
        st = engine.play(rules, self._live_state, actions)
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
        return render_text(self.rules, self._live_state, names, game=game, show=int(self.seat[game]))
