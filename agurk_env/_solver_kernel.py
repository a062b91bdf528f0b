"""The exact round solver's search (:mod:`agurk_env.solver`): the rules kernel's rules, for one game.

Compiled as the rules kernel is (its :func:`~agurk_env._rules_kernel.njit`; :mod:`agurk_env.solver`
compiles :func:`solve_batch` through :func:`agurk_env.rules_kernel.load`, or loads it from numba's
disk cache) and, without numba or with ``jit=False``, run as the plain Python it is, on lists of
Python ints. So the code keeps to what both accept: scalar ints, 1-D indexing, tuples, no
allocation, no Python objects.

Everything the search reads and writes is one flat ``work`` array (one argument to pass down the
recursion): the rules kernel's rule array (:func:`agurk_env.engine.rule_array`, in its layout),
one game's hands and search stack, then the transposition table. The legal set is the rules
kernel's :func:`~agurk_env._rules_kernel.follow`, whether a card takes the trick its
:func:`~agurk_env._rules_kernel.takes`; a card's play and the last trick's scoring are
``play_games`` and ``finish_rounds`` for one game. Seats are compact: ``0..n-1`` are the seats still
in, clockwise. A card set is a bitmask (bit ``c`` for card ``c``); a hand is counts per card.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agurk_env._rules_kernel import (
    ACE,
    ACE_LOCK,
    ACTIONS,
    EVERY_TRICK,
    HAND_SIZE,
    LOCK_ANY,
    LOW_LAST,
    NO_LOCK,
    POINTS_LAST,
    POINTS_OF,
    SIZE,
    STRENGTH,
    TIES_ALL,
    TWO,
    W,
    follow,
    njit,
    reach,
    takes,
)

if TYPE_CHECKING:
    import numpy as np

    Ints = list[int] | np.ndarray

ALL = -1
"""The card set of every card (the ``only`` of a node that tries every legal card)."""

POS = 8
"""Ints per game in the batch's position array: trick_no, npos, cur, top, top_seat, prev, locked, led."""
MAX_SEATS = 8
MAX_PLIES = 54
"""Cards in the largest deal (52 and two jokers): the bits of a hand key, and the plies of a search."""

# After the rules (SIZE ints), one game, by seat: hands (counts by card), held (card sets), base (the
# hand key's bit of each seat's first copy of each card), cards (played to the current trick),
# seat_of (absolute seat), and pen: a penalty per seat at each depth of the search. Then the table:
# entries, and a last int that counts the games solved with it (an entry of an earlier game is stale).
HANDS = SIZE
HELD = HANDS + MAX_SEATS * 14
BASE = HELD + MAX_SEATS
CARDS = BASE + MAX_SEATS * 14
SEAT_OF = CARDS + MAX_SEATS
PEN = SEAT_OF + MAX_SEATS
TABLE = PEN + (MAX_PLIES + 1) * MAX_SEATS

LEADER_SHIFT = 56
"""Where the leader's seat goes in a table key, above the hand key's bits."""
ENTRY = 4
"""Ints per table entry: generation, key, then every seat's penalty from there, 16 bits each."""
PROBES = 4


@njit
def legal(work: Ints, held: int, npos: int, top: int, prev: int, locked: int, led: int, last: int) -> int:
    """The card set a player holding ``held`` may play in the trick so far: the rules kernel's :func:`follow`."""
    if npos == 0:
        return held
    return follow(work, held, top, prev, locked, led == TWO, last)[0]


@njit
def step(
    work: Ints, last: int, npos: int, seat: int, card: int, top: int, top_seat: int, locked: int
) -> tuple[int, int, int, int]:
    """``seat`` plays ``card`` into the trick (``engine.play``): its strength, and the new top, top seat and lock."""
    s = work[STRENGTH + last * W + card]
    wins = npos == 0 or takes(work, s, top, locked, last)
    if npos == 0:
        locked = 0
    lock = work[ACE_LOCK]
    if lock != NO_LOCK and card == ACE and not (last and work[LOW_LAST]) and (lock == LOCK_ANY or npos == 0):
        locked = 1
    if wins:
        return s, s, seat, locked
    return s, top, top_seat, locked


@njit
def score_last(work: Ints, n: int, top: int, top_seat: int, out: int) -> None:
    """Add the last trick's penalties to ``work[out:out + n]``: every card of the top strength, or only the winner's."""
    if work[TIES_ALL]:
        for i in range(n):
            card = work[CARDS + i]
            if work[STRENGTH + W + card] == top:
                work[out + i] += work[POINTS_LAST + card]
    else:
        work[out + top_seat] += work[POINTS_OF + W + top]


@njit
def node(
    work: Ints,
    n: int,
    depth: int,
    key: int,
    trick_no: int,
    npos: int,
    cur: int,
    top: int,
    top_seat: int,
    prev: int,
    locked: int,
    led: int,
    only: int,
) -> None:
    """Write each seat's penalty from here to the end of the round, along the chosen line, to the pen at ``depth``.

    The mover tries its legal cards in ``only`` in card order and keeps the first that gives
    it the least penalty (maxN; it stops at a card worth 0, nothing is less). The last trick
    is played out (one card each); at other trick starts the result is kept in the table, under
    ``key`` and the leader: bit ``base + j`` of ``key`` is set while the seat holds more than ``j``
    copies of the card whose ``base`` it is. Under every-trick scoring a card that surely takes the
    trick (no later seat holds a card that would take it) with as many points as the mover's best
    card so far is skipped: points only add up, and a tie goes to the lower card, tried first.
    """
    out = PEN + depth * n
    if trick_no == work[HAND_SIZE] - 1:
        for i in range(n):
            work[out + i] = 0
        while npos < n:
            card = 0
            while not work[HELD + cur] >> card & 1:
                card += 1
            _, top, top_seat, locked = step(work, 1, npos, cur, card, top, top_seat, locked)
            work[CARDS + cur] = card
            npos += 1
            cur = (cur + 1) % n
        score_last(work, n, top, top_seat, out)
        return
    slots = (len(work) - TABLE - 1) // ENTRY
    generation = work[len(work) - 1]
    home = -1
    entry_key = key | cur << LEADER_SHIFT
    if npos == 0 and only == ALL:
        home = entry_key % slots
        for probe in range(PROBES):
            e = (home + probe) % slots * ENTRY
            if work[TABLE + e] != generation:
                break
            if work[TABLE + e + 1] == entry_key:
                for i in range(n):
                    work[out + i] = work[TABLE + e + 2 + i // 4] >> 16 * (i % 4) & 0xFFFF
                return
    actions = work[ACTIONS]
    moves = legal(work, work[HELD + cur], npos, top, prev, locked, led, 0) & only
    child = out + n
    best = -1
    for card in range(actions):
        if not moves >> card & 1:
            continue
        slot = cur * actions + card
        work[HANDS + slot] -= 1
        if work[HANDS + slot] == 0:
            work[HELD + cur] ^= 1 << card
        work[CARDS + cur] = card
        s, new_top, new_seat, new_locked = step(work, 0, npos, cur, card, top, top_seat, locked)
        gain = 0
        if npos + 1 == n:  # the trick is done: its winner leads the next
            next_trick, next_npos, next_cur, next_led = trick_no + 1, 0, new_seat, -1
            if work[EVERY_TRICK]:
                gain = work[POINTS_OF + new_top]
        else:
            next_trick, next_npos, next_cur, next_led = trick_no, npos + 1, (cur + 1) % n, card if npos == 0 else led
        # a card that surely takes the trick costs the mover at least its points: skip it when that is no better
        skip = work[EVERY_TRICK] and new_seat == cur and 0 <= best <= work[POINTS_OF + new_top]
        if skip and not new_locked:
            for later in range(1, n - npos):
                if work[HELD + (cur + later) % n] & reach(work, new_top, 0):
                    skip = False
        if not skip:
            # one call site, every argument a variable: numba's recursive call must match the one compiled signature
            node(
                work, n, depth + 1, key & ~(1 << work[BASE + slot] + work[HANDS + slot]), next_trick,
                next_npos, next_cur, new_top, new_seat, s, new_locked, next_led, only | ALL,
            )  # fmt: skip
        if work[HANDS + slot] == 0:
            work[HELD + cur] ^= 1 << card
        work[HANDS + slot] += 1
        if skip:
            continue
        work[child + new_seat] += gain
        value = work[child + cur]
        if best < 0 or value < best:
            best = value
            for i in range(n):
                work[out + i] = work[child + i]
            if value == 0:
                break
    if home >= 0:
        e = home * ENTRY
        for probe in range(PROBES):
            if work[TABLE + (home + probe) % slots * ENTRY] != generation:
                e = (home + probe) % slots * ENTRY
                break
        work[TABLE + e] = generation
        work[TABLE + e + 1] = entry_key
        work[TABLE + e + 2] = 0
        work[TABLE + e + 3] = 0
        for i in range(n):
            work[TABLE + e + 2 + i // 4] |= work[out + i] << 16 * (i % 4)


@njit
def solve_batch(
    players: int,
    position: Ints,
    alive: Ints,
    trick_cards: Ints,
    penalty: Ints,
    hands: Ints,
    values: Ints,
    best: Ints,
    line: Ints,
    work: Ints,
) -> None:
    """Solve every game of a batch (``work`` holds the rules): reads the next five arguments, writes three.

    Per game ``g``: ``position[g * POS:]`` (see :data:`POS`), and by absolute seat ``alive``,
    the card each seat played to the current trick (``trick_cards``, -1 for none), the round's
    ``penalty`` so far and the hands (counts by card). Writes ``values[g * actions + c]`` (the
    mover's round penalty after playing ``c``, for its legal cards), ``best[g]`` (the chosen
    card) and ``line[g * players + s]`` (each seat's round penalty along the chosen line).
    """
    actions = work[ACTIONS]
    for g in range(len(best)):
        p = g * POS
        trick_no, npos, top, prev, locked, led = (
            position[p], position[p + 1], position[p + 3], position[p + 5], position[p + 6], position[p + 7]
        )  # fmt: skip
        mover, top_seat, n, bits = 0, 0, 0, 0
        for s in range(players):
            line[g * players + s] = penalty[g * players + s]
            if alive[g * players + s]:
                work[SEAT_OF + n] = s
                if s == position[p + 2]:
                    mover = n
                if s == position[p + 4] and npos > 0:
                    top_seat = n
                work[HELD + n] = 0
                for c in range(actions):
                    count = hands[(g * players + s) * actions + c]
                    work[HANDS + n * actions + c] = count
                    work[BASE + n * actions + c] = bits
                    bits += count
                    if count:
                        work[HELD + n] |= 1 << c
                work[CARDS + n] = trick_cards[g * players + s]
                n += 1
        work[len(work) - 1] += 1
        so_far = penalty[g * players + work[SEAT_OF + mover]]
        last = 1 if trick_no == work[HAND_SIZE] - 1 else 0
        moves = legal(work, work[HELD + mover], npos, top, prev, locked, led, last)
        chosen = -1
        for c in range(actions):
            if not moves >> c & 1:
                continue
            key = (1 << bits) - 1
            node(work, n, 0, key, trick_no, npos, mover, top, top_seat, prev, locked, led, 1 << c)
            value = so_far + work[PEN + mover]
            values[g * actions + c] = value
            if chosen < 0 or value < values[g * actions + chosen]:
                chosen = c
                for i in range(n):
                    seat = work[SEAT_OF + i]
                    line[g * players + seat] = penalty[g * players + seat] + work[PEN + i]
        best[g] = chosen
