"""Replay every golden match (shared/golden/matches.jsonl, copied to tests/data) through the reference."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from replay import replay_record

from agurk_env.reference import play_random_match
from agurk_env.rules import PRESETS, Rules

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_matches.jsonl"
SHARED_GOLDEN = Path(__file__).resolve().parents[2] / "shared" / "golden" / "matches.jsonl"

RECORDS: list[dict] = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]


def _id(record: dict) -> str:
    return f"{record['preset']}-{record['rules']['players']}p-seed{record['seed']}"


def test_golden_file_is_complete() -> None:
    assert len(RECORDS) == 255
    assert {r["preset"] for r in RECORDS} == set(PRESETS)


def test_golden_copy_matches_shared() -> None:
    if not SHARED_GOLDEN.exists():
        pytest.skip(f"{SHARED_GOLDEN} is absent (clean clone); tests/data holds the copy")
    assert GOLDEN.read_bytes() == SHARED_GOLDEN.read_bytes(), "tests/data/golden_matches.jsonl is out of date"


@pytest.mark.parametrize("record", RECORDS, ids=[_id(r) for r in RECORDS])
def test_golden_match(record: dict) -> None:
    assert Rules.from_dict(record["rules"]) == Rules.preset(record["preset"], players=record["rules"]["players"])
    replay_record(record)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_random_matches_finish(preset: str) -> None:
    rng = random.Random(preset)
    for players in (2, 3, 5, 8):
        rules = Rules.preset(preset, players=players, hand_size=min(7, 52 // players))
        assert play_random_match(rules, rng) > 0
