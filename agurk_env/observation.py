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

from agurk_env import engine, rules_kernel
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
    flags += [rules.jokers / 2, rules.ace_points / 15, rules.limit / 50]
    players = np.zeros(MAX_SEATS - 1, np.float32)
    players[rules.players - 2] = 1.0
    return np.concatenate([players, np.asarray(flags, np.float32)])


_AT = {name: _STARTS[name] for name in SLICES}  # the first column of every slice


_AT_ARRAY = np.array(list(_AT.values()), np.int64)  # the kernel's view of _AT, in slice order
_OBSERVE_NAMES = ("hands", "void", "tricks", "alive", "scores", "lives", "rebuys", "dealer", "trick_no", "npos")
_OBSERVE_NAMES += ("n_alive", "top_seat", "leader", "locked")
_OBSERVE_FIELDS = tuple(engine.State._fields.index(k) for k in _OBSERVE_NAMES)  # the kernel's arguments, in order


def observe(rules: Rules, state: engine.State, seats: np.ndarray | None = None) -> np.ndarray:
    """``(B, SIZE)`` float32 observations of ``seats`` (default: the seat to move in each game).

    The compiled kernel's loop over games (:mod:`agurk_env.rules_kernel`), or the NumPy
    vectorisation below without numba; both read the same public fields and the observer's hand.
    """
    seats = state.cur if seats is None else np.ascontiguousarray(seats, dtype=np.int64)
    kernel = rules_kernel.active()
    if kernel is not None:
        out = np.zeros((state.batch, SIZE), np.float32)
        arrays = [state[i] for i in _OBSERVE_FIELDS]
        try:
            kernel.observe_all(
                engine.rule_array(rules), _AT_ARRAY, _rule_vector(rules), *arrays, seats, out
            )
        except TypeError:  # unusual dtypes or layouts: the NumPy path
            pass
        else:
            return out
    with rules_kernel.numpy_timer:
        return _observe_numpy(rules, state, seats)


def _observe_numpy(rules: Rules, state: engine.State, seats: np.ndarray) -> np.ndarray:
    """:func:`observe` as one NumPy vectorisation over the batch (without numba, and the kernel's reference)."""
    sp = engine.tables(rules)
    b, p, h, a = state.batch, sp.players, sp.hand_size, sp.actions
    games = np.arange(b)
    rows = games[:, None]
    absolute = (seats[:, None] + np.arange(p)) % p  # (B, P): relative seat -> seat
    out = np.zeros((b, SIZE), np.float32)

    out[:, _AT["hand"] : _AT["hand"] + a] = state.hands[games, seats] / 4.0
    out[:, _AT["cards_left"] : _AT["cards_left"] + p] = engine.cards_left(rules, state)[rows, absolute] / h
    out[:, _AT["played"] : _AT["played"] + a] = engine.cards_played(rules, state) / 4.0

    in_round = state.trick_no < h
    trick_no = np.minimum(state.trick_no, h - 1)
    started = (state.npos > 0) & in_round
    current = state.tricks[games, trick_no][rows, absolute].astype(np.int64)  # (B, P) card per relative seat, or -1
    game, rel_seat = np.nonzero((current >= 0) & started[:, None])
    out[game, _AT["trick"] + rel_seat * CARD_SLOTS + current[game, rel_seat]] = 1.0
    live = np.flatnonzero(started)
    if live.size:
        top_seat, cur = state.top_seat[live], seats[live]
        out[live, _AT["top_card"] + state.tricks[live, trick_no[live], top_seat].astype(np.int64)] = 1.0
        out[live, _AT["top_seat"] + (top_seat - cur) % p] = 1.0
        out[live, _AT["leader"] + (state.leader[live] - cur) % p] = 1.0
    out[:, _AT["locked"]] = state.locked & started
    void = out[:, _AT["void"] : _AT["void"] + MAX_SEATS * CARD_SLOTS].reshape(b, MAX_SEATS, CARD_SLOTS)
    void[:, :p, :a] = engine.MEMBERS[state.void[rows, absolute]][..., :a]
    out[:, _AT["trick_no"]] = state.trick_no / h
    out[:, _AT["last_trick"]] = state.trick_no == h - 1
    out[:, _AT["position"]] = np.where(in_round, state.npos, 0) / np.maximum(state.n_alive, 1)
    out[:, _AT["score"] : _AT["score"] + p] = state.scores[rows, absolute] / rules.limit
    if rules.lives:
        out[:, _AT["lives"] : _AT["lives"] + p] = state.lives[rows, absolute] / rules.lives
    out[:, _AT["rebuys"] : _AT["rebuys"] + p] = state.rebuys[rows, absolute]
    out[:, _AT["in_match"] : _AT["in_match"] + p] = state.alive[rows, absolute]
    out[games, _AT["dealer"] + (state.dealer - seats) % p] = 1.0
    constant = _rule_vector(rules)
    out[:, _AT["players"] : _AT["players"] + constant.size] = constant
    return out
