"""CFR+ (or CFR) on a :class:`~skill.game_tree.GameTree`, iterate for iterate OpenSpiel's solvers.

:func:`cfr` follows OpenSpiel's ``CFRPlusSolver`` / ``CFRSolver``: alternating updates, regret
matching(+), (linear) averaging, with :func:`skill.best_response.nash_conv` of the average policy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from skill.best_response import history_values, nash_conv
from skill.game_tree import GameTree


def regret_matching(tree: GameTree, regret: np.ndarray) -> np.ndarray:
    """``(S,)`` the policy proportional to the positive regrets of each information set (uniform where none)."""
    pos = np.maximum(regret, 0.0)
    total = np.bincount(tree.seq_infoset, weights=pos, minlength=tree.num_infosets)[tree.seq_infoset]
    return np.where(total > 0, pos / np.where(total > 0, total, 1.0), tree.uniform())


def normalized(tree: GameTree, weights: np.ndarray) -> np.ndarray:
    """``(S,)`` ``weights`` normalized per information set (uniform where they sum to 0)."""
    total = np.bincount(tree.seq_infoset, weights=weights, minlength=tree.num_infosets)[tree.seq_infoset]
    return np.where(total > 0, weights / np.where(total > 0, total, 1.0), tree.uniform())


@dataclass
class CFRResult:
    """The average policy after some CFR iterations, and NashConv along the way."""

    policy: np.ndarray
    """``(S,)`` the average policy."""
    iterations: int
    seconds: float
    trace: list[tuple[int, float]]
    """``(iteration, NashConv of the average policy)`` at the requested iterations."""


def cfr(
    tree: GameTree,
    iterations: int,
    plus: bool = True,
    checkpoints: Sequence[int] = (),
    progress: Callable[[int], None] | None = None,
) -> CFRResult:
    """CFR+ (``plus``) or CFR on the tree: OpenSpiel's ``CFRPlusSolver`` / ``CFRSolver``, iterate for iterate.

    Alternating updates (seat 0, then seat 1 against seat 0's new policy, ...); CFR+ clips the
    cumulative regrets at 0 (regret matching+) and weighs iteration ``t`` by ``t`` in the
    average. ``checkpoints`` lists the iterations at which the average policy's NashConv is
    recorded; ``progress(t)`` is called after every iteration.
    """
    start = time.perf_counter()
    sigma = tree.uniform()
    regret = np.zeros_like(sigma)
    total = np.zeros_like(sigma)
    kids = np.flatnonzero(tree.seq >= 0)
    par = tree.parent[kids]
    edge = tree.seq[kids]
    by_seat = [tree.player[par] == p for p in range(tree.num_players)]
    own = tree.seq_infoset
    trace: list[tuple[int, float]] = []
    wanted = set(checkpoints)
    for t in range(1, iterations + 1):
        for p in range(tree.num_players):
            reach = tree.reach(sigma)
            v = history_values(tree, sigma)[:, p]
            k, up, e = kids[by_seat[p]], par[by_seat[p]], edge[by_seat[p]]
            cf = np.prod(np.delete(reach[up], p, axis=1), axis=1)
            regret += np.bincount(e, weights=cf * (v[k] - v[up]), minlength=sigma.size)
            total += np.bincount(e, weights=(t if plus else 1.0) * reach[up, p] * sigma[e], minlength=sigma.size)
            if plus:
                np.maximum(regret, 0.0, out=regret)
            mine = tree.infoset_player[own] == p
            sigma = np.where(mine, regret_matching(tree, regret), sigma)
        if t in wanted:
            trace.append((t, nash_conv(tree, normalized(tree, total)).nash_conv))
        if progress is not None:
            progress(t)
    return CFRResult(normalized(tree, total), iterations, time.perf_counter() - start, trace)
