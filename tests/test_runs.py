"""Runs you can trust: stop signals save latest.pt, run folders are never reused, resume checks its config,
missing extras and damaged checkpoints are one line, a log file gets progress lines, TensorBoard tags stay few."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

torch = pytest.importorskip("torch")
pytest.importorskip("torch.utils.tensorboard")

from tiny_config import TINY as TINY_TRAINING  # noqa: E402

from agents.policy import CheckpointError, load_checkpoint  # noqa: E402
from agurk.cli import main  # noqa: E402
from training.config import ConfigError, config_from_dict, config_to_dict  # noqa: E402
from training.resume import config_changes  # noqa: E402
from training.run_folder import default_out  # noqa: E402
from training.schedule import fold_snapshot_rates  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TINY = {**TINY_TRAINING, "rules": {"hand_size": 1, "limit": 8, "match_end": "first_out"}}
"""Short matches: every update finishes some."""
LONG = {**TINY, "total_steps": 100_000_000, "eval": {**TINY["eval"], "every": 0}}
"""A run that only ends when it is stopped."""
PROGRESS = re.compile(r"training: ([\d,]+)/[\d,]+ decisions \([\d.]+%\), [\d,]+ decisions/s")
INSTALL = 'pip install -e ".[rl]"'
DEADLINE = 600.0
"""Seconds a subprocess run may take to reach what a test waits for: generous, so a busy 2-core machine passes."""


def write_config(folder: Path, data: dict, name: str = "tiny.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data))
    return path


def one_error_line(err: str) -> str:
    """The single ``agurk: error: ...`` line of ``err`` (and nothing else on stderr)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("agurk: error: "), err
    assert "Traceback" not in err
    return lines[0]


def agurk(
    *args: str, cwd: Path, shim: Path | None = None, ignore: tuple[int, ...] = (), log: Path | None = None
) -> subprocess.Popen:
    """``agurk ARGS`` in a fresh interpreter on this checkout; stdout and stderr into ``log`` (or pipes)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*([str(shim)] if shim else []), str(REPO)])}

    def reset_signals() -> None:  # whatever pytest's process ignores, the run starts with the defaults
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN if signum in ignore else signal.SIG_DFL)

    command = [sys.executable, "-m", "agurk.cli", *args]
    options = {"cwd": cwd, "env": env, "text": True, "preexec_fn": reset_signals}
    if log is None:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options)
    else:
        with log.open("w") as out:  # the child keeps its own copy
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, **options)
    STARTED.append(proc)
    return proc


STARTED: list[subprocess.Popen] = []
"""Every ``agurk`` process a test started (the endless ones are killed if a test fails)."""


@pytest.fixture(autouse=True)
def _no_run_left_behind() -> Iterator[None]:
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def wait_for(log: Path, pattern: re.Pattern[str], proc: subprocess.Popen, timeout: float = DEADLINE) -> re.Match[str]:
    """The first match of ``pattern`` in the growing ``log`` (the run must still be going; a deadline, not a wait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = pattern.search(log.read_text())
        if found:
            return found
        assert proc.poll() is None, log.read_text()
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no {pattern.pattern!r} in {timeout} s: {log.read_text()}")


def steps_logged(text: str) -> list[int]:
    return [int(m.group(1).replace(",", "")) for m in PROGRESS.finditer(text)]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny finished run (a few seconds), trained once; tests copy it."""
    folder = tmp_path_factory.mktemp("runs")
    out = folder / "run"
    assert main(["train", str(write_config(folder, TINY)), "--out", str(out), "-q"]) == 0
    return out


@pytest.fixture
def run_copy(tiny_run: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    return run


# ----------------------------------------------------------------------------- stop signals


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_saves_latest_and_resume_continues_from_its_step(tmp_path: Path, signum: int) -> None:
    log = tmp_path / "train.log"
    proc = agurk("train", str(write_config(tmp_path, LONG)), "--out", "run", cwd=tmp_path, log=log)
    wait_for(log, PROGRESS, proc)  # the log of a non-terminal run gets progress lines
    proc.send_signal(signum)
    assert proc.wait(timeout=DEADLINE) == 128 + signum
    text = log.read_text()
    assert "Traceback" not in text
    saved = re.search(rf"interrupted by {signum.name}; checkpoint saved at step ([\d,]+)", text)
    assert saved, text
    step = int(saved.group(1).replace(",", ""))
    data = load_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt")
    assert data["global_step"] == step > 0
    assert "continue with: agurk train --resume run" in text
    if signum != signal.SIGTERM:
        return
    # the resumed run starts from the saved step, and its log shows it
    log2 = tmp_path / "resume.log"
    proc = agurk("train", "--resume", "run", "--set", f"total_steps={step + 600}", cwd=tmp_path, log=log2)
    assert proc.wait(timeout=DEADLINE) == 0, log2.read_text()
    text = log2.read_text()
    assert f"resuming run at step {step:,}; config changes: total_steps 100000000 -> {step + 600}" in text
    logged = steps_logged(text)
    assert logged and step < logged[0] < step + 1200 and logged[-1] >= step + 600
    assert "win: 4p" in [line for line in text.splitlines() if PROGRESS.search(line)][-1]  # the final evaluation
    after = load_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt")
    assert after["global_step"] >= step + 600 and after["update"] > data["update"]


def _send(signum: int, ignored: bool = False) -> None:
    """Send ``signum`` to this process, but only while ``agurk train`` handles it (or it is ``ignored``)."""
    handler = signal.getsignal(signum)
    if ignored:
        assert handler is signal.SIG_IGN
    else:
        assert handler not in (signal.SIG_DFL, signal.SIG_IGN, signal.default_int_handler)  # never kill the tests
    os.kill(os.getpid(), signum)


@pytest.fixture
def main_thread() -> Iterator[None]:
    """The main thread, with the signals at Python's defaults (a shell started in the background ignores SIGINT)."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are installed in the main thread only")
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    defaults[signal.SIGHUP] = signal.SIG_DFL
    before = {signum: signal.signal(signum, handler) for signum, handler in defaults.items()}
    yield
    for signum, handler in before.items():
        signal.signal(signum, handler)


@pytest.mark.usefixtures("main_thread")
def test_a_second_signal_during_the_final_save_waits_for_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from training import checkpoint, ppo

    iterate, save = ppo.PPOTrainer.iterate, checkpoint.torch.save
    calls = {"iterate": 0, "saves_completed": 0}

    def iterate_then_ctrl_c(self: ppo.PPOTrainer) -> dict:
        calls["iterate"] += 1
        if calls["iterate"] == 3:
            _send(signal.SIGINT)  # a real SIGINT, as from Ctrl-C
        return iterate(self)

    def save_with_sigterm(obj: object, f: object) -> None:
        _send(signal.SIGTERM)  # a second signal in the middle of torch.save
        save(obj, f)
        calls["saves_completed"] += 1

    monkeypatch.setattr(ppo.PPOTrainer, "iterate", iterate_then_ctrl_c)
    monkeypatch.setattr(checkpoint.torch, "save", save_with_sigterm)
    out = tmp_path / "run"
    assert main(["train", str(write_config(tmp_path, LONG)), "--out", str(out), "-q"]) == 128 + signal.SIGINT == 130
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "SIGTERM received while writing a checkpoint; stopping once it is written" in err
    assert "interrupted by SIGINT; checkpoint saved at step" in err
    assert calls["saves_completed"] == 1
    monkeypatch.setattr(checkpoint.torch, "save", save)
    assert load_checkpoint(out / "checkpoints" / "latest.pt")["update"] == 2
    assert not list((out / "checkpoints").glob(".*.tmp"))


@pytest.mark.usefixtures("main_thread")
def test_an_ignored_sighup_stays_ignored_as_under_nohup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from training import ppo

    iterate = ppo.PPOTrainer.iterate
    calls = {"iterate": 0}

    def iterate_and_signal(self: ppo.PPOTrainer) -> dict:
        calls["iterate"] += 1
        if calls["iterate"] == 2:
            _send(signal.SIGHUP, ignored=True)  # the terminal of a nohup run closes: training goes on
        if calls["iterate"] == 4:
            _send(signal.SIGTERM)
        return iterate(self)

    monkeypatch.setattr(ppo.PPOTrainer, "iterate", iterate_and_signal)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        out = tmp_path / "run"
        assert main(["train", str(write_config(tmp_path, LONG)), "--out", str(out), "-q"]) == 128 + signal.SIGTERM
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert "SIGHUP" not in capfd.readouterr().err
    assert load_checkpoint(out / "checkpoints" / "latest.pt")["update"] == 3


@pytest.mark.usefixtures("main_thread")
def test_a_signal_during_a_periodic_save_stops_once_the_file_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from training import checkpoint

    save = checkpoint.torch.save
    written = []

    def save_with_sigterm(obj: object, f: object) -> None:
        if not written:
            _send(signal.SIGTERM)
        save(obj, f)
        written.append(obj["update"])

    monkeypatch.setattr(checkpoint.torch, "save", save_with_sigterm)
    out = tmp_path / "run"
    config = write_config(tmp_path, {**LONG, "checkpoint_every": 1})  # a checkpoint after every update
    assert main(["train", str(config), "--out", str(out), "-q"]) == 128 + signal.SIGTERM
    err = capfd.readouterr().err
    assert "Traceback" not in err and "SIGTERM received while writing a checkpoint" in err
    assert written == [1, 1]  # the periodic save of update 1 completed, then the stop saved update 1 again
    monkeypatch.setattr(checkpoint.torch, "save", save)
    assert load_checkpoint(out / "checkpoints" / "latest.pt")["update"] == 1


def test_checkpoint_minutes_saves_latest_by_wall_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from training import ppo

    iterate = ppo.PPOTrainer.iterate
    seen: dict[str, list] = {"run": [], "other": []}

    def iterate_and_look(self: ppo.PPOTrainer) -> dict:
        for name, updates in seen.items():
            latest = tmp_path / name / "checkpoints" / "latest.pt"
            if (tmp_path / name).is_dir():
                updates.append(load_checkpoint(latest)["update"] if latest.exists() else None)
        return iterate(self)

    monkeypatch.setattr(ppo.PPOTrainer, "iterate", iterate_and_look)
    config = write_config(tmp_path, {**TINY, "total_steps": 3000, "eval": {**TINY["eval"], "every": 0}})
    assert main(["train", str(config), "--out", str(tmp_path / "run"), "-q", "--set", "checkpoint_minutes=1e-6"]) == 0
    n = len(seen["run"])
    assert n >= 3 and seen["run"] == [None, *range(1, n)]  # no evaluation, no checkpoint_every: saved by time
    assert main(["train", str(config), "--out", str(tmp_path / "other"), "-q", "--set", "checkpoint_minutes=0"]) == 0
    assert seen["other"] == [None] * n  # checkpoint_minutes=0: nothing saved before the end
    with pytest.raises(ConfigError, match=r"checkpoint_minutes must be .*>= 0"):
        config_from_dict({"checkpoint_minutes": -1})


# ----------------------------------------------------------------------------- run folders


def test_out_on_a_used_folder_is_refused_and_force_moves_it_aside(
    tmp_path: Path, run_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, TINY)
    files = lambda run: {p.name: p.read_bytes() for p in (run / "checkpoints").iterdir()}  # noqa: E731
    events = lambda run: {p.name for p in run.glob("events.out.tfevents.*")}  # noqa: E731
    before, old_events = files(run_copy), events(run_copy)
    assert main(["train", str(config), "--out", str(run_copy), "-q"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "already holds a run" in line and f"--resume {run_copy}" in line and "--force" in line
    assert files(run_copy) == before and events(run_copy) == old_events  # untouched

    assert main(["train", str(config), "--out", str(run_copy), "--force", "-q"]) == 0
    err = capsys.readouterr().err
    moved = re.search(r"agurk: --force: moved the old folder (\S+) aside to (\S+); starting a new run in", err)
    assert moved and Path(moved.group(1)) == run_copy
    aside = Path(moved.group(2))
    assert aside.parent == run_copy.parent and aside.name.startswith("run.old-")
    assert files(aside) == before and events(aside) == old_events  # the old run is kept whole
    assert len(events(run_copy)) == 1 and not events(run_copy) & old_events  # the new run's events only

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("mine")
    assert main(["train", str(config), "--out", str(notes), "-q"]) == 2
    assert "is not empty (1 entry)" in one_error_line(capsys.readouterr().err)
    assert main(["train", str(config), "--out", str(notes / "a.txt"), "-q"]) == 2
    assert "exists and is not a folder" in one_error_line(capsys.readouterr().err)
    monkeypatch.chdir(run_copy)
    assert main(["train", str(config), "--out", ".", "--force", "-q"]) == 2
    assert "holds the current folder" in one_error_line(capsys.readouterr().err)


@pytest.mark.skipif(sys.platform == "win32", reason="run folders are locked with fcntl")
def test_a_run_folder_in_use_is_refused_and_left_untouched(
    tmp_path: Path, run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from training.run_folder import lock_run

    config = write_config(tmp_path, TINY)
    before = {p: p.read_bytes() for p in run_copy.rglob("*") if p.is_file() and p.name != ".lock"}
    held = lock_run(run_copy)  # as a training process holds it
    try:
        assert main(["train", "--resume", str(run_copy), "--set", "total_steps=3000", "-q"]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert f"is in use by another training run (process {os.getpid()}); wait for it to end" in line
        assert main(["train", str(config), "--out", str(run_copy), "--force", "-q"]) == 2
        assert "is in use by another training run" in one_error_line(capsys.readouterr().err)
        after = {p: p.read_bytes() for p in run_copy.rglob("*") if p.is_file() and p.name != ".lock"}
        assert after == before
    finally:
        held.close()
    assert main(["train", "--resume", str(run_copy), "--set", "total_steps=3000", "-q"]) == 0


def test_default_out_never_collides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import training.run_folder

    monkeypatch.setattr(training.run_folder.time, "strftime", lambda fmt: "20240601-120000")
    folders = [default_out("configs/quickstart.yaml", tmp_path / "runs") for _ in range(3)]
    assert [f.name for f in folders] == [
        "quickstart-20240601-120000",
        "quickstart-20240601-120000-2",
        "quickstart-20240601-120000-3",
    ]
    assert all(f.is_dir() for f in folders)


# ----------------------------------------------------------------------------- resume checks


@pytest.mark.parametrize(
    ("sets", "named"),
    [
        (["preset=swedish"], ["rules: the run trained under standard + hand_size=1", "says swedish", "beat_target"]),
        (["players=[3, 4]"], ["players: the run trained on [4], the config says [3, 4]"]),
        (["episode=match"], ["episode: the run trained on 'round' episodes, the config says 'match'"]),
        (["rules={limit: 21}"], ["the config says standard + limit=21 (", "limit 8 -> 21"]),
    ],
)
def test_resume_with_another_game_is_refused_naming_it_unless_forced(
    tmp_path: Path, run_copy: Path, capsys: pytest.CaptureFixture[str], sets: list[str], named: list[str]
) -> None:
    config_yaml = (run_copy / "config.yaml").read_text()
    args = ["train", str(write_config(tmp_path, TINY)), "--resume", str(run_copy), "-q"]
    for item in sets:
        args += ["--set", item]
    assert main(args) == 2
    line = one_error_line(capsys.readouterr().err)
    assert all(n in line for n in named), line
    assert "--force" in line
    assert (run_copy / "config.yaml").read_text() == config_yaml  # the run's config is not replaced
    if sets != ["preset=swedish"]:
        return
    step = load_checkpoint(run_copy / "checkpoints" / "latest.pt")["global_step"]
    assert main([*args, "--force", "--set", f"total_steps={step + 300}"]) == 0
    err = capsys.readouterr().err
    assert "agurk: --force: continuing the run on a new game; rules: the run trained under standard" in err
    assert yaml.safe_load((run_copy / "config.yaml").read_text())["preset"] == "swedish"
    assert load_checkpoint(run_copy / "checkpoints" / "latest.pt")["config"]["preset"] == "swedish"


def test_resume_with_another_network_is_refused_even_with_force(
    tmp_path: Path, run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, TINY)
    for extra in ([], ["--force"]):
        assert main(["train", str(config), "--resume", str(run_copy), "--set", "hidden=[8]", *extra]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert "network: the run's has hidden [16] and 13 actions, the config needs hidden [8]" in line
        assert "even with --force" in line
    assert main(["train", str(config), "--resume", str(run_copy), "--set", "pool.agents={random: 1}"]) == 2
    assert "pool: the run's has pool.agents ['heuristic']" in one_error_line(capsys.readouterr().err)


# ----------------------------------------------------------------------------- missing extras, damaged files


@pytest.mark.parametrize(
    ("hidden", "args", "message"),
    [
        ("torch", ["train", "configs/quickstart.yaml"], "agurk train needs torch"),
        ("torch", ["bench", "train", "--seconds", "1"], "agurk bench train needs torch"),
        ("torch", ["skill-report", "--budget", "smoke"], "agurk skill-report needs torch"),
        ("tensorboard", ["train", "configs/quickstart.yaml"], "agurk train needs tensorboard"),
        ("stable_baselines3", ["train", "configs/sb3_quickstart.yaml"], "agurk train with algo: sb3 needs stable-"),
    ],
)
def test_a_missing_optional_dependency_is_one_line_with_the_install_command(
    tmp_path: Path, hidden: str, args: list[str], message: str
) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(f"import sys\nsys.modules[{hidden!r}] = None  # as if not installed\n")
    work = tmp_path / "work"
    shutil.copytree(REPO / "configs", work / "configs")
    proc = agurk(*args, cwd=work, shim=shim)
    stdout, stderr = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 2, stderr
    line = one_error_line(stderr)
    assert message in line and f"run {INSTALL} in the root of the clone" in line
    assert not stdout and not (work / "runs").exists()


def test_no_rl_install_hint_names_a_package_index_release() -> None:
    wrong = [
        str(p.relative_to(REPO))
        for folder in ("agurk", "agents", "training", "skill", "agurk_env", "docs")
        for p in (REPO / folder).rglob("*")
        if p.suffix in (".py", ".md") and "agurk-rl[rl]" in p.read_text(encoding="utf-8")
    ]
    assert not wrong, f"pip install 'agurk-rl[rl]' cannot work (not on PyPI): {wrong}"


def _damaged(tmp_path: Path, tiny_run: Path) -> dict[str, tuple[Path, str]]:
    """Damaged and foreign files, each with the phrase its error must contain."""
    real = (tiny_run / "checkpoints" / "latest.pt").read_bytes()
    files = {
        "random": (os.urandom(3000), "is not a checkpoint written by agurk train (expected a torch zip archive)"),
        "truncated": (real[: len(real) // 2], "is a truncated or damaged checkpoint"),
        "text": (b"total_steps: 1000\nseed: 3\n", "is a text file, not a checkpoint written by agurk train"),
        "empty": (b"", "is empty, not a checkpoint written by agurk train"),
    }
    out = {}
    for name, (content, phrase) in files.items():
        path = tmp_path / f"{name}.pt"
        path.write_bytes(b"\x89" + content[1:] if name == "random" else content)  # never valid UTF-8
        out[name] = (path, phrase)
    with zipfile.ZipFile(tmp_path / "zip.pt", "w") as z:
        z.writestr("policy.pth", b"weights")
    out["zip"] = (tmp_path / "zip.pt", "is a zip archive but not a checkpoint written by agurk train")
    torch.save({"weights": torch.zeros(3)}, tmp_path / "foreign.pt")
    out["foreign"] = (tmp_path / "foreign.pt", "is a torch file but not a checkpoint written by agurk train")
    torch.save({"model": torch.nn.Linear(2, 2)}, tmp_path / "pickled.pt")
    out["pickled"] = (tmp_path / "pickled.pt", "it holds Python objects, not only tensors and plain values")
    return out


def test_damaged_and_foreign_checkpoints_are_one_line_saying_what_was_expected(
    tmp_path: Path, tiny_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, (path, phrase) in _damaged(tmp_path, tiny_run).items():
        with pytest.raises(CheckpointError) as err:
            load_checkpoint(path)
        message = str(err.value)
        assert phrase in message, (name, message)
        assert "\n" not in message and not re.search(r"weights_only|PyTorch|miniz|enforce fail", message), message
        assert main(["evaluate", "--agents", f"ppo:{path},random,random,random", "--matches", "1", "-q"]) == 2
        assert phrase in one_error_line(capsys.readouterr().err)


def test_resume_from_a_truncated_checkpoint_is_one_line(
    tmp_path: Path, run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latest = run_copy / "checkpoints" / "latest.pt"
    latest.write_bytes(latest.read_bytes()[:5000])
    assert main(["train", "--resume", str(run_copy), "-q"]) == 2
    assert "is a truncated or damaged checkpoint" in one_error_line(capsys.readouterr().err)


# ----------------------------------------------------------------------------- logs


def test_progress_lines_without_a_terminal_and_none_with_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, {**TINY, "total_steps": 800})
    assert main(["train", str(config), "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if PROGRESS.search(line)]
    assert len(lines) >= 2 and re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d training: [\d,]+/", lines[0])
    assert "win: 4p" in lines[-1]  # the evaluation's line
    assert main(["train", str(config), "--out", str(tmp_path / "b"), "-q"]) == 0
    assert not capsys.readouterr().err


def test_tensorboard_has_one_win_rate_tag_per_agent_and_one_for_all_snapshots(tiny_run: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags = set()
    for events in tiny_run.glob("events.out.tfevents.*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        tags |= {t for t in acc.Tags()["scalars"] if t.startswith("train/win_rate/")}
    assert tags == {"train/win_rate/heuristic", "train/win_rate/snapshots"}
    logs = {"train/win_rate/heuristic": 0.2, "train/win_rate/snapshot@96": 0.5, "train/win_rate/snapshot@192": 0.3}
    assert fold_snapshot_rates(logs, ["heuristic"]) == {
        "train/win_rate/heuristic": 0.2,
        "train/win_rate/snapshots": pytest.approx(0.4),
    }


def test_config_changes_name_an_option_the_saved_config_lacks_against_its_default() -> None:
    saved = {k: v for k, v in config_to_dict(config_from_dict(TINY_TRAINING)).items() if k != "norm_adv_tables"}
    changed = config_changes(saved, config_from_dict({**TINY_TRAINING, "norm_adv_tables": True}))
    assert changed == ["norm_adv_tables False -> True"]
    assert config_changes(saved, config_from_dict(TINY_TRAINING)) == []


def test_config_changes_name_each_mixture_family_added_removed_or_changed() -> None:
    family = {"presets": ["quick"], "players": [4]}
    mixture = {"families": {"a": family, "b": {**family, "weight": 2.0}}}
    saved = config_to_dict(config_from_dict({**TINY_TRAINING, "mixture": mixture}))
    now = {"families": {"a": {**family, "weight": 3.0}, "c": family}}
    changed = config_changes(saved, config_from_dict({**TINY_TRAINING, "mixture": now}))
    assert [c.split(" ")[0] for c in changed] == ["mixture.families.a", "mixture.families.c", "mixture.families.b"]
    assert changed[1].startswith("mixture.families.c None -> {") and changed[2].endswith("-> None")
    assert config_changes(saved, config_from_dict({**TINY_TRAINING, "mixture": mixture})) == []
