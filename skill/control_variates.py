"""Chance control variates for the skill study: each round's deal luck taken out without bias (AIVAT-style).

In a focal-vs-field match the field plays the same way every time, so much of what varies
from deal to deal is chance: the hands of every round. Seat rotation balances the first
round's hands but not the later rounds'. AIVAT does the same for poker (Burch et al. 2018):
each round's deal contributes a correction ``V(x) - E[V(x')]``. That is a value estimate on
the state right after the deal, minus its expectation over every deal that could have been
dealt there. Whatever ``V`` is, each correction has mean zero given the past, so the
corrected result ``W - sum of corrections`` has the plain result's expectation.

The value estimate here is the round played out by **the table's own agents** (copies of
them, so the match itself is untouched) from the state right after the deal. Its outcome
has four parts:

- the focal's round penalty over the limit;
- the most any other seat takes, over the limit;
- whether the focal goes out;
- how many other seats go out.

The same round is played on :data:`SAMPLES` other deals, drawn as the engine deals (uniform
from the deck, the same hand sizes). The mean of those is an unbiased estimate of the
outcome's expectation, so each feature, outcome minus mean, has mean zero given the state
before the deal.

The features are the outcome parts times ``(1, s, m)``: ``s`` is the focal's score and ``m``
the highest other score, both over the limit. They are summed over the match's rounds.
**Any** coefficients keep the corrected result unbiased. They are fitted on separate deals
(ridge least squares of the match result on the summed features, :func:`fit`) and applied
to the measured ones (:func:`corrected`).
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agents.tournament import TournamentPlan, table_agents
from agurk_env import engine, seeds
from agurk_env.agent import Agent, act_seats
from agurk_env.matches import DEFAULT_BATCH, play_matches
from agurk_env.rules import Rules

SAMPLES = 8
"""Other deals drawn per round to estimate the expectation of its played-out outcome."""
RIDGE = 1.0
"""The ridge penalty of the coefficients' fit."""
OUTCOMES = 4
"""Parts of a round's outcome (see the module docstring)."""


def cv_settings() -> str:
    """What captured features depend on beyond the matches (redeals per round, outcomes, ridge), for cache keys."""
    return f"{SAMPLES}-{OUTCOMES}-{RIDGE}"


@dataclass
class Captured:
    """Per deal, averaged over the seat rotations: the focal's win share and its summed chance features."""

    win: np.ndarray  # (D,)
    features: np.ndarray  # (D, F)


def redeal(rules: Rules, hands: np.ndarray, copies: int, rng: np.random.Generator, deck: np.ndarray) -> np.ndarray:
    """``(n * copies, P, A)`` uniform deals of ``deck`` (physical cards) with each row's hand sizes (row, then copy)."""
    _, p, a = hands.shape
    sizes = np.repeat(hands.sum(2), copies, axis=0)  # (N, P)
    m = sizes.shape[0]
    cards = deck[np.argsort(rng.random((m, deck.size)), axis=1)]  # (N, d) shuffled physical cards
    ends = np.cumsum(sizes, axis=1)
    seat = (np.arange(deck.size)[None, :, None] >= ends[:, None, :]).sum(2)  # (N, d): P = not dealt
    out = np.zeros((m, p + 1, a), np.int8)
    np.add.at(out, (np.repeat(np.arange(m), deck.size), seat.ravel(), cards.ravel()), 1)
    return out[:, :p]


def play_round(rules: Rules, start: engine.State, agents: Sequence[Agent]) -> np.ndarray:
    """``(B, P)`` round penalties when ``agents`` (one per seat) play the round from ``start`` to its end."""
    penalty = np.zeros(start.round_penalty.shape, np.int64)
    rows, st = np.arange(start.batch), start
    while rows.size:
        st = engine.play(rules, st, act_seats(rules, st, engine.legal_bits(rules, st), agents))
        over = st.round_over
        penalty[rows[over]] = st.round_penalty[over]
        rows = rows[~over]
        st = st.take(np.flatnonzero(~over))
    return penalty


def round_features(
    rules: Rules,
    state: engine.State,
    focal: int,
    agents: Sequence[Agent],
    deck: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """``(B, 3 * OUTCOMES)`` chance features of the deals just made in ``state`` (every game at a round's start)."""
    b, k = state.batch, SAMPLES + 1
    copies = state.take(np.repeat(np.arange(b), k))
    hands = copies.hands.copy()
    hands[np.arange(b * k) % k != 0] = redeal(rules, state.hands, SAMPLES, rng, deck)
    held = ((hands > 0).astype(np.int64) << np.arange(hands.shape[2])).sum(2).astype(copies.held.dtype)
    penalty = play_round(rules, copies._replace(hands=hands, held=held), agents).astype(np.float64)
    limit = float(max(rules.limit, 1))
    total = copies.scores + penalty
    out = total > limit if rules.limit_rule == "exceed" else total >= limit
    others = copies.alive & (np.arange(penalty.shape[1]) != focal)
    values = np.stack(
        [
            penalty[:, focal] / limit,
            np.where(others, penalty, 0).max(1) / limit,
            out[:, focal].astype(np.float64),
            (out & others).sum(1).astype(np.float64),
        ],
        axis=1,
    ).reshape(b, k, OUTCOMES)
    luck = values[:, 0] - values[:, 1:].mean(1)  # (B, OUTCOMES)
    score = state.scores.astype(np.float64) / limit
    rest = np.where(state.alive & (np.arange(score.shape[1]) != focal), score, 0.0)
    scale = np.stack([np.ones(b), score[:, focal], rest.max(1)], axis=1)  # (B, 3)
    return (luck[:, :, None] * scale[:, None, :]).reshape(b, -1)


def capture(plan: TournamentPlan, seed: int, stand_in: bool = False) -> Captured:
    """Play a piece's tournament (``plan``: one agent focal, every rotation), keeping the chance features.

    The matches are the piece's own (the same agents, seeds and deals); the rounds played out
    on other deals are played by a second copy of the table's agents. With ``stand_in`` a copy
    of a field seat's agent plays the focal seat in them: a cheaper value estimate where the
    focal agent is a slow search (any estimate keeps the correction unbiased; a worse one
    narrows less). ``seed`` seeds the deals drawn.
    """
    rng = np.random.default_rng([seed, seeds.CV_DEALS])
    deals = plan.deals
    win = np.zeros(deals)
    features = np.zeros((deals, 3 * OUTCOMES))
    views = plan.design.views
    for t, (rules, packed, table, agent_seed, n, deal_seed, batch, deck) in enumerate(plan.tasks):
        players = table_agents(pickle.loads(packed), table, agent_seed)
        copies = table_agents(pickle.loads(packed), table, agent_seed)
        focals = [int(seat[0]) for v, seat in views if v == t]  # the focal entry's seat in each view of this table
        field = [s for s in range(len(copies)) if s not in focals]
        if stand_in and field:  # (no field seat: the focal agent is the field's own spec, already its stand-in)
            copies = [copies[field[0]]] * len(copies)  # one agent for every seat: asked once per step
        physical = engine.tables(rules).deck if deck is None else np.repeat(np.arange(deck.size), deck)
        for step in play_matches(rules, players, n, deal_seed, min(batch, DEFAULT_BATCH), deck):
            st = step.before
            start = np.flatnonzero((st.trick_no == 0) & (st.npos == 0) & (st.match_id < n))
            if start.size:
                sub = st.take(start)
                for focal in focals:
                    np.add.at(features, sub.match_id, round_features(rules, sub, focal, copies, physical, rng))
            after = step.after
            over = np.flatnonzero(after.match_over & (after.match_id < n))
            if over.size:
                w = after.winners[over]
                for focal in focals:
                    win[after.match_id[over]] += w[:, focal] / np.maximum(w.sum(1), 1)
    return Captured(win / len(views), features / len(views))


def capture_task(progress: object, plan: TournamentPlan, seed: int, stand_in: bool = False) -> Captured:
    """:func:`capture` as a task of :func:`agents.tasks.run_tasks`."""
    return capture(plan, seed, stand_in)


def fit(captured: Sequence[Captured], ridge: float = RIDGE) -> np.ndarray:
    """Coefficients of the match result on the summed features (ridge least squares, on separate deals)."""
    x = np.concatenate([c.features for c in captured])
    y = np.concatenate([c.win for c in captured])
    x_c = x - x.mean(0)
    return np.linalg.solve(x_c.T @ x_c + ridge * np.eye(x.shape[1]), x_c.T @ (y - y.mean()))


def corrected(c: Captured, coef: np.ndarray) -> np.ndarray:
    """Per deal, the win share with the deals' luck taken out (unbiased for any ``coef`` fitted elsewhere)."""
    return c.win - c.features @ coef


def unbiased_check(
    rules: Rules, deck: np.ndarray | None, spec: str, field: str, exact: float, deals: int, fit_deals: int, seed: int
) -> dict[str, object]:
    """The corrected and plain win rate of ``spec`` against ``field`` beside its exact value, on ``deals`` deals.

    The coefficients are fitted on ``fit_deals`` other deals (seed ``seed + 1``). Normal 95%
    intervals: the corrected mean minus the plain one must be zero within its interval (no bias),
    and the corrected interval should cover ``exact``.
    """
    from agents.tournament import plan_tournament

    entries = [spec] + [field] * (rules.players - 1)
    coef = fit([capture(plan_tournament(rules, entries, fit_deals, seed + 1, resamples=1, deck=deck), seed + 1)])
    c = capture(plan_tournament(rules, entries, deals, seed, resamples=1, deck=deck), seed)
    plain, fixed = c.win, corrected(c, coef)

    def interval(x: np.ndarray) -> list[float]:
        half = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
        return [float(x.mean() - half), float(x.mean() + half)]

    return {
        "agent": spec,
        "deals": deals,
        "exact": exact,
        "plain": float(plain.mean()),
        "plain_ci": interval(plain),
        "corrected": float(fixed.mean()),
        "corrected_ci": interval(fixed),
        "difference": float((fixed - plain).mean()),
        "difference_ci": interval(fixed - plain),
        "sd_ratio": float(fixed.std() / plain.std()),
    }
