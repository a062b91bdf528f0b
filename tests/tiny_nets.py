"""Helpers of the skill report's cache and convergence tests: tiny checkpoints, and a count of the tables played."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest


def tiny_checkpoint(path: Path, seed: int, decisions: int = 1000) -> Path:
    """A small random network with every preset's actions, as a checkpoint file trained for ``decisions``."""
    import torch

    from agents.policy import PolicyNet
    from agurk_env import observation
    from agurk_env.rules import PRESETS, Rules
    from training.checkpoint import save_checkpoint

    torch.manual_seed(seed)
    actions = max(Rules.preset(p).num_actions for p in PRESETS)
    save_checkpoint(path, PolicyNet(observation.SIZE, actions, [8]), global_step=decisions)
    return path


def count_tables(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The focal agent of every ladder table played in this process from now on (a cached table is not played)."""
    from skill import cells

    focal: list[str] = []
    play = cells.play_planned

    def counting(progress: object, rules: object, packed: bytes, *rest: object) -> object:
        focal.append(pickle.loads(packed)[0])
        return play(progress, rules, packed, *rest)

    monkeypatch.setattr(cells, "play_planned", counting)
    return focal
