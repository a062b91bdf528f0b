"""The statistics of a duplicate-deal tournament: per-match numbers by seat, bootstrap intervals, ratings.

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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Literal, get_args

import numpy as np

from agurk_env.rules import check_choice

BOOTSTRAP_TAG = 0xB007
"""Second word of the bootstrap generator's seed (so it never shares a stream with an agent)."""
RATING_SCALE = 400.0 / np.log(10.0)
"""Rating points per unit of log-strength (Elo's scale)."""
_WIN_KEY = 1 << 30  # place key of the winners: above every round number
Unit = Literal["match", "round"]
UNITS: tuple[str, ...] = get_args(Unit)
"""What a tournament scores: whole matches (the default) or single rounds (see the module docstring)."""


_PER_ROUND = ("round_place", "round_match")
"""The :class:`SeatStats` fields indexed by round, not by match."""


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

    def split(self, tables: int) -> list[SeatStats]:
        """Games numbered ``t * n + m`` (``n`` matches at each of ``tables`` tables) as one per table."""
        n = self.win.shape[0] // tables
        out = []
        for t in range(tables):
            rows = slice(t * n, (t + 1) * n)
            per_match = {f.name: getattr(self, f.name)[rows] for f in fields(self) if f.name not in _PER_ROUND}
            if self.round_match is None or self.round_place is None:
                out.append(SeatStats(**per_match))
                continue
            mine = self.round_match // n == t
            out.append(
                SeatStats(**per_match, round_place=self.round_place[mine], round_match=self.round_match[mine] - t * n)
            )
        return out

    @staticmethod
    def join(parts: Sequence[SeatStats]) -> SeatStats:
        """Tables' numbers as one run, table ``t``'s match ``m`` numbered ``t * n + m`` (inverse of :meth:`split`)."""
        n = parts[0].win.shape[0]
        names = [f.name for f in fields(SeatStats) if f.name not in _PER_ROUND]
        joined = {name: np.concatenate([getattr(x, name) for x in parts]) for name in names}
        places = [x.round_place for x in parts]
        matches = [x.round_match for x in parts]
        if any(x is None for x in places + matches):
            return SeatStats(**joined)
        match = np.concatenate([m + t * n for t, m in enumerate(matches) if m is not None])
        return SeatStats(**joined, round_place=np.concatenate([x for x in places if x is not None]), round_match=match)

    def per_round(self) -> tuple[np.ndarray, np.ndarray]:
        """``(round_place, round_match)``; :class:`ValueError` for numbers built by hand without them."""
        if self.round_place is None or self.round_match is None:
            raise ValueError("these per-match numbers have no per-round ones (round_place, round_match)")
        return self.round_place, self.round_match

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

    def to_dict(self) -> dict[str, object]:
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
    round_place, round_match = stats.per_round()
    top = round_place == 0
    share = top / top.sum(1, keepdims=True)
    slot = (round_match[:, None] * p + np.arange(p)).ravel()
    return np.bincount(slot, share.ravel(), minlength=n * p).reshape(n, p)


def _total(arrays: Iterable[np.ndarray]) -> np.ndarray:
    """The sum of arrays of one shape, added in order (as the builtin ``sum`` adds them)."""
    it = iter(arrays)
    total = next(it)
    for a in it:
        total = total + a
    return total


def summarize(
    specs: Sequence[str], by_seating: Sequence[SeatStats], seed: int, resamples: int = 1000, unit: Unit = "match"
) -> list[EntryStats]:
    """Per-entry statistics from each seating's :class:`SeatStats` (by entry: ``by_entry``), per ``unit``."""
    check_choice("unit", unit, UNITS)
    n, e = by_seating[0].win.shape
    penalty = _total(s.penalty for s in by_seating).astype(np.float64)
    rounds = _total(s.rounds for s in by_seating).astype(np.float64)
    last = _total(s.last for s in by_seating).astype(np.float64)
    if unit == "match":
        win = _total(s.win for s in by_seating) / len(by_seating)  # (N, E) per deal
        place = np.concatenate([s.place for s in by_seating])
        deal = np.tile(np.arange(n), len(by_seating))
    else:
        win = _total(round_wins(s) for s in by_seating)
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
        value = [float(point[k, i]) for k in range(4)]
        ci = [(float(low[k, i]), float(high[k, i])) for k in range(4)]
        out.append(
            EntryStats(
                spec=spec,
                win_rate=value[0],
                win_rate_ci=ci[0],
                mean_penalty=value[1],
                mean_penalty_ci=ci[1],
                last_trick_rate=value[2],
                last_trick_rate_ci=ci[2],
                rating=value[3],
                rating_ci=ci[3],
            )
        )
    return out
