"""The agent interface: a :class:`Decision`, the :class:`Agent` protocol, the one dispatcher, the random agent.

:class:`Decision` is what an agent sees when it acts; :func:`dispatch` is the one place
where agents are asked for moves; :class:`RandomAgent` is the uniform random agent every
adapter defaults to.

An agent acts for many games at once: a batch of decisions in, a batch of actions
out. A fair agent reads only ``legal`` (or ``bits``), ``seat`` and ``hand`` (the mover's
seat and cards), ``trick_seats`` / ``trick_cards`` (the current trick in playing order),
``obs`` (the observation of :mod:`agurk_env.observation`) and ``public`` (the engine
state with every hand but the mover's hidden); only an agent that declares ``sees_all``
(the oracle) may read ``truth``. None of them needs a private field. Everything is
computed on first use, so an agent pays only for what it reads.

``Decision.obs`` is :func:`agurk_env.observation.observe` of the true state for the
mover: every slice of it is computed from public facts and the mover's own hand, so
the public view and the true state give the same vector (tested in
``tests/test_observation.py``), and an agent sees exactly what a trainer saw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Protocol, runtime_checkable

import numpy as np

from agurk_env import engine
from agurk_env.observation import observe
from agurk_env.rules import Rules


class Decision:
    """The games of a batch where one agent is to move: its legal cards and what it may know."""

    def __init__(
        self,
        rules: Rules,
        state: engine.State,
        games: np.ndarray,
        bits: np.ndarray,
        sees_all: bool = False,
        obs: Callable[[], np.ndarray] | None = None,
    ) -> None:
        self.rules = rules
        self.games = games
        """Indices of these games in the full batch."""
        self.bits = bits
        """``(k,)`` legal card sets (bitmasks, see :func:`agurk_env.engine.legal_bits`) of the player to move."""
        self._state = state
        self._sees_all = sees_all
        self._obs = obs

    def __len__(self) -> int:
        return self.games.size

    def select(self, which: np.ndarray) -> Decision:
        """The games where ``which`` (a bool mask over this batch), as a decision of their own (to split a batch)."""
        return Decision(self.rules, self._state, self.games[which], self.bits[which], self._sees_all)

    @cached_property
    def legal(self) -> np.ndarray:
        """``(k, A)`` bool legal cards of the player to move."""
        return engine.unpack(self.bits, self.rules.num_actions)

    @cached_property
    def seat(self) -> np.ndarray:
        """``(k,)`` int64 seat of the player to move in each game."""
        return self._state.cur[self.games].astype(np.int64)

    @cached_property
    def hand(self) -> np.ndarray:
        """``(k, A)`` int8 cards the player to move holds, counted per card (action order)."""
        return self._state.hands[self.games, self.seat]

    @cached_property
    def trick_seats(self) -> np.ndarray:
        """``(k, P)`` int64 seats that played in the current trick, in playing order from its leader; ``-1`` pads."""
        st, p = self._state, self.rules.players
        clockwise = (st.leader[self.games, None].astype(np.int64) + np.arange(p)) % p  # from the leader
        played = np.take_along_axis(self._trick_by_seat, clockwise, axis=1) >= 0
        seats = np.take_along_axis(clockwise, np.argsort(~played, axis=1, kind="stable"), axis=1)  # seats out skipped
        return np.where(np.sort(~played, axis=1), -1, seats)

    @cached_property
    def trick_cards(self) -> np.ndarray:
        """``(k, P)`` int64 cards of the current trick in playing order (by ``trick_seats``); ``-1`` pads."""
        seats = self.trick_seats
        cards = np.take_along_axis(self._trick_by_seat, np.maximum(seats, 0), axis=1)
        return np.where(seats >= 0, cards, -1)

    @cached_property
    def _trick_by_seat(self) -> np.ndarray:
        """``(k, P)`` int64 card of each seat in the current trick (``-1``: none yet, or out)."""
        st = self._state
        return st.tricks[self.games, st.trick_no[self.games]].astype(np.int64)

    @cached_property
    def public(self) -> engine.State:
        """The ``k`` games with every hand but the mover's emptied (counts are public via ``trick_no``)."""
        sub = self._state.take(self.games)
        keep = np.zeros(sub.hands.shape[:2], bool)
        keep[np.arange(len(self)), sub.cur] = True
        return engine.set_hands(self.rules, sub, np.where(keep[:, :, None], sub.hands, 0))

    @cached_property
    def obs(self) -> np.ndarray:
        """``(k, SIZE)`` observations of the player to move (see :mod:`agurk_env.observation`)."""
        if self._obs is not None:
            return self._obs()
        return observe(self.rules, self._state.take(self.games))

    @property
    def truth(self) -> engine.State:
        """The true ``k`` games, hidden hands included: only for agents with ``sees_all``."""
        if not self._sees_all:
            raise PermissionError("only an agent with sees_all=True may read the hidden hands")
        return self._state.take(self.games)


@runtime_checkable
class Agent(Protocol):
    """A batched policy: a :class:`Decision` for ``k`` games in, ``k`` actions out."""

    spec: str
    sees_all: bool

    def act(self, decision: Decision) -> np.ndarray:
        """``(k,)`` int64 actions, each legal in its game."""
        ...


def dispatch(
    rules: Rules,
    state: engine.State,
    bits: np.ndarray,
    agents: Sequence[Agent],
    owner: np.ndarray,
    obs: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """``(B,)`` actions: the player to move in game ``g`` asks ``agents[owner[g]]`` (``owner < 0``: nobody, 0).

    The one place where agents are asked for moves (matches, environments, trainer).
    Each agent object is asked once, for all the games it owns, in the order of its
    first index in ``agents``; ``bits`` are the ``(B,)`` legal card sets and
    ``obs(games)``, when given, supplies observations already computed. Raises
    ``ValueError`` if an agent returns a wrong shape or an illegal card.
    """
    actions = np.zeros(state.batch, np.int64)
    first: dict[int, int] = {}
    canonical = np.array([first.setdefault(id(agent), i) for i, agent in enumerate(agents)] + [-1])
    owner = canonical[np.where(owner < 0, len(agents), owner)]
    for i in first.values():
        games = np.flatnonzero(owner == i)
        if not games.size:
            continue
        agent = agents[i]
        view = None if obs is None else (lambda g=games: obs(g))
        decision = Decision(rules, state, games, bits[games], getattr(agent, "sees_all", False), view)
        chosen = np.asarray(agent.act(decision), dtype=np.int64)
        if chosen.shape != games.shape:
            raise ValueError(f"agent {agent.spec!r} returned actions of shape {chosen.shape}, not {games.shape}")
        ok = (chosen >= 0) & (chosen < rules.num_actions)
        ok[ok] = (bits[games[ok]] >> chosen[ok]) & 1 == 1
        if not ok.all():
            g = int(games[np.flatnonzero(~ok)[0]])
            raise ValueError(f"agent {agent.spec!r} chose the illegal card {int(chosen[games == g][0])} in game {g}")
        actions[games] = chosen
    return actions


def act_seats(rules: Rules, state: engine.State, bits: np.ndarray, seats: Sequence[Agent]) -> np.ndarray:
    """``(B,)`` actions: each game's player to move asks the agent of its seat (``seats[s]``), via :func:`dispatch`."""
    return dispatch(rules, state, bits, seats, state.cur)


def decide(agent: Agent, rules: Rules, state: engine.State, games: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """``agent``'s actions in ``games`` of ``state`` (their legal card sets ``bits``), checked like :func:`dispatch`."""
    owner = np.full(state.batch, -1, np.int64)
    owner[games] = 0
    full = np.zeros(state.batch, np.int64)
    full[games] = bits
    return dispatch(rules, state, full, [agent], owner)[games]


class RandomAgent:
    """Plays a uniformly random legal card in every game (vectorized, no per-game loop): the default opponent."""

    sees_all = False

    def __init__(self, rng: np.random.Generator, spec: str = "random") -> None:
        self.rng = rng
        self.spec = spec

    def act(self, decision: Decision) -> np.ndarray:
        """A uniformly random legal card in each game of the decision."""
        return engine.random_legal(decision.bits, self.rng)

    def __repr__(self) -> str:
        return f"RandomAgent(spec={self.spec!r})"
