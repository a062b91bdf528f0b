"""``agurk play`` (driven through a pseudo-terminal) and ``agurk replay``."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pexpect
import pytest
from replay import replay_record
from rich.console import Console
from signals import default_sigint

from agurk import cli
from agurk.play import Game, legal_reason
from agurk.replay import frames
from agurk_env.reference import ReferenceMatch
from agurk_env.rules import CARDS, PRESETS, Rules

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PROMPT = r"your card \([^)]*\)> "


def _spawn(*args: str) -> pexpect.spawn:
    # 200 columns, one line per message (rich reads COLUMNS on a dumb terminal only with LINES)
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "LINES": "50", "TERM": "dumb"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agurk.cli", *args],
        cwd=str(ROOT),
        env=env,
        encoding="utf-8",
        timeout=30,
        preexec_fn=default_sigint,
    )
    child.delaybeforesend = None
    return child


def _turn(child: pexpect.spawn) -> tuple[list[str], list[str]] | None:
    """Wait for the next prompt: ``(hand cards, legal cards)``, or None once the match is over."""
    i = child.expect([r"your hand: ([^\r\n]*)\r?\n", r"match over[^\r\n]*winners: [^\r\n]*\r?\n"])
    if i == 1:
        return None
    hand = [w.split("x")[0] for w in ANSI.sub("", child.match.group(1)).split() if not w.startswith("#")]
    child.expect(r"legal: ([^\r\n]*)\r?\n")
    legal = ANSI.sub("", child.match.group(1)).split()
    child.expect(r"why: [^\r\n]+\r?\n")
    child.expect(PROMPT)
    return hand, legal


def _play_out(child: pexpect.spawn, rng: np.random.Generator, try_illegal: bool = False) -> dict[str, int]:
    """Answer every prompt with a legal card until the match summary; optionally one illegal try first."""
    seen = {"turns": 0, "illegal": 0}
    while (turn := _turn(child)) is not None:
        hand, legal = turn
        assert legal and set(legal) <= set(hand)
        bad = [c for c in hand if c not in legal]
        if try_illegal and not seen["illegal"] and bad:
            child.sendline(bad[0].lower())
            child.expect(f"illegal: you may not play {re.escape(bad[0])}\r?\n")
            child.expect(r"legal: ([^\r\n]*)\r?\n")
            assert ANSI.sub("", child.match.group(1)).split() == legal
            child.expect(r"why: [^\r\n]+\r?\n")
            child.expect(PROMPT)
            child.sendline("zz")
            child.expect("unknown card 'zz'")
            child.expect(PROMPT)
            seen["illegal"] += 1
        child.sendline(str(rng.choice(legal)))
        seen["turns"] += 1
    return seen


def test_play_full_match_through_a_pty(tmp_path: Path) -> None:
    out = tmp_path / "game.jsonl"
    child = _spawn("play", "--opponents", "random", "--seed", "3", "--set", "limit=10", "--record", str(out))
    seen = _play_out(child, np.random.default_rng(0), try_illegal=True)
    child.expect("bye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert seen["illegal"] == 1 and seen["turns"] >= 7
    lines = out.read_text().splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    replay_record(rec)
    assert rec["agents"] == ["human", "random", "random", "random"] and "winners" in rec


def test_play_quits_cleanly() -> None:
    child = _spawn("play", "--seed", "1", "--seat", "2")
    assert _turn(child) is not None
    child.sendline("q")
    child.expect("bye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def _replay_partial(rec: dict) -> list[tuple[int, str]]:
    """Replay a record that stops inside a round through the scalar reference; return every play ``(seat, card)``."""
    rules = Rules.from_dict(rec["rules"])
    match = ReferenceMatch(rules)
    plays = []
    for r, rnd in enumerate(rec["rounds"]):
        assert match.dealer == rnd["dealer"], f"round {r + 1}"
        match.start_round([[CARDS.index(c) for c in hand] for hand in rnd["hands"]])
        for t, trick in enumerate(rnd["tricks"]):
            assert match.leader == trick["leader"], f"round {r + 1} trick {t + 1}"
            for seat, name in trick["plays"]:
                assert match.to_move == seat and CARDS.index(name) in match.legal()
                match.play(CARDS.index(name))
                plays.append((seat, name))
            if "winner" in trick:
                assert match.trick_winners[t] == trick["winner"]
        if "penalties" in rnd:  # a finished round
            assert not match.in_round and match.last_round.scores == rnd["scores"]
            assert match.last_round.penalties == rnd["penalties"]
        else:
            assert r == len(rec["rounds"]) - 1 and match.in_round  # only the last round may be in progress
    return plays


def test_play_quit_writes_the_partial_record(tmp_path: Path) -> None:
    # 9 turns: round 1 (7 tricks) finished, then two cards into round 2; no seat can be out yet at limit 30
    out = tmp_path / "partial.jsonl"
    child = _spawn("play", "--opponents", "random", "--seed", "6", "--seat", "1", "--record", str(out))
    rng = np.random.default_rng(2)
    sent = []
    for _ in range(9):
        _, legal = _turn(child)
        sent.append(str(rng.choice(legal)))
        child.sendline(sent[-1])
    _turn(child)
    child.sendline("q")
    child.expect(r"partial record written to \S+: the match so far \(1 finished round and the round in progress")
    child.expect("bye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert rec["agents"] == ["random", "human", "random", "random"] and "winners" not in rec
    assert rec["seed"] == 6 and len(rec["rounds"]) == 2 and "penalties" in rec["rounds"][0]
    assert len(rec["rounds"][0]["tricks"]) == 7 and "penalties" not in rec["rounds"][1]
    plays = _replay_partial(rec)
    assert [c for s, c in plays if s == 1] == sent  # every card typed, in order, and nothing after the quit
    current = rec["rounds"][1]["tricks"][-1]
    assert "winner" not in current and all(s != 1 for s, _ in current["plays"])  # quit with seat 1 to move


def test_play_ctrl_c_writes_the_partial_record_and_says_so_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "partial.jsonl"
    child = _spawn("play", "--opponents", "random", "--seed", "6", "--seat", "1", "--record", str(out))
    rng = np.random.default_rng(2)
    for _ in range(3):
        _, legal = _turn(child)
        child.sendline(str(rng.choice(legal)))
    _turn(child)
    child.sendintr()  # Ctrl-C at the prompt
    child.expect(r"partial record written to \S+: the match so far \(0 finished rounds and the round in progress")
    child.expect(pexpect.EOF)
    child.close()
    said = ANSI.sub("", child.before)
    assert "Traceback" not in said and said.strip().splitlines()[-1] == "agurk: interrupted by SIGINT", said
    assert child.exitstatus == 130
    rec = json.loads(out.read_text())
    assert rec["agents"] == ["random", "human", "random", "random"] and len(rec["rounds"]) == 1
    assert [c for s, c in _replay_partial(rec) if s == 1] and "winners" not in rec


def test_replay_ctrl_c_says_so_in_one_line(tmp_path: Path) -> None:
    sim = tmp_path / "sim.jsonl"
    assert cli.main(["simulate", "--matches", "1", "--seed", "2", "-q", "--out", str(sim)]) == 0
    replay = ["-m", "agurk.cli", "replay", str(sim)]
    options = {"cwd": str(ROOT), "encoding": "utf-8", "timeout": 30, "preexec_fn": default_sigint}
    child = pexpect.spawn(sys.executable, replay, **options)
    child.expect(r"\[1/\d+\]")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert "Traceback" not in child.before and child.before.strip().splitlines()[-1] == "agurk: interrupted by SIGINT"
    assert child.exitstatus == 130


@pytest.mark.parametrize(
    "preset, sets",
    [("danish21", ["players=2", "limit=10"]), ("lives", ["players=8", "hand_size=6", "lives=1"])],
)
def test_play_presets_through_a_pty(preset: str, sets: list[str]) -> None:
    args = ["play", "--rules", preset, "--seed", "5", "--opponents", "heuristic" if preset == "lives" else "random"]
    for s in sets:
        args += ["--set", s]
    child = _spawn(*args)
    _play_out(child, np.random.default_rng(1))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_play_against_the_default_opponents_best(tmp_path: Path) -> None:
    out = tmp_path / "game.jsonl"
    child = _spawn("play", "--seed", "2", "--set", "limit=10", "--record", str(out))  # no --opponents: best
    _play_out(child, np.random.default_rng(2))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    rec = json.loads(out.read_text())
    assert rec["agents"][1:] == ["best"] * 3
    replay_record(rec)


def _small(preset: str, players: int) -> Rules:
    """``preset`` for ``players`` seats with a short match."""
    rules = Rules.preset(preset, players=players, hand_size=min(7, 52 // players))
    return rules.replace(lives=1) if rules.lives else rules.replace(limit=min(rules.limit, 12))


@pytest.mark.parametrize("players", [2, 8])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_play_every_preset(preset: str, players: int) -> None:
    rules = _small(preset, players)
    rng = np.random.default_rng(players)
    buf = io.StringIO()
    game = None

    def read(prompt: str) -> str:
        bits = game.env.legal_bits()
        legal = [CARDS[c] for c in range(rules.num_actions) if bits >> c & 1]
        st = game.env.engine_state
        why = legal_reason(rules, st)
        if why.startswith("you lead"):
            assert bits == int(st.held[0, int(st.cur[0])])
        elif (why.endswith("your lowest card") and not why.startswith("you may")) or "twos rule" in why:
            assert len(legal) == 1
        return str(rng.choice(legal))

    game = Game(rules, "random", seat=players - 1, seed=players, console=Console(file=buf, width=200), read=read)
    finished, rec = game.run()
    assert finished
    replay_record(rec)
    text = buf.getvalue()
    assert "match over" in text and "why: " in text


def test_play_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["play", "--seat", "4"]) == 2
    assert cli.main(["play", "--opponents", "random,random"]) == 2
    assert cli.main(["play", "--opponents", "nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("agurk: error: ") for line in err)


def test_replay_all_matches_a_simulate_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim = tmp_path / "sim.jsonl"
    args = ["simulate", "--rules", "lives", "--set", "players=3", "--matches", "2", "--seed", "4", "-q"]
    assert cli.main([*args, "--out", str(sim)]) == 0
    rec = json.loads(sim.read_text().splitlines()[1])
    capsys.readouterr()
    assert cli.main(["replay", str(sim), "--match", "1", "--all"]) == 0
    text = ANSI.sub("", capsys.readouterr().out)
    at, tricks = 0, 0
    for rnd in rec["rounds"]:
        for trick in rnd["tricks"]:
            line = "plays: " + " ".join(f"P{s}:{c}" for s, c in trick["plays"])
            at = text.index(line + "\n", at) + len(line)
            tricks += 1
    assert text.count("plays: ") == tricks
    assert "winners: " + ", ".join(f"P{s} random" for s in rec["winners"]) in text


def test_replay_interactive_keys(tmp_path: Path) -> None:
    sim = tmp_path / "sim.jsonl"
    assert cli.main(["simulate", "--matches", "1", "--seed", "2", "-q", "--out", str(sim)]) == 0
    rec = json.loads(sim.read_text())
    pages = frames(rec)
    child = pexpect.spawn(
        sys.executable, ["-m", "agurk.cli", "replay", str(sim)], cwd=str(ROOT), encoding="utf-8", timeout=30
    )
    child.expect(rf"\[1/{len(pages)}\]")
    child.sendline("")
    child.expect(rf"trick 2/7[\s\S]*\[2/{len(pages)}\]")
    child.sendline("p")
    child.expect(rf"trick 1/7[\s\S]*\[1/{len(pages)}\]")
    child.sendline("q")
    child.expect("bye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.parametrize(
    "content, match, says",
    [
        (None, 0, "cannot read"),
        ("", 0, "holds no game record"),
        ("not json\n", 0, "is not JSON"),
        ('{"a": 1}\n', 0, "is not a game record"),
        ('{"rules": {}, "rounds": []}\n', 1, "--match 1"),
        ('{"rules": {"players": 99}, "rounds": []}\n', 0, "bad rules"),
    ],
)
def test_replay_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], content, match, says) -> None:
    path = tmp_path / "r.jsonl"
    if content is not None:
        path.write_text(content)
    assert cli.main(["replay", str(path), "--match", str(match), "--all"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agurk: error: ") and says in err and err.count("\n") == 1
