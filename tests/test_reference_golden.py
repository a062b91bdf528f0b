"""Replay every golden match (tests/data/golden_matches.jsonl, copied from shared/golden) through the reference.

The test reads nothing outside the repository: the copy is checked against the SHA-256 of the
shared file it was taken from, so it runs (never skips) in a clean clone.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from replay import replay_record

from agurk_env.reference import play_random_match
from agurk_env.rules import PRESETS, Rules

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_matches.jsonl"
SHARED_SHA256 = "5ecdef63dd7fe6002cb73881b20e59db60b85651cbaadf1915f4a7948b8bf0be"
"""``sha256sum shared/golden/matches.jsonl``: the file the copy was taken from (255 matches)."""

RECORDS: list[dict] = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]


def _id(record: dict) -> str:
    return f"{record['preset']}-{record['rules']['players']}p-seed{record['seed']}"


def test_golden_file_is_complete() -> None:
    assert len(RECORDS) == 255
    assert {r["preset"] for r in RECORDS} == set(PRESETS)


def test_golden_copy_is_the_shared_file() -> None:
    assert hashlib.sha256(GOLDEN.read_bytes()).hexdigest() == SHARED_SHA256, "tests/data/golden_matches.jsonl changed"


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
