"""Kept checkpoints (``keep_checkpoints``) and ``agurk curve``: a run's learning curve by wall time."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from tiny_config import TINY

from agents.policy import load_checkpoint
from agents.tournament import tournament
from agurk.cli import main
from agurk_env.rules import Rules
from training.run_folder import read_kept


@pytest.fixture(scope="module")
def kept_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny run keeping every checkpoint (evaluations every 600 decisions: about three saves), resumed once."""
    folder = tmp_path_factory.mktemp("curve")
    config = folder / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "keep_checkpoints": True}))
    out = folder / "run"
    assert main(["train", str(config), "--out", str(out), "-q"]) == 0
    assert main(["train", "--resume", str(out), "--set", "total_steps=2500", "-q"]) == 0
    return out


def test_every_save_is_kept_once_with_growing_steps_and_times(kept_run: Path) -> None:
    rows = read_kept(kept_run)
    assert len(rows) >= 3
    steps = [r["step"] for r in rows]
    assert steps == sorted(set(steps)) and steps[-1] >= 2500
    for key in ("train_seconds", "wall_seconds"):
        times = [r[key] for r in rows]
        assert times == sorted(times) and times[0] > 0  # the resumed run counts on from the first
    for r in rows:
        kept = load_checkpoint(kept_run / "checkpoints" / r["file"])
        assert kept["global_step"] == r["step"]
        assert r["train_seconds"] <= r["wall_seconds"]
    latest = load_checkpoint(kept_run / "checkpoints" / "latest.pt")
    assert latest["global_step"] == steps[-1]


def test_curve_plays_each_kept_checkpoint_on_the_same_deals_as_evaluate(kept_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "curve"
    argv = ["curve", str(kept_run), "--against", "guard,random", "--deals", "6", "--workers", "1", "--out", str(out)]
    assert main([*argv, "-q"]) == 0
    data = json.loads((out / "curve.json").read_text())
    rows = read_kept(kept_run)
    assert [(p["step"], p["opponent"]) for p in data["points"]] == [
        (r["step"], o) for r in rows for o in ("guard", "random")
    ]
    assert (out / "curve.png").stat().st_size > 1000
    table = list(csv.DictReader((out / "curve.csv").open()))
    assert [float(t["win_rate"]) for t in table] == pytest.approx([p["win_rate"] for p in data["points"]], abs=1e-6)
    # a point is agurk evaluate's tournament of that checkpoint, on the same deals
    first = data["points"][0]
    path = (kept_run / "checkpoints" / rows[0]["file"]).resolve()
    direct = tournament(Rules.preset("standard"), [f"ppo:{path}", "guard", "guard", "guard"], 6, 1)
    assert first["win_rate"] == direct.entries[0].win_rate
    # the folder is not overwritten without --force
    assert main([*argv, "-q"]) == 2
    assert main([*argv, "-q", "--force"]) == 0


def test_curve_errors_are_one_line(kept_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "config.yaml").write_text((kept_run / "config.yaml").read_text())
    assert main(["curve", str(plain), "--out", str(tmp_path / "o")]) == 2
    assert "keep_checkpoints=true" in capsys.readouterr().err
    assert main(["curve", str(tmp_path / "nowhere")]) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert main(["curve", str(kept_run), "--players", "3", "--out", str(tmp_path / "p")]) == 2
    assert "not 3" in capsys.readouterr().err
    assert main(["curve", str(kept_run), "--against", "nobody", "--out", str(tmp_path / "n")]) == 2


def test_curve_beside_another_run(kept_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "both"
    argv = ["curve", str(kept_run), "--beside", str(kept_run), "--deals", "4", "--workers", "1", "-q"]
    assert main([*argv, "--out", str(out)]) == 0
    data = json.loads((out / "curve.json").read_text())
    (beside,) = data["beside"]
    assert beside["points"] == data["points"]  # the same checkpoints on the same deals: the same points
    assert (out / "curve.png").stat().st_size > 1000
    other = tmp_path / "other"
    other.mkdir()
    config = yaml.safe_load((kept_run / "config.yaml").read_text())
    (other / "config.yaml").write_text(yaml.safe_dump({**config, "preset": "swedish"}))
    assert main(["curve", str(kept_run), "--beside", str(other), "--out", str(tmp_path / "x")]) == 2
    assert "trained under other rules" in capsys.readouterr().err
