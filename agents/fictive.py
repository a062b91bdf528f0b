"""The fictive player: the exact best response that sees every card, to the table's actual opponents.

Relative skill (Borm and van der Genugten) measures a real player against the **fictive
player**: the one who knows every chance outcome (here: every hand) and plays optimally
against the same opponents. :class:`Fictive` is that player for one round at a time.

**Search.** At a decision of its seat (the *focal* seat) it reads the true deal and
enumerates every line of its own cards to the end of the round, exactly: a tree over the
focal's choices only, in which the other seats are played by **their actual agent
objects**, asked on copies of the engine state (:func:`best_response`). All games of a
decision and all branches are one batch: each step asks every agent once for all the
states where it is to move and plays one card in every state with :func:`engine.play`.
The rules are the engine's (``legal_bits``, ``play``); a mover with one legal card plays it
without being asked (any agent would). A heuristic is asked without a
:class:`~agurk_env.agent.Decision` (:meth:`agents.heuristics.Heuristic.cards`: its strategy on the
whole batch's facts, or its compiled loop, ``guard``'s, the skill report's field); a focal card
that is forced in every state leaves the batch in place. The opponents must be deterministic for that to be
exact: an agent is simulated when it is a :class:`~agents.heuristics.Heuristic` or says
``deterministic = True`` (its card a function of the state it is shown). The best line's
later decisions are kept (keyed by a 64-bit hash of the state, a card checked legal before
use, dropped once used), so a round is searched once per seat and followed while the
opponents play as predicted, which they do; the card is the one a new search would give.

**Objective.** Lexicographic, the least first, on the round's end (``objective``); a seat's
*cost* of the round is its round penalty, or in lives mode whether it lost a life:

- ``"match"`` (default): (1) the focal seat stays in the match, (2) its least cost, (3) as
  many other seats as possible go out this round, (4) the most cost for the others
  together (lives mode: then the least own penalty). A round's line also decides who is
  knocked out; this order weighs that only where the own cost is equal.
- ``"knockout"``: (2) and (3) swapped: other seats out before the own cost (it pays
  penalty to knock a seat out; that wins more matches under every-trick scoring, fewer
  under last-trick scoring, where a match lasts many rounds).
- ``"round"``: (1) the least own round penalty, (2) the most penalty for the others: the
  round's best response, whose penalty is never above any other agent's on the same
  deal, seat and opponents.

Every objective is one round at a time: later rounds are not searched. Equal lines go to
the lowest card (action order). **Fallback**: where some other seat still in the match is
not deterministic (``random``, ``pimc``, another fictive player, a sampling policy) or the
table is unknown, the decision is the ``fallback`` agent's (the
registry gives the maxN oracle, ``oracle``: the exact solver's card on the true deal,
which is **not** a best response to those opponents); :attr:`Fictive.counts` tallies both.

**The table.** The agent learns its opponents from :meth:`Fictive.meet_table`, called with
every seat's agent object by whoever seats them (``agents.registry.make_agents`` and the
tournament's seatings do, through ``agents.registry.introduce``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from agents.heuristics import Heuristic, table_of
from agurk_env import engine, seeds
from agurk_env.agent import Agent, Decision
from agurk_env.options import check
from agurk_env.rules import Rules

Objective = Literal["match", "knockout", "round"]
"""What the best response optimises (see the module docstring)."""
OBJECTIVES: tuple[str, ...] = get_args(Objective)


@dataclass(frozen=True)
class FictiveOptions:
    """The options of ``fictive``."""

    objective: Objective = "match"
    """match: stay in, then the least own penalty, then others out; knockout: others out first; round: least penalty."""

    def __post_init__(self) -> None:
        check(self)


CHUNK = 128
"""Games searched together: the tree's states of that many games at a time (memory stays bounded)."""
PLAN_LIMIT = 1 << 20
"""Most kept decisions of best lines (each is dropped when used); beyond it all are dropped (and searched again)."""
_HASH = np.random.default_rng(seeds.STATE_KEYS).integers(1, 1 << 63, size=256, dtype=np.uint64) | np.uint64(1)
"""Odd multipliers of :func:`state_keys` (fixed, so keys are the same in every process)."""


def simulable(agent: Agent) -> bool:
    """Whether the best response may simulate ``agent``: a heuristic, or an agent that says it is deterministic."""
    return isinstance(agent, Heuristic) or getattr(agent, "deterministic", False) is True


def state_keys(state: engine.State, games: np.ndarray | None = None) -> np.ndarray:
    """uint64 hashes of the positions of ``games`` (all by default): hands, the round's tricks, mover, match, round."""
    games = np.arange(state.batch) if games is None else games
    b = games.size
    raw = np.concatenate([state.hands[games].reshape(b, -1), state.tricks[games].reshape(b, -1)], axis=1)
    with np.errstate(over="ignore"):
        key = raw.astype(np.uint64) @ _HASH[: raw.shape[1]]
        key += (state.cur[games].astype(np.uint64) + np.uint64(8) * state.round_no[games].astype(np.uint64)) * _HASH[-1]
        key += state.match_id[games].astype(np.uint64) * _HASH[-2]
        key ^= key >> np.uint64(31)
        key *= np.uint64(0x94D049BB133111EB)
        return key ^ (key >> np.uint64(29))


def objective_values(
    rules: Rules, state: engine.State, games: np.ndarray, focal: np.ndarray, objective: Objective
) -> np.ndarray:
    """int64 value of the ended round of each of ``games`` for its ``focal`` seat, lexicographic as one number.

    Less is better; the module docstring gives each objective's order. A seat's *cost* of the
    round is its round penalty, or in lives mode whether it lost a life (then the penalty
    breaks ties last).
    """
    rows, p = np.arange(games.size), rules.players
    pen = state.round_penalty[games].astype(np.int64)
    gone = state.out_now[games].astype(np.int64)
    own, out = pen[rows, focal], gone[rows, focal]
    span = int(engine.tables(rules).points.max()) * rules.hand_size + 1  # above any one seat's round penalty
    others_out = gone.sum(1) - out
    if rules.lives:
        cost, others_cost, cost_span = (own > 0).astype(np.int64), (pen > 0).sum(1) - (own > 0), p
    else:
        cost, others_cost, cost_span = own, pen.sum(1) - own, p * span
    levels = {  # (value, its range), most significant first
        "round": [(own, span), (p * span - 1 - (pen.sum(1) - own), p * span)],
        "match": [(out, 2), (cost, cost_span), (p - 1 - others_out, p), (cost_span - 1 - others_cost, cost_span)],
        "knockout": [(out, 2), (p - 1 - others_out, p), (cost, cost_span), (cost_span - 1 - others_cost, cost_span)],
    }[objective]
    if rules.lives and objective != "round":
        levels.append((own, span))
    value = np.zeros(games.size, np.int64)
    for level, size in levels:
        value = value * size + level
    return value


class Tree:
    """The search tree of :func:`best_response`: nodes (the focal seat to move) and edges (its cards)."""

    def __init__(self) -> None:
        self.node_edge: list[np.ndarray] = []  # the edge each node hangs from (-1: a root)
        self.node_depth: list[np.ndarray] = []
        self.node_key: list[np.ndarray] = []
        self.edge_node: list[np.ndarray] = []
        self.edge_card: list[np.ndarray] = []
        self.leaf_edge: list[np.ndarray] = []
        self.leaf_value: list[np.ndarray] = []
        self.nodes = 0
        self.edges = 0

    def add_nodes(self, edge: np.ndarray, depth: np.ndarray, key: np.ndarray) -> np.ndarray:
        """New nodes under ``edge``; returns their ids."""
        self.node_edge.append(edge)
        self.node_depth.append(depth)
        self.node_key.append(key)
        ids = np.arange(self.nodes, self.nodes + edge.size)
        self.nodes += edge.size
        return ids

    def add_edges(self, node: np.ndarray, card: np.ndarray) -> np.ndarray:
        """New edges (``node`` plays ``card``); returns their ids."""
        self.edge_node.append(node)
        self.edge_card.append(card)
        ids = np.arange(self.edges, self.edges + node.size)
        self.edges += node.size
        return ids

    def solve(self, roots: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """Back the leaves' values up: ``(root edge nodes, cards, values)`` of the roots' edges, and the best lines.

        The best lines are ``(keys, cards)``: every node below a root on its best line (the
        least value, the lowest card among equals) with the card chosen there.
        """
        node_edge, depth, key = (np.concatenate(x) for x in (self.node_edge, self.node_depth, self.node_key))
        edge_node, edge_card = np.concatenate(self.edge_node), np.concatenate(self.edge_card)
        big = np.iinfo(np.int64).max
        edge_value = np.full(self.edges, big)
        edge_value[np.concatenate(self.leaf_edge)] = np.concatenate(self.leaf_value)
        node_value = np.full(self.nodes, big)
        edge_depth = depth[edge_node]
        for d in range(int(depth.max()), -1, -1):
            at = edge_depth == d
            np.minimum.at(node_value, edge_node[at], edge_value[at])
            below = np.flatnonzero((depth == d) & (node_edge >= 0))
            edge_value[node_edge[below]] = node_value[below]
        best = np.full(self.nodes, self.edges)
        ids = np.flatnonzero(edge_value == node_value[edge_node])
        np.minimum.at(best, edge_node[ids], ids)  # edges of a node are made in card order: the lowest card
        on_line = np.zeros(self.nodes, bool)
        on_line[:roots] = True
        for d in range(1, int(depth.max()) + 1):
            at = np.flatnonzero(depth == d)
            parent = edge_node[node_edge[at]]
            on_line[at] = on_line[parent] & (best[parent] == node_edge[at])
        line = np.flatnonzero(on_line & (depth > 0))
        first = edge_depth == 0
        return edge_node[first], edge_card[first], edge_value[first], (key[line], edge_card[best[line]])


def _ask(
    rules: Rules,
    pool: engine.State,
    bits: np.ndarray,
    rows: np.ndarray,
    table: Sequence[Agent],
    group: np.ndarray,
    groups: list[int],
) -> np.ndarray:
    """The cards of the movers in ``rows`` of ``pool``: a single legal card unasked, else its seat's agent's.

    A :class:`~agents.heuristics.Heuristic` is asked without a :class:`Decision`
    (:meth:`~agents.heuristics.Heuristic.cards`, the same card as its ``act``; tested), the
    :func:`agents.heuristics.table_of` of the whole pool made once for all of them.
    """
    legal = bits if rows.size == bits.size else bits[rows]
    cards = engine.KTH_MEMBER[legal, 0].astype(np.int64)
    free = engine.SET_SIZE[legal] > 1
    if not free.any():
        return cards
    owner = group[pool.cur[rows]] if len(groups) > 1 else None
    facts = functools.cache(lambda: table_of(rules, pool, pool.hands[np.arange(pool.batch), pool.cur]))
    for g in groups:
        at = np.flatnonzero(free if owner is None else free & (owner == g))
        if at.size:
            agent = table[g]
            if not simulable(agent):
                raise ValueError(f"the best response cannot simulate agent {agent.spec!r}: it is not deterministic")
            games = rows[at]
            if isinstance(agent, Heuristic):
                chosen = agent.cards(rules, pool, bits, games, facts)
            else:
                chosen = np.asarray(agent.act(Decision(rules, pool, games, bits[games])), dtype=np.int64)
            if chosen.shape != games.shape or ((bits[games] >> chosen) & 1 != 1).any():
                raise ValueError(f"agent {agent.spec!r} chose an illegal card in the best response's search")
            cards[at] = chosen
    return cards


def _take(state: engine.State, rows: np.ndarray) -> engine.State:
    """``state.take(rows)`` for an index array: the same copies, without building a dict of the fields."""
    return engine.State._make(f.take(rows, axis=0) if isinstance(f, np.ndarray) else f for f in state)


def best_response(
    rules: Rules, roots: engine.State, table: Sequence[Agent], objective: Objective = "match"
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Every legal card's value for the player to move in each game of ``roots``, and the best lines' decisions.

    ``table[s]`` plays seat ``s`` in the simulation (every seat but the mover's must be
    :func:`simulable`). Returns ``values`` ``(k, A)`` int64 (the best line's
    :func:`objective_values` after each card; the int64 maximum where not legal) and
    ``plan``, two ``(n,)`` arrays: the :func:`state_keys` of the later decisions on the best lines
    and the card chosen at each.
    """
    k, a = roots.batch, rules.num_actions
    first = {id(agent): seat for seat, agent in reversed(list(enumerate(table)))}
    group = np.array([first[id(agent)] for agent in table])  # each seat's agent, by its first seat
    movers = set(roots.cur.tolist())
    others = {group[s] for s in range(len(table)) if s not in movers}
    groups = sorted(others if len(movers) == 1 and len(others) == 1 else set(group.tolist()))
    tree = Tree()
    pool = roots
    row_focal = roots.cur.astype(np.int64)
    row_edge = np.full(k, -1)
    row_depth = np.full(k, -1)
    while True:
        bits = engine.legal_bits(rules, pool)
        mine = pool.cur == row_focal
        if mine.any():
            focal_rows, other_rows = np.flatnonzero(mine), np.flatnonzero(~mine)
        else:
            focal_rows, other_rows = None, np.arange(pool.batch)
        cards = _ask(rules, pool, bits, other_rows, table, group, groups)
        if focal_rows is not None:
            depth = row_depth[focal_rows] + 1
            keys = state_keys(pool, focal_rows) if tree.nodes else np.zeros(focal_rows.size, np.uint64)  # roots: none
            nodes = tree.add_nodes(row_edge[focal_rows], depth, keys)
            parent, card = np.nonzero(engine.unpack(bits[focal_rows], a))
            edges = tree.add_edges(nodes[parent], card)
            if parent.size == focal_rows.size:  # every focal card forced: each row stays where it is
                move = np.empty(pool.batch, np.int64)
                move[other_rows], move[focal_rows] = cards, card
                row_edge[focal_rows], row_depth[focal_rows] = edges, depth
                pool = engine.play(rules, pool, move, donate=pool is not roots)
            else:
                rows = np.concatenate([other_rows, focal_rows[parent]])
                row_edge = np.concatenate([row_edge[other_rows], edges])
                row_depth = np.concatenate([row_depth[other_rows], depth[parent]])
                row_focal = row_focal[rows]
                pool = engine.play(rules, _take(pool, rows), np.concatenate([cards, card]), donate=True)
        else:
            pool = engine.play(rules, pool, cards, donate=pool is not roots)  # the caller's roots stay untouched
        ended = pool.round_over
        if ended.any():
            done = np.flatnonzero(ended)
            tree.leaf_edge.append(row_edge[done])
            tree.leaf_value.append(objective_values(rules, pool, done, row_focal[done], objective))
            if done.size == pool.batch:
                break
            keep = np.flatnonzero(~ended)
            pool, row_edge, row_depth, row_focal = _take(pool, keep), row_edge[keep], row_depth[keep], row_focal[keep]
    root_of, card, value, plan = tree.solve(k)
    values = np.full((k, a), np.iinfo(np.int64).max)
    values[root_of, card] = value
    return values, plan


class Fictive:
    """The fictive player: the exact best response, seeing every card, to its table (see the module docstring)."""

    sees_all = True

    def __init__(self, fallback: Agent, objective: Objective = "match", spec: str = "fictive") -> None:
        self.fallback, self.objective, self.spec = fallback, FictiveOptions(objective).objective, spec
        self.table: list[Agent] | None = None
        self.counts = {"searched": 0, "planned": 0, "fallback": 0}
        self._keys = np.zeros(0, np.uint64)
        self._cards = np.zeros(0, np.int64)

    def meet_table(self, agents: Sequence[Agent]) -> None:
        """Learn every seat's agent (this one's own seats included): the opponents the search simulates."""
        self.table = list(agents)

    def _searchable(self, d: Decision, truth: engine.State) -> np.ndarray:
        """``(k,)`` bool: the games whose other seats still in are all simulated by their agents."""
        table = self.table
        if table is None or len(table) != d.rules.players:
            return np.zeros(len(d), bool)
        ok = np.array([simulable(agent) and agent is not self for agent in table])
        return (ok[None, :] | ~truth.alive | (np.arange(len(table))[None, :] == d.seat[:, None])).all(1)

    def act(self, d: Decision) -> np.ndarray:
        """The best response's card in every game it can search, the fallback's in the others."""
        choice = np.zeros(len(d), np.int64)
        everything = d.truth
        search = self._searchable(d, everything)
        todo = np.flatnonzero(search)
        if todo.size and self.table is not None:  # (nothing is searchable before meet_table)
            truth = everything.take(todo)
            keys = state_keys(truth)
            at = np.minimum(np.searchsorted(self._keys, keys), max(self._keys.size - 1, 0))
            hit = np.zeros(todo.size, bool)
            if self._keys.size:
                card = self._cards[at]
                hit = (self._keys[at] == keys) & ((d.bits[todo] >> card) & 1 == 1)
                choice[todo[hit]] = card[hit]
                used = np.ones(self._keys.size, bool)
                used[at[hit]] = False  # a decision comes once: its kept card is dropped when used
                self._keys, self._cards = self._keys[used], self._cards[used]
            self.counts["planned"] += int(hit.sum())
            miss = np.flatnonzero(~hit)
            for start in range(0, miss.size, CHUNK):
                part = miss[start : start + CHUNK]
                values, plan = best_response(d.rules, truth.take(part), self.table, self.objective)
                choice[todo[part]] = values.argmin(1)
                self._remember(*plan)
            self.counts["searched"] += miss.size
        rest = np.flatnonzero(~search)
        if rest.size:
            sub = Decision(d.rules, everything, rest, d.bits[rest], sees_all=True)
            choice[rest] = self.fallback.act(sub)
            self.counts["fallback"] += rest.size
        return choice

    def _remember(self, keys: np.ndarray, cards: np.ndarray) -> None:
        """Keep the best lines' decisions (sorted by key for lookups)."""
        if self._keys.size + keys.size > PLAN_LIMIT:
            self._keys, self._cards = self._keys[:0], self._cards[:0]
        keys = np.concatenate([self._keys, keys.astype(np.uint64)])
        cards = np.concatenate([self._cards, cards.astype(np.int64)])
        order = np.argsort(keys, kind="stable")
        self._keys, self._cards = keys[order], cards[order]
