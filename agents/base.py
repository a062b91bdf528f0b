"""What an agent sees when it acts: one :class:`Decision` for a batch of games.

An agent acts for many games at once: a batch of decisions in, a batch of actions
out. A fair agent reads only ``legal``, ``obs`` (the shared observation spec) and
``public`` (the engine state with every hand but the mover's hidden); only an agent
that declares ``sees_all`` (the oracle) may read ``truth``. Everything is computed on
first use, so an agent pays only for what it reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Protocol, runtime_checkable

import numpy as np

from agurk_env import engine
from agurk_env.observation import observe
from agurk_env.rules import Rules


class Decision:
    """The games of a batch where one agent is to move: its legal cards and what it may know."""

    def __init__(
        self, rules: Rules, state: engine.State, games: np.ndarray, legal: np.ndarray, sees_all: bool = False
    ) -> None:
        self.rules = rules
        self.games = games
        """Indices of these games in the full batch."""
        self.legal = legal
        """``(k, A)`` bool legal cards of the player to move."""
        self._state = state
        self._sees_all = sees_all

    def __len__(self) -> int:
        return self.games.size

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
        return observe(self.rules, self.public)

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


def decide(agent: Agent, rules: Rules, state: engine.State, games: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Ask ``agent`` for actions in ``games`` of ``state``; ``legal`` is their ``(k, A)`` mask."""
    return agent.act(Decision(rules, state, games, legal, sees_all=getattr(agent, "sees_all", False)))


def act_seats(rules: Rules, state: engine.State, legal: np.ndarray, seats: Sequence[Agent]) -> np.ndarray:
    """``(B,)`` actions: each game's player to move asks the agent of its seat (``seats[s]``).

    An agent sitting in several seats is asked once, for all its games. Raises
    ``ValueError`` if an agent returns a wrong shape or an illegal card.
    """
    actions = np.zeros(state.batch, np.int64)
    owner: dict[int, int] = {}
    seat_owner = np.array([owner.setdefault(id(agent), s) for s, agent in enumerate(seats)])
    to_move = seat_owner[state.cur]
    for first_seat in owner.values():
        games = np.flatnonzero(to_move == first_seat)
        if games.size:
            agent = seats[first_seat]
            chosen = np.asarray(decide(agent, rules, state, games, legal[games]), dtype=np.int64)
            if chosen.shape != games.shape:
                raise ValueError(f"agent {agent.spec!r} returned actions of shape {chosen.shape}, not {games.shape}")
            actions[games] = chosen
    ok = (actions >= 0) & (actions < legal.shape[1])
    ok[ok] = legal[np.flatnonzero(ok), actions[ok]]
    if not ok.all():
        g = int(np.flatnonzero(~ok)[0])
        agent = seats[int(state.cur[g])]
        raise ValueError(f"agent {agent.spec!r} chose the illegal card {int(actions[g])} in game {g}")
    return actions
