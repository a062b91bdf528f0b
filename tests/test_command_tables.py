"""The tables the commands print, byte for byte: each command's own printing of a fixed result.

The results are committed ones (docs/results) or small made-up ones; the library calls that would
make them are replaced, so that each test checks only how the command shows its result. The expected
text is in tests/data/command_tables/.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agurk.cli import main

REPO = Path(__file__).resolve().parent.parent
EXPECTED = Path(__file__).resolve().parent / "data" / "command_tables"


@pytest.fixture(autouse=True)
def plain_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """A console of 80 columns without colour, whatever the environment says."""
    monkeypatch.setenv("COLUMNS", "80")
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "LINES"):
        monkeypatch.delenv(name, raising=False)


def _expected(name: str) -> str:
    return (EXPECTED / f"{name}.txt").read_text()


def test_exploit(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import skill.exploit
    import training.run

    report = json.loads((REPO / "docs/results/exploit/guard.json").read_text())
    report |= {"deck_label": "", "run": "runs/exploit-guard", "exploiter": "runs/exploit-guard/checkpoints/latest.pt"}
    config = SimpleNamespace(total_steps=100, time_limit=0.0)
    monkeypatch.setattr(skill.exploit, "plan_exploit", lambda options: SimpleNamespace(config=config, rules=None))
    monkeypatch.setattr(skill.exploit, "claim_run", lambda plan: (tmp_path / "run", None, None))
    monkeypatch.setattr(skill.exploit, "matches_of", lambda rules, agent, deals: 1)
    monkeypatch.setattr(skill.exploit, "measured", lambda plan, out, summary, progress: report)
    monkeypatch.setattr(training.run, "execute", lambda *args: {"stop": None})
    assert main(["exploit", "guard", "--out", str(tmp_path / "run"), "-q"]) == 0
    assert capsys.readouterr().out == _expected("exploit")


def test_exploitability(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    skill_exploitability = pytest.importorskip("skill.exploitability")
    report = json.loads((REPO / "docs/results/exploitability.json").read_text())
    monkeypatch.setattr(skill_exploitability, "run_exploitability", lambda options, progress: report)
    assert main(["exploitability", "--no-ppo", "-q"]) == 0
    assert capsys.readouterr().out == _expected("exploitability")


@pytest.mark.parametrize("name", ["skill-full/report", "atlas/atlas"])
def test_skill_report(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    skill_report_plan = pytest.importorskip("skill.report_plan")
    data = json.loads((REPO / "docs/results" / f"{name}.json").read_text())
    atlas = "cells" in data
    rows = data["cells"] if atlas else data["variants"]
    for r in rows:  # these reports predate RS without the control variates
        r.setdefault("rs_win_plain", r["rs_win"] - 0.01)
        r.setdefault("rs_win_ci_plain", [low - 0.02 for low in r["rs_win_ci"]])
    names = [r.get("key", r["preset"]) for r in rows]
    plan = SimpleNamespace(moved=None, left_out=[], names=names, is_atlas=atlas, variants=names, out=tmp_path)
    monkeypatch.setattr(skill_report_plan, "plan_report", lambda options: plan)
    monkeypatch.setattr(skill_report_plan, "run_planned", lambda plan, monitor: data)
    assert main(["skill-report", "--budget", "smoke"]) == 0
    table = capsys.readouterr().out.splitlines(keepends=True)[:-1]  # the last line says the seconds taken
    assert "".join(table) == _expected(name.replace("/", "-"))


def test_leaderboard(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = [
        "leaderboard",
        "--set",
        "players=3",
        "--agents",
        "random,shed,guard,ducker",
        "--deals",
        "12",
        "--design",
        "subsets",
    ]
    assert main([*argv, "--out", str(tmp_path / "lb"), "--workers", "1"]) == 0
    table = capsys.readouterr().out.splitlines(keepends=True)[:-1]  # the last line says the seconds taken
    assert "".join(table) == _expected("leaderboard")


def test_sweep(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)  # the title names the config: the same path on every run
    config = Path("sweep.yaml")
    config.write_text(
        "presets: [standard]\nplayers: [3]\nseeds: [0, 1]\noverrides: [{limit: 10}]\nagents: [random, ducker]\n"
        "deals: 12\nresamples: 40\n"
    )
    assert main(["sweep", str(config), "--out", "out", "--workers", "1", "-q"]) == 0
    table = capsys.readouterr().out.splitlines(keepends=True)[:-1]  # the last line says the seconds taken
    assert "".join(table) == _expected("sweep")
