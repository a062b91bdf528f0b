"""The rules of one game, written once: the legal set and its reason, a card's play, the round's end, the observation.

Written once for two runners: :mod:`agurk_env.rules_kernel` compiles a copy of this module with
``numba.njit`` (its disk cache keeps the machine code) and, without numba, calls these functions as they
are. So the code keeps to what both accept: scalar ints, indexing of NumPy arrays, no allocation, no
Python objects. Every function works on game ``g`` of an engine state's arrays
(:class:`agurk_env.engine.State`), in place; a loop over ``g`` is the batched engine.

The rules come in one int64 array ``t``, the engine's :class:`~agurk_env.engine.Tables` laid out as
below (:func:`agurk_env.rules_kernel.rule_array`). A table with a "last trick" twin keeps the twin
``W`` (or ``S``) entries further on, so ``t[X + last * W + i]`` reads the right one.
"""

from __future__ import annotations

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
SIZE = FLAGS + 19

FORCED, NEAREST, OPTIONAL = 0, 1, 2
NO_LOCK, LOCK_LED, LOCK_ANY = 0, 1, 2
LEAD, TWOS_REASON, LOCKED, CANNOT_BEAT, MUST_BEAT, NEAREST_REASON, OPTIONAL_REASON = 0, 1, 2, 3, 4, 5, 6
"""Indices of :data:`agurk_env.engine.REASONS`."""
TWO, ACE = 0, 12
ACE_BIT = 1 << ACE
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# Observation slices, by their order in agurk_env.observation.SLICES: the index of each slice's start in ``at``.
O_HAND, O_PLAYED, O_TRICK, O_TOP_CARD, O_TOP_SEAT, O_LEADER, O_LOCKED, O_CARDS_LEFT, O_VOID = 0, 1, 2, 3, 4, 5, 6, 7, 8
O_TRICK_NO, O_LAST_TRICK, O_POSITION, O_SCORE, O_LIVES, O_REBUYS, O_IN_MATCH, O_DEALER, O_PLAYERS = range(9, 18)
CARD_SLOTS = 14


def lowest(t, cards, last):
    """The weakest card of the card set ``cards`` as a one-card set (0 for none), as ``engine._lowest``."""
    if cards & ACE_BIT and (t[ACE_LOW] or (last and t[LOW_LAST])):
        return ACE_BIT
    return cards & -cards


def legal(t, held, tricks, trick_no, cur, npos, leader, top, prev, locked, g):
    """``(card set, reason)`` of the player to move in game ``g``, in RULES.md's order (``engine._legal``)."""
    hand = int(held[g, cur[g]])
    if npos[g] == 0:
        return hand, LEAD
    trick = int(trick_no[g])
    last = 1 if trick == t[HAND_SIZE] - 1 else 0
    if t[TWOS] and tricks[g, trick, leader[g]] == TWO and hand & 1:
        return 1, TWOS_REASON
    low = lowest(t, hand, last)
    if t[ACE_LOCK] != NO_LOCK and locked[g]:
        return low, LOCKED
    need = (prev[g] if t[TARGET_PREVIOUS] else top[g]) + t[NOT_EQUAL + last]
    beat = hand & t[AT_LEAST + last * W + need]
    if beat == 0:
        return low, CANNOT_BEAT
    if t[BEAT_CHOICE] == FORCED:
        return beat, MUST_BEAT
    if t[BEAT_CHOICE] == NEAREST:
        return lowest(t, beat, last), NEAREST_REASON
    return beat | low, OPTIONAL_REASON


def legal_all(t, held, tricks, trick_no, cur, npos, leader, top, prev, locked, bits, reasons):
    """:func:`legal` of every game, into ``bits`` and ``reasons``."""
    for g in range(bits.shape[0]):
        bits[g], reasons[g] = legal(t, held, tricks, trick_no, cur, npos, leader, top, prev, locked, g)


def play(
    t, hands, held, void, tricks, trick_leader, trick_winner, alive, next_seat, n_alive, scores, lives, rebuys,
    round_penalty, out_now, rebought_now, winners, trick_no, cur, npos, leader, top, top_seat, prev, locked,
    round_over, match_over, g, card,
):  # fmt: skip
    """The player to move in game ``g`` plays ``card`` (legal): the trick, its end and the round's (``engine.play``)."""
    h = t[HAND_SIZE]
    seat = int(cur[g])
    trick = int(trick_no[g])
    last = 1 if trick == h - 1 else 0
    hands[g, seat, card] -= 1
    if hands[g, seat, card] == 0:
        held[g, seat] ^= 1 << card
    tricks[g, trick, seat] = card
    s = t[STRENGTH + last * W + card]
    first = npos[g] == 0
    was_locked = bool(locked[g])
    if not first:  # what the card shows the player lacks (engine._shown_void)
        need = (prev[g] if t[TARGET_PREVIOUS] else top[g]) + t[NOT_EQUAL + last]
        shown = t[SHOWN + last * S + s * W + need]
        if t[ACE_LOCK] != NO_LOCK and was_locked:
            shown = t[WEAKER + last * W + s]
        if t[TWOS] and tricks[g, trick, leader[g]] == TWO:
            shown = 0 if card == TWO else shown | 1
        void[g, seat] |= shown
    wins = s + 1 - t[NOT_EQUAL + last] > top[g]
    lock = was_locked
    if t[ACE_LOCK] != NO_LOCK:
        lock = lock and not first
        wins = wins and not lock
        if card == ACE and not (last and t[LOW_LAST]) and (t[ACE_LOCK] == LOCK_ANY or first):
            lock = True
    if wins or first:
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
        finish_round(
            t, tricks, alive, next_seat, n_alive, scores, lives, rebuys, round_penalty, out_now, rebought_now,
            winners, top, top_seat, round_over, match_over, g,
        )  # fmt: skip


def play_games(
    t, hands, held, void, tricks, trick_leader, trick_winner, alive, next_seat, n_alive, scores, lives, rebuys,
    round_penalty, out_now, rebought_now, winners, trick_no, cur, npos, leader, top, top_seat, prev, locked,
    round_over, match_over, games, cards,
):  # fmt: skip
    """:func:`play` in each of ``games``, ``cards[i]`` in game ``games[i]``.

    Raises ``ValueError`` for a card out of range or a game whose round is over (nothing is written
    out of bounds), having played the games before it.
    """
    for i in range(games.shape[0]):
        g, card = games[i], cards[i]
        if card < 0 or card >= t[ACTIONS]:
            raise ValueError("a card out of range (actions are 0..12, or 0..13 with jokers)")
        if trick_no[g] >= t[HAND_SIZE]:
            raise ValueError("a game whose round is over was played: call engine.advance first")
        play(
            t, hands, held, void, tricks, trick_leader, trick_winner, alive, next_seat, n_alive, scores, lives,
            rebuys, round_penalty, out_now, rebought_now, winners, trick_no, cur, npos, leader, top, top_seat, prev,
            locked, round_over, match_over, g, card,
        )  # fmt: skip


def finish_round(
    t, tricks, alive, next_seat, n_alive, scores, lives, rebuys, round_penalty, out_now, rebought_now, winners,
    top, top_seat, round_over, match_over, g,
):  # fmt: skip
    """Score game ``g``'s last trick and end its round: lives, elimination, rebuys, match end (``_finish_rounds``)."""
    p, h = t[PLAYERS], t[HAND_SIZE]
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


def observe(
    t, at, constant, hands, void, tricks, alive, scores, lives, rebuys, dealer, trick_no, npos, n_alive, top_seat,
    leader, locked, g, seat, out,
):  # fmt: skip
    """Seat ``seat``'s observation of game ``g`` into the zeroed float32 row ``out`` (``observation.observe``).

    ``at`` holds every slice's first column, in slice order; ``constant`` the players and rules slices.
    """
    p, h, a = t[PLAYERS], t[HAND_SIZE], t[ACTIONS]
    trick = trick_no[g]
    row = min(trick, h - 1)
    in_round = trick < h
    started = npos[g] > 0 and in_round
    for c in range(a):
        out[at[O_HAND] + c] = hands[g, seat, c] / 4.0
    for k in range(h):  # cards played so far this round (public)
        for s in range(p):
            c = int(tricks[g, k, s])
            if c >= 0:
                out[at[O_PLAYED] + c] += 0.25
    for r in range(p):
        s = (seat + r) % p
        c = int(tricks[g, row, s])
        left = 0
        if alive[g, s]:
            left = h - trick - (1 if (c >= 0 and in_round) else 0)
        out[at[O_CARDS_LEFT] + r] = left / h
        if started and c >= 0:
            out[at[O_TRICK] + r * CARD_SLOTS + c] = 1.0
        shown = void[g, s]
        for c in range(a):
            if shown >> c & 1:
                out[at[O_VOID] + r * CARD_SLOTS + c] = 1.0
        out[at[O_SCORE] + r] = scores[g, s] / t[LIMIT]
        if t[LIVES]:
            out[at[O_LIVES] + r] = lives[g, s] / t[LIVES]
        out[at[O_REBUYS] + r] = rebuys[g, s]
        out[at[O_IN_MATCH] + r] = alive[g, s]
    if started:
        out[at[O_TOP_CARD] + int(tricks[g, row, top_seat[g]])] = 1.0
        out[at[O_TOP_SEAT] + (top_seat[g] - seat) % p] = 1.0
        out[at[O_LEADER] + (leader[g] - seat) % p] = 1.0
        out[at[O_LOCKED]] = locked[g]
    out[at[O_TRICK_NO]] = trick / h
    out[at[O_LAST_TRICK]] = trick == h - 1
    out[at[O_POSITION]] = (npos[g] if in_round else 0) / max(n_alive[g], 1)
    out[at[O_DEALER] + (dealer[g] - seat) % p] = 1.0
    for i in range(constant.shape[0]):
        out[at[O_PLAYERS] + i] = constant[i]


def observe_all(
    t, at, constant, hands, void, tricks, alive, scores, lives, rebuys, dealer, trick_no, npos, n_alive, top_seat,
    leader, locked, seats, out,
):  # fmt: skip
    """:func:`observe` of every game, seat ``seats[g]`` of game ``g`` into row ``g`` of ``out``."""
    for g in range(seats.shape[0]):
        observe(
            t, at, constant, hands, void, tricks, alive, scores, lives, rebuys, dealer, trick_no, npos, n_alive,
            top_seat, leader, locked, g, seats[g], out[g],
        )  # fmt: skip
