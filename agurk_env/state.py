"""The full-information state: every seat's hand and the public table, as one flat float32 vector.

For centralized critics (a value function that may see everything, as PettingZoo's
``state()``): unlike the observation it holds every hand, and it is written in absolute
seats (seat 0 deals round 1), so it is the same vector whoever looks at it.

:data:`SLICES` names every slice, in order: ``hands`` (every seat's hand, by seat),
``to_move`` (the seat to play), then every slice of :data:`agurk_env.observation.SLICES`
but ``hand``, as seat 0 observes them: relative seat ``r`` seen from seat 0 is seat ``r``,
so each of those slices means what it means in the observation, with absolute seats.
:func:`view` reshapes a vector into named parts; :func:`state_vector` computes a batch of
them from an engine state and :func:`state_box` is their gymnasium space.

``state_vector(rules, state, seats)`` writes the same vector in the relative seats of
``seats`` instead (a per-game seat, e.g. the seat to move): slot ``r`` of ``hands``,
``to_move`` and every public slice is the ``r``-th seat clockwise from that seat, so the
public slices are that seat's observation and :data:`OBSERVATION` picks the whole
observation out of the vector (a trainer's full-information critic of the mover reads it so).
"""

from __future__ import annotations

import functools

import gymnasium
import numpy as np

from agurk_env import engine, observation
from agurk_env.observation import CARD_SLOTS, MAX_SEATS
from agurk_env.rules import Rules
from agurk_env.spaces import observation_box

SLICES: dict[str, tuple[int, ...]] = {
    "hands": (MAX_SEATS, CARD_SLOTS),  # every seat's cards, count per name / 4
    "to_move": (MAX_SEATS,),  # the seat to play, one-hot
    **{name: shape for name, shape in observation.SLICES.items() if name != "hand"},  # seat 0's view
}
"""Every slice of the state vector, in order, with its shape."""

_SIZES = {name: int(np.prod(shape)) for name, shape in SLICES.items()}
_STARTS = dict(zip(SLICES, np.cumsum([0, *_SIZES.values()])[:-1].tolist(), strict=True))
_PUBLIC = _STARTS["played"]  # where the observation's slices after "hand" (its first) begin
SIZE = sum(_SIZES.values())
"""Length of the state vector."""
OBSERVATION = np.concatenate([np.arange(CARD_SLOTS), np.arange(_PUBLIC, SIZE)])
"""Columns of a state vector that form the observation of the seat it is written for (hand slot 0, public slices)."""
OTHER_HANDS = np.arange(CARD_SLOTS, _STARTS["to_move"])
"""Columns of a state vector that hold the other seats' hands (slots 1 on), hidden from the seat it is written for."""


def view(vec: np.ndarray) -> dict[str, np.ndarray]:
    """Named, reshaped views of state vectors ``(..., SIZE)`` (no copies)."""
    lead = vec.shape[:-1]
    return {k: vec[..., _STARTS[k] : _STARTS[k] + _SIZES[k]].reshape(*lead, *SLICES[k]) for k in SLICES}


def state_vector(rules: Rules, state: engine.State, seats: np.ndarray | None = None) -> np.ndarray:
    """``(B, SIZE)`` float32 full-information state vectors of every game, in absolute seats or those of ``seats``."""
    b, p, a = state.batch, rules.players, rules.num_actions
    games = np.arange(b)
    seats = np.zeros(b, np.int64) if seats is None else np.asarray(seats, dtype=np.int64)
    out = np.zeros((b, SIZE), np.float32)
    hands = out[:, : _STARTS["to_move"]].reshape(b, MAX_SEATS, CARD_SLOTS)
    hands[:, :p, :a] = state.hands[games[:, None], (seats[:, None] + np.arange(p)) % p] / 4.0
    out[games, _STARTS["to_move"] + (state.cur - seats) % p] = 1.0
    out[:, _PUBLIC:] = observation.observe(rules, state, seats)[:, CARD_SLOTS:]
    return out


@functools.lru_cache(maxsize=64)
def _high(rules: Rules) -> np.ndarray:
    """Upper bounds of every state entry under ``rules``: 1 for hands and seat, the observation's for the rest."""
    return np.concatenate([np.ones(_PUBLIC, np.float32), observation_box(rules).high[CARD_SLOTS:]])


def state_box(rules: Rules) -> gymnasium.spaces.Box:
    """The ``Box`` of the state vector under ``rules`` (a new object)."""
    return gymnasium.spaces.Box(0.0, _high(rules), (SIZE,), np.float32)
