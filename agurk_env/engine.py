"""The vectorized Agurk engine: B independent matches as one struct of NumPy arrays.

Pure functions over a :class:`State` (batch first): :func:`init` starts matches,
:func:`legal_mask` computes every game's legal cards at once, :func:`play` plays one
card in every game (resolving tricks, round scoring, elimination, rebuys and the end
of the match), and :func:`advance` deals the next round where a round ended and
restarts finished matches. Each function returns a new state and leaves its input
untouched, so a search can branch from any state.

Every game in a batch plays the same :class:`~agurk_env.rules.Rules`; the options are
resolved once into tables and flags (:class:`Tables`), so a batch pays only for the
options its rules use.

Two runners, proven equal (tests/test_kernel_differential.py): with numba, :func:`play`,
:func:`play_in`, :func:`legal_bits`, :func:`legal_reason` and :func:`advance` run the compiled
rules kernel's loop over the batch (:mod:`agurk_env._rules_kernel`, loaded as
:func:`agurk_env.rules_kernel.active` says), and otherwise the NumPy vectorisation below.

Seeds: the deal of round ``r`` of match ``m`` under seed ``s`` is a function of
``(s, m, r)`` alone (a counter-based hash, see :func:`deal_keys`). :func:`init` gives
slot ``i`` match ``first_match + i``; :func:`advance` gives restarted slots the next
unused match numbers in slot order. So match ``m`` of seed ``s`` is dealt the same
cards whatever the batch size, in the engine, the environments and the CLI.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import NamedTuple

import numpy as np

from agurk_env import rules_kernel
from agurk_env.rules import Rules, per_rules

ACE = 12
"""Action index of the ace."""
TWO = 0
"""Action index of the two."""
_STRENGTH_HIGH = np.array([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], dtype=np.int64)
_POINTS = np.array([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], dtype=np.int64)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
BIT = np.append(np.left_shift(1, np.arange(14, dtype=np.int64)), 0)
"""``BIT[i]``: the bit of card ``i`` in a card-set bitmask; ``BIT[-1]`` ("no card") is 0."""
_MAX_STRENGTH = 17  # highest "need" a follower can face: a joker (15) that only a greater card beats


def _set_bits_table(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lookup tables over all ``2**n`` card sets: members as bools, size, and the k-th member."""
    sets = np.arange(1 << n)
    members = ((sets[:, None] >> np.arange(n)) & 1).astype(bool)
    size = members.sum(1)
    kth = np.where(members, np.arange(n), n).astype(np.int8)
    kth.sort(axis=1)
    return members, size, kth


MEMBERS, SET_SIZE, KTH_MEMBER = _set_bits_table(14)
"""For a card-set bitmask ``m``: ``MEMBERS[m]`` its cards as bools, ``SET_SIZE[m]`` how many,
``KTH_MEMBER[m, k]`` the k-th card in action order (built once at import)."""
_MEMBERS13 = np.ascontiguousarray(MEMBERS[:, :13])


def unpack(bits: np.ndarray, actions: int) -> np.ndarray:
    """Card-set bitmasks ``(B,)`` to bool masks ``(B, actions)`` by table lookup."""
    return np.take(_MEMBERS13 if actions == 13 else MEMBERS, bits, axis=0)


_BIT_F32 = BIT[:14].astype(np.float32)
_KTH_FLAT = np.ascontiguousarray(KTH_MEMBER).reshape(-1).astype(np.int64)
_KTH_WIDTH = KTH_MEMBER.shape[1]


def random_legal(bits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random card from each card-set bitmask (:func:`legal_bits` output).

    ``k = floor(u * size)`` with ``u`` uniform in [0, 1), then the k-th member of the set by
    table lookup (:data:`SET_SIZE`, :data:`KTH_MEMBER`). Returns int64 action indices with
    the shape of ``bits``; an empty set raises ``ValueError``.
    """
    bits = np.asarray(bits, dtype=np.int64)
    size = SET_SIZE[bits]
    if not size.all():
        raise ValueError("random_legal got an empty card set (no legal card)")
    k = (rng.random(bits.shape) * size).astype(np.int64)
    return _KTH_FLAT[bits * _KTH_WIDTH + k]


def pack(mask: np.ndarray) -> np.ndarray:
    """Bool masks ``(..., A)`` to card-set bitmasks ``(...,)`` (one float32 matrix product, exact below 2**24)."""
    flat = mask.reshape(-1, mask.shape[-1]).astype(np.float32)  # 2-D: a plain matrix-vector product
    return (flat @ _BIT_F32[: mask.shape[-1]]).astype(np.int64).reshape(mask.shape[:-1])


class Tables(NamedTuple):
    """Rules resolved into lookup tables and flags, built once per :class:`Rules`.

    Tables indexed by card have one extra trailing 0 entry, so that the
    "no card" marker ``-1`` looks up strength 0 and 0 points.
    """

    players: int
    hand_size: int
    actions: int
    deck: np.ndarray  # (deck_size,) card of every physical card
    in_deck: np.ndarray  # (actions,) copies of each card in the deck
    strength: np.ndarray  # (actions + 1,) strength in every trick but the last
    strength_last: np.ndarray  # (actions + 1,) strength in the last trick
    points: np.ndarray  # (actions + 1,) penalty of a winning card, every trick but the last
    points_last: np.ndarray  # (actions + 1,) penalty in the last trick
    points_of: np.ndarray  # (18,) penalty of the card of each strength, every trick but the last
    points_of_last: np.ndarray  # (18,) the same in the last trick
    at_least: np.ndarray  # (18,) card set of the cards of strength >= t, every trick but the last
    at_least_last: np.ndarray  # (18,) the same in the last trick
    weaker: np.ndarray  # (18,) card set of the cards of strength below s, every trick but the last
    weaker_last: np.ndarray  # (18,) the same in the last trick
    shown: np.ndarray  # (18 * 18,) what playing strength s against need n shows a follower lacks, at [s * 18 + n]
    shown_last: np.ndarray  # (18 * 18,) the same in the last trick
    card_of: np.ndarray  # (18,) card of each strength, every trick but the last; -1 for none
    card_of_last: np.ndarray  # (18,) the same in the last trick
    ace_low: bool  # the ace is the weakest card in every trick
    low_last: bool  # ace=low_in_last_trick: the ace is weakest (and worth 1) in the last trick
    not_equal: int  # 1 when an equal card does not beat in tricks before the last, else 0
    not_equal_last: int  # the same in the last trick
    target_previous: bool
    beat_choice: str
    ace_lock: str
    twos: bool
    every_trick: bool
    ties_all: bool
    lives: int
    limit: int
    exceed: bool
    rebuys: int
    rebuy_min_others: int
    first_out: bool
    dealer_leads: bool


def _at_least(strength: np.ndarray) -> np.ndarray:
    """Bitmask of the cards whose strength is >= t, for every t in 0..17."""
    t = np.arange(_MAX_STRENGTH + 1)[:, None]
    return ((strength[None, :] >= t) * BIT[: strength.size]).sum(1)


def _shown_table(at_least: np.ndarray, beat_choice: str) -> np.ndarray:
    """For a follower playing strength s against need n (flat ``[s * 18 + n]``): the cards it shows it lacks.

    A card below the need is the player's lowest (nothing weaker held) and, unless
    beating was optional, shows that nothing reaches the need; under ``nearest`` a
    beating card shows that no weaker card reaches the need.
    """
    s = np.arange(_MAX_STRENGTH + 1)[:, None]
    n = np.arange(_MAX_STRENGTH + 1)[None, :]
    weaker, to_beat = (at_least[0] ^ at_least)[s], at_least[n]
    if beat_choice == "optional":
        table = np.where(s >= n, 0, weaker)
    elif beat_choice == "nearest":
        table = np.where(s >= n, to_beat & weaker, to_beat | weaker)
    else:
        table = np.where(s >= n, 0, to_beat | weaker)
    return table.reshape(-1)


def _by_strength(strength: np.ndarray, values: np.ndarray, empty: int = 0) -> np.ndarray:
    """Per-card ``values`` re-indexed by strength (each strength names one card in a trick)."""
    table = np.full(_MAX_STRENGTH + 1, empty, dtype=np.int64)
    table[strength] = values
    return table


@per_rules
def tables(rules: Rules) -> Tables:
    """Resolve ``rules`` into tables and flags (cached per rules object)."""
    n = rules.num_actions
    strength = _STRENGTH_HIGH[:n].copy()
    points = _POINTS[:n].copy()
    points[ACE] = rules.ace_points
    if rules.ace == "low":
        strength[ACE] = 1
    strength_last, points_last = strength.copy(), points.copy()
    if rules.ace == "low_in_last_trick":
        strength_last[ACE], points_last[ACE] = 1, 1
    deck = np.concatenate([np.repeat(np.arange(13), 4), np.full(rules.jokers, 13)]).astype(np.int64)
    pad = lambda t: np.append(t, 0)  # noqa: E731 - the -1 "no card" slot
    return Tables(
        players=rules.players,
        hand_size=rules.hand_size,
        actions=n,
        deck=deck,
        in_deck=np.bincount(deck, minlength=n),
        strength=pad(strength),
        strength_last=pad(strength_last),
        points=pad(points),
        points_last=pad(points_last),
        points_of=_by_strength(strength, points),
        points_of_last=_by_strength(strength_last, points_last),
        at_least=_at_least(strength),
        at_least_last=_at_least(strength_last),
        weaker=_at_least(strength)[0] ^ _at_least(strength),
        weaker_last=_at_least(strength_last)[0] ^ _at_least(strength_last),
        shown=_shown_table(_at_least(strength), rules.beat_choice),
        shown_last=_shown_table(_at_least(strength_last), rules.beat_choice),
        card_of=_by_strength(strength, np.arange(n), empty=-1),
        card_of_last=_by_strength(strength_last, np.arange(n), empty=-1),
        ace_low=rules.ace == "low",
        low_last=rules.ace == "low_in_last_trick",
        not_equal=int(rules.equal_beats == "never"),
        not_equal_last=int(rules.equal_beats != "always"),
        target_previous=rules.beat_target == "previous",
        beat_choice=rules.beat_choice,
        ace_lock=rules.ace_lock,
        twos=rules.twos_rule,
        every_trick=rules.scoring == "every_trick",
        ties_all=rules.last_trick_ties == "all",
        lives=rules.lives,
        limit=rules.limit,
        exceed=rules.limit_rule == "exceed",
        rebuys=rules.rebuys,
        rebuy_min_others=rules.rebuy_min_others,
        first_out=rules.match_end == "first_out",
        dealer_leads=rules.first_leader == "dealer",
    )


class State(NamedTuple):
    """B matches in flight. Shapes: ``(B,)``, ``(B, P)``, ``(B, P, A)``, ``(B, H, P)``.

    ``P`` seats, ``A`` actions, ``H`` = hand size (tricks per round). Seats are
    absolute (seat 0 deals round 1). Cards are action indices; ``-1`` is "none".
    A card set is a bitmask with bit ``i`` for card ``i`` (see :data:`BIT`).
    Fields marked "trick" describe the current trick once its lead is played;
    fields marked "round end" are valid while ``round_over`` is set.
    """

    hands: np.ndarray  # (B, P, A) int8 cards held per seat, counted per card name
    held: np.ndarray  # (B, P) int16 card set of the names each seat holds (hands > 0)
    void: np.ndarray  # (B, P) int16 card set each seat has shown it does not hold, this round (public)
    tricks: np.ndarray  # (B, H, P) int8 card each seat played in each trick of this round, -1 if none
    trick_leader: np.ndarray  # (B, H) int8 leader of each trick of this round (once led)
    trick_winner: np.ndarray  # (B, H) int8 seat taking each trick of this round (so far, then final)
    alive: np.ndarray  # (B, P) bool seat still in the match
    next_seat: np.ndarray  # (B, P) int64 next seat clockwise that is still in
    n_alive: np.ndarray  # (B,) seats still in
    scores: np.ndarray  # (B, P) int32 penalty points so far (after rebuys)
    lives: np.ndarray  # (B, P) int16 lives left (lives mode)
    rebuys: np.ndarray  # (B, P) int16 rebuys left
    round_penalty: np.ndarray  # (B, P) int32 penalties scored in this round so far
    out_now: np.ndarray  # (B, P) bool round end: went out in this round
    rebought_now: np.ndarray  # (B, P) bool round end: stayed in by a rebuy in this round
    winners: np.ndarray  # (B, P) bool winners, once the match is over
    dealer: np.ndarray  # (B,) dealer of this round
    round_no: np.ndarray  # (B,) rounds started in this match, minus one
    trick_no: np.ndarray  # (B,) tricks finished this round
    cur: np.ndarray  # (B,) seat to play
    npos: np.ndarray  # (B,) cards already in the current trick
    leader: np.ndarray  # (B,) trick: seat that led it
    top: np.ndarray  # (B,) trick: strength of the card taking it so far
    top_seat: np.ndarray  # (B,) trick: seat of that card
    prev: np.ndarray  # (B,) trick: strength of the card played just before
    locked: np.ndarray  # (B,) bool trick: an ace lock applies
    round_over: np.ndarray  # (B,) bool the round has ended (call advance)
    match_over: np.ndarray  # (B,) bool the match has ended (implies round_over)
    match_id: np.ndarray  # (B,) int64 match number, for the deal and records
    seed: int
    next_match: int  # first match number not yet given to a slot

    @property
    def batch(self) -> int:
        """Number of games B."""
        return self.cur.shape[0]

    def nbytes_per_game(self) -> int:
        """Bytes of array memory per game."""
        return sum(a.nbytes for a in self if isinstance(a, np.ndarray)) // self.batch

    def take(self, idx: np.ndarray | slice) -> State:
        """The sub-batch ``idx`` (copies), e.g. one game for display or search."""
        arrays = {k: v for k, v in self._asdict().items() if isinstance(v, np.ndarray)}
        if isinstance(idx, np.ndarray):  # take copies, and is faster than fancy indexing on 2-D and 3-D arrays
            rows = np.flatnonzero(idx) if idx.dtype == bool else idx
            return self._replace(**{k: v.take(rows, axis=0) for k, v in arrays.items()})
        return self._replace(**{k: v[idx].copy() for k, v in arrays.items()})


# ----------------------------------------------------------------------------- randomness


def _mix(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer on uint64 arrays (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _mix32_inplace(x: np.ndarray) -> None:
    """The murmur3 32-bit finalizer, in place on a uint32 array."""
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x85EBCA6B)
    x ^= x >> np.uint32(13)
    x *= np.uint32(0xC2B2AE35)
    x ^= x >> np.uint32(16)


def deal_order(seed: int, match_id: np.ndarray, round_no: np.ndarray, deck_size: int) -> np.ndarray:
    """``(k, deck_size)``: the deck positions in shuffled order, one row per (match, round).

    Each position gets a key from a hash of ``(seed, match, round, position)`` and the
    keys are sorted, so a deal depends on those numbers alone. A key holds 26 random
    bits above the 6-bit position; a tie between two keys (about 2e-5 per deal) falls
    back to deck order.
    """
    with np.errstate(over="ignore"):
        g = _mix(np.full(match_id.size, seed & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64) + _GOLDEN)
        g = _mix(g ^ (match_id.astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93)))
        g = _mix(g ^ (round_no.astype(np.uint64) * np.uint64(0xA0761D6478BD642F)))
        low = g.astype(np.uint32)
        high = (g >> np.uint64(32)).astype(np.uint32)
        pos = np.arange(deck_size, dtype=np.uint32)
        keys = low[:, None] + pos * np.uint32(0x9E3779B9)
        _mix32_inplace(keys)
        keys ^= high[:, None]
    keys &= ~np.uint32(63)
    keys |= pos
    keys.sort(axis=1)
    return (keys & np.uint32(63)).astype(np.intp)


# ----------------------------------------------------------------------------- seats


@functools.lru_cache(maxsize=8)
def _next_seat_table(p: int) -> np.ndarray:
    """``(2**p, p)``: for every set of seats still in (a bitmask), the next one after each seat."""
    alive = ((np.arange(1 << p)[:, None] >> np.arange(p)) & 1).astype(bool)
    cand = (np.arange(p)[:, None] + np.arange(1, p + 1)[None, :]) % p  # (P, P)
    first = alive[:, cand].argmax(2)
    return cand[np.arange(p)[None, :], first]


@functools.lru_cache(maxsize=8)
def _seat_of_rank_table(p: int) -> np.ndarray:
    """``(2**p, p)``: for every set of seats still in, those seats in seat order, then ``p`` (no seat)."""
    alive = ((np.arange(1 << p)[:, None] >> np.arange(p)) & 1).astype(bool)
    return np.sort(np.where(alive, np.arange(p), p), axis=1)


def _next_table(alive: np.ndarray) -> np.ndarray:
    """``(k, P)`` table of the next alive seat after every seat."""
    return _next_seat_table(alive.shape[1])[_seat_bits(alive)]


def _next_alive(alive: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """For each row, the first seat after ``seat`` clockwise that is alive."""
    p = alive.shape[1]
    return _next_seat_table(p).reshape(-1)[_seat_bits(alive) * p + seat]


def _seat_bits(seats: np.ndarray) -> np.ndarray:
    """``(k, P)`` bools to ``(k,)`` bitmasks (bit s for seat s), by one matrix product."""
    return (seats.astype(np.float64) @ np.exp2(np.arange(seats.shape[1]))).astype(np.int64)


# ----------------------------------------------------------------------------- setup


class _Draft(dict):
    """The fields of a state being rebuilt: an array is copied when first taken for writing.

    ``d[key]`` returns an array this draft owns (copying the input's on first use), so
    in-place writes never touch the input state; ``d.peek(key)`` reads without copying.
    A draft made with ``donate`` owns the input's arrays from the start (no copies).
    """

    def __init__(self, state: State, donate: bool = False) -> None:
        super().__init__(state._asdict())
        self._owned: set[str] = set(self) if donate else set()

    def __getitem__(self, key: str):
        value = dict.__getitem__(self, key)
        if key not in self._owned and isinstance(value, np.ndarray):
            value = value.copy()
            self[key] = value
        return value

    def __setitem__(self, key: str, value) -> None:
        dict.__setitem__(self, key, value)
        self._owned.add(key)

    def peek(self, key: str):
        """The current value, for reading only."""
        return dict.__getitem__(self, key)

    def state(self) -> State:
        """The finished state."""
        return State(*(dict.__getitem__(self, k) for k in State._fields))


def init(rules: Rules, batch: int, seed: int, first_match: int = 0) -> State:
    """Start ``batch`` matches numbered ``first_match..first_match+batch-1`` and deal round 1."""
    sp = tables(rules)
    b, p, h, a = batch, sp.players, sp.hand_size, sp.actions
    zi = lambda *shape: np.zeros(shape, dtype=np.int64)  # noqa: E731
    st = State(
        hands=np.zeros((b, p, a), np.int8),
        held=np.zeros((b, p), np.int16),
        void=np.zeros((b, p), np.int16),
        tricks=np.full((b, h, p), -1, np.int8),
        trick_leader=np.full((b, h), -1, np.int8),
        trick_winner=np.full((b, h), -1, np.int8),
        alive=np.ones((b, p), bool),
        next_seat=zi(b, p),
        n_alive=zi(b),
        scores=np.zeros((b, p), np.int32),
        lives=np.zeros((b, p), np.int16),
        rebuys=np.zeros((b, p), np.int16),
        round_penalty=np.zeros((b, p), np.int32),
        out_now=np.zeros((b, p), bool),
        rebought_now=np.zeros((b, p), bool),
        winners=np.zeros((b, p), bool),
        dealer=zi(b),
        round_no=zi(b),
        trick_no=zi(b),
        cur=zi(b),
        npos=zi(b),
        leader=zi(b),
        top=zi(b),
        top_seat=zi(b),
        prev=zi(b),
        locked=np.zeros(b, bool),
        round_over=np.ones(b, bool),
        match_over=np.ones(b, bool),
        match_id=zi(b),
        seed=int(seed),
        next_match=int(first_match),
    )
    return advance(rules, st)


def _start_matches(sp: Tables, f: _Draft, idx: np.ndarray, first_id: int) -> None:
    """Reset the match-long fields of games ``idx`` to new matches (in place on ``f``)."""
    f["match_id"][idx] = np.arange(first_id, first_id + idx.size)
    f["alive"][idx] = True
    f["n_alive"][idx] = sp.players
    f["next_seat"][idx] = (np.arange(sp.players) + 1) % sp.players
    f["scores"][idx] = 0
    f["lives"][idx] = sp.lives
    f["rebuys"][idx] = sp.rebuys
    f["winners"][idx] = False
    f["match_over"][idx] = False
    f["dealer"][idx] = 0
    f["round_no"][idx] = 0


def _deal(sp: Tables, f: _Draft, idx: np.ndarray, seed: int) -> None:
    """Shuffle and deal a new round to games ``idx`` and reset the round fields (in place on ``f``)."""
    k, p, h, a = idx.size, sp.players, sp.hand_size, sp.actions
    alive = np.take(f.peek("alive"), idx, axis=0)
    order = deal_order(seed, np.take(f.peek("match_id"), idx), np.take(f.peek("round_no"), idx), sp.deck.size)
    cards = sp.deck[order[:, : p * h]]
    # the j-th card dealt goes to the (j // H)-th seat still in; cards past the seats still in go to
    # the extra seat p, which is dropped
    rank = np.repeat(np.arange(p), h)
    seats = np.take(_seat_of_rank_table(p), _seat_bits(alive), axis=0)[:, rank]
    flat = (np.arange(k)[:, None] * (p + 1) + seats) * a + cards
    hands = np.bincount(flat.reshape(-1), minlength=k * (p + 1) * a).reshape(k, p + 1, a)[:, :p]
    f["hands"][idx] = hands
    f["held"][idx] = pack(hands > 0)
    f["tricks"][idx] = -1
    f["void"][idx] = 0
    f["round_penalty"][idx] = 0
    f["round_over"][idx] = False
    f["trick_no"][idx] = 0
    f["npos"][idx] = 0
    dealer = np.take(f.peek("dealer"), idx)
    f["cur"][idx] = dealer if sp.dealer_leads else _next_alive(alive, dealer)


def set_hands(rules: Rules, state: State, hands: np.ndarray) -> State:
    """Replace every seat's hand by ``(B, P, A)`` counts, keeping ``held`` in step.

    For scenarios and replays (right after a deal), and for search worlds and public
    views (mid-round: the caller keeps the hands consistent with the cards played).
    """
    hands = np.asarray(hands, dtype=np.int8)
    if hands.shape != state.hands.shape:
        raise ValueError(f"hands must have shape {state.hands.shape}, not {hands.shape}")
    return state._replace(hands=hands.copy(), held=pack(hands > 0).astype(np.int16))


def advance(
    rules: Rules, state: State, reset: bool = True, donate: bool = False, restart: np.ndarray | None = None
) -> State:
    """Deal the next round where a round ended; restart finished matches when ``reset``.

    Restarted slots get the next unused match numbers, in slot order. Games whose
    match is over stay over when ``reset`` is false. ``restart`` (``(B,)`` bool) ends
    those games' matches where they stand, so that they restart too (new episodes).
    ``donate`` lets the new state reuse the input's arrays (see :func:`play`).
    """
    if restart is not None:
        over = state.match_over | restart
        state = state._replace(round_over=state.round_over | over, match_over=over)
    if not state.round_over.any():
        return state
    new_round = np.flatnonzero(state.round_over & ~state.match_over)
    restart = np.flatnonzero(state.match_over) if reset else np.zeros(0, np.int64)
    if not (new_round.size or restart.size):
        return state
    kernel = rules_kernel.active()
    if kernel is not None:
        new = _advance_compiled(kernel, rules, state, reset, donate)
        if new is not None:
            return new
    with rules_kernel.numpy_timer:
        return _advance_numpy(rules, state, new_round, restart, donate)


def _advance_numpy(rules: Rules, state: State, new_round: np.ndarray, restart: np.ndarray, donate: bool) -> State:
    """:func:`advance` by the NumPy path, for the games starting a round and those restarting."""
    sp = tables(rules)
    f = _Draft(state, donate)
    if new_round.size:
        f["dealer"][new_round] = _next_alive(f.peek("alive")[new_round], f.peek("dealer")[new_round])
        f["round_no"][new_round] += 1
    if restart.size:
        _start_matches(sp, f, restart, f["next_match"])
        f["next_match"] += restart.size
    _deal(sp, f, np.concatenate([new_round, restart]), f["seed"])
    return f.state()


_ADVANCE_NAMES = ("hands", "held", "void", "tricks", "alive", "next_seat", "n_alive", "scores", "lives", "rebuys")
_ADVANCE_NAMES += ("round_penalty", "winners", "dealer", "round_no", "trick_no", "cur", "npos", "round_over")
_ADVANCE_NAMES += ("match_over", "match_id")
_ADVANCE_FIELDS = tuple(State._fields.index(k) for k in _ADVANCE_NAMES)
"""The fields the kernel's deal writes, in its argument order."""


def _advance_compiled(kernel: ModuleType, rules: Rules, state: State, reset: bool, donate: bool) -> State | None:
    """:func:`advance` (``restart`` applied) by the compiled kernel; ``None`` for arrays it was not compiled for."""
    fields = list(state)
    if not donate:
        for i in _ADVANCE_FIELDS:
            fields[i] = fields[i].copy()
    seed = np.uint64(state.seed & 0xFFFFFFFFFFFFFFFF)
    try:
        restarted = kernel.advance_games(
            rule_array(rules), tables(rules).deck, *[fields[i] for i in _ADVANCE_FIELDS], seed, state.next_match, reset
        )
    except TypeError:  # unusual dtypes or layouts: the NumPy path
        return None
    fields[-1] = state.next_match + int(restarted)
    return State._make(fields)


@functools.lru_cache(maxsize=32)
def _offsets(b: int, n: int) -> np.ndarray:
    """``arange(b) * n``: the flat offset of each game's row in a ``(B, n)`` array (cached)."""
    return np.arange(b) * n


# ----------------------------------------------------------------------------- legal moves


def _lowest(sp: Tables, cards: np.ndarray, last: np.ndarray | None) -> np.ndarray:
    """The weakest card of each card set, as a one-card set (``last``: games in their last trick)."""
    low = cards & -cards  # weakest in action order, which is strength order but for a low ace
    if sp.ace_low:
        low = np.where(cards & BIT[ACE], BIT[ACE], low)
    elif last is not None:
        low = np.where(last & (cards & BIT[ACE] != 0), BIT[ACE], low)
    return low


def _in_last_trick(sp: Tables, state: State) -> np.ndarray | None:
    """Games in the last trick of their round, when the rules treat it apart (else ``None``)."""
    if sp.low_last or sp.not_equal != sp.not_equal_last:
        return state.trick_no == sp.hand_size - 1
    return None


def _need(sp: Tables, state: State, last: np.ndarray | None) -> np.ndarray:
    """``(B,)`` the least strength that beats the current trick's target (for the player to move)."""
    need = state.prev if sp.target_previous else state.top
    if sp.not_equal == sp.not_equal_last:
        return need + sp.not_equal
    return need + np.where(last, sp.not_equal_last, sp.not_equal)


def _at_least_of(sp: Tables, strength: np.ndarray, last: np.ndarray | None) -> np.ndarray:
    """``(B,)`` card sets of the cards of at least ``strength`` in each game's current trick."""
    if sp.low_last:
        return np.where(last, sp.at_least_last[strength], sp.at_least[strength])
    return sp.at_least[strength]


def _led_card(sp: Tables, state: State) -> np.ndarray:
    """``(B,)`` the card led to the current trick (meaningless before the lead)."""
    trick_slot = _offsets(state.batch, sp.hand_size) + state.trick_no
    return state.tricks.reshape(-1)[trick_slot * sp.players + state.leader]


REASONS: tuple[str, ...] = ("lead", "twos", "locked", "cannot_beat", "must_beat", "nearest", "optional")
"""Why the player to move may play exactly its legal cards (:func:`legal_reason` gives the index):
it leads (any card); a 2 was led and it holds a 2 (twos rule); an ace lock forces its lowest card;
nothing it holds beats the target, so its lowest card; it can beat and must (``forced``), must with
the least card that beats (``nearest``), or may beat or play its lowest card (``optional``)."""
_REASON = {name: np.int8(i) for i, name in enumerate(REASONS)}
_BEAT_REASON = {"forced": _REASON["must_beat"], "nearest": _REASON["nearest"], "optional": _REASON["optional"]}


def _legal(sp: Tables, state: State, reasons: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The legal card sets ``(B,)`` and, when ``reasons``, the index in :data:`REASONS` of why."""
    held = state.held.reshape(-1)[_offsets(state.batch, sp.players) + state.cur]
    last = _in_last_trick(sp, state)
    beat = held & _at_least_of(sp, _need(sp, state, last), last)
    low_last = last if sp.low_last else None
    low = _lowest(sp, held, low_last)
    if sp.beat_choice == "optional":
        mask = beat | low
    elif sp.beat_choice == "nearest":
        mask = np.where(beat != 0, _lowest(sp, beat, low_last), low)
    else:
        mask = np.where(beat != 0, beat, low)
    why = np.where(beat != 0, _BEAT_REASON[sp.beat_choice], _REASON["cannot_beat"]) if reasons else None
    if sp.ace_lock != "none":
        mask = np.where(state.locked, low, mask)
        why = np.where(state.locked, _REASON["locked"], why) if reasons else None
    if sp.twos:
        forced_two = (_led_card(sp, state) == TWO) & (held & BIT[TWO] != 0)
        mask = np.where(forced_two, BIT[TWO], mask)
        why = np.where(forced_two, _REASON["twos"], why) if reasons else None
    lead = state.npos == 0
    return np.where(lead, held, mask), (np.where(lead, _REASON["lead"], why) if reasons else None)


def legal_bits(rules: Rules, state: State) -> np.ndarray:
    """``(B,)`` card sets of the cards the player to move may play, for every game at once.

    One pass over RULES.md's legal-move order: leader, twos, ace lock, then beat the
    target (forced / nearest / optional) or play the lowest card; the compiled kernel's
    loop over games (:mod:`agurk_env.rules_kernel`), or the NumPy vectorisation without numba.
    """
    kernel = rules_kernel.active()
    if kernel is not None:
        compiled = _legal_compiled(kernel, rules, state)
        if compiled is not None:
            return compiled[0]
    with rules_kernel.numpy_timer:
        return _legal(tables(rules), state, reasons=False)[0]


def legal_reason(rules: Rules, state: State) -> np.ndarray:
    """``(B,)`` int8: why the player to move may play exactly its legal cards, an index into :data:`REASONS`.

    The same pass as :func:`legal_bits`, so the explanation (``agurk play``) can never
    disagree with the rule it explains.
    """
    kernel = rules_kernel.active()
    if kernel is not None:
        compiled = _legal_compiled(kernel, rules, state)
        if compiled is not None:
            return compiled[1]
    with rules_kernel.numpy_timer:
        return _legal(tables(rules), state, reasons=True)[1]


@per_rules
def rule_array(rules: Rules) -> np.ndarray:
    """The rules as the compiled kernel reads them (:func:`agurk_env.rules_kernel.rule_array` of :func:`tables`)."""
    return rules_kernel.rule_array(tables(rules))


_LEGAL_FIELDS = tuple(State._fields.index(k) for k in ("held", "tricks", "trick_no", "cur", "npos", "leader"))
_LEGAL_FIELDS += tuple(State._fields.index(k) for k in ("top", "prev", "locked"))


def _legal_compiled(kernel: ModuleType, rules: Rules, state: State) -> tuple[np.ndarray, np.ndarray] | None:
    """``(legal_bits, legal_reason)`` by the compiled kernel; ``None`` for arrays it was not compiled for."""
    b = state.batch
    bits, reasons = np.empty(b, np.int64), np.empty(b, np.int8)
    try:
        kernel.legal_all(rule_array(rules), *[state[i] for i in _LEGAL_FIELDS], bits, reasons)
    except TypeError:  # unusual dtypes or layouts: the NumPy path
        return None
    return bits, reasons


def trick_target(rules: Rules, state: State) -> tuple[np.ndarray, np.ndarray]:
    """``(card, equal_beats)``, both ``(B,)``: the card a follower must reach in the current trick.

    ``equal_beats`` says whether an equal card reaches it; the target is the highest card
    so far or the previous one (``beat_target``). The card is ``-1`` before the lead.
    """
    sp = tables(rules)
    last = _in_last_trick(sp, state)
    target = state.prev if sp.target_previous else state.top
    card = np.where(last, sp.card_of_last[target], sp.card_of[target]) if sp.low_last else sp.card_of[target]
    if last is None:
        not_equal = np.full(state.batch, sp.not_equal)
    else:
        not_equal = np.where(last, sp.not_equal_last, sp.not_equal)
    return np.where(state.npos > 0, card, -1), not_equal == 0


def card_values(rules: Rules, state: State) -> tuple[np.ndarray, np.ndarray]:
    """``(strength, points)``, both ``(B, A)``: each card's strength in the current trick, and its penalty there.

    The penalty is what the card scores if it takes that trick; the last trick may rank
    and score the ace low.
    """
    sp = tables(rules)
    a = sp.actions
    last = (state.trick_no == sp.hand_size - 1)[:, None]
    return np.where(last, sp.strength_last[:a], sp.strength[:a]), np.where(last, sp.points_last[:a], sp.points[:a])


def _beats_top(sp: Tables, top: np.ndarray, s: np.ndarray, last: np.ndarray | None) -> np.ndarray:
    """Whether strength ``s`` beats the trick's top strength ``top`` (an equal card beats unless the rules say not)."""
    if sp.not_equal == sp.not_equal_last:
        return (s > top) if sp.not_equal else (s >= top)
    return s + 1 - np.where(last, sp.not_equal_last, sp.not_equal) > top  # s >= top, or s > top


def takes_trick(rules: Rules, state: State) -> np.ndarray:
    """``(B, A)`` bool: playing the card now would take the current trick so far (the lead always does).

    The same test :func:`play` settles a trick with: strength against the top card,
    equal cards by ``equal_beats``, nothing takes a locked trick.
    """
    sp = tables(rules)
    strength, _ = card_values(rules, state)
    last = _in_last_trick(sp, state)
    wins = _beats_top(sp, state.top[:, None], strength, None if last is None else last[:, None])
    if sp.ace_lock != "none":
        wins &= ~state.locked[:, None]
    return wins | (state.npos == 0)[:, None]


def cards_left(rules: Rules, state: State) -> np.ndarray:
    """``(B, P)`` cards in hand per seat, from public facts only: the tricks played, the seats still in."""
    sp = tables(rules)
    b = state.batch
    trick = np.minimum(state.trick_no, sp.hand_size - 1)
    played_now = (state.tricks[np.arange(b), trick] >= 0) & (state.trick_no < sp.hand_size)[:, None]
    left = (sp.hand_size - state.trick_no)[:, None] - played_now
    return np.where(state.alive, left, 0)


def cards_played(rules: Rules, state: State, by_seat: bool = False) -> np.ndarray:
    """Copies of each card played so far this round (public): ``(B, A)``, or ``(B, P, A)`` per seat."""
    sp = tables(rules)
    b, p, a = state.batch, sp.players, sp.actions
    cards = state.tricks.astype(np.int64) + 1  # (B, H, P); 0 for "no card"
    if by_seat:
        shape, slot = (b, p), np.arange(b * p).reshape(b, 1, p) * (a + 1) + cards
    else:
        shape, slot = (b,), np.arange(b).reshape(b, 1, 1) * (a + 1) + cards
    counts = np.bincount(slot.ravel(), minlength=int(np.prod(shape)) * (a + 1))
    return counts.reshape(*shape, a + 1)[..., 1:]


def legal_mask(rules: Rules, state: State) -> np.ndarray:
    """``(B, A)`` bool: the cards the player to move may play (see :func:`legal_bits`)."""
    return unpack(legal_bits(rules, state), tables(rules).actions)


# ----------------------------------------------------------------------------- play


def play(rules: Rules, state: State, actions: np.ndarray, donate: bool = False) -> State:
    """Play ``actions[i]`` for the player to move in every game ``i``.

    The actions must be legal (:func:`legal_mask`; adapters check it), and every
    game must be in a round (call :func:`advance` after a round or match ends).
    Settles a trick when its last card is played (the next trick is led by its
    winner) and scores the round after its last trick. The compiled kernel's loop over
    games (:mod:`agurk_env.rules_kernel`), or the NumPy vectorisation without numba.

    ``donate=True`` hands the input state's arrays over to the result, which is then
    written in place (as JAX's buffer donation): faster for a loop that never looks
    back, but the input state must not be used again. By default the input is untouched.
    """
    kernel = rules_kernel.active()
    if kernel is not None:
        new = _play_compiled(kernel, rules, state, _offsets(state.batch, 1), actions, donate)
        if new is not None:
            return new
    with rules_kernel.numpy_timer:
        return _play_numpy(rules, state, actions, donate)


_PLAY_NAMES = State._fields[:16] + State._fields[18:28]
"""The fields the kernel's play writes, in its argument order (every array but the dealer, round and match numbers)."""
_PLAY_FIELDS = tuple(State._fields.index(k) for k in _PLAY_NAMES)
_TRICK_FIELDS = tuple(State._fields.index(k) for k in _PLAY_NAMES[:6] + _PLAY_NAMES[16:24])
"""Those a play that ends no round writes: the hands, the voids, the tricks and the trick's fields."""
_TRICK_FIELDS_EVERY = (*_TRICK_FIELDS, State._fields.index("round_penalty"))
"""Those under ``scoring=every_trick``, where a trick before the last scores."""


def _ends_a_round(sp: Tables, state: State) -> bool:
    """Whether the next card played in some game of ``state`` ends its round (it is its last trick's last card)."""
    if state.batch == 1:
        return int(state.trick_no[0]) == sp.hand_size - 1 and int(state.npos[0]) + 1 == int(state.n_alive[0])
    return bool(((state.trick_no == sp.hand_size - 1) & (state.npos + 1 == state.n_alive)).any())


def _play_compiled(
    kernel: ModuleType, rules: Rules, state: State, games: np.ndarray, actions: np.ndarray, donate: bool
) -> State | None:
    """:func:`play` in ``games`` by the compiled kernel; ``None`` (nothing changed) for arrays it was not compiled for.

    Without ``donate`` it copies the fields the play can write (those of a round's end only
    where a round can end), so the input is untouched.
    """
    fields = list(state)
    if not donate:
        sp = tables(rules)
        if _ends_a_round(sp, state):
            written = _PLAY_FIELDS
        else:
            written = _TRICK_FIELDS_EVERY if sp.every_trick else _TRICK_FIELDS
        for i in written:
            fields[i] = fields[i].copy()
    cards = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
    if cards.size != games.size:
        raise ValueError(f"play needs one action per game ({games.size}), not {cards.size}")
    try:
        kernel.play_games(rule_array(rules), *[fields[i] for i in _PLAY_FIELDS], games, cards)
    except TypeError:  # unusual dtypes or layouts: the NumPy path
        return None
    return State._make(fields)


def _play_numpy(rules: Rules, state: State, actions: np.ndarray, donate: bool = False) -> State:
    """:func:`play` as one NumPy vectorisation over the batch (without numba, and the kernel's reference)."""
    own = _owned if donate else np.copy
    sp = tables(rules)
    b, p, a, h = state.batch, sp.players, sp.actions, sp.hand_size
    actions = np.asarray(actions, dtype=np.int64)
    cur = state.cur
    seat = _offsets(b, p) + cur
    hands = own(state.hands)
    flat = hands.reshape(-1)
    slot = seat * a + actions
    flat[slot] -= 1
    held = own(state.held)
    held.reshape(-1)[seat] ^= BIT[actions] * (flat[slot] == 0)
    trick_slot = _offsets(b, h) + state.trick_no
    tricks = own(state.tricks)
    tricks.reshape(-1)[trick_slot * p + cur] = actions

    last = _in_last_trick(sp, state)
    s = np.where(last, sp.strength_last[actions], sp.strength[actions]) if sp.low_last else sp.strength[actions]
    first = state.npos == 0  # the lead: it takes the empty trick and clears the last trick's lock
    void = own(state.void)
    void.reshape(-1)[seat] |= _shown_void(sp, state, actions, s, first, last)
    wins = _beats_top(sp, state.top, s, last)
    locked = state.locked
    if sp.ace_lock != "none":
        locked = locked & ~first
        wins &= ~locked
        locks = actions == ACE
        if sp.low_last:
            locks &= ~last
        if sp.ace_lock == "led":
            locks &= first
        locked = locked | locks
    wins |= first
    top = np.where(wins, s, state.top)
    top_seat = np.where(wins, cur, state.top_seat)
    leader = np.where(first, cur, state.leader)
    trick_leader = own(state.trick_leader)
    trick_leader.reshape(-1)[trick_slot] = leader
    trick_winner = own(state.trick_winner)
    trick_winner.reshape(-1)[trick_slot] = top_seat
    npos = state.npos + 1
    done = npos == state.n_alive
    round_penalty = state.round_penalty
    if sp.every_trick:  # tricks before the last score here, the last one in _finish_rounds
        round_penalty = own(round_penalty)
        scored = done & (state.trick_no < h - 1)
        round_penalty.reshape(-1)[_offsets(b, p) + top_seat] += (sp.points_of[top] * scored).astype(np.int32)
    new = state._replace(
        hands=hands,
        held=held,
        void=void,
        tricks=tricks,
        trick_leader=trick_leader,
        trick_winner=trick_winner,
        round_penalty=round_penalty,
        trick_no=state.trick_no + done,
        cur=np.where(done, top_seat, state.next_seat.reshape(-1)[seat]),
        npos=np.where(done, 0, npos),
        leader=leader,
        top=top,
        top_seat=top_seat,
        prev=s,
        locked=locked,
    )
    ended = done & (state.trick_no == h - 1)
    if ended.any():
        new = _finish_rounds(sp, new, np.flatnonzero(ended), donate)
    return new


def play_in(rules: Rules, state: State, games: np.ndarray, actions: np.ndarray) -> State:
    """:func:`play` in ``games`` only (``actions`` holds their cards); every other game is left as it is.

    For loops where only some games move (the opponents' turns of a single-learner
    environment): the compiled kernel plays those games only; the NumPy path plays them
    as a sub-batch and writes back only the fields the play changed.
    """
    kernel = rules_kernel.active()
    if kernel is not None:
        rows = np.flatnonzero(games) if np.asarray(games).dtype == bool else games
        new = _play_compiled(kernel, rules, state, np.ascontiguousarray(rows, dtype=np.int64), actions, False)
        if new is not None:
            return new
    with rules_kernel.numpy_timer:
        return _play_in_numpy(rules, state, games, actions)


def _play_in_numpy(rules: Rules, state: State, games: np.ndarray, actions: np.ndarray) -> State:
    """:func:`play_in` by the NumPy path: a sub-batch played, the changed fields written back."""
    sub = state.take(games)
    new = _play_numpy(rules, sub, actions)
    fields = {}
    for name, before, after in zip(State._fields, sub, new, strict=True):
        value = getattr(state, name)
        if after is not before:
            value = value.copy()
            value[games] = after
        fields[name] = value
    return State(**fields)


def _owned(array: np.ndarray) -> np.ndarray:
    """A donated array: used as it is."""
    return array


def _shown_void(
    sp: Tables, state: State, actions: np.ndarray, s: np.ndarray, first: np.ndarray, last: np.ndarray | None
) -> np.ndarray:
    """``(B,)`` card sets a follower's play shows it does not hold, by the rule that made it legal.

    A card that does not beat the target is the player's lowest card (nothing weaker
    held), and under ``forced``/``nearest`` it also shows that nothing beats; a
    ``nearest`` beating card shows no weaker card beats; a locked trick forces the
    lowest card; a non-2 on a led 2 under the twos rule shows no 2.
    """
    key = s * (_MAX_STRENGTH + 1) + _need(sp, state, last)
    shown = np.where(last, sp.shown_last[key], sp.shown[key]) if sp.low_last else sp.shown[key]
    if sp.ace_lock != "none":
        weaker = np.where(last, sp.weaker_last[s], sp.weaker[s]) if sp.low_last else sp.weaker[s]
        shown = np.where(state.locked, weaker, shown)
    if sp.twos:
        two_led = _led_card(sp, state) == TWO
        shown = np.where(two_led, np.where(actions == TWO, 0, shown | BIT[TWO]), shown)
    return np.where(first, 0, shown)


def _finish_rounds(sp: Tables, state: State, idx: np.ndarray, donate: bool = False) -> State:
    """Score the last tricks and end the rounds of games ``idx``: lives, elimination, rebuys, match end."""
    f = _Draft(state, donate)
    alive = np.take(state.alive, idx, axis=0)
    pen = np.take(state.round_penalty, idx, axis=0)
    top_seat, top = np.take(state.top_seat, idx), np.take(state.top, idx)
    if sp.ties_all:
        cards = np.take(state.tricks[:, sp.hand_size - 1], idx, axis=0)  # (k, P); -1 (strength 0) for seats out
        pen = pen + np.where(sp.strength_last[cards] == top[:, None], sp.points_last[cards], 0)
    else:
        pen = pen.copy()
        pen[np.arange(idx.size), top_seat] += sp.points_of_last[top].astype(np.int32)
    pen = pen.astype(np.int32)
    f["round_penalty"][idx] = pen
    scores = np.take(state.scores, idx, axis=0) + pen
    if sp.lives:
        lives = np.take(state.lives, idx, axis=0) - (alive & (pen > 0))
        f["lives"][idx] = lives
        out = alive & (lives <= 0)
    else:
        out = alive & ((scores > sp.limit) if sp.exceed else (scores >= sp.limit))
    rebought = np.zeros_like(out)
    if sp.rebuys:
        stay = alive & ~out
        n_stay = stay.sum(1, keepdims=True)
        rebought = out & (np.take(state.rebuys, idx, axis=0) > 0) & (n_stay >= max(sp.rebuy_min_others, 1))
        best = np.where(stay, scores, np.iinfo(np.int32).min).max(1, keepdims=True)
        scores = np.where(rebought, best, scores)
        f["rebuys"][idx] -= rebought.astype(np.int16)
        out &= ~rebought
    f["scores"][idx] = scores
    f["out_now"][idx] = out
    f["rebought_now"][idx] = rebought
    still = alive & ~out
    f["alive"][idx] = still
    n_still = still.sum(1)
    f["n_alive"][idx] = n_still
    f["next_seat"][idx] = _next_table(still)
    if sp.first_out:
        over = out.any(1)
        winners = still
    else:
        over = n_still <= 1
        winners = still
        if (n_still == 0).any():  # everyone still in went out together: the fewest points win
            fewest = np.where(out, scores, np.iinfo(np.int32).max).min(1, keepdims=True)
            winners = np.where((n_still == 0)[:, None], out & (scores == fewest), still)
    f["winners"][idx] = winners & over[:, None]
    f["round_over"][idx] = True
    f["match_over"][idx] = over
    return f.state()
