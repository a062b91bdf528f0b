"""Every command's work is one library call on the command's options: the call and the command give the same result.

Small sizes, so each test runs in seconds. :func:`agents.command.command_line` (the inverse of
``from_args``) is checked by parsing what it writes back into the same options.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from agents.command import command_line
from agurk.cli import build_parser, main
from agurk.cli.common import from_args
from skill.exploit_options import ExploitabilityOptions, ExploitOptions

TINY = ["players=2", "hand_size=2", "limit=1", "match_end=first_out"]
"""Single rounds of 2 players x 2 cards: the tiny table of ``agurk exploit`` and ``agurk exploitability``."""
TIMES = ("train_seconds", "eval_seconds", "seconds", "tree_seconds")
"""Wall times: the only figures two runs of one command may differ in."""


def parsed(cls: type, argv: list[str]) -> object:
    """The options ``cls`` that ``agurk ARGV`` parses to."""
    return from_args(cls, build_parser().parse_args(argv))


def without_times(value: object) -> object:
    """``value`` with every wall time (:data:`TIMES`) left out, at any depth."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


@pytest.mark.parametrize(
    ("cls", "argv"),
    [
        (ExploitOptions, ["exploit", "pimc:worlds=4;seed=2", "--set", "players=2", "--ranks", "10,J"]),
        (ExploitOptions, ["exploit", "guard", "--decisions", "7", "--train-set", "a=1", "--train-set", "b=2"]),
        (ExploitabilityOptions, ["exploitability", "--suite", "tiny", "--no-ppo", "--cfr-iterations", "3"]),
        (ExploitabilityOptions, ["exploitability", "--rules", "standard", "--agents", "guard", "--seed", "4"]),
    ],
)
def test_command_line_is_the_inverse_of_from_args(cls: type, argv: list[str]) -> None:
    options = parsed(cls, argv)
    written = command_line(argv[0], options)
    assert shlex.split(written)[:2] == ["agurk", argv[0]]
    assert parsed(cls, shlex.split(written)[1:]) == options


def test_exploit_library_call_is_the_command(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from skill.exploit import exploit

    training = ["num_envs=16", "num_steps=4", "minibatch_size=64", "hidden=[16]", "eval.final_deals=2"]
    argv = ["exploit", "random", *(w for s in TINY for w in ("--set", s)), "--decisions", "64", "--deals", "10"]
    argv += [*(w for s in training for w in ("--train-set", s)), "--workers", "1", "-q"]
    options = parsed(ExploitOptions, [*argv, "--out", str(tmp_path / "call")])
    called = exploit(options)
    assert main([*argv, "--out", str(tmp_path / "command"), "--json", str(tmp_path / "command.json")]) == 0
    commanded = json.loads((tmp_path / "command.json").read_text())
    assert called["run"] == str(tmp_path / "call") and commanded["run"] == str(tmp_path / "command")
    same_folder = json.loads(json.dumps(called).replace(str(tmp_path / "call"), str(tmp_path / "command")))
    assert without_times(same_folder) == without_times(commanded)


def test_exploitability_library_call_is_the_command(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    from skill.exploitability import run_exploitability

    argv = ["exploitability", *(w for s in TINY for w in ("--set", s)), "--agents", "random,guard", "--no-ppo"]
    argv += ["--cfr-iterations", "5", "-q"]
    called = run_exploitability(parsed(ExploitabilityOptions, argv))
    assert main([*argv, "--json", str(tmp_path / "command.json")]) == 0
    assert without_times(called) == without_times(json.loads((tmp_path / "command.json").read_text()))


def test_bench_library_call_is_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    from agurk.bench.benches import EngineBench

    argv = ["bench", "engine", "--seconds", "0.1", "--reference-seconds", "0.1", "--batch", "16", "--set", "players=3"]
    options = parsed(EngineBench, [*argv, "--json"])
    assert options == EngineBench(seconds=0.1, reference_seconds=0.1, batch=16, set=["players=3"], json=True)
    called = options.measure()
    assert main([*argv, "--json"]) == 0
    commanded = json.loads(capsys.readouterr().out)
    settled = ("preset", "rules", "batch")
    assert {k: commanded[k] for k in settled} == {k: called[k] for k in settled}
    assert commanded["engine"].keys() == called["engine"].keys()
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[0] == options.lines(called)[0]  # the text is the call's lines


def test_evaluate_library_call_is_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    from agents.evaluate import EvaluateOptions, evaluate

    argv = ["evaluate", "--agents", "guard,random", "--set", "players=2", "--matches", "6", "--batch", "4", "-q"]
    called = evaluate(parsed(EvaluateOptions, argv)).to_dict()
    assert main([*argv, "--json", "-"]) == 0
    assert called == without_times(json.loads(capsys.readouterr().out))


def test_simulate_library_call_is_the_command(tmp_path: Path) -> None:
    from agents.simulation import SimulateOptions, simulate_records

    argv = ["simulate", "--agents", "guard,random,shed", "--set", "players=3", "--matches", "4", "--seed", "2"]
    argv += ["--batch", "3", "--with-legal", "-q", "--out", str(tmp_path / "sim.jsonl")]
    called = list(simulate_records(parsed(SimulateOptions, argv)))
    assert main(argv) == 0
    lines = (tmp_path / "sim.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == json.loads(json.dumps(called))


def test_zoo_export_library_call_is_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    from agents import zoo
    from training.zoo_export import ZooOptions, export_run

    argv = ["zoo", "export", str(zoo.path_of("standard-4p")), "--preset", "standard", "--name", "mine"]
    called = export_run(parsed(ZooOptions, [*argv, "--out", str(tmp_path / "call.pt")]))
    assert main([*argv, "--out", str(tmp_path / "command.pt")]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'command.pt'} ({called.size:,} bytes): zoo:{called.name}\n"
    commanded = torch.load(tmp_path / "command.pt", weights_only=True)
    made = torch.load(called.path, weights_only=True)
    assert made.keys() == commanded.keys() and made["strength"] == commanded["strength"]
    assert all(torch.equal(made["model"][k], v) for k, v in commanded["model"].items())


def test_skill_study_library_call_is_the_command(tmp_path: Path) -> None:
    from skill.study_config import SkillStudyOptions, checked_config
    from skill.study_report import skill_study

    argv = ["skill-study", "--variants", "standard,every_trick", "--players", "3", "--field", "random"]
    argv += ["--candidates", "guard", "--chunk", "4", "--floor", "4", "--ceiling", "4", "--robust-players", "4"]
    argv += ["--robust-fields", "shed", "--robust-deals", "4", "--resamples", "20", "--cv-deals", "0", "--workers", "1"]
    argv += ["-q", "--out", str(tmp_path / "study")]
    assert main(argv) == 0
    commanded = json.loads((tmp_path / "study" / "study.json").read_text())
    options = parsed(SkillStudyOptions, argv)
    study, called = skill_study(options)  # every piece from the command's cache
    assert study.played == 0 and json.loads(json.dumps(called)) == commanded
    again = parsed(SkillStudyOptions, shlex.split(called["command"])[1:])
    assert checked_config(again) == checked_config(options) and again.out == options.out  # it reproduces the study


def test_train_library_call_is_the_command(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from training.train import TrainOptions, train

    keys = ["total_steps=64", "num_envs=16", "num_steps=4", "minibatch_size=64", "hidden=[16]", "eval.final_deals=2"]
    argv = ["train", *(w for k in keys for w in ("--set", k)), "-q"]
    summary = train(parsed(TrainOptions, [*argv, "--out", str(tmp_path / "call")]))
    assert main([*argv, "--out", str(tmp_path / "command")]) == 0
    assert summary["out"] == str(tmp_path / "call") and summary["global_step"] >= 64
    called, commanded = (json.loads((tmp_path / run / "eval.json").read_text()) for run in ("call", "command"))
    assert called.pop("checkpoint") == str(tmp_path / "call" / "checkpoints" / "latest.pt")
    assert commanded.pop("checkpoint") == str(tmp_path / "command" / "checkpoints" / "latest.pt")
    assert without_times(called) == without_times(commanded)


def test_curve_library_call_is_the_command(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from skill.curve import CurveOptions, curve
    from training.train import TrainOptions, train

    keys = ["total_steps=1024", "num_envs=16", "num_steps=8", "hidden=[16]", "keep_checkpoints=true"]
    keys += ["eval.every=512", "eval.deals=2", "eval.final_deals=2", "eval.resamples=10"]
    train(TrainOptions(out=str(tmp_path / "run"), set=keys, quiet=True))
    argv = ["curve", str(tmp_path / "run"), "--against", "random", "--deals", "4", "--workers", "1", "-q"]
    called = curve(parsed(CurveOptions, [*argv, "--out", str(tmp_path / "call")]))
    assert main([*argv, "--out", str(tmp_path / "command")]) == 0
    assert json.loads(json.dumps(called)) == json.loads((tmp_path / "command" / "curve.json").read_text())
    assert (tmp_path / "call" / "curve.png").is_file() and len(called["points"]) >= 2


def test_sweep_library_call_is_the_command(tmp_path: Path) -> None:
    import yaml

    from skill.sweep import SweepOptions, sweep

    tiny = {"presets": ["standard"], "players": [3], "seeds": [0], "overrides": [{"limit": 10}], "agents": ["random"]}
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({**tiny, "deals": 6, "resamples": 20}))
    argv = ["sweep", str(config), "--workers", "1", "-q"]
    called = sweep(parsed(SweepOptions, [*argv, "--out", str(tmp_path / "call")]))
    assert main([*argv, "--out", str(tmp_path / "command")]) == 0
    commanded = json.loads((tmp_path / "command" / "results.json").read_text())
    assert json.loads(json.dumps(called.rows)) == commanded["rows"] and called.ran and not called.resumed


def test_skill_report_library_call_is_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skill import budget
    from skill.report_plan import SkillReportOptions, run_skill_report

    tiny = budget.Budget("smoke", ("standard",), 2, 0, (2,), 10, "zoo")
    monkeypatch.setitem(budget.BUDGETS, "smoke", tiny)
    argv = ["skill-report", "--variants", "standard", "--policy", "zoo", "--players", "3", "--workers", "1", "-q"]
    called = run_skill_report(parsed(SkillReportOptions, [*argv, "--out", str(tmp_path / "call")]))
    assert main([*argv, "--out", str(tmp_path / "command")]) == 0
    commanded = json.loads((tmp_path / "command" / "report.json").read_text())
    assert called["command"] == commanded["command"].replace("command", "call")
    assert parsed(SkillReportOptions, shlex.split(called["command"])[1:]).out == str(tmp_path / "call")
    same = {**json.loads(json.dumps(called)), "command": commanded["command"]}
    assert without_times(same) == without_times(commanded)


def test_leaderboard_library_call_is_the_command(tmp_path: Path) -> None:
    from skill.leaderboard_plan import LeaderboardOptions, run_leaderboard

    argv = ["leaderboard", "--agents", "random,shed,guard", "--set", "players=2", "--deals", "4", "--workers", "1"]
    argv += ["-q", "--cache", str(tmp_path / "cache")]
    called = run_leaderboard(parsed(LeaderboardOptions, [*argv, "--out", str(tmp_path / "call")]))
    assert main([*argv, "--out", str(tmp_path / "command")]) == 0  # its tables from the call's cache
    commanded = json.loads((tmp_path / "command" / "leaderboard.json").read_text())
    assert json.loads(json.dumps(called)) == {**commanded, "command": commanded["command"].replace("command", "call")}
    assert parsed(LeaderboardOptions, shlex.split(called["command"])[1:]).out == str(tmp_path / "call")
