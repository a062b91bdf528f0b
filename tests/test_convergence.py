"""Convergence evidence (`--convergence`): RS per training budget of the network, and the ranking's stability."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from tiny_nets import count_tables, tiny_checkpoint

from agurk.cli import main
from skill import budget as B
from skill.convergence import THRESHOLD, _average_ranks, ranks, spearman
from skill.report import skill_report

PLAN = dataclasses.replace(
    B.Budget("tiny", ("standard", "every_trick"), deals=3, train_steps=0, worlds=(1, 2), resamples=50), policy="train"
)
VARIANTS = ["standard", "every_trick"]


@pytest.fixture
def played(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return count_tables(monkeypatch)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, Path, list[Path]]:
    """A tiny report whose network (3000 decisions) was preceded by two earlier checkpoints."""
    folder = tmp_path_factory.mktemp("convergence")
    nets = [tiny_checkpoint(folder / f"net-{d}.pt", seed, d) for seed, d in enumerate((1000, 2000, 3000))]
    out = folder / "report"
    report = skill_report(
        VARIANTS,
        3,
        PLAN,
        5,
        out,
        {v: str(nets[-1]) for v in VARIANTS},
        workers=2,
        command="x",
        hand_size=5,
        cache=folder / "cache",
        convergence=[str(p) for p in nets[:-1]],
    )
    return report, json.loads((out / "convergence.json").read_text()), out, nets


def test_the_files_budgets_and_the_reports_own_rs(run: tuple[dict, dict, Path, list[Path]]) -> None:
    report, data, out, nets = run
    for name in ("convergence.md", "convergence.json", "convergence.csv", "convergence.png"):
        assert (out / name).stat().st_size > 0, name
    assert [b["decisions"] for b in data["checkpoints"]] == [1000, 2000, 3000]
    assert [b["checkpoint"] for b in data["checkpoints"]] == [str(p) for p in nets]
    assert [v["name"] for v in data["variants"]] == VARIANTS  # the report's order, not a ranking
    for v in data["variants"]:
        assert [b["decisions"] for b in v["budgets"]] == [1000, 2000, 3000]
        row = next(r for r in report["variants"] if r["preset"] == v["name"])
        last = v["budgets"][-1]
        for key in ("rs_win", "rs_win_ci", "rs_penalty", "rs_penalty_ci"):
            assert last[key] == row[key], key  # the last budget is the report's own network
        assert last["network_win_rate"] == next(a["win_rate"] for a in row["ladder"] if a["spec"] == "ppo")
    (step,) = data["steps"][1:]
    assert (step["decisions_before"], step["decisions_after"]) == (2000, 3000)
    assert step["spearman"] is None or -1 <= step["spearman"] <= 1
    assert all(x is None or -1 <= x <= 1 for x in step["spearman_ci"])
    assert data["threshold"] == THRESHOLD and data["verdict"] in (out / "convergence.md").read_text()
    assert data["stable"] == step["stable"]
    rows = list(csv.DictReader((out / "convergence.csv").open()))
    assert len(rows) == 2 * 3 and sorted({r["rank"] for r in rows}) == ["1", "2"]
    assert "--convergence" in report["command"] or report["command"] == "x"


def test_an_earlier_budget_is_the_report_with_that_network(
    run: tuple[dict, dict, Path, list[Path]],
    tmp_path: Path,
    played: list[str],
) -> None:
    # the report with the first checkpoint as its network gives the first budget's RS; every table is in the cache
    _, data, out, nets = run
    earlier = skill_report(
        VARIANTS,
        3,
        PLAN,
        5,
        tmp_path,
        {v: str(nets[0]) for v in VARIANTS},
        workers=1,
        command="x",
        hand_size=5,
        cache=out.parent / "cache",
    )
    assert played == []
    for v in data["variants"]:
        row = next(r for r in earlier["variants"] if r["preset"] == v["name"])
        first = v["budgets"][0]
        for key in ("rs_win", "rs_win_ci", "rs_penalty", "rs_penalty_ci"):
            assert first[key] == row[key], key


def test_the_cli_names_a_checkpoint_out_of_training_order(
    run: tuple[dict, dict, Path, list[Path]], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _, _, _, nets = run
    argv = ["skill-report", "--variants", "standard", "--checkpoint", str(nets[1]), "--out", str(tmp_path / "r")]
    assert main([*argv, "--convergence", f"{nets[2]}"]) == 2
    err = capsys.readouterr().err
    assert "--convergence: the checkpoints must be in training order" in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


def test_spearman_and_ranks() -> None:
    a = np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], [0.1, np.nan, 0.3, 0.2]])
    b = np.array([[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0], [0.5, 0.1, 0.6, 0.7]])
    assert spearman(a, b) == pytest.approx([1.0, -1.0, 0.5])
    assert np.isnan(spearman(np.array([[0.1, np.nan]]), np.array([[0.2, 0.3]])))[0]
    assert _average_ranks(np.array([[3.0, 1.0, 3.0]])).tolist() == [[2.5, 1.0, 2.5]]
    assert ranks([0.2, None, 0.5, 0.2]) == [2, 4, 1, 3]


def test_an_atlas_names_its_cells_by_key(
    run: tuple[dict, dict, Path, list[Path]], tmp_path: Path, played: list[str]
) -> None:
    from skill.atlas import atlas

    _, data, out, nets = run
    cells = atlas(
        VARIANTS,
        [3],
        [5],
        PLAN,
        5,
        tmp_path,
        {v: str(nets[-1]) for v in VARIANTS},
        workers=1,
        command="x",
        cache=out.parent / "cache",
        convergence=[str(nets[0])],
    )["cells"]
    assert played == []  # the report's tables, from the cache
    found = json.loads((tmp_path / "convergence.json").read_text())
    assert [v["name"] for v in found["variants"]] == ["standard-3p-5c", "every_trick-3p-5c"]
    for v, before in zip(found["variants"], data["variants"], strict=True):
        cell = next(c for c in cells if c["key"] == v["name"])
        assert v["budgets"][-1]["rs_win"] == cell["rs_win"] == before["budgets"][-1]["rs_win"]
        assert v["budgets"][0] == before["budgets"][0]
