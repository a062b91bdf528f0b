"""The heuristic agents' replies of every waiting game at once: one vectorized decision per rules and heuristic.

A played game whose agents are all heuristics (``guard``, ``shed``, ``counter``, ...) needs no
thread for its agents: a heuristic is a few NumPy operations over any number of games, with
nothing kept from one call to the next, so it decides hundreds of games in about the time of
one. The request of such a game (the person's card already played) parks here; once per turn
of the event loop every parked game is stacked with the others whose seat to move has the same
rules and heuristic, each stack is decided by one call, the cards are played in each game, and
so on until every game is back at its person's turn or over; then each request gets its view.
Any other agent (a search, a policy, a random player with its own generator) moves in the
thread pool instead (:mod:`agurk.web.app`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np

from agents.belief import concat
from agurk.web.session import Session, View
from agurk_env import engine
from agurk_env.agent import decide
from agurk_env.rules import Rules


def move_agents(sessions: list[Session]) -> None:
    """Let every game's agents play up to its person's turn or its end, one decision per (rules, heuristic) a step."""
    waiting = [s for s in sessions if s.agent_to_move is not None]
    while waiting:
        stacks: dict[tuple[Rules, str], list[Session]] = {}
        for s in waiting:
            agent = s.agent_to_move
            assert agent is not None  # waiting holds the games with an agent to move
            stacks.setdefault((s.rules, agent.spec), []).append(s)
        for (rules, _), stack in stacks.items():
            state = stack[0].env.engine_state if len(stack) == 1 else concat([s.env.engine_state for s in stack])
            bits = engine.legal_bits(rules, state)
            agent = stack[0].agent_to_move
            assert agent is not None
            cards = decide(agent, rules, state, np.arange(len(stack)), bits)
            for s, card in zip(stack, cards.tolist(), strict=True):
                s.apply(card)
        waiting = [s for s in waiting if s.agent_to_move is not None]


class Mover:
    """Parks the requests of batched games (:attr:`Session.batched`) and moves them all once per event-loop turn."""

    def __init__(self, answered: Callable[[Session], None]) -> None:
        self._parked: list[tuple[Session, asyncio.Future[View]]] = []
        self._answered = answered
        """Called with each game as its answer is ready, before its lock is released (the store's touch)."""

    def reply(self, session: Session) -> asyncio.Future[View]:
        """``session``'s view once its agents have replied; releases :attr:`Session.lock`, which the caller holds."""
        loop = asyncio.get_running_loop()
        if not self._parked:
            loop.call_soon(self._flush)
        future: asyncio.Future[View] = loop.create_future()
        self._parked.append((session, future))
        return future

    def _flush(self) -> None:
        parked, self._parked = self._parked, []
        try:
            move_agents([s for s, _ in parked])
            answers: list[View | Exception] = [s.view() for s, _ in parked]
        except Exception as e:  # a broken agent fails these requests (500), never the event loop
            answers = [e] * len(parked)
        for (session, future), answer in zip(parked, answers, strict=True):
            self._answered(session)
            session.lock.release()
            if future.done():
                continue
            if isinstance(answer, Exception):
                future.set_exception(answer)
            else:
                future.set_result(answer)
