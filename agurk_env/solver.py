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

**Rules.** The search (:mod:`agurk_env._solver_kernel`, one game at a time) reads the rules
kernel's rule array (:func:`agurk_env.engine.rule_array`, the engine's tables and flags in the one
layout) and takes its legal sets from the rules kernel's
:func:`~agurk_env._rules_kernel.follow`, as :func:`agurk_env.engine.legal_bits` does, with the
same trick and round scoring as :func:`agurk_env.engine.play`; so every preset and option is
honoured, and the tests check it against the engine.

**Search.** Hands are counts per card (suits never matter, equal cards are one move), legal sets
are bit operations on card-set bitmasks, the last trick is played out directly (one card each),
a mover stops at a card worth 0 more points (nothing is less), and each trick start's answer is
kept in a transposition table keyed on every seat's hand and the leader. Under every-trick
scoring fewer cards are worth 0, so it searches much more; there a card that surely takes the
trick with no fewer points than the mover's best card so far is not searched further.

**Speed.** With numba installed the search is compiled as the rules kernel is (its ``njit``
and :func:`agurk_env.rules_kernel.load`: a few seconds at the first solve, then loaded from
numba's disk cache) and a batch is solved in one compiled call. Without numba it runs as plain
Python; ``jit=False`` (or the environment variable ``AGURK_SOLVER_JIT=0``) forces that path with
numba installed; ``agurk bench solver`` measures both. Each thread keeps its own work space
(32 MiB compiled), so threads may solve at the same time.
"""

from __future__ import annotations

import functools
import os
import threading
import types
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from agurk_env import _rules_kernel, engine, rules_kernel
from agurk_env import _solver_kernel as kernel
from agurk_env.install import install
from agurk_env.rules import Rules

HAS_NUMBA = rules_kernel.HAS_NUMBA
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


def _signatures() -> dict[str, object]:
    """The one signature of the recursion and of the search's entry point, in call order: int64 but the values."""
    import numba

    t = numba.types
    ints, i = t.int64[::1], t.int64
    return {"node": t.void(ints, *[i] * 12), "solve_batch": t.void(i, *[ints] * 5, t.float64[::1], ints, ints, ints)}


@functools.cache
def _load() -> dict[str, float | bool] | None:
    """Compile the search once (or load it from numba's disk cache), as the rules kernel's entry points are."""
    return rules_kernel.load(kernel, _signatures, "exact solver", frozen=True)


@functools.cache
def _python() -> Callable[..., None]:
    """The search's :func:`~agurk_env._solver_kernel.solve_batch` as plain Python, whether numba is installed or not.

    Every ``njit`` function of both kernels is rebuilt from numba's ``py_func`` over one namespace,
    so the functions it calls are plain Python too (without numba they already are).
    """
    namespace = {**vars(_rules_kernel), **vars(kernel)}
    for name, value in list(namespace.items()):
        if hasattr(value, "py_func"):
            namespace[name] = types.FunctionType(value.py_func.__code__, namespace, name)
    return namespace["solve_batch"]


def _use_jit(jit: bool | None) -> bool:
    """Resolve ``jit``: ``None`` is numba when installed, unless ``AGURK_SOLVER_JIT=0``."""
    if jit is None:
        return HAS_NUMBA and os.environ.get(JIT_ENV, "1") != "0"
    if jit and not HAS_NUMBA:
        raise RuntimeError(f"jit=True needs numba ({install('solver')} in the clone)")
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
    sp = engine.tables(rules)
    if sp.hand_size * int(sp.points.max()) >= 1 << 16:  # the table keeps each seat's penalty in 16 bits
        raise ValueError(f"the solver needs hand_size * ace_points below 65536 (ace_points={rules.ace_points})")
    use_jit = _use_jit(jit)
    work = _work(use_jit)
    t = engine.rule_array(rules)
    work[: t.size] = t if use_jit else t.tolist()
    position, alive, cards, penalty, hands = (
        np.ascontiguousarray(x, dtype=np.int64).reshape(-1) for x in (position, alive, cards, penalty, hands)
    )
    values, best, line = np.full(k * a, np.inf), np.zeros(k, np.int64), np.zeros(k * p, np.int64)
    if use_jit:
        _load()
        kernel.solve_batch(p, position, alive, cards, penalty, hands, values, best, line, work)
    else:
        out = values.tolist(), best.tolist(), line.tolist()
        _python()(p, *(x.tolist() for x in (position, alive, cards, penalty, hands)), *out, work)
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


def warm_up() -> dict[str, float | bool] | None:
    """Compile the search (or load it from numba's disk cache), then solve one tiny deal with it (needs numba).

    Returns ``{"seconds": the compile or load, "from_cache": whether numba loaded it from disk}``.
    """
    rules = Rules.preset("standard", players=2, hand_size=2)
    solve_deals(rules, np.eye(2, 13, dtype=np.int64)[None] * 2, np.zeros(1, np.int64), jit=True)
    return _load()
