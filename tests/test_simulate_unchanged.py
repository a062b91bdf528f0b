"""``agurk simulate`` writes byte for byte what it wrote before the refactor of the CLI and the agents.

``tests/data/simulate_sha256.txt`` (``sha256sum`` format) holds the digests of the files written by
the code before the refactor, with seed 7 and the command lines below: random play and every
heuristic, PIMC with sampled worlds, and presets with ace locks, lives, every-trick scoring, the
previous-card target, jokers, ``nearest`` and the twos rule, all with ``--with-legal``. The two runs
with ``counter`` (danish21, twos) were re-recorded when ``counter`` was changed on purpose to count
the unseen cards (it had played exactly like ``shed``); nothing else changed in those runs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agurk.cli import main

DIGESTS = Path(__file__).resolve().parent / "data" / "simulate_sha256.txt"
RUNS = [
    ("standard", "random", 20),
    ("danish21", "shed,guard,counter,ducker", 10),
    ("lives", "pimc:worlds=4,guard,random,random", 4),
    ("every_trick", "ducker", 10),
    ("swedish", "guard", 8),
    ("jokers", "pimc:worlds=2,random,shed,guard", 3),
    ("nearest", "random", 15),
    ("twos", "counter", 6),
]


def _digests() -> dict[str, str]:
    found = {}
    for line in DIGESTS.read_text().splitlines():
        digest, name = line.split()
        found[name.lstrip("*")] = digest
    return found


def test_the_digest_file_covers_every_run() -> None:
    digests = _digests()
    assert sorted(digests) == sorted(f"{preset}.jsonl" for preset, _, _ in RUNS)
    assert all(len(d) == 64 and set(d) <= set("0123456789abcdef") for d in digests.values())


@pytest.mark.parametrize(("preset", "agents", "matches"), RUNS, ids=[preset for preset, _, _ in RUNS])
def test_simulate_output_is_unchanged(preset: str, agents: str, matches: int, tmp_path: Path) -> None:
    out = tmp_path / f"{preset}.jsonl"
    argv = ["simulate", "-q", "--rules", preset, "--agents", agents, "--matches", str(matches), "--seed", "7"]
    assert main([*argv, "--out", str(out), "--with-legal"]) == 0
    data = out.read_bytes()
    assert data.count(b"\n") == matches
    assert hashlib.sha256(data).hexdigest() == _digests()[out.name], f"{out.name} differs from before the refactor"
