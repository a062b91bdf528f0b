"""Skill statistics of one variant from its focal-vs-field tournaments, with a joint bootstrap over deals.

Every ladder agent played the same duplicate deals as the focal entry against the same
field (``[agent, field, field, ...]``, every seating). :func:`focal_data` keeps, per
agent and deal, what the statistics need; :func:`skill_stats` computes them on all
deals and on bootstrap resamples of the deals, **the same resample for every agent**
(deals are common, so the agents' numbers are compared on the same luck):

- ``rs_win`` / ``rs_penalty``: relative skill (Borm and van der Genugten),
  ``(R_best - R_random) / (R_fictive - R_random)``, ``R`` the focal result (win rate,
  or minus the mean penalty per round), ``best`` the strongest *real* agent: neither
  random nor a cheating one (the fictive player and the other agents that see hidden
  cards), chosen on all deals, then fixed in the resamples;
- ``learning_win`` / ``learning_penalty``: the learning effect ``R_best - R_random``
  (what skill buys over a beginner), and ``random_win`` / ``random_penalty``: the random
  effect ``R_fictive - R_best`` (what knowing every card would add: the gap from the best
  real agent to the fictive player); ``RS = learning / (learning + random)``. By penalty
  both are penalty points per round saved;
- ``skill_share``: the share of one match's outcome variance that is skill,
  ``var_skill / (p (1 - p))``; ``var_skill`` is the variance of the real agents' win
  rates (``ddof=1``) minus their mean sampling variance, ``p`` their mean win rate;
  ``n_star = 1 / skill_share`` is the number of matches after which the spread of skill
  equals the spread of luck (``None``: skill not above zero);
- ``rating_spread``: the Plackett-Luce rating (Elo scale, each agent against the field)
  of the strongest real agent minus the weakest's;
- ``upset_rate``: over every (focal agent, field seat) pair at the same table where one
  is rated stronger, how often the weaker finished ahead (a shared place counts half).

Intervals are 95% percentile intervals of the bootstrap (``n_star``'s are mapped from
``skill_share``'s, so they agree).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from agents.tournament_stats import RATING_SCALE, SeatStats, Stages, deal_resamples, fit_plackett_luce, stages


@dataclass
class FocalData:
    """Per ladder agent (``K``) and deal (``D``), the focal entry's numbers summed over seatings."""

    specs: list[str]
    win: np.ndarray  # (K, D) mean share of wins over the seatings
    penalty: np.ndarray  # (K, D) penalty points
    rounds: np.ndarray  # (K, D) rounds played
    field_ahead: np.ndarray  # (K, D) field seats that finished ahead of the focal (shared place: 1/2)
    pairs: int  # (focal, field seat) pairs per deal: seatings x (players - 1)
    stages: list[Stages]  # per agent, the Plackett-Luce stages of its table


def focal_data(specs: Sequence[str], by_seating: Sequence[Sequence[SeatStats]]) -> FocalData:
    """:class:`FocalData` from each agent's tournament ``by_seating`` (entry 0 the focal agent)."""
    win, penalty, rounds, ahead, st = [], [], [], [], []
    for seatings in by_seating:
        n = seatings[0].win.shape[0]
        win.append(sum(s.win[:, 0] for s in seatings) / len(seatings))
        penalty.append(total(s.penalty[:, 0] for s in seatings).astype(np.float64))
        rounds.append(total(s.rounds[:, 0] for s in seatings).astype(np.float64))
        place = [s.place for s in seatings]
        ahead.append(sum(((pl[:, 1:] < pl[:, :1]) + 0.5 * (pl[:, 1:] == pl[:, :1])).sum(1) for pl in place))
        st.append(stages(np.concatenate(place), np.tile(np.arange(n), len(seatings)), n))
    pairs = len(by_seating[0]) * (by_seating[0][0].win.shape[1] - 1)
    w, p, r, a = (np.stack(x) for x in (win, penalty, rounds, ahead))
    return FocalData(list(specs), w, p, r, a, pairs, st)


def total(arrays: Iterable[np.ndarray]) -> np.ndarray:
    """The sum of ``arrays`` (at least one), as ``sum`` adds them."""
    out = sum(arrays)
    assert isinstance(out, np.ndarray)
    return out


@dataclass
class SkillStats:
    """One variant's skill statistics (see the module docstring); ``*_ci`` are ``(low, high)``."""

    win_rate: np.ndarray  # (K,) focal win rate per agent
    result_penalty: np.ndarray  # (K,) minus mean penalty per round
    rating: np.ndarray  # (K,) Plackett-Luce rating against the field
    rating_ci: np.ndarray  # (K, 2)
    best_win: str
    best_penalty: str
    rs_win: float | None
    rs_win_ci: tuple[float | None, float | None]
    rs_penalty: float | None
    rs_penalty_ci: tuple[float | None, float | None]
    learning_win: float
    learning_win_ci: tuple[float | None, float | None]
    random_win: float
    random_win_ci: tuple[float | None, float | None]
    learning_penalty: float
    learning_penalty_ci: tuple[float | None, float | None]
    random_penalty: float
    random_penalty_ci: tuple[float | None, float | None]
    skill_share: float | None
    skill_share_ci: tuple[float | None, float | None]
    n_star: float | None
    n_star_ci: tuple[float | None, float | None]
    rating_spread: float
    rating_spread_ci: tuple[float | None, float | None]
    upset_rate: float
    upset_rate_ci: tuple[float | None, float | None]


def _relative_skill(result: np.ndarray, best: int, random: int, fictive: int) -> np.ndarray:
    """``(R_best - R_random) / (R_fictive - R_random)`` per row of ``result`` ``(R, K)``; NaN where undefined."""
    span = result[:, fictive] - result[:, random]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(span > 0, (result[:, best] - result[:, random]) / span, np.nan)


def _finite(x: float) -> float | None:
    """JSON-friendly: ``None`` for NaN or infinity."""
    return float(x) if np.isfinite(x) else None


def _interval(samples: np.ndarray) -> tuple[float | None, float | None]:
    """95% percentile interval of the finite samples (``None`` ends when there are none)."""
    ok = samples[np.isfinite(samples)]
    if not ok.size:
        return None, None
    low, high = np.percentile(ok, [2.5, 97.5])
    return float(low), float(high)


def skill_share(win: np.ndarray, sampling: np.ndarray) -> np.ndarray:
    """Per row, the share of one match's outcome variance that is skill: ``var_skill / (p (1 - p))`` (NaN: undefined).

    ``win`` ``(R, K)``: the real agents' win rates; ``sampling`` ``(R, K)``: the variance of
    each of those means over deals (its per-deal variance over the deals), taken off the spread.
    """
    p = win.mean(1)
    var_skill = win.var(1, ddof=1) - sampling.mean(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p * (1 - p) > 0, var_skill / (p * (1 - p)), np.nan)


def inverse(x: float | None) -> float | None:
    """``1 / x`` for a positive ``x``, else ``None`` (unbounded): N* from the skill share."""
    return 1.0 / float(x) if x is not None and np.isfinite(x) and x > 0 else None


def _estimates(data: FocalData, real: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Every statistic for deal weights ``counts`` ``(R, D)`` (each row sums to ``D``); ``real``: the real agents."""
    n = data.win.shape[1]
    win = counts @ data.win.T / n  # (R, K)
    result_penalty = -(counts @ data.penalty.T) / (counts @ data.rounds.T)
    second = counts @ (data.win**2).T / n
    share = skill_share(win[:, real], (second - win**2)[:, real] / (n - 1))
    theta = [fit_plackett_luce(st.chosen, st.risk, counts @ st.counts) for st in data.stages]
    rating = np.stack([RATING_SCALE * (t[:, 0] - t[:, 1:].mean(1)) for t in theta], axis=1)  # (R, K)
    return {"win": win, "penalty": result_penalty, "share": share, "rating": rating}


def _stats(
    point: dict[str, np.ndarray],
    values: np.ndarray,
    intervals: list[tuple[float | None, float | None]],
    rating_ci: np.ndarray,
    best_win: str,
    best_penalty: str,
) -> SkillStats:
    """The :class:`SkillStats` of the point estimates, the derived ``values`` (see ``derived``) and their intervals."""
    rs_win_ci, rs_penalty_ci, share_ci, spread_ci, upset_ci, *effects = intervals
    share_low, share_high = share_ci
    return SkillStats(
        win_rate=point["win"],
        result_penalty=point["penalty"],
        rating=point["rating"],
        rating_ci=rating_ci,
        best_win=best_win,
        best_penalty=best_penalty,
        rs_win=_finite(values[0]),
        rs_win_ci=rs_win_ci,
        rs_penalty=_finite(values[1]),
        rs_penalty_ci=rs_penalty_ci,
        learning_win=float(values[5]),
        learning_win_ci=effects[0],
        random_win=float(values[6]),
        random_win_ci=effects[1],
        learning_penalty=float(values[7]),
        learning_penalty_ci=effects[2],
        random_penalty=float(values[8]),
        random_penalty_ci=effects[3],
        skill_share=_finite(values[2]),
        skill_share_ci=share_ci,
        n_star=inverse(values[2]),
        n_star_ci=(inverse(share_high), inverse(share_low)),
        rating_spread=float(values[3]),
        rating_spread_ci=spread_ci,
        upset_rate=float(values[4]),
        upset_rate_ci=upset_ci,
    )


def skill_stats(
    data: FocalData,
    random: str,
    fictive: str,
    field: str,
    seed: int,
    resamples: int = 1000,
    cheating: Sequence[str] = (),
    best: tuple[str, str] | None = None,
) -> SkillStats:
    """The skill statistics of one variant; ``random``, ``fictive``, ``field`` and ``cheating`` name ladder specs.

    ``fictive`` is the fictive player (the top of relative skill); it and the ``cheating``
    agents (which see hidden cards too) are not real agents. ``best`` fixes the best real
    agents (by win rate, by penalty) instead of choosing them on these deals.
    """
    specs = data.specs
    k, n = data.win.shape
    i_random, i_fictive = specs.index(random), specs.index(fictive)
    real = np.array([i != i_fictive and specs[i] not in cheating for i in range(k)])
    candidates = real & (np.arange(k) != i_random)
    upset_agents = real & np.array([s != field for s in specs])

    point = {key: value[0] for key, value in _estimates(data, real, np.ones((1, n))).items()}
    if best is None:
        best_win = int(np.flatnonzero(candidates)[np.argmax(point["win"][candidates])])
        best_penalty = int(np.flatnonzero(candidates)[np.argmax(point["penalty"][candidates])])
    else:
        best_win, best_penalty = (specs.index(s) for s in best)
    stronger = point["rating"] > 0  # than the field
    upsets = np.where(stronger[:, None], data.field_ahead, data.pairs - data.field_ahead)[upset_agents]  # (U, D)
    pair_total = data.pairs * n * max(int(upset_agents.sum()), 1)

    def derived(est: dict[str, np.ndarray], counts: np.ndarray) -> np.ndarray:
        """``(R, 9)``: RS (win, penalty), skill share, rating spread, upset rate, then the effects.

        The learning and random effects by win rate, then by penalty (points per round saved).
        """
        rating = est["rating"][:, real]
        win, pen = est["win"], est["penalty"]
        return np.stack(
            [
                _relative_skill(win, best_win, i_random, i_fictive),
                _relative_skill(pen, best_penalty, i_random, i_fictive),
                est["share"],
                rating.max(1) - rating.min(1),
                (counts @ upsets.T).sum(1) / pair_total,
                win[:, best_win] - win[:, i_random],
                win[:, i_fictive] - win[:, best_win],
                pen[:, best_penalty] - pen[:, i_random],
                pen[:, i_fictive] - pen[:, best_penalty],
            ],
            axis=1,
        )

    values = derived({key: value[None] for key, value in point.items()}, np.ones((1, n)))[0]
    boot, boot_rating = [], []
    for counts in deal_resamples(seed, n, resamples, chunk=max(1, 2_000_000 // max(n * k, 1))):
        est = _estimates(data, real, counts)
        boot.append(derived(est, counts))
        boot_rating.append(est["rating"])
    samples = np.concatenate(boot)
    rating_ci = np.percentile(np.concatenate(boot_rating), [2.5, 97.5], axis=0).T
    intervals = [_interval(samples[:, j]) for j in range(9)]
    return _stats(point, values, intervals, rating_ci, specs[best_win], specs[best_penalty])
