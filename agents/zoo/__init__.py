"""The zoo: one shipped policy per preset, package data next to this module (no download).

Each ``PRESET.pt`` is a weights-only checkpoint (:func:`export`) of a run of the one zoo
config, ``training/configs/zoo.yaml`` with ``--set preset=PRESET`` (docs/zoo.md has every
command). The network reads the fixed-size observation, so each policy plays every player
count 2..8 and every hand size; it was trained on 2..7 players at the preset's hand size.

:func:`preset_of` names the preset whose rules a game is played under (player count and
hand size aside), so ``zoo`` (no preset) plays the matching policy in every game.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.policy import FORMAT, VERSION, CheckpointError, PolicyAgent, load_checkpoint
from agurk_env.agent import Decision
from agurk_env.rules import PRESETS, Rules

ZOO = Path(__file__).resolve().parent
"""The folder of the shipped policies."""
FALLBACK = "standard"
"""The policy ``zoo`` plays under rules that match no preset."""
_KEPT = ("format", "version", "obs_size", "actions", "hidden", "model", "global_step", "config")


def available() -> list[str]:
    """The presets with a shipped policy, sorted."""
    return sorted(p.stem for p in ZOO.glob("*.pt") if p.stem in PRESETS)


def path_of(preset: str) -> Path:
    """The shipped policy of ``preset``; :class:`CheckpointError` (one line) if there is none."""
    if preset not in PRESETS:
        raise CheckpointError(f"no preset {preset!r}; presets: {', '.join(PRESETS)}")
    path = ZOO / f"{preset}.pt"
    if not path.exists():
        raise CheckpointError(f"no shipped policy for {preset!r}; the zoo has: {', '.join(available()) or 'none'}")
    return path


def preset_of(rules: Rules) -> str | None:
    """The preset ``rules`` are (whatever the player count and hand size), or ``None``."""
    mine = {k: v for k, v in rules.to_dict().items() if k not in ("players", "hand_size")}
    for name in PRESETS:
        base = Rules.preset(name).to_dict()
        if all(base[k] == v for k, v in mine.items()):
            return name
    return None


def export(checkpoint: str | Path, out: str | Path) -> int:
    """Write the weights-only copy of a training checkpoint (no optimizer or pool) to ``out``; its size in bytes."""
    data = load_checkpoint(checkpoint)
    kept = {k: data[k] for k in _KEPT if k in data}
    if kept.get("format") != FORMAT or kept.get("version") != VERSION:
        raise CheckpointError(f"{str(checkpoint)!r} is not a checkpoint of this agurk")
    torch.save(kept, out)
    return Path(out).stat().st_size


class ZooAgent:
    """A shipped policy: ``preset`` fixed, or (``None``) the policy of each game's preset (:func:`preset_of`)."""

    sees_all = False

    def __init__(self, rng: np.random.Generator, preset: str | None = None, greedy: bool = True, spec: str = "zoo"):
        if preset is not None:
            path_of(preset)  # refuse an unknown preset now, not at the first move
        self.rng, self.preset, self.greedy, self.spec = rng, preset, greedy, spec
        self._agents: dict[str, PolicyAgent] = {}

    def policy(self, rules: Rules) -> PolicyAgent:
        """The policy agent that plays under ``rules`` (loaded once per preset)."""
        wanted = self.preset or preset_of(rules) or FALLBACK
        if wanted not in self._agents:
            name = wanted if self.preset or wanted in available() else FALLBACK
            if name in self._agents:
                self._agents[wanted] = self._agents[name]
            else:
                agent = PolicyAgent.from_path(path_of(name), self.rng, self.greedy)
                agent.spec = self.spec
                self._agents[wanted] = self._agents[name] = agent
        return self._agents[wanted]

    def act(self, decision: Decision) -> np.ndarray:
        """The shipped policy's card in each game."""
        return self.policy(decision.rules).act(decision)


def describe() -> list[dict[str, Any]]:
    """Per shipped policy: preset, decisions trained, network widths and file size (``agurk agents``, docs)."""
    out = []
    for name in available():
        data = torch.load(ZOO / f"{name}.pt", map_location="cpu", weights_only=True)
        out.append(
            {
                "preset": name,
                "decisions": int(data.get("global_step", 0)),
                "hidden": list(data["hidden"]),
                "bytes": (ZOO / f"{name}.pt").stat().st_size,
            }
        )
    return out


__all__ = ["FALLBACK", "ZOO", "ZooAgent", "available", "describe", "export", "path_of", "preset_of"]
