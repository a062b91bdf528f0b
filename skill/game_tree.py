"""A tiny Agurk game as arrays: every history of OpenSpiel's ``python_agurk`` walked once (:func:`build_tree`).

The game is OpenSpiel's ``python_agurk`` (:mod:`agurk_env.openspiel_game`). :func:`build_tree`
walks it once through the OpenSpiel API and keeps every history as arrays (:class:`GameTree`):
parents, chance probabilities, information sets and returns, level by level, so that values,
best responses and CFR run in NumPy (:mod:`skill.best_response`, :mod:`skill.cfr`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from agurk_env import openspiel_game
from agurk_env.install import install

try:
    import pyspiel
except ImportError:  # pragma: no cover - the base install has no OpenSpiel
    raise ImportError(f"skill.game_tree needs OpenSpiel: {install('openspiel')}") from None

if TYPE_CHECKING:
    from open_spiel.python.policy import TabularPolicy


def load_game(params: dict[str, Any]) -> pyspiel.Game:
    """``pyspiel.load_game("python_agurk", params)``."""
    return pyspiel.load_game(openspiel_game.NAME, params)


class TreeSizes(TypedDict):
    """A game tree's size (:meth:`skill.game_tree.GameTree.sizes`): histories by kind, information sets by seat."""

    histories: int
    decision_histories: int
    terminal_histories: int
    chance_histories: int
    infosets: int
    infosets_per_seat: list[int]
    sequences: int


@dataclass
class GameTree:
    """Every history of a game, in order of depth (parents before children, siblings side by side).

    Node arrays have one entry per history; ``seq`` numbers the (information set, action)
    pairs: information set ``i`` owns the sequences ``seq_start[i] .. seq_start[i + 1] - 1``,
    one per legal action in ascending order (``seq_action``).
    """

    num_players: int
    parent: np.ndarray  # (N,) parent history, -1 for the root
    player: np.ndarray  # (N,) seat to move, -1 chance, -4 terminal (OpenSpiel's ids)
    weight: np.ndarray  # (N,) chance probability of the edge into the history (1 after a decision, at the root)
    seq: np.ndarray  # (N,) sequence of the decision edge into the history, -1 after chance and at the root
    infoset: np.ndarray  # (N,) information set of a decision history, -1 otherwise
    returns: np.ndarray  # (N, P) returns of terminal histories (0 elsewhere)
    levels: list[tuple[int, int]]  # node range of every depth
    keys: list[str]  # information state string of every information set
    infoset_player: np.ndarray  # (I,)
    seq_start: np.ndarray  # (I + 1,)
    seq_infoset: np.ndarray  # (S,)
    seq_action: np.ndarray  # (S,)
    seconds: float = 0.0
    """Time the walk took."""
    _owner: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        parent_player = np.where(self.parent >= 0, self.player[np.maximum(self.parent, 0)], -2)
        self._owner = np.where(parent_player >= 0, parent_player, self.num_players)  # chance/root: column P

    @property
    def num_histories(self) -> int:
        """Histories (chance, decision and terminal)."""
        return int(self.parent.size)

    @property
    def num_infosets(self) -> int:
        """Information sets of all seats."""
        return len(self.keys)

    def sizes(self) -> TreeSizes:
        """Histories by kind and information sets by seat."""
        return {
            "histories": self.num_histories,
            "decision_histories": int((self.player >= 0).sum()),
            "terminal_histories": int((self.player == -4).sum()),
            "chance_histories": int((self.player == -1).sum()),
            "infosets": self.num_infosets,
            "infosets_per_seat": np.bincount(self.infoset_player, minlength=self.num_players).tolist(),
            "sequences": int(self.seq_action.size),
        }

    def uniform(self) -> np.ndarray:
        """``(S,)`` the uniform random policy of every seat."""
        counts = np.diff(self.seq_start)
        return 1.0 / counts[self.seq_infoset]

    def from_openspiel(self, tabular: TabularPolicy) -> np.ndarray:
        """``(S,)`` an OpenSpiel ``TabularPolicy`` (looked up by information state string)."""
        rows = np.array([tabular.state_lookup[k] for k in self.keys])
        return tabular.action_probability_array[rows[self.seq_infoset], self.seq_action].astype(np.float64)

    def edge_weights(self, sigma: np.ndarray) -> np.ndarray:
        """``(N,)`` probability of the edge into every history under the policy ``sigma`` (chance's too)."""
        return np.where(self.seq >= 0, sigma[np.maximum(self.seq, 0)], self.weight)

    def reach(self, sigma: np.ndarray) -> np.ndarray:
        """``(N, P + 1)`` every seat's (and, last, chance's) contribution to the probability of each history."""
        w = self.edge_weights(sigma)
        r = np.ones((self.num_histories, self.num_players + 1))
        for a, b in self.levels[1:]:
            r[a:b] = r[self.parent[a:b]]
            r[np.arange(a, b), self._owner[a:b]] *= w[a:b]
        return r


@dataclass
class _Walk:
    """A game's histories in walk order (depth first), with the information sets and sequences met."""

    parent: list[int] = field(default_factory=list)
    player: list[int] = field(default_factory=list)
    weight: list[float] = field(default_factory=list)
    seq: list[int] = field(default_factory=list)
    infoset: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    returns: dict[int, list[float]] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)
    infoset_player: list[int] = field(default_factory=list)
    infoset_depth: list[int] = field(default_factory=list)
    seq_start: list[int] = field(default_factory=lambda: [0])
    seq_action: list[int] = field(default_factory=list)

    def tree(self, n_players: int, start: float) -> GameTree:
        """The histories in depth order (stable) as a :class:`GameTree`; ``start``: when the walk began."""
        depth_arr = np.asarray(self.depth)
        order = np.argsort(depth_arr, kind="stable")
        new = np.empty_like(order)
        new[order] = np.arange(order.size)
        par = np.asarray(self.parent)[order]
        par = np.where(par >= 0, new[np.maximum(par, 0)], -1)
        ret = np.zeros((order.size, n_players))
        for node, value in self.returns.items():
            ret[new[node]] = value
        bounds = np.searchsorted(depth_arr[order], np.arange(depth_arr.max() + 2))
        levels = [(int(a), int(b)) for a, b in itertools.pairwise(bounds.tolist()) if b > a]
        seq_start_arr = np.asarray(self.seq_start)
        return GameTree(
            num_players=n_players,
            parent=par,
            player=np.asarray(self.player)[order],
            weight=np.asarray(self.weight)[order],
            seq=np.asarray(self.seq)[order],
            infoset=np.asarray(self.infoset)[order],
            returns=ret,
            levels=levels,
            keys=self.keys,
            infoset_player=np.asarray(self.infoset_player, dtype=np.int64),
            seq_start=seq_start_arr,
            seq_infoset=np.repeat(np.arange(len(self.keys)), np.diff(seq_start_arr)),
            seq_action=np.asarray(self.seq_action, dtype=np.int64),
            seconds=time.perf_counter() - start,
        )


def build_tree(
    game: pyspiel.Game,
    on_infoset: Callable[[pyspiel.State, int], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> GameTree:
    """Walk every history of ``game`` once (OpenSpiel API only) into a :class:`GameTree`.

    ``on_infoset(state, i)`` is called at the first history met of every information set ``i``;
    ``progress(histories)`` every 2048 histories. Every information set's histories must lie at
    one depth (true of Agurk, whose information states count the cards dealt and played).
    """
    start = time.perf_counter()
    w = _Walk()
    index: dict[str, int] = {}
    stack = [(game.new_initial_state(), -1, -1, 1.0, 0)]
    while stack:
        state, up, edge, prob, d = stack.pop()
        node = len(w.parent)
        w.parent.append(up)
        w.weight.append(prob)
        w.seq.append(edge)
        w.depth.append(d)
        if progress is not None and node % 2048 == 0:
            progress(node)
        if state.is_terminal():
            w.player.append(-4)
            w.infoset.append(-1)
            w.returns[node] = state.returns()
            continue
        if state.is_chance_node():
            w.player.append(-1)
            w.infoset.append(-1)
            children = [(state.child(a), node, -1, p, d + 1) for a, p in state.chance_outcomes()]
        else:
            mover = state.current_player()
            key = state.information_state_string(mover)
            i = index.get(key)
            legal = state.legal_actions()
            if i is None:
                i = index[key] = len(w.keys)
                w.keys.append(key)
                w.infoset_player.append(mover)
                w.infoset_depth.append(d)
                w.seq_action.extend(legal)
                w.seq_start.append(len(w.seq_action))
                if on_infoset is not None:
                    on_infoset(state, i)
            elif w.infoset_depth[i] != d:
                raise ValueError(f"information set {key!r} has histories at depths {w.infoset_depth[i]} and {d}")
            w.player.append(mover)
            w.infoset.append(i)
            base = w.seq_start[i]
            children = [(state.child(a), node, base + k, 1.0, d + 1) for k, a in enumerate(legal)]
        stack.extend(reversed(children))
    return w.tree(game.num_players(), start)
