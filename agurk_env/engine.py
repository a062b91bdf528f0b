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

One rules implementation: :func:`play`, :func:`play_in`, :func:`legal_bits`, :func:`legal_reason`
and :func:`advance` run the rules kernel's loop over the batch (:mod:`agurk_env._rules_kernel`,
compiled by numba, or plain Python without it; see :mod:`agurk_env.rules_kernel`), tested against
the scalar :mod:`agurk_env.reference` (tests/test_kernel_differential.py); so does :func:`takes_trick`
(the kernel's ``takes``, the test :func:`play` settles a trick with). The other queries
(:func:`trick_target`, :func:`cards_played` ...) are NumPy over the batch.

Seeds: the deal of round ``r`` of match ``m`` under seed ``s`` is a function of
``(s, m, r)`` alone (a counter-based hash, :func:`agurk_env._rules_kernel.deal_order`). :func:`init` gives
slot ``i`` match ``first_match + i``; :func:`advance` gives restarted slots the next
unused match numbers in slot order. So match ``m`` of seed ``s`` is dealt the same
cards whatever the batch size, in the engine, the environments and the CLI.

Decks: the rules' deck (RULES.md: 52 cards, and the jokers) unless :func:`init` and :func:`advance`
are given a smaller one, ``deck`` copies of each card (:func:`deck_counts`, e.g. ``10 J Q K A``
x 4). A deck changes which cards are dealt, never how they are played; the rules' deck given as
counts deals exactly what no deck does.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

import numpy as np

from agurk_env import _rules_kernel as kernel
from agurk_env import rules_kernel  # noqa: F401 - compiles the kernel, or loads it from numba's disk cache, on import
from agurk_env.rules import CARDS, Rules, per_rules

ACE = 12
"""Action index of the ace."""
TWO = 0
"""Action index of the two."""
_STRENGTH_HIGH = np.array([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], dtype=np.int64)
_POINTS = np.array([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], dtype=np.int64)
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
    assert rules.ace_points is not None  # resolved by Rules itself
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
        if isinstance(idx, np.ndarray):  # take copies, and is faster than fancy indexing on 2-D and 3-D arrays
            rows = np.flatnonzero(idx) if idx.dtype == bool else idx
            return State._make(v.take(rows, axis=0) if isinstance(v, np.ndarray) else v for v in self)
        return State._make(v[idx].copy() if isinstance(v, np.ndarray) else v for v in self)


# ----------------------------------------------------------------------------- decks and setup

_RANK = re.compile(r"10|[2-9JQKAX]")
_SEPARATORS = re.compile(r"[\s,;+/]+")


def parse_ranks(ranks: str) -> list[str]:
    """Card names from ``"10,J,Q,K,A"``, ``"10 J Q K A"`` or ``"10JQKA"`` (any case); ``ValueError`` if unreadable."""
    text = _SEPARATORS.sub("", ranks.upper())
    names = _RANK.findall(text)
    if "".join(names) != text:
        raise ValueError(f"ranks must be card names ({' '.join(CARDS)}), not {ranks!r}")
    return names


def deck_counts(rules: Rules, ranks: str = "", copies: int = 4) -> np.ndarray:
    """``(A,)`` copies of each card in the deck dealt from: the card names ``ranks`` x ``copies`` (X: ``jokers``)."""
    if not 1 <= copies <= 4:
        raise ValueError(f"copies must be 1..4, not {copies}")
    a = rules.num_actions
    counts = np.zeros(a, np.int64)
    for n in parse_ranks(ranks) or CARDS[:a]:
        if n not in CARDS[:a]:
            raise ValueError(f"ranks: there is no {n} without jokers")
        counts[CARDS.index(n)] = rules.jokers if n == "X" else copies
    return _checked(rules, counts)


def _checked(rules: Rules, deck: np.ndarray) -> np.ndarray:
    """``deck`` (copies per card) once it has a count per card and enough cards for the hands (else ``ValueError``)."""
    if deck.shape != (rules.num_actions,) or (deck < 0).any():
        raise ValueError(f"a deck holds {rules.num_actions} counts >= 0, one per card, not {deck.tolist()}")
    if deck.sum() < rules.players * rules.hand_size:
        raise ValueError(
            f"the deck has {deck.sum()} cards, fewer than players * hand_size = {rules.players * rules.hand_size}"
        )
    return deck


def _dealt(rules: Rules, deck: np.ndarray | None) -> np.ndarray:
    """The card of every physical card dealt from: the rules' deck, or ``deck`` copies of each card."""
    if deck is None:
        return tables(rules).deck
    counts = _checked(rules, np.asarray(deck, dtype=np.int64))
    return np.repeat(np.arange(counts.size, dtype=np.int64), counts)


def init(rules: Rules, batch: int, seed: int, first_match: int = 0, deck: np.ndarray | None = None) -> State:
    """Start ``batch`` matches numbered ``first_match..first_match+batch-1`` and deal round 1 (from ``deck``)."""
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
    return advance(rules, st, deck=deck)


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
    rules: Rules,
    state: State,
    reset: bool = True,
    donate: bool = False,
    restart: np.ndarray | None = None,
    deck: np.ndarray | None = None,
) -> State:
    """Deal the next round where a round ended; restart finished matches when ``reset``.

    Restarted slots get the next unused match numbers, in slot order. Games whose
    match is over stay over when ``reset`` is false. ``restart`` (``(B,)`` bool) ends
    those games' matches where they stand, so that they restart too (new episodes).
    ``donate`` lets the new state reuse the input's arrays (see :func:`play`). ``deck``
    (copies per card, :func:`deck_counts`) deals from a smaller deck than the rules'.
    """
    if restart is not None:
        over = state.match_over | restart
        state = state._replace(round_over=state.round_over | over, match_over=over)
    if not state.round_over.any():
        return state
    if not (reset or (state.round_over & ~state.match_over).any()):
        return state
    fields: list[Any] = list(state)  # the arrays, then the seed and the next match number
    if not donate:
        for i in _ADVANCE_FIELDS:
            fields[i] = fields[i].copy()
    seed = np.uint64(state.seed & 0xFFFFFFFFFFFFFFFF)
    s = State._make(fields)
    restarted = kernel.advance_games(
        rule_array(rules), _dealt(rules, deck), s.hands, s.held, s.void, s.tricks, s.alive, s.next_seat, s.n_alive,
        s.scores, s.lives, s.rebuys, s.round_penalty, s.winners, s.dealer, s.round_no, s.trick_no, s.cur, s.npos,
        s.round_over, s.match_over, s.match_id, seed, state.next_match, reset,
    )  # fmt: skip
    return s._replace(next_match=state.next_match + int(restarted))


_ADVANCE_NAMES: tuple[str, ...] = (
    "hands",
    "held",
    "void",
    "tricks",
    "alive",
    "next_seat",
    "n_alive",
    "scores",
    "lives",
    "rebuys",
)
_ADVANCE_NAMES += ("round_penalty", "winners", "dealer", "round_no", "trick_no", "cur", "npos", "round_over")
_ADVANCE_NAMES += ("match_over", "match_id")
_ADVANCE_FIELDS = tuple(State._fields.index(k) for k in _ADVANCE_NAMES)
"""The fields the kernel's deal writes, in its argument order."""


@functools.lru_cache(maxsize=32)
def _offsets(b: int, n: int) -> np.ndarray:
    """``arange(b) * n``: the flat offset of each game's row in a ``(B, n)`` array (cached)."""
    return np.arange(b) * n


# ----------------------------------------------------------------------------- legal moves


REASONS: tuple[str, ...] = ("lead", "twos", "locked", "cannot_beat", "must_beat", "nearest", "optional")
"""Why the player to move may play exactly its legal cards (:func:`legal_reason` gives the index):
it leads (any card); a 2 was led and it holds a 2 (twos rule); an ace lock forces its lowest card;
nothing it holds beats the target, so its lowest card; it can beat and must (``forced``), must with
the least card that beats (``nearest``), or may beat or play its lowest card (``optional``)."""


def legal_bits(rules: Rules, state: State) -> np.ndarray:
    """``(B,)`` card sets of the cards the player to move may play, for every game at once.

    One pass over RULES.md's legal-move order: leader, twos, ace lock, then beat the
    target (forced / nearest / optional) or play the lowest card: the kernel's loop over games.
    """
    return _legal(rules, state)[0]


def legal_reason(rules: Rules, state: State) -> np.ndarray:
    """``(B,)`` int8: why the player to move may play exactly its legal cards, an index into :data:`REASONS`.

    The same pass as :func:`legal_bits`, so the explanation (``agurk play``) can never
    disagree with the rule it explains.
    """
    return _legal(rules, state)[1]


_BEAT_CHOICES = ("forced", "nearest", "optional")
_ACE_LOCKS = ("none", "led", "any")


@per_rules
def rule_array(rules: Rules) -> np.ndarray:
    """The rules as the compiled kernel reads them: :func:`tables` in the kernel's layout.

    Read-only int64, laid out as :mod:`agurk_env._rules_kernel` says (its offsets and flags).
    """
    sp = tables(rules)
    out = np.zeros(kernel.SIZE, dtype=np.int64)
    tables_at = (
        (kernel.STRENGTH, sp.strength[:-1]),
        (kernel.STRENGTH + kernel.W, sp.strength_last[:-1]),
        (kernel.POINTS_OF, sp.points_of),
        (kernel.POINTS_OF + kernel.W, sp.points_of_last),
        (kernel.AT_LEAST, sp.at_least),
        (kernel.AT_LEAST + kernel.W, sp.at_least_last),
        (kernel.WEAKER, sp.weaker),
        (kernel.WEAKER + kernel.W, sp.weaker_last),
        (kernel.POINTS_LAST, sp.points_last[:-1]),
        (kernel.SHOWN, sp.shown),
        (kernel.SHOWN + kernel.S, sp.shown_last),
    )
    for offset, table in tables_at:
        out[offset : offset + table.size] = table
    out[kernel.FLAGS : kernel.SIZE] = (
        sp.players,
        sp.hand_size,
        sp.ace_low,
        sp.low_last,
        sp.not_equal,
        sp.not_equal_last,
        sp.target_previous,
        _BEAT_CHOICES.index(sp.beat_choice),
        _ACE_LOCKS.index(sp.ace_lock),
        sp.twos,
        sp.every_trick,
        sp.ties_all,
        sp.lives,
        sp.limit,
        sp.exceed,
        sp.rebuys,
        sp.rebuy_min_others,
        sp.first_out,
        sp.actions,
        sp.dealer_leads,
    )
    out.flags.writeable = False
    return out


def _legal(rules: Rules, state: State) -> tuple[np.ndarray, np.ndarray]:
    """``(legal_bits, legal_reason)`` by the kernel."""
    b = state.batch
    bits, reasons = np.empty(b, np.int64), np.empty(b, np.int8)
    s = state
    kernel.legal_all(
        rule_array(rules), s.held, s.tricks, s.trick_no, s.cur, s.npos, s.leader, s.top, s.prev, s.locked, bits, reasons
    )
    return bits, reasons


_need = getattr(kernel.need, "py_func", kernel.need)
"""The kernel's :func:`~agurk_env._rules_kernel.need` as plain Python: it runs on arrays as it is."""


def trick_target(rules: Rules, state: State) -> tuple[np.ndarray, np.ndarray]:
    """``(card, equal_beats)``, both ``(B,)``: the card a follower must reach in the current trick.

    ``equal_beats`` says whether an equal card reaches it; the target is the highest card
    so far or the previous one (``beat_target``). The card is ``-1`` before the lead.
    """
    sp = tables(rules)
    last = state.trick_no == sp.hand_size - 1
    target = state.prev if sp.target_previous else state.top
    card = np.where(last, sp.card_of_last[target], sp.card_of[target]) if sp.low_last else sp.card_of[target]
    return np.where(state.npos > 0, card, -1), _need(rule_array(rules), 0, last) == 0


def card_values(rules: Rules, state: State) -> tuple[np.ndarray, np.ndarray]:
    """``(strength, points)``, both ``(B, A)``: each card's strength in the current trick, and its penalty there.

    The penalty is what the card scores if it takes that trick; the last trick may rank
    and score the ace low.
    """
    sp = tables(rules)
    a = sp.actions
    last = (state.trick_no == sp.hand_size - 1)[:, None]
    return np.where(last, sp.strength_last[:a], sp.strength[:a]), np.where(last, sp.points_last[:a], sp.points[:a])


def takes_trick(rules: Rules, state: State) -> np.ndarray:
    """``(B, A)`` bool: playing the card now would take the current trick so far (the lead always does).

    The test :func:`play` settles a trick with, the kernel's :func:`~agurk_env._rules_kernel.takes`
    (strength against the top card, equal cards by ``equal_beats``, nothing takes a locked trick).
    """
    out = np.empty((state.batch, rules.num_actions), bool)
    kernel.takes_all(rule_array(rules), state.trick_no, state.npos, state.top, state.locked, out)
    return out


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
    shape: tuple[int, ...]
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
    winner) and scores the round after its last trick: the kernel's loop over games.

    ``donate=True`` hands the input state's arrays over to the result, which is then
    written in place (as JAX's buffer donation): faster for a loop that never looks
    back, but the input state must not be used again. By default the input is untouched.
    """
    return _play(rules, state, _offsets(state.batch, 1), actions, donate)


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


def _play(rules: Rules, state: State, games: np.ndarray, actions: np.ndarray, donate: bool) -> State:
    """:func:`play` in ``games`` by the kernel.

    Without ``donate`` it copies the fields the play can write (those of a round's end only
    where a round can end), so the input is untouched.
    """
    fields: list[Any] = list(state)  # the arrays, then the seed and the next match number
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
    s = State._make(fields)
    kernel.play_games(
        rule_array(rules), s.hands, s.held, s.void, s.tricks, s.trick_leader, s.trick_winner, s.alive, s.next_seat,
        s.n_alive, s.scores, s.lives, s.rebuys, s.round_penalty, s.out_now, s.rebought_now, s.winners, s.trick_no,
        s.cur, s.npos, s.leader, s.top, s.top_seat, s.prev, s.locked, s.round_over, s.match_over, games, cards,
    )  # fmt: skip
    return s


def play_in(rules: Rules, state: State, games: np.ndarray, actions: np.ndarray) -> State:
    """:func:`play` in ``games`` only (``actions`` holds their cards); every other game is left as it is.

    For loops where only some games move (the opponents' turns of a single-learner
    environment): the kernel plays those games only.
    """
    rows = np.flatnonzero(games) if np.asarray(games).dtype == bool else games
    return _play(rules, state, np.ascontiguousarray(rows, dtype=np.int64), actions, False)
