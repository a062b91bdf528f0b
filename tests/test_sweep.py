"""`agurk sweep` on the local backend: the config, the table, retries, resuming after a failure or a kill, errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from faults import fail_task

from agurk.cli import main
from skill.sweep import SweepRow, grid, load_sweep, run_sweep, sweep_from_dict
from training.config import packaged_config
from training.run_folder import RunFolderError

REPO = Path(__file__).resolve().parent.parent
TINY = {
    "presets": ["standard"],
    "players": [3, 4],
    "seeds": [0, 1],
    "overrides": [{"limit": 10}],  # short matches
    "agents": ["random", "ducker"],
    "deals": 12,
    "resamples": 40,
}
"""4 tasks of well under a second each."""
FILES = ("results.json", "results.csv", "results.png")


def _write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def _tables(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in FILES}


def _stamps(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (out / "tasks").glob("*.json")}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The tiny sweep run once, in this process, without faults."""
    out = tmp_path_factory.mktemp("baseline") / "sweep"
    result = run_sweep(sweep_from_dict(TINY), out)
    assert len(result.ran) == 4 and not result.resumed and len(result.rows) == 8
    return _tables(out)


def test_the_table(baseline: dict[str, bytes]) -> None:
    data = json.loads(baseline["results.json"])
    assert data["format"] == "agurk-sweep" and data["config"]["deals"] == 12
    rows = data["rows"]
    keys = [f"standard-{p}p-7c-s{s}-o0" for p in (3, 4) for s in (0, 1)]
    assert [r["key"] for r in rows[::2]] == keys
    assert [r["agent"] for r in rows] == ["random", "ducker"] * 4
    for r in rows:
        assert list(r) == data["columns"] == list(SweepRow.__annotations__)
        for k in ("win_rate", "mean_penalty", "last_trick_rate", "rating"):
            assert r[f"{k}_low"] <= r[k] <= r[f"{k}_high"]
    by = {(r["key"], r["agent"]): r for r in rows}
    assert by["standard-3p-7c-s0-o0", "random"] != by["standard-3p-7c-s1-o0", "random"]  # seeds give other deals
    lines = baseline["results.csv"].decode().splitlines()
    assert lines[0].split(",") == data["columns"] and len(lines) == 9
    assert lines[1].split(",")[:7] == ["standard-3p-7c-s0-o0", "standard", "3", "7", "0", "limit=10", "random"]
    assert baseline["results.png"].startswith(b"\x89PNG")


def test_the_shipped_config() -> None:
    cfg = load_sweep(packaged_config("sweep_tiny.yaml"))
    assert (REPO / "configs" / "sweep_tiny.yaml").is_file()
    points = grid(cfg)
    assert len(points) == 8 and len({p.key for p in points}) == 8 and cfg.train.steps > 0
    assert points[1].rule_options == {"limit": 50} and points[1].rules.limit == 50


def test_a_task_that_fails_once_is_retried(tmp_path: Path, baseline: dict[str, bytes], monkeypatch) -> None:
    counter = tmp_path / "faults"
    fail_task(monkeypatch, "standard-4p-7c-s0-o0", counter)
    out = tmp_path / "sweep"
    result = run_sweep(sweep_from_dict(TINY), out)
    assert counter.read_text() == "1"  # it did fail once
    assert len(result.ran) == 4 and _tables(out) == baseline


def test_a_failed_sweep_resumes_running_only_the_missing_task(
    tmp_path: Path, baseline: dict[str, bytes], monkeypatch, capsys
) -> None:
    config = _write(tmp_path / "sweep.yaml", TINY)
    out = tmp_path / "sweep"
    with monkeypatch.context() as faulty:
        fail_task(faulty, "standard-3p-7c-s1-o0", tmp_path / "faults", times=3)  # fails all 3 attempts
        assert main(["sweep", str(config), "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    last = err.splitlines()[-1]
    assert last.startswith("agurk: error: sweep task standard-3p-7c-s1-o0 failed 3 times; the last time: ")
    assert "InjectedFault" in last and "3 finished tasks are stored" in last
    assert "sweep: 4 tasks, 0 stored before (resumed), 4 to run" in err  # plain progress lines, no terminal
    assert "sweep: 3/4 tasks (75%)" in err
    before = _stamps(out)
    assert sorted(before) == [f"standard-{p}p-7c-s{s}-o0.json" for p, s in ((3, 0), (4, 0), (4, 1))]
    assert not (out / "results.json").exists()
    assert main(["sweep", str(config), "--out", str(out), "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert "4 tasks (3 resumed, 1 run), 8 rows" in captured.out
    assert "sweep: 4 tasks, 3 stored before (resumed), 1 to run" in captured.err
    after = _stamps(out)
    assert {k: after[k] for k in before} == before  # the stored tasks were not computed again
    assert _tables(out) == baseline


def test_a_killed_sweep_resumes(tmp_path: Path, baseline: dict[str, bytes]) -> None:
    config = _write(tmp_path / "sweep.yaml", TINY)
    out = tmp_path / "sweep"
    command = [sys.executable, "-m", "agurk.cli", "sweep", str(config), "--out", str(out), "--workers", "1", "-q"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600  # a deadline, not a wait: generous for a busy 2-core machine
    while not any((out / "tasks").glob("*.json")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _stamps(out)
    assert 1 <= len(before) < 4
    result = run_sweep(load_sweep(config), out)
    assert sorted(result.resumed) == sorted(Path(k).stem for k in before)
    assert len(result.ran) == 4 - len(before)
    after = _stamps(out)
    assert {k: after[k] for k in before} == before
    assert _tables(out) == baseline


def test_output_folders(tmp_path: Path) -> None:
    cfg = sweep_from_dict({**TINY, "players": [3], "seeds": [0]})
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep")
    with pytest.raises(RunFolderError, match="is not empty and holds no sweep"):
        run_sweep(cfg, other)
    out = tmp_path / "sweep"
    run_sweep(cfg, out)
    with pytest.raises(RunFolderError, match=r"holds another sweep \(its deals differ;"):
        run_sweep(sweep_from_dict({**TINY, "players": [3], "seeds": [0], "deals": 5}), out)
    moved = run_sweep(sweep_from_dict({**TINY, "players": [3], "seeds": [0], "deals": 5}), out, force=True).moved
    assert moved is not None and moved.name.startswith("sweep.old-")
    assert list(tmp_path.glob("sweep.old-*")) == [moved]
    assert (other / "mine.txt").read_text() == "keep"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"preset": ["standard"]}, "unknown config key 'preset'"),
        ({"train": {"steps": 10, "nope": 1}}, "unknown config key 'train.nope'"),
        ({"train": {"steps": 10, "settings": {"nope": 1}}}, "unknown config key 'nope'"),
        ({"train": {"steps": 10, "settings": {"seed": 3}}}, "train.settings.seed is set by each grid point"),
        ({"overrides": [{}, {"nope": 1}]}, "unknown override key 'overrides[1].nope'"),
        ({"overrides": [{"learning_rate": 0.1}]}, "overrides[0].learning_rate is a training key"),
        ({"overrides": [{"players": 5}]}, "overrides[0].players is a grid axis"),
        ({"overrides": [{"limit": -1}]}, "grid point standard-3p-7c-s0-o0 (overrides[0]): limit"),
        ({"presets": ["nope"]}, "presets: unknown preset 'nope'"),
        ({"players": [3, 3]}, "players must not repeat a value"),
        ({"deals": "many"}, "deals must be an integer"),
        ({"deals": 0}, "deals must be > 0"),
        ({"agents": ["nope"]}, "agents[0]: unknown agent 'nope'"),
        ({"unit": "trick"}, "unit must be one of match, round"),
    ],
)
def test_bad_configs_are_one_line(tmp_path: Path, capsys, change: dict, message: str) -> None:
    config = _write(tmp_path / "bad.yaml", {**TINY, **change})
    assert main(["sweep", str(config), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agurk: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ray-address", "auto"], "--ray-address needs --backend ray"),
        (["--workers", "0"], "argument --workers: must be an integer >= 1"),
        (["--backend", "spark"], "argument --backend: must be one of local, ray, not 'spark'"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    config = _write(tmp_path / "sweep.yaml", TINY)
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agurk: error: ") and err.count("\n") == 1 and message in err, err
