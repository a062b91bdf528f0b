"""``agurk rules``' overview: each preset's row lists exactly the options in which its resolved rules differ."""

from __future__ import annotations

import json

import pytest

from agurk.cli import main
from agurk_env.rules import PRESETS, Rules


def test_the_overview_lists_what_differs_and_nothing_else(capsys: pytest.CaptureFixture[str]) -> None:
    defaults = Rules().to_dict()
    assert main(["rules", "--json"]) == 0
    differences = json.loads(capsys.readouterr().out)["differences"]
    assert set(differences) == set(PRESETS)
    for name, differ in differences.items():
        resolved = Rules.preset(name).to_dict()
        assert differ == {k: v for k, v in resolved.items() if v != defaults[k]}, name
    assert differences["every_trick"]["ace_points"] == 1  # implied by ace=low
    assert "scoring" not in differences["last_trick_only"]  # its scoring is the default's


def test_the_overview_table_shows_implied_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    rows = capsys.readouterr().out.replace("│", " ")
    block = rows[rows.index("last_trick_only") : rows.index("defaults:")]
    assert "ace_points=1" in block and "scoring=last_trick" not in block
    quick = rows[rows.index(" quick ") : rows.index("last_trick_only")]
    assert "ace_points=1" in quick
