"""``agurk --version`` (from the package metadata) and ``agurk bench``.

Every bench is measured in a process whose NumPy thread pools start pinned; ``agurk bench env``'s
text names a missing package and shows the floor.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

import pytest

from agurk.bench.env import bench_env, env_lines
from agurk.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"agurk {version('agurk-rl')}"


def test_bench_engine_runs_with_its_thread_pools_pinned(capsys: pytest.CaptureFixture[str]) -> None:
    """The measurement runs in a spawned process that sees the thread variables before NumPy loads there."""
    argv = ["bench", "engine", "--seconds", "0.1", "--reference-seconds", "0.1", "--batch", "16", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["threads_pinned"] is True


def test_bench_env_text_names_what_is_missing_and_shows_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    for missing in ("pettingzoo.classic", "stable_baselines3", "agurk_env.vec_env"):
        monkeypatch.setitem(sys.modules, missing, None)  # as if not installed
    result = bench_env(0.1, n_envs=8)
    assert result["leduc_turns_per_s"] is None and result["sb3_steps_per_s"] is None
    text = "\n".join(env_lines(result, "standard, 4 players"))
    assert "None" not in text
    leduc = next(line for line in text.splitlines() if line.startswith("leduc_holdem"))
    sb3 = next(line for line in text.splitlines() if line.startswith("sb3_vec_env"))
    assert "n/a" in leduc and "pip install rlcard" in leduc
    assert "n/a" in sb3 and "stable-baselines3" in sb3
    assert result["gym_vector_steps_per_s"] > 0 and result["gym_vector"]["n_envs"] == 8  # gymnasium needs no SB3
    floor = next(line for line in text.splitlines() if line.startswith("floor"))
    assert f"{result['floor_turns_per_s']:,.0f} turns/s" in floor


def test_bench_env_text_shows_the_floor_beside_leduc(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "env", "--seconds", "0.3", "--n-envs", "8"]) == 0
    out = capsys.readouterr().out
    assert "floor" in out and "x Leduc" in out and "None" not in out and "gym_vector_env" in out
