"""Export: the weights-only copy of a training checkpoint for the zoo, or a blend or ensemble of several."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from agents.policy import FORMAT, VERSION, Checkpoint, CheckpointError, Strength, load_checkpoint
from agents.zoo.shipped import catalogue
from agurk_env.atomic import atomic_write

KEPT = (
    "format",
    "version",
    "obs_size",
    "actions",
    "hidden",
    "model",
    "global_step",
    "config",
    "train_seconds",
    "strength",
    "blend",
    "ensemble",
)
"""What an exported policy keeps of a checkpoint (``agurk zoo`` reads the seconds, strength, blend, ensemble)."""


def export(
    checkpoint: str | Path,
    out: str | Path,
    strength: Strength | None = None,
    blend: Sequence[tuple[str | Path, float]] = (),
    ensemble: Sequence[tuple[str | Path, float]] = (),
) -> int:
    """Write the weights-only copy of a training checkpoint (no optimizer or pool) to ``out``; its size in bytes.

    The checkpoint's training seconds and ``strength`` (the run's evaluation at the checkpoint's
    step; else the checkpoint's own, when it is a shipped policy) travel with it for ``agurk zoo``.
    ``blend`` (other checkpoints and their weights) writes instead the weighted mean of the
    networks' parameters (a model soup: the fine-tunes of one network, so their weights lie
    close); ``ensemble`` keeps every network and plays the weighted mean of their logits
    (:class:`agents.policy.Ensemble`). Either way ``checkpoint`` keeps the rest of the weight
    and its metadata, the sources are listed (under ``blend`` or ``ensemble``), and no
    strength is kept (none was measured on the combination).
    """
    data = load_checkpoint(checkpoint)
    fields: Mapping[str, object] = data
    kept = {k: fields[k] for k in KEPT if k in fields}
    if kept.get("format") != FORMAT or kept.get("version") != VERSION:
        raise CheckpointError(f"{str(checkpoint)!r} is not a checkpoint of this agurk")
    if strength is not None:
        kept["strength"] = strength
    if blend and ensemble:
        raise CheckpointError("give blend or ensemble, not both")
    if blend or ensemble:
        sources = _sources(checkpoint, data, blend or ensemble, same_shape=bool(blend))
        listed = [{"source": str(p), "weight": w, "decisions": int(src.get("global_step", 0))} for p, src, w in sources]
        if blend:
            kept["model"] = {k: sum(w * src["model"][k] for _, src, w in sources) for k in data["model"]}
            kept["blend"] = listed
        else:
            kept["ensemble"] = [listed[0]] + [
                {**row, "hidden": list(src["hidden"]), "model": src["model"]}
                for row, (_, src, _) in zip(listed[1:], sources[1:], strict=True)
            ]
        kept.pop("strength", None)
    atomic_write(out, lambda f: torch.save(kept, f))
    catalogue.cache_clear()
    return Path(out).stat().st_size


def _sources(
    checkpoint: str | Path, data: Checkpoint, others: Sequence[tuple[str | Path, float]], same_shape: bool
) -> list[tuple[str | Path, Checkpoint, float]]:
    """``checkpoint`` with the rest of the weight, then ``others``: checked to be single networks of one preset.

    ``same_shape`` (a blend) also needs the same hidden widths; an ensemble's members may differ in them.
    """
    rest = 1.0 - sum(w for _, w in others)
    if not all(0 < w < 1 for _, w in others) or rest <= 0:
        raise CheckpointError(f"the weights must be in (0, 1) and sum below 1, got {[w for _, w in others]}")
    sources = [(checkpoint, data, rest)] + [(path, load_checkpoint(path), w) for path, w in others]
    keys = ("obs_size", "actions", "hidden") if same_shape else ("obs_size", "actions")
    for path, other, _ in sources:
        if other.get("ensemble"):
            raise CheckpointError(f"{str(path)!r} is an ensemble already: combine its members instead")
        same = [other.get(k) == data.get(k) for k in keys]
        if not all(same) or _trained_for(other) != _trained_for(data):
            what = "networks or presets" if same_shape else "observations, cards or presets"
            raise CheckpointError(f"cannot combine {str(path)!r} with {str(checkpoint)!r}: their {what} differ")
    return sources


def _trained_for(data: Checkpoint) -> str | None:
    """What a network was trained for: its preset, or ``None`` for a mixture of tables (any two of which combine)."""
    cfg = data.get("config") or {}
    return None if (cfg.get("mixture") or {}).get("families") else cfg.get("preset")
