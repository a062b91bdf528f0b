"""Seating designs of a duplicate-deal tournament: which entry sits in which seat at each table.

**Seatings** (``seating``, :func:`seatings`): entries that are the same player (an equal
spec, or the same object) are one *kind*, and a table is an arrangement of the kinds in
the seats, each played once:

- ``permutations``: every distinct arrangement of the entries (``P!`` of them when all
  differ: 24 at 4 players); the entries of one kind take that kind's seats in turn (one
  seating per cyclic shift among them), so entries of one kind get the same figures and
  every entry sits in every seat, and after every other entry, equally often.
- ``balanced``: for larger tables, every rotation of a set of circular orders of the
  entries in which each entry comes right after each other entry equally often
  (:func:`circular_orders`): each entry sits in each seat and after each other entry
  equally often, with ``P (P - 1)`` seatings (twice that at 4 and 6 players), arrangements
  of equal kinds played once;
- ``cyclic``: the ``P`` rotations of the list, rotation ``r`` putting entry ``i`` in seat
  ``(i + r) % P``: who sits after whom never changes, so it can favour an entry;
- ``auto`` (the default): ``permutations`` when there are at most :data:`MAX_PERMUTATIONS`
  distinct arrangements, else ``balanced``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from agurk_env.agent import Agent
from agurk_env.rules import check_choice

Entry = str | Agent
"""A tournament entry: a registered agent spec (``"guard"``, ``"pimc:worlds=32"``) or an agent object."""
Seating = Literal["auto", "permutations", "balanced", "cyclic"]
SEATINGS: tuple[str, ...] = get_args(Seating)
"""Seating designs (see the module docstring)."""
MAX_PERMUTATIONS = 24
"""``auto`` plays every distinct arrangement of the entries up to this many (all 24 at 4 players), else ``balanced``."""


@dataclass(frozen=True)
class Seatings:
    """A seating design for one list of entries: the tables played and every seating counted."""

    design: str
    """``permutations``, ``balanced`` or ``cyclic`` (``auto`` resolved)."""
    tables: list[np.ndarray]
    """Per table played, the entry at each seat (the first entry of its kind)."""
    views: list[tuple[int, np.ndarray]]
    """Per seating counted: its table and the seat of each entry there."""


def kinds(entries: Sequence[Entry]) -> np.ndarray:
    """``(P,)`` each entry's kind: the position of the first entry that is the same player (equal spec, same object)."""

    def same(a: Entry, b: Entry) -> bool:
        return a == b if isinstance(a, str) and isinstance(b, str) else a is b

    return np.array([next(j for j in range(i + 1) if same(entries[j], e)) for i, e in enumerate(entries)])


@functools.cache
def circular_orders(players: int) -> tuple[tuple[int, ...], ...]:
    """Circular orders of ``players`` entries (from entry 0) in which each entry follows each other equally often.

    ``lam * (players - 1)`` orders in which every ordered pair of entries is adjacent ``lam``
    times: ``lam = 1``, or 2 at 4 and 6 players, where no such set of ``players - 1`` exists
    (Tillson's theorem on Hamiltonian decompositions of complete digraphs). The first such set
    in lexicographic order, by a depth-first search (the orders themselves in increasing order).
    """
    lam = 2 if players in (4, 6) else 1
    need = lam * (players - 1)
    left = np.full((players, players), lam) - lam * np.eye(players, dtype=int)  # uses left of each arc
    found: list[tuple[int, ...]] = []

    def extend(order: list[int]) -> bool:
        last = order[-1]
        if len(order) == players:
            if not left[last, 0] or (found and tuple(order) <= found[-1]):
                return False
            left[last, 0] -= 1
            found.append(tuple(order))
            if len(found) == need or extend([0]):
                return True
            found.pop()
            left[last, 0] += 1
            return False
        for nxt in range(1, players):
            prefix = (*order, nxt)
            if nxt in order or not left[last, nxt] or (found and prefix < found[-1][: len(prefix)]):
                continue
            left[last, nxt] -= 1
            if extend([*prefix]):
                return True
            left[last, nxt] += 1
        return False

    if not extend([0]):
        raise RuntimeError(f"no balanced set of circular orders for {players} players")  # not for 2..8 (tested)
    return tuple(found)


def _inverse(seat: np.ndarray) -> np.ndarray:
    """The entry at each seat, from the seat of each entry."""
    return np.argsort(seat)


def _shifts(kind: np.ndarray, table: np.ndarray) -> list[np.ndarray]:
    """The seatings of one table of kinds: the entries of each kind take its seats in every cyclic shift."""
    groups = [(np.flatnonzero(kind == k), np.flatnonzero(table == k)) for k in np.unique(kind)]
    out = []
    for shift in itertools.product(*(range(e.size) for e, _ in groups)):
        seat = np.empty(kind.size, np.int64)
        for t, (entries, seats) in zip(shift, groups, strict=True):
            seat[entries] = np.roll(seats, -t)
        out.append(seat)
    return out


def seatings(entries: Sequence[Entry], seating: Seating = "auto") -> Seatings:
    """The tables to play and the seatings to count for ``entries`` under ``seating`` (see the module docstring)."""
    check_choice("seating", seating, SEATINGS)
    kind, p = kinds(entries), len(entries)
    if seating == "cyclic":
        cyclic = [(r, (np.arange(p) + r) % p) for r in range(p)]
        return Seatings("cyclic", [kind[_inverse(seat)] for _, seat in cyclic], cyclic)
    arrangements = math.factorial(p) // math.prod(math.factorial(c) for c in np.unique(kind, return_counts=True)[1])
    if seating == "auto":
        seating = "permutations" if arrangements <= MAX_PERMUTATIONS else "balanced"
    index: dict[tuple[int, ...], int] = {}
    tables: list[np.ndarray] = []
    views: list[tuple[int, np.ndarray]] = []
    if seating == "permutations":
        for order in itertools.permutations(range(p)):  # the entry at each seat
            table = kind[list(order)]
            if tuple(table) not in index:
                index[tuple(table)] = len(tables)
                views += [(len(tables), seat) for seat in _shifts(kind, table)]
                tables.append(table)
        return Seatings("permutations", tables, views)
    for order in circular_orders(p):
        for r in range(p):
            seat = np.empty(p, np.int64)
            seat[list(order)] = (np.arange(p) + r) % p
            table = kind[_inverse(seat)]
            if tuple(table) not in index:
                index[tuple(table)] = len(tables)
                tables.append(table)
            views.append((index[tuple(table)], seat))
    return Seatings("balanced", tables, views)
