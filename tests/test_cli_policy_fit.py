"""A policy without the rules' cards (13 outputs under jokers) is refused when the agent is built: one line, exit 2.

Before, ``agurk play`` and ``agurk simulate`` crashed at the first turn where a joker was
legal, and ``agurk evaluate`` retried that certain failure three times.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.fit import card_outputs, check_fit
from agents.registry import AgentSpecError, make_agent
from agurk.cli import main
from agurk_env.rules import Rules

ZOO = Path(__file__).resolve().parent.parent / "agents" / "zoo"
SPECS = ["zoo:standard-4p", f"ppo:{ZOO / 'standard-4p.pt'}"]


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err + captured.out, captured.err
    return lines[0]


@pytest.mark.parametrize("spec", SPECS)
def test_simulate_refuses_it(spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sim.jsonl"
    assert main(["simulate", "--rules", "jokers", "--agents", spec, "--matches", "2", "--out", str(out)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("agurk: error: agent ") and "13 card outputs" in line and "14 cards" in line
    assert not out.exists()


@pytest.mark.parametrize("spec", SPECS)
def test_evaluate_refuses_it_before_any_task(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "--rules", "jokers", "--agents", f"{spec},random,random,random", "--matches", "4"]
    assert main([*argv, "--workers", "1"]) == 2
    assert "13 card outputs" in _one_error_line(capsys)


def test_play_refuses_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--rules", "jokers", "--opponents", "zoo:standard-4p"]) == 2
    assert "13 card outputs" in _one_error_line(capsys)


def test_what_fits_is_accepted() -> None:
    jokers, standard = Rules.preset("jokers"), Rules.preset("standard")
    check_fit([make_agent("zoo:universal", 0, 1), make_agent("zoo", 0, 2), make_agent("guard", 0, 3)], jokers)
    check_fit([make_agent(spec, 0, 1) for spec in SPECS], standard)
    assert card_outputs(make_agent("zoo", 0, 1), jokers) == 14
    assert card_outputs(make_agent("guard", 0, 1), jokers) is None
    with pytest.raises(AgentSpecError, match="'zoo:standard-4p' cannot play these rules"):
        check_fit([make_agent("zoo:standard-4p", 0, 1)], jokers)
