"""A newcomer's first hour, again (issue 55): Ctrl-C, a record kept, a damaged file, exact options, said limits,
the two scripts and an 80-column terminal.

Each test failed before its fix.
"""

from __future__ import annotations

import argparse
import ctypes
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from signals import default_sigint

from agurk.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LONG_EVALUATE = ["evaluate", "--agents", "guard,random,random,random", "--matches", "400000", "--workers", "1", "-q"]
"""A tournament that runs for minutes in this one process: only a stop ends it."""


# ----------------------------------------------------------------------------- 1. Ctrl-C at any moment


def test_importing_the_command_line_imports_no_command() -> None:
    """What the ``agurk`` script imports before :func:`agurk.cli.main` guards against Ctrl-C: nothing of ours."""
    code = "import sys, agurk.cli; print(' '.join(sorted(m for m in sys.modules if m.startswith(('agurk', 'numpy')))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["agurk", "agurk.cli"]


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.8])
def test_ctrl_c_at_any_moment_of_a_command_is_one_line_and_status_130(tmp_path: Path, delay: float) -> None:
    """Ctrl-C ``delay`` s into :func:`agurk.cli.main` (the commands' imports included): one line, 130, no file changed.

    Before it, the ``agurk`` script imports only ``agurk.cli`` (``test_importing_the_command_line_imports_no_command``).
    """
    result = tmp_path / "result.json"
    result.write_text('{"earlier": "result"}\n')
    script = (  # 'ready' once main's guard is entered: the lines before main() are the agurk script's, not ours
        "import sys; import agurk.cli as c; run = c._run; "
        "c._run = lambda argv: (print('ready', file=sys.stderr, flush=True), run(argv))[1]; sys.exit(c.main())"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, *LONG_EVALUATE, "--json", str(result)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        assert child.stderr.readline() == "ready\n"  # what the agurk script does, and main about to run
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        err = child.stderr.read()
        status = child.wait(60)
    finally:
        child.kill()
    assert (status, err) == (130, "agurk: interrupted by SIGINT\n")
    assert result.read_text() == '{"earlier": "result"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_a_stop_python_could_not_raise_is_sent_again() -> None:
    """A stop inside a ctypes callback (numba compiling, early in a command) is printed and dropped by Python."""
    from training.stop_signals import Interrupted, Signals

    callback = ctypes.CFUNCTYPE(None)(lambda: os.kill(os.getpid(), signal.SIGTERM))
    with pytest.raises(Interrupted), Signals():
        callback()  # the stop is raised inside the callback, where ctypes drops it
        for _ in range(100):
            time.sleep(0.01)


def test_a_stop_lets_the_interrupted_frames_go_quietly(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An object Ctrl-C cut short may fail in ``__del__`` (llvmlite's while numba compiles): no traceback printed."""
    from training.stop_signals import stopped

    class HalfBuilt:
        def __del__(self) -> None:
            raise AttributeError("'PassBuilder' object has no attribute '_as_parameter_'")

    def build() -> None:
        half = HalfBuilt()  # noqa: F841 (held by the interrupted frame)
        raise KeyboardInterrupt

    printed: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: printed.append(info.exc_value))
    try:
        build()
    except KeyboardInterrupt as e:
        assert stopped(e) == 130
    assert printed == [] and capfd.readouterr().err == "agurk: interrupted by SIGINT\n"


# ----------------------------------------------------------------------------- 2. play --record keeps a file


def _play(argv: list[str], typed: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """``agurk play ARGV`` in this process, with ``typed`` as what the person types."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    monkeypatch.setenv("COLUMNS", "200")  # one line per message
    return main(["play", "--opponents", "random", "--seed", "3", *argv])


def test_play_record_refuses_an_existing_file_and_keeps_it_when_nothing_was_played(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "mine.jsonl"
    mine.write_text("my earlier game\n")
    assert _play(["--record", str(mine)], "q\n", monkeypatch) == 2
    err = capsys.readouterr().err
    assert err == f"agurk: error: --record {str(mine)!r} exists: add --force to replace it, or give a new file\n"
    assert _play(["--record", str(mine), "--force"], "q\n", monkeypatch) == 0  # quits before a card
    assert f"no record written to {mine}: you played no card" in capsys.readouterr().out
    assert mine.read_text() == "my earlier game\n"
    new = tmp_path / "new.jsonl"
    assert _play(["--record", str(new)], "", monkeypatch) == 0  # end of input at the first prompt
    assert not new.exists()
    cards = "".join(f"#{n}\n" for n in range(1, 8))  # the first legal one is played
    assert _play(["--record", str(mine), "--force"], cards + "q\n", monkeypatch) == 0
    assert "partial record written" in capsys.readouterr().out
    assert json.loads(mine.read_text())["agents"] == ["human", "random", "random", "random"]


# ----------------------------------------------------------------------------- 3. a damaged record


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        ({"rounds": [[1, 2]]}, "TypeError list indices must be integers or slices, not str"),
        ({"winners": [9]}, "ValueError seat 9 at a table of 4"),
    ],
)
def test_replay_names_the_file_and_line_of_a_damaged_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: dict, why: str
) -> None:
    sim = tmp_path / "sim.jsonl"
    assert main(["simulate", "--matches", "2", "--seed", "1", "-q", "--out", str(sim)]) == 0
    first, second = sim.read_text().splitlines()
    sim.write_text(f"{first}\n\n{json.dumps({**json.loads(second), **damage})}\n")  # the second record on line 3
    assert main(["replay", str(sim), "--match", "1", "--all"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"agurk: error: {str(sim)!r} line 3: malformed game record: {why}\n"
    assert main(["replay", str(sim), "--match", "0", "--all"]) == 0  # the whole line 1 plays


# ----------------------------------------------------------------------------- 4. exact options


def _parsers(parser: argparse.ArgumentParser, name: str = "agurk") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (sub)command's parser, by its command line."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from _parsers(subparser, f"{name} {sub}")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["simulate", "--matches", "2", "--match", "3"], "unrecognized arguments: --match 3"),
        (["simulate", "--match", "3"], "the following arguments are required: --matches"),
        (
            ["evaluate", "--agents", "random,random", "--set", "players=2", "--matches", "2", "--boot", "5"],
            "unrecognized arguments: --boot 5",
        ),
        (["simulate", "--matches", "1e3"], "argument --matches: must be an integer >= 1, not '1e3'"),
        (["simulate", "--matches", "1000.0"], "argument --matches: must be an integer >= 1, not '1000.0'"),
        (["bench", "engine", "--batch", "1e2"], "argument --batch: must be an integer >= 1, not '1e2'"),
        (["skill-report", "--players", "3,4e0"], "argument --players: must be a list of integers"),
    ],
)
def test_an_option_is_taken_as_written_only(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert main([*argv, *(["--out", str(out)] if argv[0] == "simulate" else [])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agurk: error: ") and message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_no_parser_takes_an_abbreviated_option() -> None:
    parsers = dict(_parsers(build_parser()))
    assert {"agurk", "agurk evaluate", "agurk bench engine"} <= set(parsers)
    assert [name for name, parser in parsers.items() if parser.allow_abbrev] == []


# ----------------------------------------------------------------------------- 5. limits said


def test_evaluate_says_when_its_workers_are_not_used(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "--agents", "guard,random,random,random", "--matches", "10", "-q", "--json", "-"]
    assert main([*argv, "--workers", "2"]) == 0
    assert capsys.readouterr().err == (
        "agurk: note: 10 deals x 4 seatings = 40 matches run in one process: --workers 2 takes effect from 4,000 "
        "matches\n"
    )
    assert main([*argv, "--workers", "1"]) == 0
    assert capsys.readouterr().err == ""


def test_resuming_a_finished_run_says_it_is_finished_and_how_to_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("torch.utils.tensorboard")
    from test_runs import TINY, write_config

    run = tmp_path / "run"
    assert main(["train", str(write_config(tmp_path, {**TINY, "total_steps": 600})), "--out", str(run), "-q"]) == 0
    capsys.readouterr()
    files = {p: p.stat().st_mtime_ns for p in run.rglob("*")}
    assert main(["train", "--resume", str(run), "-q"]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(
        rf"agurk: error: --resume {re.escape(str(run))}: the run is finished: it reached its total_steps \(600\) at "
        r"step [\d,]+; to train it on, raise total_steps \(e\.g\. --set total_steps=1200\)\n",
        err,
    ), err
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*")} == files  # nothing rewritten
    assert main(["train", "--resume", str(run), "--set", "total_steps=1200", "-q"]) == 0


# ----------------------------------------------------------------------------- 6 and 7. the two scripts


def _stand_ins(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A PATH whose python, pip, agurk and the rest only log their arguments; the environment and the log."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    python = (  # `python -m venv DIR` makes a stand-in environment whose activate puts DIR/bin first on PATH
        "#!/bin/bash\n"
        f'echo "$(basename "$0") $*" >> {log}\n'
        'if [[ "$1 $2" == "-m venv" ]]; then\n'
        '    mkdir -p "$3/bin" && cp "$0" "$3/bin/python"\n'
        '    echo "export PATH=\\"$3/bin:\\$PATH\\"" > "$3/bin/activate"\n'
        "fi\n"
    )
    for tool in ("python", "pip", "agurk", "ruff", "mypy", "mkdocs", "chromium", "chromedriver"):
        (bin_dir / tool).write_text(python)
        (bin_dir / tool).chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHON": str(bin_dir / "python"), "HOME": str(tmp_path)}
    return env, log


@pytest.mark.parametrize("fails", [False, True])
def test_the_test_script_says_where_its_environment_is_and_removes_it(tmp_path: Path, fails: bool) -> None:
    env, _ = _stand_ins(tmp_path)
    if fails:
        (tmp_path / "bin" / "ruff").write_text("#!/bin/bash\nexit 1\n")  # the lint fails: the script stops
    temp = tmp_path / "temp"
    temp.mkdir()
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "test.sh")], env={**env, "TMPDIR": str(temp)}, capture_output=True, text=True
    )
    assert done.returncode == (1 if fails else 0), done.stderr
    (venv,) = re.findall(r"^test environment: (\S+) \(removed at the end", done.stdout, re.M)
    assert Path(venv).parent.parent == temp and list(temp.iterdir()) == []  # made, then removed
    assert f"test environment {venv} removed" in done.stdout
    keep = tmp_path / "keep"
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "test.sh")], env={**env, "CI_VENV": str(keep)}, capture_output=True, text=True
    )
    assert f"test environment: {keep} (CI_VENV: kept)" in done.stdout
    assert (keep / "bin" / "activate").exists()


def test_the_readme_states_no_test_timing_it_did_not_measure() -> None:
    readme = (ROOT / "README.md").read_text() + (ROOT / "docs" / "getting-started.md").read_text()
    assert "2281 tests" not in readme and "10 min 23 s" not in readme and "8 min 42 s" not in readme
    assert "CI_VENV=DIR scripts/test.sh" in readme


def test_the_quickstart_ends_saying_how_to_reach_agurk_and_its_own_evaluation(tmp_path: Path) -> None:
    env, log = _stand_ins(tmp_path)
    venv = tmp_path / "venv"
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "quickstart.sh")],
        env={**env, "VENV": str(venv)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    (evaluate,) = [line for line in log.read_text().splitlines() if line.startswith("agurk evaluate ")]
    last = done.stdout.strip().splitlines()[-2:]
    assert f". {venv}/bin/activate" in last[0]
    assert last[1].startswith("next: ") and last[1][len("next: ") :].partition("  #")[0].strip() == evaluate
    readme = (ROOT / "README.md").read_text()
    quick = readme[readme.index("scripts/quickstart.sh\n") : readme.index("## One example per use")]
    assert ". .venv/bin/activate" in quick
    guide = (ROOT / "docs" / "getting-started.md").read_text()
    assert ". .venv/bin/activate" in guide[guide.index("scripts/quickstart.sh\n") :]


# ----------------------------------------------------------------------------- 8. an 80-column terminal


@pytest.mark.parametrize(("columns", "widest"), [(80, 80), (200, 100)])
def test_every_help_fits_the_terminal(
    columns: int, widest: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    for name, parser in _parsers(build_parser()):
        text = parser.format_help()
        wide = [line for line in text.splitlines() if len(line) > widest and " " in line.strip()]
        assert wide == [], name
    assert main(["evaluate", "--help"]) == 0  # the examples keep every word, wrapped or not
    assert "--agents shed,guard,counter,ducker --matches 10000 --seed 0 --json runs/h.json" in " ".join(
        capsys.readouterr().out.split()
    )


def _terminal(*args: str) -> str:
    """What ``agurk ARGS`` prints on an 80-column terminal until it ends or asks for a card, without escapes."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agurk.cli", *args],
        cwd=str(ROOT),
        env={**env, "NO_COLOR": "1"},
        dimensions=(24, 80),
        encoding="utf-8",
        timeout=60,
        preexec_fn=default_sigint,
    )
    index = child.expect([pexpect.EOF, r"your card \([^)]*\)> "])
    said = ANSI.sub("", child.before)
    child.close(force=True)
    assert index == 1 or child.exitstatus == 0, said
    return said


def test_the_evaluate_table_keeps_its_numbers_whole_at_80_columns() -> None:
    said = _terminal("evaluate", "--agents", "guard,random,random,random", "--matches", "20", "-q")
    lines = said.splitlines()
    assert all(len(line.rstrip()) <= 80 for line in lines), said
    rows = [line for line in lines if re.match(r"│ \d │", line)]
    ci = r"[-+]?\d+(\.\d+)? \[[-+]?\d+(\.\d+)?, [-+]?\d+(\.\d+)?\]"
    assert len(rows) == 4 and all(len(re.findall(ci, row)) == 3 for row in rows), said  # win, penalty, rating
    assert "the last-trick rate is left out at this width (--json has it)" in " ".join(said.split())


def test_play_wraps_its_lines_between_words_at_80_columns() -> None:
    said = _terminal("play", "--opponents", "random", "--set", "players=8", "--set", "hand_size=6")
    assert all(len(line.rstrip()) <= 80 for line in said.splitlines()), said
    opponents = ", ".join(f"P{s} random" for s in range(1, 8))
    assert f"opponents: {opponents}" in " ".join(said.split())


def test_an_interrupt_python_wrapped_on_its_way_out_is_still_one_line(capfd: pytest.CaptureFixture[str]) -> None:
    """Python 3.11 wraps an exception raised in a class's ``__set_name__`` (an Enum imported) in a RuntimeError."""
    import agurk.cli as cli

    def interrupted_import(argv: object) -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise RuntimeError("Error calling __set_name__ on '_proto_member' instance in 'EnumClass'") from e

    original = cli._run
    cli._run = interrupted_import
    try:
        assert cli.main(["evaluate"]) == 130
    finally:
        cli._run = original
    assert capfd.readouterr().err == "agurk: interrupted by SIGINT\n"
