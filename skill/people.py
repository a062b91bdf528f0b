"""People on the leaderboard: a person rated from their own finishing orders against the leaderboard's agents.

A person's matches (``agurk serve``'s duplicate games, read by the application and handed over as
:class:`PersonMatches`) were played at the leaderboard's table against its agents. The person gets
the rating of the leaderboard's Plackett-Luce model (:func:`agents.tournament_stats.fit_plackett_luce`:
Breslow's rule for ties, one virtual win and one virtual loss against the reference of
log-strength 0) that maximizes the likelihood of their finishing orders with every agent's
log-strength held at the leaderboard's fit: the agents are not refitted, and their ratings do not
move. The stages of a match in which the person is no longer at risk do not depend on the
person's strength, so only the stages up to the person's level count.

The 95% interval is a percentile bootstrap: resample ``b`` draws the person's matches with
replacement and pairs them with the agents' log-strengths of the leaderboard's bootstrap resample
``b`` (over its deals), so the interval holds the noise of both.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agents.tournament_stats import BOOTSTRAP_TAG, RATING_SCALE

PREFIX = "person:"
"""A person's spec on the leaderboard: ``person:NAME``."""
BISECTIONS = 100
"""Bisection steps of the one-dimensional fit (from a bracket 400 log-strength units wide: far below 1e-12)."""


@dataclass(frozen=True)
class PersonMatches:
    """One person's matches at the leaderboard's table: per match, every seat's agent and finishing level."""

    name: str
    seats: list[list[str | None]]
    """Per match, each seat's agent spec (one of the leaderboard's), ``None`` at the person's seat."""
    places: list[list[int]]
    """Per match, each seat's finishing level: 0 for the winners, then later levels, ties sharing one."""


@dataclass(frozen=True)
class RatedPerson:
    """A person's rating on the leaderboard's scale, its 95% interval, and the matches behind it."""

    name: str
    matches: int
    rating: float
    low: float
    high: float

    @property
    def spec(self) -> str:
        """The person's name on the leaderboard: ``person:NAME``."""
        return PREFIX + self.name


def check_person(specs: Sequence[str], players: int, person: PersonMatches) -> None:
    """Raise ``ValueError`` (one line) unless every match seats the person once and agents of ``specs`` elsewhere."""
    if not person.seats or len(person.seats) != len(person.places):
        raise ValueError(f"{PREFIX}{person.name}: give the seats and places of at least one match")
    for seats, place in zip(person.seats, person.places, strict=True):
        if len(seats) != players or len(place) != players or seats.count(None) != 1:
            raise ValueError(f"{PREFIX}{person.name}: a match needs {players} seats, the person at one of them")
        unknown = sorted({s for s in seats if s is not None and s not in specs})
        if unknown:
            raise ValueError(f"{PREFIX}{person.name}: {', '.join(unknown)} not among the leaderboard's agents")


def person_stages(specs: Sequence[str], person: PersonMatches) -> tuple[np.ndarray, ...]:
    """The stages with the person at risk: ``(match, chosen, size, agents)``.

    Per stage: its match ``(K,)``, whether the person is among its chosen ``(K,)``, how many are
    chosen ``(K,)``, and how many seats of each agent are at risk with the person ``(K, N)``.
    """
    index = {s: i for i, s in enumerate(specs)}
    match, chosen, size, agents = [], [], [], []
    for m, (seats, place) in enumerate(zip(person.seats, person.places, strict=True)):
        me = seats.index(None)
        agent_at = {s: spec for s, spec in enumerate(seats) if spec is not None}  # every seat but the person's
        for level in range(min(place[me], max(place) - 1) + 1):  # a level with someone below it is a stage
            at_risk = [s for s, p in enumerate(place) if p >= level]
            match.append(m)
            chosen.append(place[me] == level)
            size.append(sum(place[s] == level for s in at_risk))
            agents.append(np.bincount([index[agent_at[s]] for s in at_risk if s != me], minlength=len(specs)))
    shape = (len(match), len(specs))
    return np.array(match, int), np.array(chosen, float), np.array(size, float), np.array(agents, float).reshape(shape)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` without overflow."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def fit_person(stages: tuple[np.ndarray, ...], theta: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The person's log-strength ``(R,)`` for agents' log-strengths ``theta`` ``(R, N)`` and match weights ``(R, M)``.

    It maximizes ``sum_s w_s [c_s t - n_s log(e^t + sum_a k_sa e^theta_a)] + t - 2 log(1 + e^t)``, the
    leaderboard's penalized likelihood in the person's log-strength ``t`` alone: strictly concave, so the
    root of its decreasing derivative, found by bisection (it lies within 200 of the agents' range).
    """
    match, chosen, size, agents = stages
    top = theta.max(1, keepdims=True)
    log_rest = np.log(np.exp(theta - top) @ agents.T) + top  # (R, K)
    w = weights[:, match]
    low, high = theta.min(1) - 200.0, theta.max(1) + 200.0
    for _ in range(BISECTIONS):
        t = 0.5 * (low + high)
        grad = (w * (chosen - size * _sigmoid(t[:, None] - log_rest))).sum(1) + 1.0 - 2.0 * _sigmoid(t)
        low, high = np.where(grad > 0, t, low), np.where(grad > 0, high, t)
    return 0.5 * (low + high)


def match_resamples(seed: int, name: str, matches: int, resamples: int) -> np.ndarray:
    """``(resamples, matches)`` counts of each of a person's matches in each bootstrap resample.

    The generator is ``np.random.default_rng([seed, BOOTSTRAP_TAG, crc32(name)])``: a person's
    interval depends on their own matches and the seed, not on who else is rated.
    """
    rng = np.random.default_rng([seed, BOOTSTRAP_TAG, zlib.crc32(name.encode())])
    picks = rng.integers(0, matches, size=(resamples, matches)) + (np.arange(resamples) * matches)[:, None]
    return np.bincount(picks.ravel(), minlength=resamples * matches).reshape(resamples, matches).astype(np.float64)


def rate_person(
    specs: Sequence[str], theta: np.ndarray, boot: np.ndarray, person: PersonMatches, seed: int
) -> RatedPerson:
    """Rate ``person`` against agents ``specs`` of log-strengths ``theta`` ``(N,)`` and bootstrap ``boot`` ``(R, N)``.

    The rating is on the leaderboard's scale (centred on the agents' mean, never moving it); the
    interval pairs resample ``r`` of the person's matches with the agents' resample ``r``.
    """
    stages = person_stages(specs, person)
    matches = len(person.seats)
    point = fit_person(stages, theta[None], np.ones((1, matches)))[0]
    again = fit_person(stages, boot, match_resamples(seed, person.name, matches, boot.shape[0]))
    low, high = np.percentile(RATING_SCALE * (again - boot.mean(1)), [2.5, 97.5])
    return RatedPerson(person.name, matches, float(RATING_SCALE * (point - theta.mean())), float(low), float(high))
