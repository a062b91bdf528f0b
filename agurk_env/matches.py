"""The loops that play numbered matches with agents on the batched engine.

:func:`play_matches` plays matches ``0..n-1`` of a seed (match ``m`` is dealt the
same cards whatever the batch, see :mod:`agurk_env.engine`) and yields a
:class:`Step` after every card played; callers read what they need from it (game
records in :func:`agurk_env.simulate.simulate`, statistics in the tournament).
Slots whose match is finished get the next match number; matches numbered ``n`` or
more are played but not counted, and once a quarter of the batch holds them the
batch is cut down to the slots still needed (``Step.kept`` says which).

:func:`play_seatings` plays the same matches at several seatings of the same agents
in one batch (a tournament's tables side by side): one engine call per card for all
of them instead of one per table, which is what costs when the tables are many and
their matches few.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from agurk_env import engine
from agurk_env.agent import Agent, act_seats, dispatch
from agurk_env.rules import Rules

DEFAULT_BATCH = 1024
"""Games played side by side by default (``agurk simulate``, tournaments): ``min(matches, 1024)``."""


@dataclass(frozen=True)
class Step:
    """One card played in every game of the batch."""

    before: engine.State
    """The batch before the play."""
    legal_bits: np.ndarray
    """``(B,)`` legal card sets of the players to move in ``before``."""
    after: engine.State
    """The batch after the play, before the next deal: ``round_over`` / ``match_over`` mark what ended."""
    kept: np.ndarray | None
    """When the batch was cut since the previous step: the previous slots kept, in order."""

    def finished(self, n_matches: int) -> np.ndarray:
        """Slots whose match, numbered below ``n_matches``, ended with this play."""
        return np.flatnonzero(self.after.match_over & (self.after.match_id < n_matches))


def play_matches(
    rules: Rules,
    agents: Sequence[Agent],
    n_matches: int,
    seed: int,
    batch: int,
    deck: np.ndarray | None = None,
) -> Iterator[Step]:
    """Play matches ``0..n_matches-1`` of ``seed``, one agent per seat, ``batch`` at a time.

    Yields a :class:`Step` per card played in every game, and stops after the step
    in which the last of those matches ends. An illegal card raises ``ValueError``.
    ``deck`` (copies per card, :func:`agurk_env.engine.deck_counts`): deal from it instead of the rules' deck.
    """
    if len(agents) != rules.players:
        raise ValueError(f"need one agent per seat ({rules.players}), got {len(agents)}")
    if n_matches < 1 or batch < 1:
        raise ValueError(f"n_matches and batch must be >= 1, not {n_matches} and {batch}")
    state = engine.init(rules, min(batch, n_matches), seed, deck=deck)
    kept: np.ndarray | None = None
    done = 0
    while True:
        bits = engine.legal_bits(rules, state)
        after = engine.play(rules, state, act_seats(rules, state, bits, agents))
        step = Step(state, bits, after, kept)
        yield step
        done += step.finished(n_matches).size
        if done >= n_matches:
            return
        state, kept = engine.advance(rules, after, deck=deck), None
        spare = state.match_id >= n_matches
        if spare.sum() * 4 >= state.batch:  # the tail: drop the slots no longer needed
            kept = np.flatnonzero(~spare)
            state = state.take(kept)


def play_seatings(
    rules: Rules,
    agents: Sequence[Agent],
    seatings: np.ndarray,
    n_matches: int,
    seed: int,
    deck: np.ndarray | None = None,
) -> Iterator[Step]:
    """Play matches ``0..n_matches-1`` of ``seed`` at every seating of ``agents``, all in one batch.

    ``seatings`` ``(T, P)``: at table ``t`` seat ``s`` is played by ``agents[seatings[t, s]]``.
    Match ``m`` is dealt the same cards at every table. The states of the :class:`Step` s
    yielded number each game ``t * n_matches + m`` in ``match_id`` (so
    ``Step.finished(T * n_matches)`` is every game that ended); finished games leave the
    batch (``Step.kept``).
    """
    seatings = np.asarray(seatings, np.int64)
    if seatings.ndim != 2 or seatings.shape[1] != rules.players:
        raise ValueError(f"seatings must have shape (tables, {rules.players}), not {seatings.shape}")
    if n_matches < 1:
        raise ValueError(f"n_matches must be >= 1, not {n_matches}")
    tables = seatings.shape[0]
    table = np.repeat(np.arange(tables), n_matches)
    state = engine.init(rules, n_matches, seed, deck=deck).take(np.tile(np.arange(n_matches), tables))
    kept: np.ndarray | None = None
    while True:
        bits = engine.legal_bits(rules, state)
        after = engine.play(rules, state, dispatch(rules, state, bits, agents, seatings[table, state.cur]))
        game = table * n_matches
        before = state._replace(match_id=game + state.match_id)
        yield Step(before, bits, after._replace(match_id=game + after.match_id), kept)
        over = after.match_over
        if over.all():
            return
        state, kept = engine.advance(rules, after, reset=False, deck=deck), None
        if over.any():
            kept = np.flatnonzero(~over)
            state, table = state.take(kept), table[kept]
