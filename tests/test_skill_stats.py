"""The skill statistics (skill.stats) on literal tournaments whose answers are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from agents.tournament_stats import SeatStats
from skill.stats import focal_data, skill_stats

P = 4  # players; entry 0 is the focal agent, entries 1..3 the field


def _rotations(win: np.ndarray, place: np.ndarray, penalty: np.ndarray | None = None) -> list[SeatStats]:
    """``P`` rotations of one focal agent's tournament: per deal ``win`` ``(D, P)`` and ``place`` ``(D, P)``."""
    d = win.shape[0]
    pen = np.ones((d, P), np.int64) if penalty is None else penalty
    rounds = np.full((d, P), 10, np.int64)
    return [
        SeatStats(win, pen, rounds, np.zeros((d, P), np.int64), place, np.zeros((d, P, 13), np.int8)) for _ in range(P)
    ]


def _agent(wins: list[int], penalty: int = 10) -> list[SeatStats]:
    """A focal agent that wins (place 0, the field shares place 1) the deals marked 1 and else comes last."""
    w = np.array(wins, float)
    win = np.stack([w, *[(1 - w) / (P - 1)] * (P - 1)], axis=1)
    place = np.where(w[:, None] == 1, [0, 1, 1, 1], [1, 0, 0, 0])
    pen = np.full((len(wins), P), 10, np.int64)
    pen[:, 0] = penalty
    return _rotations(win, place, pen)


def test_relative_skill_and_best_agent_on_fixed_results() -> None:
    # win rates 0.1 (random), 0.3 (a), 0.2 (b), 0.5 (oracle), the same on every deal:
    # RS_win = (0.3 - 0.1) / (0.5 - 0.1) = 0.5, and no resample can move it
    d = 20
    specs = ["random", "a", "b", "oracle"]
    tables = [_agent([1] * k + [0] * (d - k)) for k in (2, 6, 4, 10)]
    for t in tables:  # every deal alike: spread the wins evenly over the deals instead
        for s in t:
            s.win[:, 0] = s.win[:, 0].mean()
    data = focal_data(specs, tables)
    st = skill_stats(data, "random", "oracle", "field", seed=0, resamples=200)
    np.testing.assert_allclose(st.win_rate, [0.1, 0.3, 0.2, 0.5])
    assert st.best_win == "a"
    assert st.rs_win == pytest.approx(0.5)
    assert st.rs_win_ci == pytest.approx((0.5, 0.5))


def test_relative_skill_by_penalty_uses_minus_penalty_per_round() -> None:
    # penalties per round 1.0 (random), 0.5 (a), 0.8 (b), 0.2 (oracle) over 10 rounds a match:
    # RS_penalty = (-0.5 + 1.0) / (-0.2 + 1.0) = 0.625, best by penalty = a
    d = 12
    specs = ["random", "a", "b", "oracle"]
    tables = [_agent([d % 2] * d, penalty=10 * x) for x in (4, 2, 3, 1)]
    for t, per_round in zip(tables, (1.0, 0.5, 0.8, 0.2), strict=True):
        for s in t:
            s.penalty[:, 0] = np.round(per_round * 10).astype(np.int64)
    st = skill_stats(focal_data(specs, tables), "random", "oracle", "field", seed=0, resamples=100)
    np.testing.assert_allclose(-st.result_penalty, [1.0, 0.5, 0.8, 0.2])
    assert st.best_penalty == "a"
    assert st.rs_penalty == pytest.approx(0.625)


def test_skill_share_and_n_star_without_sampling_noise() -> None:
    # real agents (all but the oracle) with win rates 0.1, 0.3, 0.2, constant over deals:
    # var_skill = var([.1, .3, .2], ddof=1) = 0.01, p = 0.2, share = 0.01 / 0.16, N* = 16
    d = 10
    specs = ["random", "a", "b", "oracle"]
    tables = [_agent([0] * d) for _ in specs]
    for t, rate in zip(tables, (0.1, 0.3, 0.2, 0.9), strict=True):
        for s in t:
            s.win[:, 0] = rate
    st = skill_stats(focal_data(specs, tables), "random", "oracle", "field", seed=0, resamples=100)
    assert st.skill_share == pytest.approx(0.0625)
    assert st.n_star == pytest.approx(16.0)
    assert st.n_star_ci == pytest.approx((16.0, 16.0))


def test_equal_agents_show_no_skill() -> None:
    # three real agents drawn alike (win 1/4 of deals at random): their win rates differ by
    # sampling only, so the skill share is about 0 and its interval reaches below 0 (N* unbounded)
    rng = np.random.default_rng(5)
    d = 400
    specs = ["random", "a", "b", "oracle"]
    tables = [_agent(list((rng.random(d) < (0.6 if s == "oracle" else 0.25)).astype(int))) for s in specs]
    st = skill_stats(focal_data(specs, tables), "random", "oracle", "field", seed=0, resamples=400)
    assert abs(st.skill_share) < 0.01
    assert st.skill_share_ci[0] < 0 < st.skill_share_ci[1]
    assert st.n_star_ci[1] is None


def test_upset_rate_counts_the_weaker_finishing_ahead() -> None:
    # agent "a" is stronger than the field (wins 6 of 8 deals, otherwise last): each of its
    # 2 lost deals puts 3 field seats ahead of it in each of 4 rotations -> 2*12 upsets;
    # "random" is weaker (wins 1 of 8): its 1 win puts it ahead of 3 field seats x 4 rotations;
    # the field's own spec is left out. Pairs: 2 agents x 8 deals x 12 = 192; rate = 36 / 192
    specs = ["random", "a", "field", "oracle"]
    tables = [_agent([1] + [0] * 7), _agent([1] * 6 + [0] * 2), _agent([0, 1] * 4), _agent([1] * 8)]
    st = skill_stats(focal_data(specs, tables), "random", "oracle", "field", seed=0, resamples=100)
    assert st.rating[1] > 0 > st.rating[0]
    assert st.upset_rate == pytest.approx(36 / 192)
    low, high = st.upset_rate_ci
    assert low <= st.upset_rate <= high


def test_shared_places_count_half_an_upset() -> None:
    # the focal agent and the field always share one place (every seat out in the same round):
    # every pair is half an upset, whoever is rated stronger
    d = 6
    specs = ["random", "a", "oracle"]
    tie = _rotations(np.full((d, P), 0.25), np.zeros((d, P), np.int64))
    tables = [_agent([0] * d), tie, _agent([1] * d)]
    st = skill_stats(focal_data(specs, tables), "random", "oracle", "field", seed=0, resamples=50)
    # random (always last, weaker) has no upsets; a ties: 12 halves per deal
    assert st.upset_rate == pytest.approx((0 + 0.5 * 12 * d) / (2 * 12 * d))


def test_rating_spread_is_strongest_minus_weakest_real_agent() -> None:
    d = 30
    specs = ["random", "a", "b", "oracle"]
    tables = [_agent([1] * k + [0] * (d - k)) for k in (3, 12, 7, 25)]
    st = skill_stats(focal_data(specs, tables), "random", "oracle", "field", seed=0, resamples=100)
    real = st.rating[:3]
    assert st.rating_spread == pytest.approx(real.max() - real.min())
    assert np.argmax(st.rating) == 3 and np.argmin(st.rating) == 0  # ratings follow the win counts
    low, high = st.rating_spread_ci
    assert low < st.rating_spread < high


def test_same_seed_same_statistics_and_other_seed_other_intervals() -> None:
    rng = np.random.default_rng(1)
    d = 50
    specs = ["random", "a", "b", "oracle"]
    tables = [_agent(list((rng.random(d) < q).astype(int))) for q in (0.05, 0.3, 0.2, 0.6)]
    data = focal_data(specs, tables)
    a = skill_stats(data, "random", "oracle", "field", seed=3, resamples=100)
    b = skill_stats(data, "random", "oracle", "field", seed=3, resamples=100)
    c = skill_stats(data, "random", "oracle", "field", seed=4, resamples=100)
    assert a.rs_win_ci == b.rs_win_ci and a.n_star_ci == b.n_star_ci
    assert a.rs_win == c.rs_win and a.rs_win_ci != c.rs_win_ci


def test_the_fictive_player_tops_relative_skill_and_cheating_agents_are_not_real() -> None:
    # win rates 0.1 (random), 0.3 (a), 0.2 (b), 0.6 (oracle: cheats, not real), 0.5 (the fictive player):
    # best real = a; RS = (0.3 - 0.1) / (0.5 - 0.1) = 0.5 = learning 0.2 / (learning 0.2 + random effect 0.2)
    d = 20
    specs = ["random", "a", "b", "oracle", "fictive"]
    tables = [_agent([1] * k + [0] * (d - k)) for k in (2, 6, 4, 12, 10)]
    for t in tables:
        for s in t:
            s.win[:, 0] = s.win[:, 0].mean()
    st = skill_stats(focal_data(specs, tables), "random", "fictive", "field", 0, 100, cheating=("oracle",))
    assert st.best_win == "a" and st.rs_win == pytest.approx(0.5)
    assert st.learning_win == pytest.approx(0.2) and st.random_win == pytest.approx(0.2)
    assert st.learning_win_ci == pytest.approx((0.2, 0.2)) and st.random_win_ci == pytest.approx((0.2, 0.2))
    assert st.skill_share == pytest.approx(np.var([0.1, 0.3, 0.2], ddof=1) / (0.2 * 0.8))  # real: random, a, b
