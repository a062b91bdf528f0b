"""The one observation: what a seat may know, as a flat float32 vector.

Seat-relative (relative seat ``r`` is the ``r``-th seat clockwise from the observer,
0 = the observer itself) and fixed-size for every rule set and player count, so one
network can serve several presets. It holds the observer's own hand and public
information only: every slice but ``hand`` is computed from public facts (the cards
played, the seats still in, scores, shown voids), so no hidden card ever enters it and
the state with the other hands hidden gives the same vector as the true state.

:data:`SLICES` names every slice; :func:`view` reshapes a vector into named parts,
in the manner of OpenSpiel's observers. The same :func:`observe` serves the
environments, the trainer and the agents.
"""

from __future__ import annotations

import numpy as np

from agurk_env import _rules_kernel as kernel
from agurk_env import engine
from agurk_env.rules import Rules, per_rules

MAX_SEATS = 8
"""Relative-seat slots; seats beyond the table's players stay zero."""
CARD_SLOTS = 14
"""Card slots (``2 .. A, X``); the joker slot stays zero without jokers."""

_RULE_FLAGS: tuple[tuple[str, str | bool], ...] = (
    ("ace", "high"),
    ("ace", "low"),
    ("ace", "low_in_last_trick"),
    ("first_leader", "dealer"),
    ("beat_target", "previous"),
    ("equal_beats", "always"),
    ("equal_beats", "not_last_trick"),
    ("equal_beats", "never"),
    ("beat_choice", "forced"),
    ("beat_choice", "nearest"),
    ("beat_choice", "optional"),
    ("ace_lock", "led"),
    ("ace_lock", "any"),
    ("twos_rule", True),
    ("scoring", "every_trick"),
    ("last_trick_ties", "all"),
    ("limit_rule", "exceed"),
    ("match_end", "first_out"),
)

SLICES: dict[str, tuple[int, ...]] = {
    "hand": (CARD_SLOTS,),  # own cards, count per name / 4
    "played": (CARD_SLOTS,),  # cards played so far this round (all seats), count per name / 4
    "trick": (MAX_SEATS, CARD_SLOTS),  # card each relative seat played in the current trick, one-hot
    "top_card": (CARD_SLOTS,),  # the card taking the current trick so far, one-hot
    "top_seat": (MAX_SEATS,),  # relative seat of that card, one-hot
    "leader": (MAX_SEATS,),  # relative seat that led the current trick, one-hot
    "locked": (1,),  # an ace lock applies to the current trick
    "cards_left": (MAX_SEATS,),  # cards in hand per relative seat / hand_size
    "void": (MAX_SEATS, CARD_SLOTS),  # cards each relative seat has shown it does not hold (public inference)
    "trick_no": (1,),  # tricks finished this round / hand_size
    "last_trick": (1,),  # the current trick is the round's last
    "position": (1,),  # cards already in the current trick / seats in
    "score": (MAX_SEATS,),  # score / limit per relative seat
    "lives": (MAX_SEATS,),  # lives left / starting lives (lives mode)
    "rebuys": (MAX_SEATS,),  # rebuys left (points mode)
    "in_match": (MAX_SEATS,),  # relative seat is still in the match
    "dealer": (MAX_SEATS,),  # relative seat of the dealer, one-hot
    "players": (MAX_SEATS - 1,),  # table size 2..8, one-hot
    "rules": (len(_RULE_FLAGS) + 3,),  # rule flags, then jokers / 2, ace_points / 15, limit / 50
}
"""Every slice of the observation, in order, with its shape."""

_SIZES = {name: int(np.prod(shape)) for name, shape in SLICES.items()}
_STARTS = dict(zip(SLICES, np.cumsum([0, *_SIZES.values()])[:-1].tolist(), strict=True))
SIZE = sum(_SIZES.values())
"""Length of the observation vector."""


def view(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Named, reshaped views of observation vectors ``(..., SIZE)`` (no copies)."""
    lead = obs.shape[:-1]
    return {k: obs[..., _STARTS[k] : _STARTS[k] + _SIZES[k]].reshape(*lead, *SLICES[k]) for k in SLICES}


@per_rules
def _rule_vector(rules: Rules) -> np.ndarray:
    """The constant "rules" and "players" slices for ``rules``."""
    flags = [float(getattr(rules, name) == value) for name, value in _RULE_FLAGS]
    assert rules.ace_points is not None  # resolved by Rules itself
    flags += [rules.jokers / 2, rules.ace_points / 15, rules.limit / 50]
    players = np.zeros(MAX_SEATS - 1, np.float32)
    players[rules.players - 2] = 1.0
    return np.concatenate([players, np.asarray(flags, np.float32)])


_AT_ARRAY = np.array([_STARTS[name] for name in kernel.OBSERVED], np.int64)  # the first column of each, for the kernel


def observe(rules: Rules, state: engine.State, seats: np.ndarray | None = None) -> np.ndarray:
    """``(B, SIZE)`` float32 observations of ``seats`` (default: the seat to move in each game).

    The rules kernel's loop over games (:func:`agurk_env._rules_kernel.observe_all`), which reads
    the public fields and the observer's own hand only.
    """
    seats = state.cur if seats is None else np.ascontiguousarray(seats, dtype=np.int64)
    out = np.zeros((state.batch, SIZE), np.float32)
    kernel.observe_all(
        engine.rule_array(rules), _AT_ARRAY, _rule_vector(rules), state.hands, state.void, state.tricks, state.alive,
        state.scores, state.lives, state.rebuys, state.dealer, state.trick_no, state.npos, state.n_alive,
        state.top_seat, state.leader, state.locked, seats, out,
    )  # fmt: skip
    return out
