"""Exact answers: a perfect-information solver for one round of Agurk, every hand visible.

**Objective.** maxN over the rest of ONE round: each player, when it is to move, plays the card
that gives it the least *own round penalty*, the points it takes in this round under the rules
(the last trick only, every seat tying the winning strength when ``last_trick_ties=all``; or
every trick under ``scoring=every_trick``), already-scored points of this round included. The
other players do the same at their turns, so a line is a subgame-perfect equilibrium of the
round; it is not a coalition against the mover. **Ties**: among cards of equal value the mover
plays the lowest card in action order (``CARDS`` order: 2 3 ... K A X, whatever the ace's
strength), so the answer is unique and ``best == values.argmin(1)``. The match around the round
is **not** in the objective: going out at the limit, lives, rebuys and the other seats' scores
are ignored, and a point is a point. Callers that weigh those can read every seat's round
penalty along the chosen line (:attr:`Solution.penalties`).

**Rules.** The legal cards and the trick's winner are the engine's own tables and flags
(:func:`agurk_env.engine.tables`): the kernel is :mod:`agurk_env._solver_kernel`, one game at a
time, with the same order of rules as :func:`agurk_env.engine.legal_bits` and the same trick and
round scoring as :func:`agurk_env.engine.play`; so every preset and option is honoured, and the
tests check it against the engine.

**Search.** Hands are counts per card (suits never matter, equal cards are one move), legal sets
are bit operations on card-set bitmasks, the last trick is played out directly (one card each),
a mover stops at a card worth 0 more points (nothing is less), and each trick start's answer is
kept in a transposition table keyed on every seat's hand and the leader. Under every-trick
scoring fewer cards are worth 0, so it searches much more; there a card that surely takes the
trick with no fewer points than the mover's best card so far is not searched further.

**Speed.** The kernel is plain Python; with numba installed it is compiled (``numba.njit``,
a few seconds the first time, then loaded from numba's disk cache) and a batch is solved in one
compiled call. ``jit=False`` (or the environment variable ``AGURK_SOLVER_JIT=0``) forces the
pure-Python path; ``agurk bench solver`` measures both. Each thread keeps its own work space
(32 MiB compiled), so threads may solve at the same time.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import threading
import time
from types import ModuleType
from typing import NamedTuple

import numpy as np

from agurk_env import _solver_kernel as kernel
from agurk_env import engine
from agurk_env.rules import Rules

try:
    import numba
except ImportError:  # the pure-Python path only
    numba = None

HAS_NUMBA = numba is not None
"""Whether numba is installed (the compiled path is available)."""
JIT_ENV = "AGURK_SOLVER_JIT"
"""Environment variable: ``0`` makes the pure-Python path the default even with numba installed."""
TABLE_SLOTS = {True: 1048573, False: 262139}
"""Transposition-table entries per thread (a prime), compiled and pure-Python path: 32 MiB and 8 MiB of ints."""
_WORK = threading.local()


class Solution(NamedTuple):
    """The solver's answer for ``k`` positions, each for its player to move."""

    values: np.ndarray  # (k, A) float64: the mover's round penalty after playing each card; +inf where not legal
    best: np.ndarray  # (k,) int64: the card chosen (least value, lowest card among equals)
    penalties: np.ndarray  # (k, P) int64: every seat's round penalty along the chosen line (seats out: as they are)


@functools.lru_cache(maxsize=64)
def rule_array(rules: Rules) -> np.ndarray:
    """``rules`` as the kernel reads them (read-only): the engine's tables and flags, in the kernel's layout."""
    sp = engine.tables(rules)
    if sp.hand_size * int(sp.points.max()) >= 1 << 16:  # the table keeps each seat's penalty in 16 bits
        raise ValueError(f"the solver needs hand_size * ace_points below 65536 (ace_points={rules.ace_points})")
    out = np.zeros(kernel.RULES_SIZE, dtype=np.int64)
    for offset, table in (
        (kernel.STRENGTH, sp.strength),
        (kernel.STRENGTH + kernel.W, sp.strength_last),
        (kernel.POINTS_OF, sp.points_of),
        (kernel.POINTS_OF + kernel.W, sp.points_of_last),
        (kernel.AT_LEAST, sp.at_least),
        (kernel.AT_LEAST + kernel.W, sp.at_least_last),
        (kernel.POINTS_LAST, sp.points_last),
    ):
        out[offset : offset + table.size] = table
    out[kernel.FLAGS : kernel.RULES_SIZE] = (
        sp.actions,
        sp.hand_size,
        sp.ace_low,
        sp.low_last,
        sp.not_equal,
        sp.not_equal_last,
        sp.target_previous,
        ("forced", "nearest", "optional").index(sp.beat_choice),
        ("none", "led", "any").index(sp.ace_lock),
        sp.twos,
        sp.every_trick,
        sp.ties_all,
    )
    out.flags.writeable = False
    return out


@functools.cache
def _compiled() -> ModuleType:
    """A second copy of the kernel module with its functions compiled by ``numba.njit`` (cached on disk).

    Each function gets its one signature (all int64, but the values), so the recursion
    compiles once and the calls between them resolve to the compiled ones.
    """
    t = numba.types
    ints, i = t.int64[::1], t.int64
    signatures = {
        "lowest": (i(ints, i, i), True),
        "legal": (i(ints, *[i] * 7), True),
        "step": (t.UniTuple(i, 4)(ints, *[i] * 7), True),
        "score_last": (t.void(ints, *[i] * 4), True),
        "node": (t.void(ints, *[i] * 12), False),
        "solve_batch": (t.void(i, *[ints] * 5, t.float64[::1], ints, ints, ints), False),
    }
    spec = importlib.util.spec_from_file_location(f"{kernel.__name__}_jit", kernel.__file__)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's disk cache imports the module by name
    spec.loader.exec_module(module)
    for name, (signature, inline) in signatures.items():  # in call order: each call resolves to a compiled function
        options = {"inline": "always"} if inline else {}
        setattr(module, name, numba.njit(signature, cache=True, **options)(getattr(module, name)))
    return module


def _use_jit(jit: bool | None) -> bool:
    """Resolve ``jit``: ``None`` is numba when installed, unless ``AGURK_SOLVER_JIT=0``."""
    if jit is None:
        return HAS_NUMBA and os.environ.get(JIT_ENV, "1") != "0"
    if jit and not HAS_NUMBA:
        raise RuntimeError('jit=True needs numba (pip install -e ".[solver]" in the clone)')
    return jit


def _work(jit: bool) -> np.ndarray | list[int]:
    """The calling thread's work array for one path (rules, one game's search, the table), reused across calls."""
    key = "jit" if jit else "python"
    work = getattr(_WORK, key, None)
    if work is None:
        size = kernel.TABLE + TABLE_SLOTS[jit] * kernel.ENTRY + 1
        # np.full writes every page now (np.zeros would leave the page faults to the first games)
        work = np.full(size, 0, dtype=np.int64) if jit else [0] * size
        setattr(_WORK, key, work)
    return work


def _solve(
    rules: Rules,
    position: np.ndarray,
    alive: np.ndarray,
    cards: np.ndarray,
    penalty: np.ndarray,
    hands: np.ndarray,
    jit: bool | None,
) -> Solution:
    """Run the kernel on ``k`` games given as arrays (see ``_solver_kernel.solve_batch``)."""
    k, p, a = hands.shape
    use_jit = _use_jit(jit)
    work = _work(use_jit)
    work[: kernel.RULES_SIZE] = rule_array(rules) if use_jit else rule_array(rules).tolist()
    inputs = [np.ascontiguousarray(x, dtype=np.int64).reshape(-1) for x in (position, alive, cards, penalty, hands)]
    values, best, line = np.full(k * a, np.inf), np.zeros(k, np.int64), np.zeros(k * p, np.int64)
    if use_jit:
        _compiled().solve_batch(p, *inputs, values, best, line, work)
    else:
        out = values.tolist(), best.tolist(), line.tolist()
        kernel.solve_batch(p, *(x.tolist() for x in inputs), *out, work)
        values, best, line = (np.asarray(x, dtype=d) for x, d in zip(out, (float, np.int64, np.int64), strict=True))
    return Solution(values.reshape(k, a), best, line.reshape(k, p))


def solution(rules: Rules, state: engine.State, games: np.ndarray | None = None, jit: bool | None = None) -> Solution:
    """Solve the position of the player to move in each game (all, or ``games``) of ``state``, mid-trick or not.

    Every game must be in a round (``ValueError`` after a round's end: call ``engine.advance``).
    ``jit``: ``None`` uses numba when installed (see :data:`JIT_ENV`), ``False`` pure Python.
    """
    sub = state if games is None else state.take(np.asarray(games))
    if sub.round_over.any():
        raise ValueError("solver needs every game in a round; call engine.advance after a round ends")
    rows = np.arange(sub.batch)
    cards = sub.tricks[rows, sub.trick_no]
    led = np.where(sub.npos > 0, cards[rows, sub.leader], -1)
    fields = (sub.trick_no, sub.npos, sub.cur, sub.top, sub.top_seat, sub.prev, sub.locked, led)
    position = np.stack([np.asarray(f, dtype=np.int64) for f in fields], axis=1)
    return _solve(rules, position, sub.alive, cards, sub.round_penalty, sub.hands, jit)


def solve(
    rules: Rules, state: engine.State, games: np.ndarray | None = None, jit: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(values (k, A), best (k,))`` of :func:`solution`: every card's value for the player to move, and its choice."""
    answer = solution(rules, state, games, jit)
    return answer.values, answer.best


def solve_deals(rules: Rules, hands: np.ndarray, leader: np.ndarray, jit: bool | None = None) -> Solution:
    """Solve ``k`` whole deals from the first lead: ``hands`` ``(k, P, A)`` counts (all seats in), ``leader``."""
    sp = engine.tables(rules)
    hands = np.asarray(hands, dtype=np.int64)
    if hands.ndim != 3 or hands.shape[1:] != (sp.players, sp.actions):
        raise ValueError(f"hands must have shape (k, {sp.players}, {sp.actions}), not {hands.shape}")
    if (hands < 0).any() or (hands.sum(2) != sp.hand_size).any():
        raise ValueError(f"every seat must hold hand_size={sp.hand_size} cards")
    k = hands.shape[0]
    position = np.zeros((k, kernel.POS), dtype=np.int64)
    position[:, 2] = leader
    position[:, 7] = -1
    cards = np.full((k, sp.players), -1)
    return _solve(rules, position, np.ones((k, sp.players)), cards, np.zeros((k, sp.players)), hands, jit)


def warm_up() -> dict[str, float | bool]:
    """Compile the numba kernels (or load them from numba's disk cache), then solve one tiny deal.

    Returns ``{"seconds": the compile or load, "from_cache": whether numba loaded it from disk}``.
    """
    start = time.perf_counter()
    compiled = _compiled()
    seconds = time.perf_counter() - start
    rules = Rules.preset("standard", players=2, hand_size=2)
    solve_deals(rules, np.eye(2, 13, dtype=np.int64)[None] * 2, np.zeros(1, np.int64), jit=True)
    return {"seconds": seconds, "from_cache": bool(compiled.solve_batch.stats.cache_hits)}
