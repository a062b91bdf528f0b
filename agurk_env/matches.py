"""The one loop that plays numbered matches with agents on the batched engine.

:func:`play_matches` plays matches ``0..n-1`` of a seed (match ``m`` is dealt the
same cards whatever the batch, see :mod:`agurk_env.engine`) and yields a
:class:`Step` after every card played; callers read what they need from it (game
records in :func:`agurk_env.simulate.simulate`, statistics in the tournament).
Slots whose match is finished get the next match number; matches numbered ``n`` or
more are played but not counted, and once a quarter of the batch holds them the
batch is cut down to the slots still needed (``Step.kept`` says which).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from agurk_env import engine
from agurk_env.agent import Agent, act_seats
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
