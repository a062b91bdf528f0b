"""The skill study: its statistics on known cases, the piece cache, and `agurk skill-study` end to end (resumed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agurk.cli import main
from skill import study_stats as st
from skill.study_plan import Allocation, Choice, replication_jobs
from skill.study_play import Piece, PieceCache, PieceJob, Setting, chunk_seed


def piece(win: np.ndarray, penalty: float = 10.0) -> Piece:
    n = len(win)
    return Piece(np.asarray(win, float), np.full(n, penalty), np.full(n, 4.0))


def test_relative_skill_is_the_ratio_of_the_effects_and_its_interval_covers_the_truth() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    pieces = {
        "random": piece(rng.binomial(4, 0.05, n) / 4, 20.0),
        "zoo": piece(rng.binomial(4, 0.45, n) / 4, 12.0),
        "fictive": piece(rng.binomial(4, 0.85, n) / 4, 8.0),
    }
    win, pen = st.relative_skill(pieces, "zoo", "zoo", seed=1, resamples=400)
    truth = (0.45 - 0.05) / (0.85 - 0.05)
    low, high = win.ci
    assert low < truth < high and high - low < 0.05
    assert win.value == pytest.approx(
        (pieces["zoo"].win.mean() - pieces["random"].win.mean())
        / (pieces["fictive"].win.mean() - pieces["random"].win.mean())
    )
    assert pen.value == pytest.approx((-3 + 5) / (-2 + 5))  # penalties per round: 5, 3, 2
    assert win.deals == {"random": n, "zoo": n, "fictive": n}


def test_skill_share_of_random_and_the_best_agent_matches_its_formula_and_covers_the_truth() -> None:
    rng = np.random.default_rng(2)
    n = 6000
    pieces = {"random": piece(rng.binomial(1, 0.1, n)), "zoo": piece(rng.binomial(1, 0.5, n))}
    share = st.share_of_skill(pieces, "zoo", seed=3, resamples=400)
    a, b = pieces["random"].win, pieces["zoo"].win
    p = (a.mean() + b.mean()) / 2
    sampling = (a.var(ddof=1) + b.var(ddof=1)) / (2 * n)
    assert share.value == pytest.approx((np.var([a.mean(), b.mean()], ddof=1) - sampling) / (p * (1 - p)))
    low, high = share.ci
    assert low < 0.08 / 0.21 < high  # true win rates 0.1 and 0.5: var 0.08, p (1 - p) = 0.21
    # no skill difference: the share is about 0, its interval reaches below 0
    same = {"random": piece(rng.binomial(1, 0.3, n)), "zoo": piece(rng.binomial(1, 0.3, n))}
    low, high = st.share_of_skill(same, "zoo", seed=3, resamples=400).ci
    assert low < 0 < high


def test_an_agent_on_fewer_deals_is_resampled_on_its_own() -> None:
    rng = np.random.default_rng(1)
    pieces = {
        "random": piece(np.zeros(800)),
        "pimc": piece(rng.binomial(4, 0.5, 200) / 4),
        "fictive": piece(np.ones(800)),
    }
    win, _ = st.relative_skill(pieces, "pimc", "pimc", seed=0, resamples=300)
    assert win.deals["pimc"] == 200 and np.isfinite(win.samples).all()
    assert 0.8 * 0.5 / np.sqrt(800) < win.se  # the 200 deals set the error, not the 800


def test_holm_adjusts_step_down_and_keeps_the_order() -> None:
    adjusted = st.holm(np.array([0.01, 0.04, 0.03, 0.5]))
    assert adjusted.tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_tiers_split_only_where_the_tests_tell_apart() -> None:
    values = [0.60, 0.59, 0.50, 0.49, 0.30]
    assert st.tiers(values, [0.005] * 5) == [1, 1, 2, 2, 3]
    assert st.tiers(values, [0.2] * 5) == [1, 1, 1, 1, 1]  # nothing told apart: one tier
    assert st.tiers([0.3, 0.6], [0.001, 0.001]) == [2, 1]


def test_kendall_w_is_one_for_equal_rankings_and_zero_for_opposite_pairs() -> None:
    assert st.kendall_w(np.array([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]])) == pytest.approx(1.0)
    assert st.kendall_w(np.array([[1, 2, 3, 4], [4, 3, 2, 1]])) == pytest.approx(0.0)


def test_rank_intervals_and_spearman_from_resamples() -> None:
    samples = np.array([[0.9, 0.5, 0.1], [0.8, 0.6, 0.2], [0.4, 0.7, 0.3]])
    assert st.rank_intervals(samples)[2] == [3.0, 3.0]
    assert st.rank_intervals(samples)[0][1] > 1
    assert st.spearman([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert st.spearman_interval(samples, samples) == [1.0, 1.0]


def test_the_allocation_sizes_deals_for_the_target_within_floor_ceiling_and_caps() -> None:
    a = Allocation(target=0.01, chunk=100, floor=200, ceiling=1000, caps=(("pimc:eval=exact", 250),))
    assert a.deals(Choice("zoo", "zoo", 0.02, 100, "x")) == 400  # (0.02 / 0.01)^2 x 100
    assert a.deals(Choice("zoo", "zoo", 0.001, 100, "x")) == 200  # the floor
    assert a.deals(Choice("zoo", "zoo", 0.5, 100, "x")) == 1000  # the ceiling
    assert a.agent_deals("pimc:eval=exact", 1000) == 200 and a.agent_deals("zoo", 1000) == 1000
    jobs = replication_jobs({Setting("standard"): Choice("pimc:eval=exact", "zoo", 0.02, 100, "x")}, 3, a)
    deals = {spec: sum(j.deals for j in jobs if j.spec == spec) for spec in {j.spec for j in jobs}}
    assert deals == {"random": 400, "pimc:eval=exact": 200, "zoo": 400, "fictive": 400}
    assert {j.seed for j in jobs} == {chunk_seed(3, c) for c in range(4)}  # never seed 0's deals


def test_a_piece_is_cached_under_its_key_and_a_stale_one_is_not_read(tmp_path: Path) -> None:
    cache = PieceCache(tmp_path)
    job = PieceJob(Setting("standard", 3), "random", chunk_seed(1, 0), 4)
    material = cache.material(job, job.plan())
    assert cache.load(job, material) is None
    cache.store(job, material, piece(np.array([0.0, 0.5, 1.0, 0.25])))
    assert cache.load(job, material).win.tolist() == [0.0, 0.5, 1.0, 0.25]
    assert cache.load(job, material.replace("random", "guard")) is None
    assert not list(tmp_path.rglob("*.tmp"))


SMALL = [
    "skill-study",
    "--variants",
    "standard,every_trick",
    "--players",
    "3",
    "--chunk",
    "6",
    "--floor",
    "12",
    "--ceiling",
    "12",
    "--robust-players",
    "4",
    "--robust-fields",
    "shed",
    "--robust-deals",
    "6",
    "--candidates",
    "guard,shed",
    "--resamples",
    "40",
    "--workers",
    "1",
    "--cv-deals",
    "12",
    "--cv-fit-deals",
    "12",
    "--cv-check",
    "400",
    "-q",
]


def test_skill_study_runs_resumes_and_refuses_another_study(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "study"
    assert main([*SMALL, "--out", str(out)]) == 0
    data = json.loads((out / "study.json").read_text())
    assert data["replication"]["seeds"] == [1, 2] and len(data["replication"]["spearman_ci"]) == 2
    assert [v["preset"] for v in data["variants"]] and {v["tier"] for v in data["variants"]} <= {1, 2}
    for v in data["variants"]:
        assert {"rs_win", "rs_win_ci", "rank_ci", "tier"} <= set(v) and len(v["replications"]) == 2
        low, high = v["skill_share_ci"]
        assert low <= v["skill_share"] <= high
        if v["n_star"] is not None:
            assert v["n_star"] == pytest.approx(1 / v["skill_share"])
        assert max(v["deals"].values()) == 24  # both replications pooled
    assert set(data["robustness"]["fields"]) == {"shed"} and set(data["robustness"]["players"]) == {"4"}
    vr = data["variance_reduction"]
    assert vr["halfwidth_plain"] > 0 and vr["halfwidth_cv"] > 0 and len(vr["presets"]) == 2
    assert vr["unbiased_check"]["deals"] == 400 and "exact" in vr["unbiased_check"]
    assert data["command"].startswith("agurk skill-study --variants standard,every_trick --players 3")
    assert (out / "report.md").read_text().startswith("# Which Agurk variant rewards skill")
    assert (out / "tiers.png").stat().st_size and (out / "robustness.png").stat().st_size
    pieces = len(list((out / "cache").rglob("*.npz")))
    capsys.readouterr()
    assert main([*SMALL, "--out", str(out)]) == 0  # resumed: everything from the cache
    assert "0 pieces played" in capsys.readouterr().out
    assert json.loads((out / "study.json").read_text())["variants"] == data["variants"]
    assert len(list((out / "cache").rglob("*.npz"))) == pieces
    assert main([*SMALL, "--out", str(out), "--seeds", "3,4"]) == 2
    assert "holds a study with other options" in capsys.readouterr().err


def test_skill_study_refuses_bad_options_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for bad, message in (
        (["--seeds", "0,1"], "--seeds needs two different seeds >= 1"),
        (["--variants", "nope"], "unknown preset 'nope'"),
        (["--cap", "pimc"], "--cap needs SPEC=DEALS"),
        (["--selection", str(tmp_path / "missing.json")], "cannot read it as JSON"),
    ):
        assert main(["skill-study", *bad, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
