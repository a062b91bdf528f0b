"""The rules of one game, written once: the legal set and its reason, a card's play, the round's end, the observation.

The one rules implementation the engine runs. Every function is compiled by ``numba.njit`` (numba's
disk cache keeps the machine code; :mod:`agurk_env.rules_kernel` compiles or loads the entry points
on import) and, without numba, runs as the plain Python it is (:func:`njit` is then a no-op). So the
code keeps to what both accept: scalar ints, indexing of NumPy arrays, no Python objects. Each entry
point loops over games of an engine state's arrays
(:class:`agurk_env.engine.State`), in place: the batched engine is that loop over its batch, a
single game (the AEC env, OpenSpiel, ``agurk play``) the same loop over a batch of one.

The rules come in one int64 array ``t``, the engine's :class:`~agurk_env.engine.Tables` laid out as
below (:func:`agurk_env.engine.rule_array`). A table with a "last trick" twin keeps the twin
``W`` (or ``S``) entries further on, so ``t[X + last * W + i]`` reads the right one.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import TypeVar

import numpy as np

# numba's coloured error messages start colorama, which then writes a terminal reset code at every exit
# (after a command's last line); plain messages keep the output as the command wrote it.
os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")

numba: ModuleType | None
try:
    numba = importlib.import_module("numba")
except ImportError:  # the same functions, run as plain Python
    numba = None

F = TypeVar("F", bound=Callable)


def njit(function: F) -> F:
    """``function`` compiled by numba at its first call (or its ``compile``), disk-cached; itself without numba."""
    return function if numba is None else numba.njit(cache=True)(function)


W = 18
"""Width of each rule table (strengths 0..17, or cards 0..13)."""
S = W * W
"""Width of the shown-void tables (``[strength * W + need]``)."""
STRENGTH = 0  # by card; + W: in the last trick
POINTS_OF = 2 * W  # by strength, the points of the card of that strength; + W: in the last trick
AT_LEAST = 4 * W  # by strength t, the card set of the cards of strength >= t; + W: in the last trick
WEAKER = 6 * W  # by strength s, the card set of the cards weaker than s; + W: in the last trick
POINTS_LAST = 8 * W  # by card, its points in the last trick
SHOWN = 9 * W  # what a follower's card shows it lacks, [s * W + need]; + S: in the last trick
FLAGS = 9 * W + 2 * S
PLAYERS = FLAGS
HAND_SIZE = FLAGS + 1
ACE_LOW = FLAGS + 2
LOW_LAST = FLAGS + 3
NOT_EQUAL = FLAGS + 4  # 1 when an equal card does not beat; at NOT_EQUAL + 1: in the last trick
TARGET_PREVIOUS = FLAGS + 6
BEAT_CHOICE = FLAGS + 7  # FORCED, NEAREST or OPTIONAL
ACE_LOCK = FLAGS + 8  # NO_LOCK, LOCK_LED or LOCK_ANY
TWOS = FLAGS + 9
EVERY_TRICK = FLAGS + 10
TIES_ALL = FLAGS + 11
LIVES = FLAGS + 12
LIMIT = FLAGS + 13
EXCEED = FLAGS + 14
REBUYS = FLAGS + 15
REBUY_MIN_OTHERS = FLAGS + 16
FIRST_OUT = FLAGS + 17
ACTIONS = FLAGS + 18
DEALER_LEADS = FLAGS + 19
SIZE = FLAGS + 20

FORCED, NEAREST, OPTIONAL = 0, 1, 2
NO_LOCK, LOCK_LED, LOCK_ANY = 0, 1, 2
LEAD, TWOS_REASON, LOCKED, CANNOT_BEAT, MUST_BEAT, NEAREST_REASON, OPTIONAL_REASON = 0, 1, 2, 3, 4, 5, 6
"""Indices of :data:`agurk_env.engine.REASONS`."""
TWO, ACE = 0, 12
ACE_BIT = 1 << ACE
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# The deal's hash (deal_order): splitmix64 and murmur3 finalizers, on uint64 (32-bit values masked).
U64 = np.uint64
GOLDEN = U64(0x9E3779B97F4A7C15)
MATCH_MUL, ROUND_MUL = U64(0xD6E8FEB86659FD93), U64(0xA0761D6478BD642F)
MIX1, MIX2 = U64(0xBF58476D1CE4E5B9), U64(0x94D049BB133111EB)
MIX32_1, MIX32_2, POS_MUL = U64(0x85EBCA6B), U64(0xC2B2AE35), U64(0x9E3779B9)
LOW32, POS_BITS = U64(0xFFFFFFFF), U64(63)
SH11, SH13, SH16, SH27, SH30, SH31, SH32 = U64(11), U64(13), U64(16), U64(27), U64(30), U64(31), U64(32)

OBSERVED: tuple[str, ...] = (
    "hand",
    "played",
    "trick",
    "top_card",
    "top_seat",
    "leader",
    "locked",
    "cards_left",
    "void",
    "trick_no",
)
OBSERVED += ("last_trick", "position", "score", "lives", "rebuys", "in_match", "dealer", "players")
"""The observation slices :func:`observe_all` writes, by name: ``at[i]`` is the first column of ``OBSERVED[i]``.

Only :data:`agurk_env.observation.SLICES` declares the slices' order and sizes; ``players`` is
followed there by ``rules``, written with it from ``constant``. The indices into ``at``:"""
O_HAND, O_PLAYED, O_TRICK, O_TOP_CARD, O_TOP_SEAT, O_LEADER, O_LOCKED, O_CARDS_LEFT, O_VOID, O_TRICK_NO = range(10)
O_LAST_TRICK, O_POSITION, O_SCORE, O_LIVES, O_REBUYS, O_IN_MATCH, O_DEALER, O_PLAYERS = range(10, len(OBSERVED))
CARD_SLOTS = 14


@njit
def lowest(cards, ace_low):
    """The weakest card of the card set ``cards`` as a one-card set (0 for none)."""
    if cards & ACE_BIT and ace_low:
        return ACE_BIT
    return cards & -cards


@njit
def choose(hand, led_two, locked, reach, ace_low, twos, ace_lock, beat_choice):
    """``(card set, reason)`` a follower holding ``hand`` may play, in RULES.md's order.

    ``reach`` is the card set of the cards that beat the trick's target; ``ace_low`` whether the ace
    is the weakest card in this trick. Scalars only, so the compiled loops call it at no cost.
    """
    if twos and led_two and hand & 1:
        return 1, TWOS_REASON
    low = lowest(hand, ace_low)
    if ace_lock != NO_LOCK and locked:
        return low, LOCKED
    beat = hand & reach
    if beat == 0:
        return low, CANNOT_BEAT
    if beat_choice == FORCED:
        return beat, MUST_BEAT
    if beat_choice == NEAREST:
        return lowest(beat, ace_low), NEAREST_REASON
    return beat | low, OPTIONAL_REASON


@njit
def need(t, target, last):
    """The least strength that beats strength ``target`` in a trick: ``target`` itself where an equal card beats."""
    return target + t[NOT_EQUAL + last]


@njit
def takes(t, s, top, locked, last):
    """Whether a follower's card of strength ``s`` takes the trick from its top strength ``top``: the one such test.

    An equal card takes it unless the rules say not (:func:`need`, by ``last``, 1 in the round's last
    trick); nothing takes a locked trick. The lead takes a trick whatever this says.
    """
    return s >= need(t, top, last) and not (locked and t[ACE_LOCK] != NO_LOCK)


@njit
def takes_all(t, trick_no, npos, top, locked, out):
    """Whether each card would take each game's trick so far, into bool ``out`` (B, A): :func:`takes`, or the lead."""
    h = t[HAND_SIZE]
    for g in range(out.shape[0]):
        last = 1 if trick_no[g] == h - 1 else 0
        for c in range(out.shape[1]):
            out[g, c] = npos[g] == 0 or takes(t, t[STRENGTH + last * W + c], top[g], locked[g], last)


@njit
def reach(t, target, last):
    """The card set of the cards that beat strength ``target`` in a trick (:func:`need` or stronger)."""
    return t[AT_LEAST + last * W + need(t, target, last)]


@njit
def follow(t, hand, top, prev, locked, led_two, last):
    """``(card set, reason)`` a follower holding ``hand`` may play: :func:`choose` with the trick read off ``t``.

    ``t`` is the rule array; ``top`` and ``prev`` the strengths of the trick's top and previous card,
    ``led_two`` whether a two was led, ``last`` 1 in the round's last trick. The engine's loop and the
    solver's search both ask it.
    """
    return choose(
        hand,
        t[TWOS] != 0 and led_two,
        locked,
        reach(t, prev if t[TARGET_PREVIOUS] else top, last),
        t[ACE_LOW] != 0 or (last == 1 and t[LOW_LAST] != 0),
        t[TWOS],
        t[ACE_LOCK],
        t[BEAT_CHOICE],
    )


@njit
def legal_all(t, held, tricks, trick_no, cur, npos, leader, top, prev, locked, bits, reasons):
    """The legal card set of the player to move in every game, into ``bits``, and its reason, into ``reasons``.

    Each loop body reads its game's fields directly (a helper taking the arrays would cost the
    compiled loop a reference count per array and game).
    """
    h = t[HAND_SIZE]
    for g in range(bits.shape[0]):
        hand = int(held[g, cur[g]])
        if npos[g] == 0:
            bits[g], reasons[g] = hand, LEAD
            continue
        trick = int(trick_no[g])
        last = 1 if trick == h - 1 else 0
        bits[g], reasons[g] = follow(t, hand, top[g], prev[g], locked[g], tricks[g, trick, leader[g]] == TWO, last)


@njit
def play_games(
    t, hands, held, void, tricks, trick_leader, trick_winner, alive, next_seat, n_alive, scores, lives, rebuys,
    round_penalty, out_now, rebought_now, winners, trick_no, cur, npos, leader, top, top_seat, prev, locked,
    round_over, match_over, games, cards,
):  # fmt: skip
    """The player to move in each of ``games`` plays ``cards[i]`` (legal) in game ``games[i]`` (``engine.play``).

    Settles the trick when its last card is played, and ends the round after its last trick
    (:func:`finish_rounds`). Raises ``ValueError`` for a card out of range or a game whose round is
    over (nothing is written out of bounds); the arrays are then part-played.
    """
    h = t[HAND_SIZE]
    ended = np.empty(games.shape[0], np.int64)  # games whose round ended, finished after the loop in one call
    n_ended = 0
    for i in range(games.shape[0]):
        g, card = games[i], cards[i]
        if card < 0 or card >= t[ACTIONS]:
            raise ValueError("a card out of range (actions are 0..12, or 0..13 with jokers)")
        trick = int(trick_no[g])
        if trick >= h:
            raise ValueError("a game whose round is over was played: call engine.advance first")
        seat = int(cur[g])
        last = 1 if trick == h - 1 else 0
        hands[g, seat, card] -= 1
        if hands[g, seat, card] == 0:
            held[g, seat] ^= 1 << card
        tricks[g, trick, seat] = card
        s = t[STRENGTH + last * W + card]
        first = npos[g] == 0
        was_locked = bool(locked[g])
        if not first:  # what the card shows the player lacks
            shown = t[SHOWN + last * S + s * W + need(t, prev[g] if t[TARGET_PREVIOUS] else top[g], last)]
            if t[ACE_LOCK] != NO_LOCK and was_locked:
                shown = t[WEAKER + last * W + s]
            if t[TWOS] and tricks[g, trick, leader[g]] == TWO:
                shown = 0 if card == TWO else shown | 1
            void[g, seat] |= shown
        wins = first or takes(t, s, top[g], was_locked, last)
        lock = was_locked
        if t[ACE_LOCK] != NO_LOCK:
            lock = lock and not first
            if card == ACE and not (last and t[LOW_LAST]) and (t[ACE_LOCK] == LOCK_ANY or first):
                lock = True
        if wins:
            top[g] = s
            top_seat[g] = seat
        if first:
            leader[g] = seat
        trick_leader[g, trick] = leader[g]
        trick_winner[g, trick] = top_seat[g]
        position = npos[g] + 1
        done = position == n_alive[g]
        if t[EVERY_TRICK] and done and trick < h - 1:  # tricks before the last score here, the last one below
            round_penalty[g, top_seat[g]] += t[POINTS_OF + top[g]]
        prev[g] = s
        locked[g] = lock
        if done:
            trick_no[g] = trick + 1
            cur[g] = top_seat[g]
            npos[g] = 0
        else:
            cur[g] = next_seat[g, seat]
            npos[g] = position
        if done and trick == h - 1:
            ended[n_ended] = g
            n_ended += 1
    finish_rounds(
        t, tricks, alive, next_seat, n_alive, scores, lives, rebuys, round_penalty, out_now, rebought_now, winners,
        top, top_seat, round_over, match_over, ended[:n_ended],
    )  # fmt: skip


@njit
def finish_rounds(
    t, tricks, alive, next_seat, n_alive, scores, lives, rebuys, round_penalty, out_now, rebought_now, winners,
    top, top_seat, round_over, match_over, games,
):  # fmt: skip
    """Score the last trick of each of ``games`` and end its round: lives, elimination, rebuys, match end."""
    p, h = t[PLAYERS], t[HAND_SIZE]
    for g in games:
        best = top[g]
        if t[TIES_ALL]:  # every seat with a card of the winning strength scores
            for seat in range(p):
                c = int(tricks[g, h - 1, seat])
                if c >= 0 and t[STRENGTH + W + c] == best:
                    round_penalty[g, seat] += t[POINTS_LAST + c]
        else:
            round_penalty[g, top_seat[g]] += t[POINTS_OF + W + best]
        n_stay = 0
        highest = INT32_MIN
        for seat in range(p):  # out by lives or by the limit, before rebuys
            score = scores[g, seat] + round_penalty[g, seat]
            scores[g, seat] = score
            out = False
            if t[LIVES]:
                if alive[g, seat] and round_penalty[g, seat] > 0:
                    lives[g, seat] -= 1
                out = alive[g, seat] and lives[g, seat] <= 0
            elif alive[g, seat]:
                out = score > t[LIMIT] if t[EXCEED] else score >= t[LIMIT]
            out_now[g, seat] = out
            rebought_now[g, seat] = False
            if alive[g, seat] and not out:
                n_stay += 1
                highest = max(highest, score)
        if t[REBUYS]:
            for seat in range(p):
                if out_now[g, seat] and rebuys[g, seat] > 0 and n_stay >= max(t[REBUY_MIN_OTHERS], 1):
                    rebought_now[g, seat] = True
                    scores[g, seat] = highest
                    rebuys[g, seat] -= 1
                    out_now[g, seat] = False
        n_still = 0
        any_out = False
        fewest = INT32_MAX
        for seat in range(p):
            any_out = any_out or out_now[g, seat]
            if out_now[g, seat]:
                fewest = min(fewest, scores[g, seat])
            alive[g, seat] = alive[g, seat] and not out_now[g, seat]
            if alive[g, seat]:
                n_still += 1
        n_alive[g] = n_still
        for seat in range(p):  # the next seat still in after each seat (the next seat when none is)
            nxt = (seat + 1) % p
            for step in range(1, p + 1):
                if alive[g, (seat + step) % p]:
                    nxt = (seat + step) % p
                    break
            next_seat[g, seat] = nxt
        over = any_out if t[FIRST_OUT] else n_still <= 1
        for seat in range(p):
            win = alive[g, seat]
            if n_still == 0 and not t[FIRST_OUT]:  # everyone still in went out together: the fewest points win
                win = out_now[g, seat] and scores[g, seat] == fewest
            winners[g, seat] = win and over
        round_over[g] = True
        match_over[g] = over


@njit
def mix64(x):
    """The splitmix64 finalizer."""
    x = x ^ (x >> SH30)
    x = x * MIX1
    x = x ^ (x >> SH27)
    x = x * MIX2
    return x ^ (x >> SH31)


@njit
def deal_order(seed, match, round_no, keys):
    """The deck positions of match ``match``'s round ``round_no``, shuffled, into ``keys``: the one deal hash.

    Each position gets a key from a hash of ``(seed, match, round, position)`` and the keys are
    sorted, so a deal depends on those numbers alone. A key holds 26 random bits above the 6-bit
    position; a tie between two keys (about 2e-5 per deal) falls back to deck order. ``seed`` is the
    state's seed as uint64; ``keys`` is a uint64 array of the deck's size.
    """
    g = mix64(seed + GOLDEN)
    g = mix64(g ^ (U64(match) * MATCH_MUL))
    g = mix64(g ^ (U64(round_no) * ROUND_MUL))
    low, high = g & LOW32, g >> SH32
    for pos in range(keys.shape[0]):
        x = (low + U64(pos) * POS_MUL) & LOW32
        x = x ^ (x >> SH16)
        x = (x * MIX32_1) & LOW32
        x = x ^ (x >> SH13)
        x = (x * MIX32_2) & LOW32
        x = x ^ (x >> SH16)
        keys[pos] = ((x ^ high) & ~POS_BITS & LOW32) | U64(pos)
    keys.sort()
    for pos in range(keys.shape[0]):
        keys[pos] = keys[pos] & POS_BITS


@njit
def advance_games(
    t, deck, hands, held, void, tricks, alive, next_seat, n_alive, scores, lives, rebuys, round_penalty, winners,
    dealer, round_no, trick_no, cur, npos, round_over, match_over, match_id, seed, next_match, reset,
):  # fmt: skip
    """Deal the next round where a round ended, and restart finished matches when ``reset`` (``engine.advance``).

    Restarted games get match numbers from ``next_match`` on, in game order; returns how many
    restarted. ``deck`` holds the card of every physical card, ``seed`` the state's seed as uint64.
    """
    p, h, a = t[PLAYERS], t[HAND_SIZE], t[ACTIONS]
    keys = np.empty(deck.shape[0], np.uint64)
    restarted = 0
    for g in range(cur.shape[0]):
        if not round_over[g] or (match_over[g] and not reset):
            continue
        if match_over[g]:  # a new match
            match_id[g] = next_match + restarted
            restarted += 1
            for s in range(p):
                alive[g, s] = True
                next_seat[g, s] = (s + 1) % p
                scores[g, s] = 0
                lives[g, s] = t[LIVES]
                rebuys[g, s] = t[REBUYS]
                winners[g, s] = False
            n_alive[g] = p
            match_over[g] = False
            dealer[g] = 0
            round_no[g] = 0
        else:
            dealer[g] = next_seat[g, dealer[g]] if alive[g, dealer[g]] else next_in(alive, g, dealer[g], p)
            round_no[g] += 1
        deal_order(seed, match_id[g], round_no[g], keys)
        for s in range(p):
            held[g, s] = 0
            void[g, s] = 0
            round_penalty[g, s] = 0
            for c in range(a):
                hands[g, s, c] = 0
            for k in range(h):
                tricks[g, k, s] = -1
        rank = 0  # the j-th card dealt goes to the (j // h)-th seat still in
        for seat in range(p):
            if alive[g, seat]:
                for j in range(rank * h, rank * h + h):
                    c = deck[keys[j]]
                    hands[g, seat, c] += 1
                    held[g, seat] |= 1 << c
                rank += 1
        round_over[g] = False
        trick_no[g] = 0
        npos[g] = 0
        cur[g] = dealer[g] if t[DEALER_LEADS] else next_in(alive, g, dealer[g], p)
    return restarted


@njit
def next_in(alive, g, seat, p):
    """The first seat after ``seat`` clockwise still in game ``g`` (the next seat when none is)."""
    for step in range(1, p + 1):
        if alive[g, (seat + step) % p]:
            return (seat + step) % p
    return (seat + 1) % p


@njit
def observe_all(
    t, at, constant, hands, void, tricks, alive, scores, lives, rebuys, dealer, trick_no, npos, n_alive, top_seat,
    leader, locked, seats, out,
):  # fmt: skip
    """Seat ``seats[g]``'s observation of each game ``g`` into its zeroed float32 row ``out[g]`` (``observe``).

    ``at`` holds the first column of each slice of :data:`OBSERVED`; ``constant`` the players and rules slices.
    Only public fields and the observer's own hand are read.
    """
    p, h, a = t[PLAYERS], t[HAND_SIZE], t[ACTIONS]
    for g in range(seats.shape[0]):
        seat = seats[g]
        trick = trick_no[g]
        row = min(trick, h - 1)
        in_round = trick < h
        started = npos[g] > 0 and in_round
        for c in range(a):
            out[g, at[O_HAND] + c] = hands[g, seat, c] / 4.0
        for k in range(h):  # cards played so far this round (public)
            for s in range(p):
                c = int(tricks[g, k, s])
                if c >= 0:
                    out[g, at[O_PLAYED] + c] += 0.25
        for r in range(p):
            s = (seat + r) % p
            c = int(tricks[g, row, s])
            left = 0
            if alive[g, s]:
                left = h - trick - (1 if (c >= 0 and in_round) else 0)
            out[g, at[O_CARDS_LEFT] + r] = left / h
            if started and c >= 0:
                out[g, at[O_TRICK] + r * CARD_SLOTS + c] = 1.0
            shown = void[g, s]
            for c in range(a):
                if shown >> c & 1:
                    out[g, at[O_VOID] + r * CARD_SLOTS + c] = 1.0
            out[g, at[O_SCORE] + r] = scores[g, s] / t[LIMIT]
            if t[LIVES]:
                out[g, at[O_LIVES] + r] = lives[g, s] / t[LIVES]
            out[g, at[O_REBUYS] + r] = rebuys[g, s]
            out[g, at[O_IN_MATCH] + r] = alive[g, s]
        if started:
            out[g, at[O_TOP_CARD] + int(tricks[g, row, top_seat[g]])] = 1.0
            out[g, at[O_TOP_SEAT] + (top_seat[g] - seat) % p] = 1.0
            out[g, at[O_LEADER] + (leader[g] - seat) % p] = 1.0
            out[g, at[O_LOCKED]] = locked[g]
        out[g, at[O_TRICK_NO]] = trick / h
        out[g, at[O_LAST_TRICK]] = trick == h - 1
        out[g, at[O_POSITION]] = (npos[g] if in_round else 0) / max(n_alive[g], 1)
        out[g, at[O_DEALER] + (dealer[g] - seat) % p] = 1.0
        for i in range(constant.shape[0]):
            out[g, at[O_PLAYERS] + i] = constant[i]


@njit
def random_play(
    t, deck, hands, held, void, tricks, trick_leader, trick_winner, alive, next_seat, n_alive, scores, lives, rebuys,
    round_penalty, out_now, rebought_now, winners, dealer, round_no, trick_no, cur, npos, leader, top, top_seat, prev,
    locked, round_over, match_over, match_id, seed, next_match, steps, draws, set_size, kth,
):  # fmt: skip
    """``steps`` steps of random legal play in every game, all in this one call; returns the next match number.

    Each step is the batched engine's: :func:`legal_all`, a uniformly random legal card per game (from
    the splitmix64 counter ``draws[0]``, advanced; by the engine's lookup tables ``set_size`` and the
    flat ``kth``, as ``engine.random_legal``), :func:`play_games`, :func:`advance_games` (deals and
    restarts). The benchmark reference of ``agurk bench engine``: the engine's steps without Python
    between them.
    """
    b = cur.shape[0]
    games = np.arange(b)
    bits = np.empty(b, np.int64)
    reasons = np.empty(b, np.int8)
    cards = np.empty(b, np.int64)
    counter = draws[0]
    for _ in range(steps):
        legal_all(t, held, tricks, trick_no, cur, npos, leader, top, prev, locked, bits, reasons)
        for g in range(b):
            counter = counter + GOLDEN
            u = np.float64(mix64(counter) >> SH11) * 2.0**-53  # uniform in [0, 1)
            options = bits[g]
            cards[g] = kth[options * CARD_SLOTS + np.int64(u * set_size[options])]
        play_games(
            t, hands, held, void, tricks, trick_leader, trick_winner, alive, next_seat, n_alive, scores, lives,
            rebuys, round_penalty, out_now, rebought_now, winners, trick_no, cur, npos, leader, top, top_seat, prev,
            locked, round_over, match_over, games, cards,
        )  # fmt: skip
        next_match += advance_games(
            t, deck, hands, held, void, tricks, alive, next_seat, n_alive, scores, lives, rebuys, round_penalty,
            winners, dealer, round_no, trick_no, cur, npos, round_over, match_over, match_id, seed, next_match, True,
        )  # fmt: skip
    draws[0] = counter
    return next_match
