"""The statistics of a skill study: RS per setting with bootstrap samples, rank intervals, tiers, agreement.

Every number comes with the bootstrap over deals behind it: :func:`relative_skill` keeps its
``resamples`` RS values, so ranks, tiers and the correlation between replications are
computed from the same resamples as the intervals. Agents that played the same deals are
resampled together (their pairing kept); an agent capped at fewer deals is resampled on its
own, which ignores its (positive) correlation with the others and so widens the interval.
Settings are independent samples (each its own rules and deals), so two settings' RS are
compared with a two-sided z-test on their bootstrap standard errors, and tiers control the
family-wise error over all pairs with Holm's step-down correction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from agents.tournament_stats import deal_resamples
from agurk_env import seeds
from skill.stats import skill_share
from skill.study_plan import FICTIVE, RANDOM
from skill.study_play import Piece

ALPHA = 0.05
"""The family-wise error rate of the tiers and the level of every interval (95%)."""


@dataclass
class RS:
    """An estimate in one setting (RS by one measure, or the skill share), its bootstrap samples, what it rests on."""

    value: float
    samples: np.ndarray  # (B,) RS per bootstrap resample (NaN where undefined)
    results: dict[str, float]  # per agent: win rate, or minus the mean penalty per round
    deals: dict[str, int]  # per agent: deals played

    @property
    def ci(self) -> list[float]:
        """The 95% percentile interval."""
        ok = self.samples[np.isfinite(self.samples)]
        return [float(x) for x in np.percentile(ok, [2.5, 97.5])]

    @property
    def halfwidth(self) -> float:
        """Half the 95% interval."""
        low, high = self.ci
        return (high - low) / 2

    @property
    def se(self) -> float:
        """The bootstrap standard error."""
        return float(np.nanstd(self.samples, ddof=1))


Resampled = dict[str, tuple[np.ndarray, ...]]
"""Per agent, its sums on the deals and on each bootstrap resample (:func:`resampled`)."""


def resampled(pieces: Mapping[str, Piece], seed: int, resamples: int) -> Resampled:
    """Per agent: mean win, penalty and rounds sums, mean squared win ``(1 + B,)``: the point, then each resample.

    Agents with as many deals share each resample's deals; another length draws its own
    (a second stream of the same seed).
    """
    out: dict[str, tuple[np.ndarray, ...]] = {}
    lengths = sorted({len(p.win) for p in pieces.values()}, reverse=True)
    for stream, n in enumerate(lengths):
        specs = [s for s, p in pieces.items() if len(p.win) == n]
        sums: dict[str, list[list[np.ndarray]]] = {s: [[], [], [], []] for s in specs}
        for counts in deal_resamples(seed * seeds.RESAMPLE_STRIDE + stream, n, resamples, chunk=max(1, 4_000_000 // n)):
            for s in specs:
                p = pieces[s]
                for k, arr in enumerate((p.win, p.penalty, p.rounds, p.win**2)):
                    sums[s][k].append(counts @ arr)
        for s in specs:
            p = pieces[s]
            win, penalty, rounds, squared = (
                np.concatenate([np.array([arr.sum()]), *sums[s][k]])
                for k, arr in enumerate((p.win, p.penalty, p.rounds, p.win**2))
            )
            out[s] = (win / n, penalty, rounds, squared / n)
    return out


def relative_skill(
    pieces: Mapping[str, Piece],
    best_win: str,
    best_penalty: str,
    seed: int,
    resamples: int,
    sums: Resampled | None = None,
) -> tuple[RS, RS]:
    """RS by win rate and by penalty, ``(R_best - R_random) / (R_fictive - R_random)``, with bootstrap samples.

    ``pieces`` per agent: ``random``, ``fictive`` and the two best fair agents (chosen on other deals).
    ``sums``: their :func:`resampled` sums of this ``seed``, when already drawn.
    """
    sums = resampled(pieces, seed, resamples) if sums is None else sums
    win = {s: v[0] for s, v in sums.items()}
    with np.errstate(divide="ignore", invalid="ignore"):
        pen = {s: -v[1] / v[2] for s, v in sums.items()}

    def rs(result: dict[str, np.ndarray], best: str) -> RS:
        span = result[FICTIVE] - result[RANDOM]
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.where(span > 0, (result[best] - result[RANDOM]) / span, np.nan)
        return RS(
            float(values[0]),
            values[1:],
            {s: float(r[0]) for s, r in result.items()},
            {s: len(p.win) for s, p in pieces.items()},
        )

    return rs(win, best_win), rs(pen, best_penalty)


def share_of_skill(
    pieces: Mapping[str, Piece], best_win: str, seed: int, resamples: int, sums: Resampled | None = None
) -> RS:
    """The skill share of random play and the best fair agent, with bootstrap samples (:func:`skill.stats.skill_share`).

    The real agents here are those two: the share of one match's win/lose variance explained
    by which of them plays (N* is its inverse). ``seed`` as in :func:`relative_skill` draws the same resamples;
    ``sums`` are those resamples when already drawn.
    """
    sums = resampled(pieces, seed, resamples) if sums is None else sums
    real = (RANDOM, best_win)
    win = np.stack([sums[s][0] for s in real], axis=1)
    sampling = np.stack([(sums[s][3] - sums[s][0] ** 2) / (len(pieces[s].win) - 1) for s in real], axis=1)
    share = skill_share(win, sampling)
    return RS(
        float(share[0]),
        share[1:],
        {s: float(sums[s][0][0]) for s in real},
        {s: len(pieces[s].win) for s in real},
    )


def ranks(values: np.ndarray) -> np.ndarray:
    """Ranks along the last axis, 1 = largest (ties: the average rank)."""
    return np.apply_along_axis(lambda v: sps.rankdata(-v), -1, values)


def rank_intervals(samples: np.ndarray) -> list[list[float]]:
    """Per setting, the 95% interval of its rank over the bootstrap resamples ``(B, S)`` (1 = most skill)."""
    r = ranks(np.nan_to_num(samples, nan=-np.inf))
    return [[float(x) for x in np.percentile(r[:, j], [2.5, 97.5])] for j in range(samples.shape[1])]


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation of two vectors."""
    return float(sps.spearmanr(a, b).statistic)


def spearman_interval(samples_a: np.ndarray, samples_b: np.ndarray) -> list[float]:
    """The 95% bootstrap interval of Spearman's correlation between two replications' RS ``(B, S)`` each."""
    rho = [spearman(x, y) for x, y in zip(samples_a, samples_b, strict=True)]
    return [float(x) for x in np.percentile(rho, [2.5, 97.5])]


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error over all of them)."""
    order = np.argsort(pvalues)
    m = len(pvalues)
    adjusted = np.empty(m)
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def pair_pvalues(values: Sequence[float], ses: Sequence[float]) -> np.ndarray:
    """``(S, S)`` two-sided z-test p-values of every pair of independent estimates, Holm-adjusted over all pairs."""
    v, se = np.asarray(values), np.asarray(ses)
    n = len(v)
    i, j = np.triu_indices(n, 1)
    z = np.abs(v[i] - v[j]) / np.sqrt(se[i] ** 2 + se[j] ** 2)
    adjusted = holm(2 * sps.norm.sf(z))
    out = np.zeros((n, n))
    out[i, j] = out[j, i] = adjusted
    return out


def tiers(values: Sequence[float], ses: Sequence[float], alpha: float = ALPHA) -> list[int]:
    """Tier per setting (1 = most skill): sorted by RS, each joins the tier above unless told apart from its top.

    A setting is told apart from another when their Holm-adjusted p-value is below ``alpha``;
    a new tier starts at the first setting told apart from the current tier's first (highest).
    """
    p = pair_pvalues(values, ses)
    order = np.argsort(-np.asarray(values), kind="stable")
    out = [1] * len(order)
    tier, head = 1, order[0]
    for i in order[1:]:
        if p[head, i] < alpha:
            tier, head = tier + 1, i
        out[i] = tier
    return out


def kendall_w(rankings: np.ndarray) -> float:
    """Kendall's W (coefficient of concordance) of ``m`` rankings ``(m, n)`` of the same ``n`` items (no ties)."""
    m, n = rankings.shape
    totals = rankings.sum(0)
    s = ((totals - totals.mean()) ** 2).sum()
    return float(12 * s / (m**2 * (n**3 - n)))
