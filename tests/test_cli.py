"""The ``agurk`` command line: simulate, rules, bench engine, and one-line user errors."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
from replay import replay_record

from agurk.cli import build_parser, main
from agurk.cli.common import SEED, Parser, add_options, from_args
from agurk_env.options import REQUIRED, option
from agurk_env.rules import PRESETS, Rules

RECORD_KEYS = {"rules", "seed", "agents", "rounds", "winners"}
ROUND_KEYS = {"dealer", "hands", "tricks", "penalties", "scores", "out", "rebought"}


def _agurk_command() -> list[str]:
    script = shutil.which("agurk", path=str(Path(sys.executable).parent)) or shutil.which("agurk")
    return [script] if script else [sys.executable, "-m", "agurk.cli"]


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_help_in_a_real_subprocess() -> None:
    done = subprocess.run([*_agurk_command(), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for word in ("simulate", "rules", "bench", "examples:"):
        assert word in done.stdout


@pytest.mark.parametrize("command", [[], ["simulate"], ["rules"], ["bench"], ["bench", "engine"]])
def test_help_of_every_command(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: agurk" in out
    if command in (["simulate"], ["bench", "engine"]):
        assert "examples:" in out and "--set OPTION=VALUE" in out


@pytest.mark.parametrize(
    ("preset", "sets"),
    [
        ("standard", ["players=2"]),
        ("danish21", ["players=3"]),
        ("every_trick", []),
        ("lives", ["players=5"]),
        ("second_chance", ["players=6"]),
        ("quick", ["players=7"]),
        ("jokers", ["players=8", "hand_size=6"]),
        ("swedish", ["players=8", "hand_size=3", "limit=40"]),
    ],
)
def test_simulate_writes_valid_records(preset: str, sets: list[str], tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    n = 6
    set_args = [a for s in sets for a in ("--set", s)]
    argv = ["simulate", "--rules", preset, *set_args, "--matches", str(n), "--seed", "3", "--batch", "8"]
    assert main([*argv, "--out", str(out), "--quiet", "--with-legal"]) == 0
    records = _records(out)
    assert len(records) == n
    rules = Rules.from_dict({**PRESETS[preset], **dict(_parse(s) for s in sets)})
    for m, record in enumerate(records):
        assert RECORD_KEYS <= record.keys()
        assert record["rules"] == rules.to_dict()
        assert record["seed"] == 3
        assert record.get("match", m) == m
        assert record["agents"] == ["random"] * rules.players
        assert record["winners"]
        for rnd in record["rounds"]:
            assert ROUND_KEYS <= rnd.keys()
            if rules.lives:
                assert len(rnd["lives"]) == rules.players
            assert len(rnd["hands"]) == len(rnd["penalties"]) == len(rnd["scores"]) == rules.players
            assert len(rnd["tricks"]) == rules.hand_size
        replay_record(record)  # every play legal, every score right, per the scalar reference


def _parse(item: str) -> tuple[str, object]:
    name, _, value = item.partition("=")
    return name, int(value)


def test_simulate_is_reproducible(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [tmp_path / name for name in ("a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl")]
    for path, seed, n in zip(paths, (5, 5, 6, 5), (20, 20, 20, 7), strict=True):
        argv = ["simulate", "--rules", "danish21", "--matches", str(n), "--seed", str(seed), "--batch", "16"]
        assert main([*argv, "--out", str(path)]) == 0
    summary = capsys.readouterr().out.strip().splitlines()
    assert len(summary) == 4 and summary[0].startswith("20 matches, ") and str(paths[0]) in summary[0]
    a, b, c, d = (path.read_bytes() for path in paths)
    assert a == b
    assert a != c
    first_hands = [json.loads(line)["rounds"][0]["hands"] for line in a.splitlines()[:7]]
    assert first_hands == [json.loads(line)["rounds"][0]["hands"] for line in d.splitlines()]  # same deals


def test_simulate_writes_a_file_and_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sim.jsonl"  # a missing folder is refused (tests/test_cli_stops.py)
    assert main(["simulate", "--matches", "2", "--batch", "4", "--out", str(out), "-q"]) == 0
    assert len(_records(out)) == 2
    capsys.readouterr()
    assert main(["simulate", "--matches", "3", "--batch", "4", "--out", "-"]) == 0
    captured = capsys.readouterr()
    assert [json.loads(line)["match"] for line in captured.out.splitlines()] == [0, 1, 2]
    assert "-> stdout" in captured.err


def test_simulate_one_spec_per_seat(tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    argv = ["simulate", "--set", "players=3", "--agents", "random,random,random", "--matches", "2", "--batch", "4"]
    assert main([*argv, "--out", str(out), "-q"]) == 0
    assert _records(out)[0]["agents"] == ["random"] * 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["simulate", "--rules", "nope"], "unknown preset 'nope'"),
        (["simulate", "--set", "colour=red"], "unknown rule option 'colour'"),
        (["simulate", "--set", "players"], "--set needs OPTION=VALUE"),
        (["simulate", "--set", "players=nine"], "players must be an integer"),
        (["simulate", "--set", "players=9"], "players must be an integer 2..8"),
        (["simulate", "--set", "ace=medium"], "ace must be one of high, low, low_in_last_trick"),
        (["simulate", "--set", "twos_rule=maybe"], "twos_rule must be true or false"),
        (["simulate", "--set", "lives=2", "--set", "scoring=every_trick"], "lives needs scoring=last_trick"),
        (["simulate", "--set", "players=8"], "hand_size must be at most 6"),
        (["simulate", "--agents", "nope"], "unknown agent 'nope'; known agents: random"),
        (["simulate", "--agents", "random,random"], "2 agent specs given for 4 players"),
        (["simulate", "--matches", "0"], "argument --matches: must be an integer >= 1, not '0'"),
        (["simulate", "--matches", "-3"], "argument --matches: must be an integer >= 1, not '-3'"),
        (["simulate", "--batch", "0"], "argument --batch: must be an integer >= 1, not '0'"),
        (["simulate", "--seed", "-1"], "argument --seed: must be an integer >= 0, not '-1'"),
        (["simulate", "--matches", "ten"], "argument --matches: must be an integer >= 1, not 'ten'"),
        (["simulate", "--matches", "2.5"], "argument --matches: must be an integer >= 1, not '2.5'"),
        (["simulate", "--out", "{dir}"], "cannot write --out"),
        (["simulate", "--out", "{file}/sim.jsonl"], "cannot write --out"),
        (["simulate", "--unknown-flag"], "unrecognized arguments: --unknown-flag"),
        (["nosuch"], "invalid choice: 'nosuch'"),
        (["rules", "nope"], "unknown preset 'nope'"),
        (["rules", "--set", "limit=0"], "limit must be an integer >= 1"),
        (["bench", "engine", "--seconds", "0"], "argument --seconds: must be a number > 0, not '0'"),
        (["bench", "engine", "--seconds", "nan"], "argument --seconds: must be a number > 0, not 'nan'"),
        (["bench", "engine", "--batch", "-1"], "argument --batch: must be an integer >= 1, not '-1'"),
        (["bench", "engine", "--seed", "-1"], "argument --seed: must be an integer >= 0, not '-1'"),
        (["play", "--seed", "-2"], "argument --seed: must be an integer >= 0, not '-2'"),
        (["bench", "engine", "--rules", "nope"], "unknown preset 'nope'"),
    ],
)
def test_user_errors_are_one_line_exit_2(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "a_file"
    afile.write_text("")
    argv = [a.format(dir=tmp_path, file=afile) for a in argv]
    if argv[0] == "simulate":
        defaults = {"--matches": "2", "--out": str(tmp_path / "out.jsonl")}
        argv += [a for k, v in defaults.items() if k not in argv for a in (k, v)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("agurk: error: ") and message in lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert not (tmp_path / "out.jsonl").exists()  # errors come before the output is opened


def _commands(parser: argparse.ArgumentParser, name: str = "agurk") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (sub)command's parser, by its command line."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from _commands(subparser, f"{name} {sub}")


def test_every_seed_is_checked_when_parsed() -> None:
    """Every command's --seed is read by the one converter of seeds: a negative seed never reaches a command."""
    seeds = {name: a.type for name, p in _commands(build_parser()) for a in p._actions if "--seed" in a.option_strings}
    assert {"agurk simulate", "agurk evaluate", "agurk play", "agurk bench engine", "agurk curve"} <= set(seeds)
    assert all(kind is SEED for kind in seeds.values()), seeds


@dataclass(frozen=True)
class Toy:
    """An option set for :func:`test_add_options_makes_a_command_line_of_an_option_set`."""

    rate: float = option(0.5, above=0, high=1)
    """how often, 100% at most"""
    tag: list[str] = option([], metavar="WORD")
    """a tag; repeat for more"""


def test_add_options_makes_a_command_line_of_an_option_set(capsys: pytest.CaptureFixture[str]) -> None:
    parser = Parser(prog="toy")
    add_options(parser, Toy)
    assert from_args(Toy, parser.parse_args([])) == Toy()
    assert from_args(Toy, parser.parse_args(["--rate", "0.25", "--tag", "a", "--tag", "b"])) == Toy(0.25, ["a", "b"])
    help_text = " ".join(parser.format_help().split())
    assert "--rate RATE how often, 100% at most (a number in (0, 1]; default: 0.5)" in help_text
    assert "--tag WORD a tag; repeat for more" in help_text
    with pytest.raises(SystemExit) as bad:
        parser.parse_args(["--rate", "2"])
    assert bad.value.code == 2
    assert (
        capsys.readouterr().err
        == "agurk: error: argument --rate: must be a number in (0, 1], not '2' (see 'toy --help')\n"
    )


@dataclass(frozen=True, kw_only=True)
class Shared:
    """A shared option set the toy command builds on: its options come after the command's own."""

    quiet: bool = option(False, alias="-q")
    """no progress"""


Mode = Literal["fast", "slow"]


@dataclass(frozen=True, kw_only=True)
class ToyCommand(Shared):
    """Every kind of option :func:`add_options` makes, for :func:`test_add_options_makes_every_kind_of_option`."""

    run: str = option(REQUIRED, positional=True, metavar="RUN")
    """the run"""
    count: int = option(REQUIRED, low=1, metavar="N")
    """how many (default: the run's)"""
    mode: Mode = "fast"
    """how"""
    sizes: list[int] = option([3, 4], low=2, metavar="N,N", joined=True)
    """the sizes"""
    ranks: str = option("", metavar="CARD,...")
    """the ranks"""
    color: bool = True
    """in colour"""
    cache: bool | None = None
    """keep a cache (default: when it fits)"""


def test_add_options_makes_every_kind_of_option(capsys: pytest.CaptureFixture[str]) -> None:
    parser = Parser(prog="toy")
    add_options(parser, ToyCommand, docs={"quiet": "no progress bar"})
    got = from_args(ToyCommand, parser.parse_args(["r1", "--count", "2"]))
    assert got == ToyCommand(run="r1", count=2)
    argv = ["r2", "--count", "5", "--mode", "slow", "--sizes", "5,6", "--no-color", "--no-cache", "-q"]
    assert from_args(ToyCommand, parser.parse_args(argv)) == ToyCommand(
        run="r2", count=5, mode="slow", sizes=[5, 6], color=False, cache=False, quiet=True
    )
    assert from_args(ToyCommand, parser.parse_args(["r", "--count", "1", "--cache"])).cache is True
    help_text = " ".join(parser.format_help().split())
    assert help_text.index("--count") < help_text.index("--cache") < help_text.index("-q, --quiet")  # own first
    assert "--count N how many (default: the run's; an integer >= 1)" in help_text  # details inside the brackets
    assert "--mode {fast,slow} how (default: fast)" in help_text
    assert "--sizes N,N the sizes (a list of integers >= 2; default: 3,4)" in help_text
    assert "--ranks CARD,... the ranks --color" in help_text  # an empty default is not shown
    assert "-q, --quiet no progress bar" in help_text  # this command's wording of the shared option
    for argv, message in (
        (["r"], "the following arguments are required: --count"),
        (["r", "--count", "1", "--mode", "medium"], "argument --mode: must be one of fast, slow, not 'medium'"),
        (["r", "--count", "1", "--sizes", "1,2"], "argument --sizes: must be a list of integers >= 2, not '1,2'"),
    ):
        with pytest.raises(SystemExit) as bad:
            parser.parse_args(argv)
        assert bad.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


def test_rules_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    for name in PRESETS:
        assert name in out
    assert main(["rules", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["presets"] == PRESETS and data["defaults"] == Rules().to_dict()


def test_rules_shows_one_preset_resolved(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "every_trick", "--set", "players=3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == Rules.preset("every_trick", players=3).to_dict()
    assert main(["rules", "--set", "twos_rule=yes", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["twos_rule"] is True
    assert main(["rules", "danish21"]) == 0
    out = capsys.readouterr().out
    assert "ace_lock" in out and "any" in out and "21" in out


def test_bench_engine_json(capsys: pytest.CaptureFixture[str]) -> None:
    import random

    import numpy as np

    from agurk_env import engine
    from agurk_env.reference import play_random_match

    argv = ["bench", "engine", "--seconds", "0.5", "--reference-seconds", "0.3", "--seed", "3", "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rules = Rules()
    assert result["rules"] == rules.to_dict() and result["batch"] == 4096
    eng, ref = result["engine"], result["reference"]
    # the engine counted one card per game per step, over at least the time asked for
    assert eng["steps"] > 0 and eng["plays"] == eng["steps"] * 4096 and eng["seconds"] >= 0.5
    # the reference counted the card plays of the matches it played: replaying them gives the same count
    assert ref["matches"] > 0 and ref["seconds"] >= 0.3
    replay = random.Random(3)
    assert sum(play_random_match(rules, replay) for _ in range(ref["matches"])) == ref["plays"]
    # the state size is that of a real game's state
    one = engine.init(rules, 1, 0)
    assert result["bytes_per_game"] == sum(v.nbytes for v in one if isinstance(v, np.ndarray))
    # measured side by side in this run, the batched engine outruns the scalar reference
    assert result["ratio"] > 1


def test_bench_engine_text(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "engine", "--seconds", "0.2", "--reference-seconds", "0.1", "--batch", "64"]
    assert main([*argv, "--rules", "lives", "--set", "players=3"]) == 0
    out = capsys.readouterr().out
    assert "card plays/s" in out and "ratio" in out and "lives + players=3" in out
