"""The rough edges a new user hit in agurk train and agurk curve: each is one line and exit 2, or what a user expects.

Only the command line and the files it writes are used, so each test also ran against the
code before its fix (and failed there).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch.utils.tensorboard")

from test_runs import LONG, TINY, one_error_line, write_config  # noqa: E402

from agurk.cli import main  # noqa: E402


def _left(folder: Path) -> list[str]:
    """What a folder holds, as sorted relative paths (``[]`` for a missing one)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


@pytest.mark.skipif(torch.cuda.is_available(), reason="a build with a GPU has the device")
def test_a_device_not_here_is_one_line_and_makes_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, TINY)
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "--set", "device=cuda", "-q"]) == 2
    assert "device 'cuda' is not available" in one_error_line(capsys.readouterr().err)
    assert not out.exists()
    monkeypatch.chdir(tmp_path)  # the default run folder is not made either
    assert main(["train", str(config), "--set", "device=cuda:0", "-q"]) == 2
    assert "device 'cuda:0'" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "runs").exists()
    assert main(["train", str(config), "--out", str(out), "-q"]) == 0  # nothing in the way of the next run


def test_a_stop_before_the_first_checkpoint_leaves_the_folder_reusable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from training import ppo

    def ctrl_c(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # while the trainer is being built: no checkpoint yet

    config = write_config(tmp_path, LONG)
    out = tmp_path / "run"
    with monkeypatch.context() as patched:
        patched.setattr(ppo.PPOTrainer, "__init__", ctrl_c)
        assert main(["train", str(config), "--out", str(out), "-q"]) == 130
    assert "before training began; no checkpoint written" in capsys.readouterr().err
    assert _left(out) == []
    short = write_config(tmp_path, {**TINY, "total_steps": 300}, "short.yaml")
    assert main(["train", str(short), "--out", str(out), "-q"]) == 0  # --out takes the folder again


def test_a_folder_a_run_left_without_a_checkpoint_needs_force_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, TINY)
    out = tmp_path / "run"  # as a run killed (SIGKILL) before its first save leaves it
    (out / "checkpoints").mkdir(parents=True)
    (out / "config.yaml").write_text(config.read_text())
    assert main(["train", str(config), "--out", str(out), "-q"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "stopped before its first checkpoint" in line and "--force" in line and "--resume" not in line
    assert main(["train", "--resume", str(out), "-q"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "stopped before its first checkpoint" in line and f"--out {out} --force" in line


@pytest.mark.skipif(sys.platform == "win32", reason="run folders are locked with fcntl")
def test_resume_of_a_folder_in_use_before_its_first_save_says_it_is_in_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import fcntl

    config = write_config(tmp_path, TINY)
    out = tmp_path / "run"  # a run that started and has not saved yet
    (out / "checkpoints").mkdir(parents=True)
    (out / "config.yaml").write_text(config.read_text())
    with (out / ".lock").open("a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write(str(os.getpid()))
        held.flush()
        assert main(["train", "--resume", str(out), "-q"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"is in use by another training run (process {os.getpid()})" in line and "no checkpoint" not in line


def test_a_time_limited_run_shows_and_says_where_it_stopped_and_what_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, {**LONG, "time_limit": 0.03})  # 1.8 s of a run of 100M decisions
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out)]) == 0  # not a terminal: plain progress lines
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if " training: " in line]
    assert lines and all(" decisions (" in line and "decisions/s" in line for line in lines), captured.err
    assert "(time limit)" in lines[0]  # the eta is the time limit's, not 100M decisions'
    assert "(100.0%)" in lines[-1]  # the final evaluation's line: the run is done, though far from total_steps
    said = captured.out.splitlines()
    assert said[0].startswith("stopped at the time limit (0.03 min) "), captured.out
    best = out / "checkpoints" / "best.pt"
    assert f"best checkpoint: {best}" in said
    assert (out / "learning_curve.png").read_bytes().startswith(b"\x89PNG")
    assert f"learning curve: {out / 'learning_curve.png'}" in said
    assert not (out / ".lock").exists()  # a finished run lets its folder go
    (command,) = [line.removeprefix("next: ") for line in said if line.startswith("next: agurk evaluate ")]
    assert main(shlex.split(command)[1:]) == 0  # the command it gives runs as printed


def test_pool_shares_are_shares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, TINY)
    out = tmp_path / "run"
    for key in ("pool.self_play=2", "pool.agents={heuristic: 1.5}"):
        assert main(["train", str(config), "--out", str(out), "--set", key, "-q"]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert key.split("=")[0].split("{")[0] in line and "0..1" in line, line
    assert not out.exists()


def test_curve_force_moves_the_old_folder_aside_as_train_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, {**TINY, "keep_checkpoints": True, "total_steps": 600})
    run = tmp_path / "run"
    assert main(["train", str(config), "--out", str(run), "-q"]) == 0
    out = tmp_path / "curve"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    argv = ["curve", str(run), "--against", "random", "--deals", "2", "--workers", "1", "--out", str(out), "-q"]
    assert main(argv) == 2
    assert "--force" in one_error_line(capsys.readouterr().err)
    assert main([*argv, "--force"]) == 0
    (aside,) = tmp_path.glob("curve.old-*")
    assert (aside / "notes.txt").read_text() == "mine" and not (out / "notes.txt").exists()
    assert (out / "curve.png").is_file()
    assert f"moved the old folder {out} aside to {aside}" in capsys.readouterr().err


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tiny 4-player run that kept its checkpoints (the tests copy it before changing it)."""
    folder = tmp_path_factory.mktemp("trained")
    config = write_config(folder, {**TINY, "keep_checkpoints": True, "total_steps": 600})
    assert main(["train", str(config), "--out", str(folder / "run"), "-q"]) == 0
    return folder / "run"


def test_resume_refuses_a_config_that_differs_but_in_the_keys_given_with_set(
    tmp_path: Path, trained_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    same = write_config(tmp_path, {**TINY, "keep_checkpoints": True, "total_steps": 600}, "same.yaml")
    other = write_config(tmp_path, {**TINY, "keep_checkpoints": False, "total_steps": 1200}, "other.yaml")
    assert main(["train", str(other), "--resume", str(run), "-q"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "keep_checkpoints True -> False" in line and "total_steps 600 -> 1200" in line and "--set" in line, line
    assert main(["train", str(other), "--resume", str(run), "--set", "total_steps=1200", "-q"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "keep_checkpoints" in line and "total_steps" not in line.partition(":")[2].partition("(")[2].split(")")[0]
    assert len(list((run / "checkpoints").glob("*.pt"))) == len(list((trained_run / "checkpoints").glob("*.pt")))
    assert main(["train", str(same), "--resume", str(run), "--set", "total_steps=900", "-q"]) == 0  # a longer run


def test_a_checkpoint_at_other_player_counts_is_played_with_a_warning(
    trained_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = [f"--set={k}={v}" for k, v in TINY["rules"].items()]
    spec = f"ppo:{trained_run / 'checkpoints' / 'best.pt'}"
    argv = ["evaluate", "--agents", f"{spec},random,random", *rules, "--matches", "2", "-q", "--json", "-"]
    assert main([*argv, "--set", "players=3"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"agurk: warning: {spec} was trained at 4 players, not 3: it plays a table it never saw"
    ]
    assert main(["evaluate", "--agents", f"{spec},random,random,random", *rules, "--matches", "2", "-q"]) == 0
    assert "warning" not in capsys.readouterr().err  # the players it was trained at


def test_curve_names_an_unknown_agent_before_the_out_folder(
    tmp_path: Path, trained_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "curve"
    out.mkdir()
    (out / "notes.txt").write_text("mine")  # a used --out: refused too, but after the typo
    assert main(["curve", str(trained_run), "--against", "gaurd", "--out", str(out), "-q"]) == 2
    assert "unknown agent 'gaurd'" in one_error_line(capsys.readouterr().err)


def test_an_empty_config_says_it_trains_on_the_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from training import run

    def stop(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # as training begins: the defaults would train for hours

    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    monkeypatch.setattr(run, "execute", stop)
    assert main(["train", str(empty), "--out", str(tmp_path / "run"), "-q"]) == 130
    said = capsys.readouterr().err.splitlines()
    assert said[0] == f"agurk: {empty} sets no key: training on the defaults of every key", said
