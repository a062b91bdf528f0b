"""Values, exact best responses and NashConv of tabular policies on a :class:`~skill.game_tree.GameTree`.

- :func:`policy_values`: every seat's expected return under a tabular policy profile;
- :func:`best_response`: one seat's exact best response to the others' policies and its value
  (the algorithm of OpenSpiel's ``BestResponsePolicy``: counterfactual-reach-weighted values per
  information set, deepest first);
- :func:`nash_conv`: the sum over seats of what a best response gains (OpenSpiel's ``nash_conv``,
  for any number of seats and general-sum games).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skill.game_tree import GameTree


def _sum_children(tree: GameTree, v: np.ndarray, w: np.ndarray, kids: np.ndarray) -> None:
    """``v[parent] = sum of w * v over its children`` for the children ``kids`` (sorted by parent), in place."""
    if not kids.size:
        return
    par = tree.parent[kids]
    starts = np.flatnonzero(np.r_[True, par[1:] != par[:-1]])
    contrib = v[kids] * (w[kids] if v.ndim == 1 else w[kids, None])
    v[par[starts]] = np.add.reduceat(contrib, starts, axis=0)


def history_values(tree: GameTree, sigma: np.ndarray) -> np.ndarray:
    """``(N, P)`` every history's expected returns when every seat plays ``sigma``."""
    v = tree.returns.copy()
    w = tree.edge_weights(sigma)
    for a, b in reversed(tree.levels[1:]):
        _sum_children(tree, v, w, np.arange(a, b))
    return v


def policy_values(tree: GameTree, sigma: np.ndarray) -> np.ndarray:
    """``(P,)`` every seat's expected return when every seat plays ``sigma``."""
    return history_values(tree, sigma)[0]


def best_response(tree: GameTree, sigma: np.ndarray, player: int) -> tuple[float, np.ndarray]:
    """``(value, actions)``: ``player``'s best response to the others' ``sigma``: its value, its action per set.

    Deepest level first: an information set of ``player`` takes the action with the greatest
    sum over its histories of (chance and the other seats' reach) x (value after the action),
    ties to the lowest action, as OpenSpiel's ``BestResponsePolicy``. ``actions`` is ``-1`` at
    the other seats' information sets.
    """
    reach = tree.reach(sigma)
    others = np.prod(np.delete(reach, player, axis=1), axis=1)  # chance and every other seat
    w = tree.edge_weights(sigma)
    n_seq = tree.seq_action.size
    best = np.full(tree.num_infosets, -1, np.int64)
    chosen_seq = np.full(tree.num_infosets, -1, np.int64)
    v = np.where(tree.player == -4, tree.returns[:, player], 0.0)
    for a, b in reversed(tree.levels[1:]):
        kids = np.arange(a, b)
        mine = tree.player[tree.parent[kids]] == player
        _sum_children(tree, v, w, kids[~mine])
        kids = kids[mine]
        if not kids.size:
            continue
        par = tree.parent[kids]
        score = np.bincount(tree.seq[kids], weights=others[par] * v[kids], minlength=n_seq)
        seqs = np.unique(tree.seq[kids])  # every action of every information set on this level, grouped by set
        owner = tree.seq_infoset[seqs]
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        top = np.maximum.reduceat(score[seqs], starts)
        group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, seqs.size]))
        first = np.minimum.reduceat(np.where(score[seqs] == top[group], seqs, n_seq), starts)
        sets = owner[starts]
        chosen_seq[sets] = first
        best[sets] = tree.seq_action[first]
        hit = kids[tree.seq[kids] == chosen_seq[tree.infoset[par]]]
        v[tree.parent[hit]] = v[hit]
    return float(v[0]), best


@dataclass
class NashConv:
    """NashConv of a policy profile and its parts."""

    nash_conv: float
    """Sum of :attr:`gains`."""
    gains: list[float]
    """Per seat: best-response value minus the value under the profile (>= 0)."""
    values: list[float]
    """Per seat: expected return when every seat follows the profile."""
    best_response_values: list[float]
    """Per seat: expected return of a best response to the others."""


def nash_conv(tree: GameTree, sigma: np.ndarray) -> NashConv:
    """NashConv of the profile where every seat plays ``sigma`` (OpenSpiel's ``exploitability.nash_conv``)."""
    values = policy_values(tree, sigma)
    br = np.array([best_response(tree, sigma, p)[0] for p in range(tree.num_players)])
    gains = br - values
    return NashConv(float(gains.sum()), gains.tolist(), values.tolist(), br.tolist())
