"""Stopping a command (Ctrl-C, ``kill -TERM``, ``kill -INT`` on the parent alone, ``kill -9``): its workers end, its
outputs stay whole, and it says so in one line.

The commands run as subprocesses and the process tree is read from ``/proc``: every test
failed before its fix (workers left computing, a 0-byte ``--json``, a truncated ``--out``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from signals import default_sigint

from agurk.cli import main

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")

ROOT = Path(__file__).resolve().parent.parent
LONG_EVALUATE = ["evaluate", "--agents", "guard,random,random,random", "--matches", "400000", "--batch", "64", "-q"]
"""A tournament that runs for minutes: only a stop ends it."""


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and _alive(int(entry.name)):
                out.append(int(entry.name))
    return out


def _start(args: list[str], err: Path) -> subprocess.Popen[str]:
    """``agurk ARGS`` in its own session, so that a signal reaches the parent alone (as ``kill PID`` does).

    Its stderr goes to the file ``err``: a pipe would stay open as long as an orphaned worker lives.
    """
    with err.open("w") as f:
        return subprocess.Popen(
            [sys.executable, "-m", "agurk.cli", *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=f,
            start_new_session=True,
            preexec_fn=default_sigint,
        )


def _wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    """Poll ``condition`` until it holds (a busy 2-core machine gets ``seconds``)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def _stop(child: subprocess.Popen[str], signum: int) -> tuple[int, float]:
    """Send ``signum`` to ``child`` alone: its exit status and the seconds it took to exit."""
    sent = time.monotonic()
    child.send_signal(signum)
    try:
        return child.wait(30), time.monotonic() - sent
    except subprocess.TimeoutExpired:
        return -1, time.monotonic() - sent
    finally:
        child.kill()


def _workers_end(workers: list[int]) -> None:
    """Assert that ``workers`` end within 5 s; kill any left, so that a failure leaves nothing running."""
    try:
        _wait_for(lambda: not any(_alive(w) for w in workers), 5.0)
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_evaluate_ends_its_workers_keeps_its_json_and_says_so(tmp_path: Path, signum: int) -> None:
    result = tmp_path / "result.json"
    result.write_text('{"earlier": "result"}\n')
    err = tmp_path.parent / f"{tmp_path.name}.err"
    child = _start([*LONG_EVALUATE, "--workers", "2", "--json", str(result)], err)
    _wait_for(lambda: len(_children(child.pid)) >= 3)  # the two workers (and multiprocessing's resource tracker)
    workers = _children(child.pid)
    time.sleep(0.5)  # the workers are playing
    status, seconds = _stop(child, signum)
    _workers_end(workers)
    assert status == 128 + signum and seconds < 10, (status, seconds, err.read_text())
    assert err.read_text().splitlines() == [f"agurk: interrupted by {signal.Signals(signum).name}"]
    assert result.read_text() == '{"earlier": "result"}\n'  # not emptied
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]  # no temporary file left


def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    child = _start([*LONG_EVALUATE, "--workers", "2"], tmp_path / "err")
    _wait_for(lambda: len(_children(child.pid)) >= 3)
    workers = _children(child.pid)
    _stop(child, signal.SIGKILL)
    _workers_end(workers)  # no orphan left computing


def test_an_interrupted_simulate_leaves_the_previous_out_file(tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    out.write_text("earlier records\n")
    err_file = tmp_path.parent / f"{tmp_path.name}.err"
    args = ["simulate", "--agents", "guard", "--matches", "1000000", "--batch", "64", "--out", str(out), "-q"]
    child = _start(args, err_file)
    _wait_for(lambda: len(list(tmp_path.iterdir())) > 1 or out.stat().st_size != 16)  # writing has begun
    status, _ = _stop(child, signal.SIGINT)
    err = err_file.read_text()
    assert status == 130 and err.startswith("agurk: interrupted by SIGINT after ") and len(err.splitlines()) == 1
    assert f"{out} left as it was" in err
    assert out.read_text() == "earlier records\n"
    assert [p.name for p in tmp_path.iterdir()] == ["sim.jsonl"]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["evaluate", "--agents", "random,random", "--set", "players=2", "--matches", "2", "--json"], "--json"),
        (["simulate", "--matches", "2", "--out"], "--out"),
    ],
)
def test_an_output_file_in_a_missing_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], option: str
) -> None:
    target = tmp_path / "missing" / "deeper" / "out.json"
    assert main([*args, str(target)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"agurk: error: cannot write {option} '{target}': folder '{target.parent}' does not exist"
    ]
    assert not (tmp_path / "missing").exists()


def test_one_new_folder_for_an_output_file_is_made_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "runs" / "out.json"  # runs/ in a fresh clone: the README's commands write there
    argv = ["evaluate", "--agents", "random,random", "--set", "players=2", "--matches", "2", "-q", "--json"]
    assert main([*argv, str(target)]) == 0
    assert target.read_text().startswith("{")
    assert capsys.readouterr().err.splitlines() == [f"agurk: made the folder '{target.parent}' for --json"]


def test_an_evaluate_json_is_written_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = tmp_path / "result.json"
    argv = ["evaluate", "--agents", "random,random", "--set", "players=2", "--matches", "2", "--json", str(result)]
    assert main([*argv, "-q"]) == 0
    assert result.read_text().startswith("{") and [p.name for p in tmp_path.iterdir()] == ["result.json"]
    assert os.stat(result).st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
