"""Duplicate-deal tournaments: per-entry win rate, penalty, last-trick rate and a Plackett-Luce rating.

``tournament(rules, ["guard", "random", "random", "random"], deals, seed)`` plays every
deal (match number ``m`` of ``seed``, ``m < deals``) once at every **table** of a seating
design: a table puts each entry (its position in the list) in one seat. All tables use the
same seed, so match ``m`` is dealt the same deck at each of them (round 1 gives seat ``s``
the same hand at every table; later rounds shuffle the same deck, dealt to the seats still
in). ``deals`` counts deals: ``deals * tables`` matches are played.

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

The agents of table ``t`` of ``n`` (for spec entries) are ``make_agent(spec,
agent_seed(seed, n, t), seat)``, and seats with the same spec then share the first such
seat's agent object (so it is asked once per step for all of them, which is faster and
keeps runs reproducible). With ``cyclic`` that is ``seed * P + r``, as before seatings
existed; a table of one entry against a field of another (the skill report's) is the same
under every design, so it plays the same matches.

An entry may also be an agent object (``act`` and a ``spec`` string, its label). The
entries are pickled together once, and every table, in this process or a spawned
worker, plays a fresh unpickled copy: the object passed in is never played, and its
state (a generator, say) starts alike at every table, so the numbers do not depend
on ``workers``. An object must therefore pickle (its class importable by module name,
no lambdas, locks or open files); one that does not raises ``TypeError``. Agents that ask
for the table (``meet_table``: the fictive player) are told every seat's agent
(:func:`agents.registry.introduce`).

Statistics, per entry, over every seating (95% percentile bootstrap over deals: deal indices
are resampled with replacement, all seatings of a deal together, with
``np.random.default_rng([seed, BOOTSTRAP_TAG])``):

- ``win_rate``: matches won, a win shared by ``k`` winners counting ``1/k`` (under
  ``match_end=first_out`` a round that puts every seat out ends the match with no winner);
- ``mean_penalty``: penalty points per round played (rounds after going out do not count);
- ``last_trick_rate``: share of the rounds played in which the entry "took" the last
  trick: under ``scoring=last_trick`` it scored a penalty in the round (so with
  ``last_trick_ties=all`` every tied seat counts) or won the trick; under
  ``every_trick`` it won the last trick;
- ``rating``: a maximum-likelihood (damped Newton) Plackett-Luce fit to the finishing
  orders (winners first, then seats by the round they went out, latest first; seats
  out in the same round tie, Breslow's rule), with a weak prior of one virtual win and
  one virtual loss against a reference of rating 0 per entry (it keeps an entry that
  never wins finite). Scale: Elo-like, ``rating = 400 * log10(strength)``, centred so
  the entries' ratings sum to 0; an entry ``D`` points above another finishes ahead
  of it with probability ``1 / (1 + 10 ** (-D / 400))``.

With ``unit="round"`` the same matches are scored round by round (the agents play and
observe exactly as above; a round counts for the seats dealt into it):

- ``win_rate``: the round win rate, rounds won per round played: a round is won by the
  seats with its lowest round penalty, ``k`` of them counting ``1/k`` each;
- ``mean_penalty`` and ``last_trick_rate``: as above (they are per round played already);
- ``rating``: the Plackett-Luce fit to every round's order by round penalty, lowest
  first, equal penalties tied (seats not in the round take no part);
- the bootstrap still resamples deals, each with all the rounds of all its seatings
  (rounds of one match are not independent: scores carry over and seats go out).

The matches are played by :func:`agurk_env.matches.play_matches`, the loop behind
:func:`agurk_env.simulate.simulate` (same agents and deals), keeping only these
per-match numbers, not game records: building records costs about ten times the play.
"""

from __future__ import annotations

import functools
import itertools
import math
import pickle
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, get_args

import numpy as np

from agents.registry import introduce, make_agent
from agents.tasks import LOCAL, Backend, TaskProgress, run_tasks
from agurk_env import engine
from agurk_env.agent import Agent
from agurk_env.matches import DEFAULT_BATCH, play_matches
from agurk_env.rules import Rules, check_choice

BOOTSTRAP_TAG = 0xB007
"""Second word of the bootstrap generator's seed (so it never shares a stream with an agent)."""
RATING_SCALE = 400.0 / np.log(10.0)
"""Rating points per unit of log-strength (Elo's scale)."""
_WIN_KEY = 1 << 30  # place key of the winners: above every round number
Unit = Literal["match", "round"]
UNITS: tuple[str, ...] = get_args(Unit)
"""What a tournament scores: whole matches (the default) or single rounds (see the module docstring)."""
Entry = str | Agent
"""A tournament entry: a registered agent spec (``"guard"``, ``"pimc:worlds=32"``) or an agent object."""
Seating = Literal["auto", "permutations", "balanced", "cyclic"]
SEATINGS: tuple[str, ...] = get_args(Seating)
"""Seating designs (see the module docstring)."""
MAX_PERMUTATIONS = 24
"""``auto`` plays every distinct arrangement of the entries up to this many (all 24 at 4 players), else ``balanced``."""


@dataclass
class SeatStats:
    """Per-match numbers of one run, by seat; arrays indexed ``[match, seat]``."""

    win: np.ndarray  # (N, P) float: 1/k for each of k winners, else 0 (all 0 in a match nobody wins)
    penalty: np.ndarray  # (N, P) int: penalty points over the match
    rounds: np.ndarray  # (N, P) int: rounds the seat played
    last: np.ndarray  # (N, P) int: rounds in which the seat took the last trick
    place: np.ndarray  # (N, P) int: finishing level, 0 = winners, ties share a level
    hands: np.ndarray  # (N, P, A) int8: round-1 hands (to check that deals are duplicates)
    round_place: np.ndarray | None = None  # (Q, P) int: each round's levels (round_places); None only if built by hand
    round_match: np.ndarray | None = None  # (Q,) int: match number of each round of round_place

    def by_entry(self, seat: np.ndarray) -> SeatStats:
        """The same numbers by entry, entry ``i`` having sat in seat ``seat[i]``."""
        by_seat = {f.name: getattr(self, f.name) for f in fields(self)}
        return SeatStats(**{k: v if v is None or v.ndim == 1 else v[:, seat] for k, v in by_seat.items()})


def places(winners: np.ndarray, out_round: np.ndarray) -> np.ndarray:
    """``(M, P)`` finishing levels: 0 for the winners, then by the round a seat went out, latest first.

    ``out_round`` is the round number a seat went out in (``-1``: never). Seats with the
    same key share a level; levels are dense (0, 1, 2, ...).
    """
    key = np.where(winners, _WIN_KEY, out_round)
    ordered = -np.sort(-key, axis=1)
    first = np.ones(ordered.shape, bool)
    first[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return ((ordered[:, None, :] > key[:, :, None]) & first[:, None, :]).sum(2)


def round_places(penalty: np.ndarray, in_round: np.ndarray) -> np.ndarray:
    """``(Q, P)`` finishing levels of rounds: 0 for the lowest round penalty, then by penalty; ``-1``: not in it.

    Seats with the same penalty share a level; levels are dense, as in :func:`places`.
    """
    key = np.where(in_round, -penalty.astype(np.int64), np.iinfo(np.int64).min)
    return np.where(in_round, places(np.zeros(key.shape, bool), key), -1)


def seat_stats(
    rules: Rules,
    agents: Sequence[Agent],
    n_matches: int,
    seed: int,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[int], Any] | None = None,
) -> SeatStats:
    """Play matches ``0..n_matches-1`` of ``seed`` with one agent per seat; return their :class:`SeatStats`.

    The matches are played by :func:`agurk_env.matches.play_matches` (the loop behind
    ``simulate``), keeping only these numbers. ``progress(n_done)`` is called as matches end.
    """
    sp = engine.tables(rules)
    n, p, h, a = n_matches, sp.players, sp.hand_size, sp.actions
    every_trick = rules.scoring == "every_trick"
    res = SeatStats(
        win=np.zeros((n, p)),
        penalty=np.zeros((n, p), np.int64),
        rounds=np.zeros((n, p), np.int64),
        last=np.zeros((n, p), np.int64),
        place=np.zeros((n, p), np.int64),
        hands=np.zeros((n, p, a), np.int8),
    )
    slots = min(batch, n)
    penalty = np.zeros((slots, p), np.int64)
    rounds = np.zeros((slots, p), np.int64)
    last = np.zeros((slots, p), np.int64)
    out_round = np.full((slots, p), -1, np.int64)
    round_place: list[np.ndarray] = []
    round_match: list[np.ndarray] = []
    done = 0
    for step in play_matches(rules, agents, n, seed, batch):
        if step.kept is not None:
            penalty, rounds, last, out_round = (x[step.kept] for x in (penalty, rounds, last, out_round))
        state = step.after
        ended = np.flatnonzero(state.round_over)
        if not ended.size:
            continue
        first = ended[(state.round_no[ended] == 0) & (state.match_id[ended] < n)]
        if first.size:  # round 1's hands, rebuilt from the cards each seat played
            res.hands[state.match_id[first]] = engine.cards_played(rules, state.take(first), by_seat=True)
        pen = state.round_penalty[ended].astype(np.int64)
        in_round = state.tricks[ended, 0, :] >= 0
        penalty[ended] += pen
        rounds[ended] += in_round
        counted = state.match_id[ended] < n
        round_place.append(round_places(pen[counted], in_round[counted]))
        round_match.append(state.match_id[ended[counted]])
        took = np.zeros((ended.size, p), bool)
        took[np.arange(ended.size), state.trick_winner[ended, h - 1]] = True
        if not every_trick:
            took |= pen > 0
        last[ended] += took
        out_round[ended] = np.where(state.out_now[ended], state.round_no[ended, None], out_round[ended])
        over = np.flatnonzero(state.match_over)
        if over.size:
            ids = state.match_id[over]
            keep, ids = over[ids < n], ids[ids < n]
            winners = state.winners[keep]
            res.win[ids] = winners / np.maximum(winners.sum(1, keepdims=True), 1)  # no winner: 0 each
            res.penalty[ids], res.rounds[ids], res.last[ids] = penalty[keep], rounds[keep], last[keep]
            res.place[ids] = places(winners, out_round[keep])
            for acc in (penalty, rounds, last):
                acc[over] = 0
            out_round[over] = -1
            done += ids.size
            if progress is not None and ids.size:
                progress(done)
    res.round_place, res.round_match = np.concatenate(round_place), np.concatenate(round_match)
    return res


def agent_seed(seed: int, tables: int, table: int) -> int:
    """The ``make_agent`` seed of table ``table`` of ``tables``: ``seed * tables + table`` (one per table and seed)."""
    return seed * tables + table


# ----------------------------------------------------------------------------- seatings


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
        views = [(r, (np.arange(p) + r) % p) for r in range(p)]
        return Seatings("cyclic", [kind[_inverse(seat)] for _, seat in views], views)
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


# ----------------------------------------------------------------------------- statistics


@dataclass
class Stages:
    """The Plackett-Luce choice stages of a set of finishing orders, compressed to distinct stages.

    A stage is one level of one finishing order (all but the last level): its ``chosen``
    entries finish ahead of the rest of its ``risk`` set (the entries not yet placed).
    """

    chosen: np.ndarray  # (S, E) bool
    risk: np.ndarray  # (S, E) bool
    counts: np.ndarray  # (N, S) float: how often each deal contains each stage


def stages(place: np.ndarray, deal: np.ndarray, n_deals: int) -> Stages:
    """Compress finishing levels ``(M, E)`` of matches from deals ``deal`` ``(M,)`` into :class:`Stages`."""
    e = place.shape[1]
    bits = 1 << np.arange(e)
    level = np.arange(e)[None, :, None]  # (1, L, 1)
    chosen = place[:, None, :] == level  # (M, L, E)
    risk = place[:, None, :] >= level
    active = chosen.any(2) & (place[:, None, :] > level).any(2)  # a level with someone below it
    code = (risk @ bits) * (1 << e) + chosen @ bits  # (M, L)
    codes, col = np.unique(code[active], return_inverse=True)
    deal_of = np.broadcast_to(deal[:, None], active.shape)[active]
    counts = np.bincount(deal_of * codes.size + col, minlength=n_deals * codes.size).reshape(n_deals, codes.size)
    members = ((codes[:, None] >> np.arange(2 * e)) & 1).astype(bool)
    return Stages(members[:, :e], members[:, e:], counts.astype(np.float64))


def _pl_objective(theta: np.ndarray, chosen: np.ndarray, risk: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(R,)`` penalized Plackett-Luce log-likelihood of log-strengths ``theta`` ``(R, E)``."""
    size = chosen.sum(1)
    top = theta.max(1, keepdims=True)
    log_total = np.log(np.exp(theta - top) @ risk.T) + top  # (R, S)
    ll = (weights * (theta @ chosen.T - size * log_total)).sum(1)
    return ll + (theta - 2.0 * np.logaddexp(0.0, theta)).sum(1)


def fit_plackett_luce(
    chosen: np.ndarray, risk: np.ndarray, weights: np.ndarray, tol: float = 1e-9, max_iter: int = 100
) -> np.ndarray:
    """Log-strengths ``(R, E)`` maximizing the penalized likelihood of ``R`` weightings ``(R, S)`` of the stages.

    The objective is ``sum_s w_s [sum_{i in C_s} theta_i - |C_s| log sum_{j in R_s} exp(theta_j)]``
    (Plackett-Luce with Breslow's rule for ties) plus, per entry, one virtual win and one
    virtual loss against a reference of log-strength 0, which makes it strictly concave.
    Damped Newton steps (halved until the objective does not fall), all ``R`` fits at once.
    """
    chosen_f, risk_f = chosen.astype(np.float64), risk.astype(np.float64)
    size = chosen_f.sum(1)
    r, e = weights.shape[0], chosen.shape[1]
    wins = weights @ chosen_f + 1.0  # (R, E): stage wins plus the virtual win
    ws = weights * size  # (R, S)
    theta = np.zeros((r, e))
    value = _pl_objective(theta, chosen_f, risk_f, weights)
    eye = np.eye(e)
    for _ in range(max_iter):
        gamma = np.exp(theta - theta.max(1, keepdims=True))
        share = risk_f[None] * gamma[:, None, :]  # (R, S, E)
        share /= share.sum(2, keepdims=True)
        prior = 1.0 / (1.0 + np.exp(-theta))  # virtual games: d/dtheta of -2 log(1 + e^theta)
        weighted = share * ws[:, :, None]
        expected = weighted.sum(1)  # (R, E) expected stage wins
        grad = wins - expected - 2.0 * prior
        hess = weighted.transpose(0, 2, 1) @ share - expected[:, :, None] * eye
        hess -= (2.0 * prior * (1.0 - prior))[:, :, None] * eye
        step = -np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        t = np.ones((r, 1))
        for _ in range(40):
            trial = _pl_objective(theta + t * step, chosen_f, risk_f, weights)
            worse = trial < value - 1e-12 * np.abs(value)
            if not worse.any():
                break
            t[worse] *= 0.5
        else:
            t[worse] = 0.0  # no ascent found along the step: stay
            trial = np.where(worse, value, trial)
        theta, value = theta + t * step, trial
        if np.abs(t * step).max() < tol:
            break
    return theta


def ratings(theta: np.ndarray) -> np.ndarray:
    """Log-strengths to Elo-like ratings centred on the entries' mean (see :data:`RATING_SCALE`)."""
    return RATING_SCALE * (theta - theta.mean(-1, keepdims=True))


@dataclass
class EntryStats:
    """One entry's statistics and their 95% bootstrap intervals."""

    spec: str
    win_rate: float
    win_rate_ci: tuple[float, float]
    mean_penalty: float
    mean_penalty_ci: tuple[float, float]
    last_trick_rate: float
    last_trick_rate_ci: tuple[float, float]
    rating: float
    rating_ci: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (intervals as ``[low, high]`` lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


def deal_resamples(seed: int, n_deals: int, resamples: int, chunk: int = 1000) -> Iterator[np.ndarray]:
    """The bootstrap over deals: ``(r, n_deals)`` float counts of each deal in each resample, in chunks.

    ``resamples`` resamples in all, at most ``chunk`` per array; the generator is
    ``np.random.default_rng([seed, BOOTSTRAP_TAG])``, so the same seed resamples alike.
    """
    rng = np.random.default_rng([seed, BOOTSTRAP_TAG])
    chunk = max(1, min(chunk, resamples))
    for start in range(0, resamples, chunk):
        r = min(chunk, resamples - start)
        picks = rng.integers(0, n_deals, size=(r, n_deals)) + (np.arange(r) * n_deals)[:, None]
        yield np.bincount(picks.ravel(), minlength=r * n_deals).reshape(r, n_deals).astype(np.float64)


def round_wins(stats: SeatStats) -> np.ndarray:
    """``(N, P)`` rounds won per match: the ``k`` seats with a round's lowest penalty get ``1/k`` of it each."""
    n, p = stats.win.shape
    top = stats.round_place == 0
    share = top / top.sum(1, keepdims=True)
    slot = (stats.round_match[:, None] * p + np.arange(p)).ravel()
    return np.bincount(slot, share.ravel(), minlength=n * p).reshape(n, p)


def summarize(
    specs: Sequence[str], by_seating: Sequence[SeatStats], seed: int, resamples: int = 1000, unit: Unit = "match"
) -> list[EntryStats]:
    """Per-entry statistics from each seating's :class:`SeatStats` (by entry: ``by_entry``), per ``unit``."""
    check_choice("unit", unit, UNITS)
    n, e = by_seating[0].win.shape
    penalty = sum(s.penalty for s in by_seating).astype(np.float64)
    rounds = sum(s.rounds for s in by_seating).astype(np.float64)
    last = sum(s.last for s in by_seating).astype(np.float64)
    if unit == "match":
        win = sum(s.win for s in by_seating) / len(by_seating)  # (N, E) per deal
        place = np.concatenate([s.place for s in by_seating])
        deal = np.tile(np.arange(n), len(by_seating))
    else:
        win = sum(round_wins(s) for s in by_seating)
        place = np.concatenate([s.round_place for s in by_seating])
        deal = np.concatenate([s.round_match for s in by_seating])
    st = stages(place, deal, n)
    table = np.concatenate([win, penalty, rounds, last, st.counts], axis=1)  # (N, 4E + S)

    def estimates(sums: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """``(R, 4, E)``: win rate, mean penalty, last-trick rate, rating from column sums ``(R, 4E + S)``."""
        w, pen, rnd, lst = (sums[:, i * e : (i + 1) * e] for i in range(4))
        return np.stack([w / n if unit == "match" else w / rnd, pen / rnd, lst / rnd, ratings(theta)], axis=1)

    full = table.sum(0, keepdims=True)
    point = estimates(full, fit_plackett_luce(st.chosen, st.risk, full[:, 4 * e :]))[0]
    boot = []
    for counts in deal_resamples(seed, n, resamples, chunk=4_000_000 // max(n, st.chosen.size)):
        sums = counts @ table
        boot.append(estimates(sums, fit_plackett_luce(st.chosen, st.risk, sums[:, 4 * e :])))
    low, high = np.percentile(np.concatenate(boot), [2.5, 97.5], axis=0)
    out = []
    for i, spec in enumerate(specs):
        values = {}
        for k, name in enumerate(("win_rate", "mean_penalty", "last_trick_rate", "rating")):
            values[name] = float(point[k, i])
            values[f"{name}_ci"] = (float(low[k, i]), float(high[k, i]))
        out.append(EntryStats(spec=spec, **values))
    return out


# ----------------------------------------------------------------------------- tournament


@dataclass
class TournamentResult:
    """A finished tournament: its settings, the per-entry statistics and the raw per-table numbers."""

    rules: Rules
    specs: list[str]
    """The entries' labels: the spec strings, and ``agent.spec`` for agent objects."""
    seed: int
    deals: int
    batch: int
    resamples: int
    unit: Unit
    entries: list[EntryStats]
    seating: Seatings
    """The seating design played (:func:`seatings`)."""
    tables: list[SeatStats]
    """Per table played, the per-match numbers by seat."""

    @property
    def by_seating(self) -> list[SeatStats]:
        """Per seating counted, the per-match numbers by entry (what the statistics are computed from)."""
        return [self.tables[t].by_entry(seat) for t, seat in self.seating.views]

    @property
    def rounds_played(self) -> int:
        """Rounds played at all tables (each round counted once, however many seats it had)."""
        return sum(s.round_match.size for s in self.tables)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` object: ``rules``, ``seed``, ``matches`` (deals), ``unit``, ``entries`` and the settings."""
        return {
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "matches": self.deals,
            "deals": self.deals,
            "seating": self.seating.design,
            "tables": len(self.tables),
            "seatings": len(self.seating.views),
            "matches_played": self.deals * len(self.tables),
            "rounds_played": self.rounds_played,
            "unit": self.unit,
            "batch": self.batch,
            "bootstrap_resamples": self.resamples,
            "rating_scale": "Elo-like: 400*log10(Plackett-Luce strength), centred to sum 0",
            "entries": [{"entry": i, **e.to_dict()} for i, e in enumerate(self.entries)],
        }


def parse_entries(spec_string: str, players: int) -> list[str]:
    """Split ``SPEC,SPEC,...``; raise ``ValueError`` unless there is exactly one non-empty spec per seat."""
    specs = [s.strip() for s in spec_string.split(",")]
    if any(not s for s in specs):
        raise ValueError(f"empty agent spec in {spec_string!r}")
    if len(specs) != players:
        raise ValueError(f"--agents needs exactly one spec per seat: {len(specs)} given for {players} players")
    return specs


def label(entry: Entry) -> str:
    """An entry's name in the results: the spec itself, or the agent object's ``spec``."""
    return entry if isinstance(entry, str) else entry.spec


def pack_entries(entries: Sequence[Entry], players: int, seed: int) -> bytes:
    """Check the entries and pickle them together (every table plays a fresh copy; see :func:`tournament`).

    Raises ``ValueError`` unless there is one entry per seat, ``agents.registry.AgentSpecError``
    for a bad spec (each is built once), ``TypeError`` for an object that is not an agent or
    cannot be pickled.
    """
    if len(entries) != players:
        raise ValueError(f"need exactly one entry per seat: {len(entries)} given for {players} players")
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            make_agent(entry, seed, i)
        elif not (callable(getattr(entry, "act", None)) and isinstance(getattr(entry, "spec", None), str)):
            raise TypeError(f"entry {i} is neither an agent spec nor an agent (act() and a str spec): {entry!r}")
    try:
        return pickle.dumps(list(entries))
    except (pickle.PicklingError, TypeError, AttributeError):
        for i, entry in enumerate(entries):
            try:
                pickle.dumps(entry)
            except (pickle.PicklingError, TypeError, AttributeError) as err:
                raise TypeError(
                    f"tournament entry {i} ({label(entry)!r}) cannot be pickled ({err}); every table plays a "
                    "pickled copy of an agent object, also in worker processes: define its class at module level "
                    "and keep no lambdas, locks or open files in it, or enter a registered spec"
                ) from None
        raise


def table_agents(entries: Sequence[Entry], table: np.ndarray, seed: int) -> list[Agent]:
    """The seats' agents at one table: seat ``s`` plays entry ``table[s]``, its agents seeded by ``seed``.

    A spec entry in seat ``s`` is ``make_agent(spec, seed, s)``, and seats with the same spec
    share the first such seat's agent (one call per step); an object entry sits as it is (the
    same object in two seats is one agent, asked once per step). Every agent that asks is told
    the table (:func:`agents.registry.introduce`).
    """
    first: dict[str, Agent] = {}
    agents = []
    for s, i in enumerate(table):
        entry = entries[i]
        if isinstance(entry, str) and entry not in first:
            first[entry] = make_agent(entry, seed, s)
        agents.append(first[entry] if isinstance(entry, str) else entry)
    return introduce(agents)


def play_table(
    rules: Rules,
    entries: Sequence[Entry],
    table: np.ndarray,
    agent_seed: int,
    deals: int,
    seed: int,
    batch: int,
    progress: Callable[[int], Any] | None = None,
) -> SeatStats:
    """Play one table of a tournament (seat ``s``: entry ``table[s]``): its :class:`SeatStats`, by seat."""
    agents = table_agents(entries, table, agent_seed)
    return seat_stats(rules, agents, deals, seed, batch=batch, progress=progress)


def _table_task(
    progress: TaskProgress,
    rules: Rules,
    packed: bytes,
    table: np.ndarray,
    agent_seed: int,
    deals: int,
    seed: int,
    batch: int,
) -> SeatStats:
    """One table as a task of :func:`agents.tasks.run_tasks`: a fresh copy of the entries plays it."""
    try:
        entries = pickle.loads(packed)
    except (AttributeError, ImportError) as err:
        raise RuntimeError(
            f"a tournament worker process cannot load the agent objects ({err}): their classes must be importable "
            "by module name (not defined in an interactive session or notebook); or use workers=1"
        ) from None
    return play_table(rules, entries, table, agent_seed, deals, seed, batch, progress)


PARALLEL_MIN_MATCHES = 4000
"""Tournaments with fewer matches than this (deals x players) run in one process on the local backend, whatever
``workers``."""


def tournament(
    rules: Rules,
    specs: Sequence[Entry],
    deals: int,
    seed: int,
    batch: int = DEFAULT_BATCH,
    resamples: int = 1000,
    progress: Callable[[int], Any] | None = None,
    workers: int = 1,
    unit: Unit = "match",
    backend: Backend = LOCAL,
    seating: Seating = "auto",
) -> TournamentResult:
    """Play ``deals`` duplicate deals at every table of the ``seating`` design of ``specs`` (one per seat); summarize.

    An entry is a registered spec or an agent object. Every table plays a fresh copy of
    the objects (all pickled together once, so the object passed in is never played or
    changed, and its state, e.g. a generator, starts alike at every table and in every process);
    an object that cannot be pickled raises ``TypeError``. ``unit`` is what the statistics
    count, ``"match"`` or ``"round"`` (see the module docstring); the play is the same.
    ``seating`` is ``"auto"``, ``"permutations"``, ``"balanced"`` or ``"cyclic"`` (see the
    module docstring). ``progress(n_done)`` counts matches over all tables (``deals * tables``).
    Each table is one task of :func:`agents.tasks.run_tasks` on ``backend``: with the
    local backend and ``workers > 1`` (and at least :data:`PARALLEL_MIN_MATCHES` matches) the
    tables run in that many spawned worker processes, on ``Backend("ray")`` as Ray tasks
    (``workers`` CPUs if it starts a local Ray instance); the workers must be able to import the
    objects' classes, and the numbers are the same on every backend. A table that fails
    every retry raises :class:`agents.tasks.TaskError`. Entries are checked
    (``agents.registry.AgentSpecError`` for a bad spec) before anything is played.
    """
    p = rules.players
    check_choice("unit", unit, UNITS)
    check_choice("seating", seating, SEATINGS)
    if deals < 1 or resamples < 1 or workers < 1 or seed < 0:
        raise ValueError(
            f"deals, resamples and workers must be >= 1 and seed >= 0, not {deals}, {resamples}, {workers} and {seed}"
        )
    packed = pack_entries(specs, p, seed)
    labels = [label(entry) for entry in specs]
    design = seatings(specs, seating)
    n = len(design.tables)
    if backend.kind == "local" and deals * n < PARALLEL_MIN_MATCHES:
        workers = 1
    tables = run_tasks(
        _table_task,
        [(rules, packed, table, agent_seed(seed, n, t), deals, seed, batch) for t, table in enumerate(design.tables)],
        min(workers, n),
        backend,
        names=[
            f"tournament table {t} (seats: {', '.join(labels[i] for i in table)})"
            for t, table in enumerate(design.tables)
        ],
        on_progress=None if progress is None else (lambda units, stages: progress(int(sum(units)))),
    )
    result = TournamentResult(rules, labels, seed, deals, batch, resamples, unit, [], design, tables)
    result.entries = summarize(labels, result.by_seating, seed, resamples, unit)
    return result
