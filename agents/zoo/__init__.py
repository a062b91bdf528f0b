"""The zoo: shipped policies, each trained for its table, package data next to this module (no download).

Each ``NAME.pt`` is a weights-only checkpoint (:func:`export`) of a training run; the
training config it keeps names the tables it was trained for (rules, player counts, hand
size). ``PRESET.pt`` is the preset's policy (``zoo:PRESET``); other names are tables of
their own (``zoo:standard-3p``: standard rules at 3 players). docs/zoo.md has the command
that trains each one.

``zoo`` (no name) plays, for the rules in play, the policy trained for exactly those rules
(the one trained for the fewest tables if several were); where there is none, the nearest
one (:func:`choose`: the same rules at another table, else the fewest other rule options;
among equals the one trained for the most tables),
and it says so once per rules with a :class:`ZooFallback` warning naming the policy and
why, never silently.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.policy import FORMAT, VERSION, CheckpointError, PolicyAgent, load_checkpoint
from agurk_env.agent import Decision
from agurk_env.rules import PRESETS, Rules

ZOO = Path(__file__).resolve().parent
"""The folder of the shipped policies."""
_KEPT = (
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
TABLE_OPTIONS = ("players", "hand_size")
"""The rule options that make a table of a rule set rather than other rules."""


class ZooFallback(UserWarning):
    """``zoo`` plays a policy trained for other rules or another table than those in play (the text says which)."""


@dataclass(frozen=True)
class Shipped:
    """One shipped policy: its name (``zoo:NAME``), file and the rules of every table it was trained for."""

    name: str
    path: Path
    preset: str
    tables: tuple[Rules, ...]
    info: dict[str, Any]


def table_text(rules: Rules, players: str | None = None, preset: str | None = None) -> str:
    """``standard 4x7`` or ``free_choice 3x5 (ace_lock=any, limit=1)``: a preset, the table, the other options.

    The preset is ``preset`` or the nearest one; ``players`` replaces the player count (``"2-7"``).
    """
    mine = rules.to_dict()

    def other(name: str) -> dict[str, Any]:
        base = Rules.preset(name).to_dict()
        return {k: v for k, v in mine.items() if k not in TABLE_OPTIONS and base[k] != v}

    name = preset or min(PRESETS, key=lambda n: len(other(n)))
    extra = ", ".join(f"{k}={v}" for k, v in other(name).items())
    return f"{name} {players or rules.players}x{rules.hand_size}" + (f" ({extra})" if extra else "")


@functools.cache
def catalogue() -> tuple[Shipped, ...]:
    """Every shipped policy, sorted by name (each file read once)."""
    out = []
    for path in sorted(ZOO.glob("*.pt")):
        data = load_checkpoint(path)
        cfg = data.get("config") or {}
        preset = cfg.get("preset", path.stem)
        base = Rules.preset(preset, **cfg.get("rules", {}))
        tables = tuple(base.replace(players=p) for p in (cfg.get("players") or [base.players]))
        info = {
            "decisions": int(data.get("global_step", 0)),
            "hidden": [int(h) for h in data["hidden"]],
            "algo": cfg.get("algo", "ppo"),
            "episode": cfg.get("episode", "round"),
            "train_seconds": data.get("train_seconds"),
            "strength": data.get("strength"),
            "blend": data.get("blend"),
            "ensemble": [{k: m[k] for k in ("source", "weight", "decisions")} for m in data.get("ensemble") or []],
            "bytes": path.stat().st_size,
        }
        out.append(Shipped(path.stem, path, preset, tables, info))
    return tuple(out)


def available() -> list[str]:
    """The names of the shipped policies, sorted."""
    return [s.name for s in catalogue()]


def path_of(name: str) -> Path:
    """The shipped policy ``name``; :class:`CheckpointError` (one line) if there is none."""
    names = available()
    if name not in names:
        raise CheckpointError(f"no shipped policy {name!r}; the zoo has: {', '.join(names) or 'none'}")
    return ZOO / f"{name}.pt"


def preset_of(rules: Rules) -> str | None:
    """The preset ``rules`` are (whatever the player count and hand size), or ``None``."""
    mine = {k: v for k, v in rules.to_dict().items() if k not in TABLE_OPTIONS}
    for name in PRESETS:
        base = Rules.preset(name).to_dict()
        if all(base[k] == v for k, v in mine.items()):
            return name
    return None


def _distance(rules: Rules, table: Rules) -> tuple[int, int, int]:
    """How far ``table`` is from ``rules``: other rule options, then players apart, then hand size apart."""
    a, b = rules.to_dict(), table.to_dict()
    options = sum(a[k] != b[k] for k in a if k not in TABLE_OPTIONS)
    return options, abs(rules.players - table.players), abs(rules.hand_size - table.hand_size)


def choose(rules: Rules) -> tuple[str, str | None]:
    """The policy ``zoo`` plays under ``rules`` and, unless it was trained for exactly them, why (one line)."""
    ranked = sorted(  # nearest first; then the specialist where one fits exactly, else the generalist; by name
        (
            (d := min(_distance(rules, t) for t in s.tables), len(s.tables) * (1 if d == (0, 0, 0) else -1), s.name, s)
            for s in catalogue()
        ),
        key=lambda row: row[:3],
    )
    if not ranked:
        raise CheckpointError("the zoo is empty")
    (options, players, hand), _, name, shipped = ranked[0]
    if (options, players, hand) == (0, 0, 0):
        return name, None
    nearest = min(shipped.tables, key=lambda t: _distance(rules, t))
    if options:
        a, b = rules.to_dict(), nearest.to_dict()
        differ = ", ".join(f"{k}={b[k]}" for k in a if k not in TABLE_OPTIONS and a[k] != b[k])
        why = f"the nearest rules ({differ} instead of the rules in play)"
    else:
        why = "the same rules at another table"
    return name, (
        f"zoo: no shipped policy was trained for {table_text(rules)}; playing zoo:{name}, trained for"
        f" {table_text(nearest, preset=shipped.preset)}: {why}"
    )


def export(
    checkpoint: str | Path,
    out: str | Path,
    strength: dict | None = None,
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
    kept = {k: data[k] for k in _KEPT if k in data}
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
    torch.save(kept, out)
    catalogue.cache_clear()
    return Path(out).stat().st_size


def _sources(
    checkpoint: str | Path, data: dict[str, Any], others: Sequence[tuple[str | Path, float]], same_shape: bool
) -> list[tuple[str | Path, dict[str, Any], float]]:
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
        if not all(same) or (other.get("config") or {}).get("preset") != (data.get("config") or {}).get("preset"):
            what = "networks or presets" if same_shape else "observations, cards or presets"
            raise CheckpointError(f"cannot combine {str(path)!r} with {str(checkpoint)!r}: their {what} differ")
    return sources


class ZooAgent:
    """A shipped policy: ``preset`` (a policy name) fixed, or (``None``) each game's own (:func:`choose`)."""

    sees_all = False

    def __init__(self, rng: np.random.Generator, preset: str | None = None, greedy: bool = True, spec: str = "zoo"):
        if preset is not None:
            path_of(preset)  # refuse an unknown preset now, not at the first move
        self.rng, self.preset, self.greedy, self.spec = rng, preset, greedy, spec
        self._agents: dict[str, PolicyAgent] = {}
        self._chosen: dict[Rules, str] = {}

    def policy(self, rules: Rules) -> PolicyAgent:
        """The policy agent that plays under ``rules`` (loaded once per policy; a fallback is warned once)."""
        if rules not in self._chosen:
            name, why = (self.preset, None) if self.preset else choose(rules)
            if why:
                warnings.warn(why, ZooFallback, stacklevel=2)
            self._chosen[rules] = name
        name = self._chosen[rules]
        if name not in self._agents:
            agent = PolicyAgent.from_path(path_of(name), self.rng, self.greedy)
            agent.spec = self.spec
            self._agents[name] = agent
        return self._agents[name]

    def act(self, decision: Decision) -> np.ndarray:
        """The shipped policy's card in each game."""
        return self.policy(decision.rules).act(decision)


def describe() -> list[dict[str, Any]]:
    """Per shipped policy: name, preset, tables, decisions, training time, strength (``agurk zoo``, docs)."""
    rows = []
    for s in catalogue():
        counts = sorted(t.players for t in s.tables)
        players = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else str(counts[0])
        table = table_text(s.tables[0], players, s.preset)
        tables = [table_text(t, preset=s.preset) for t in s.tables]
        rows.append({"name": s.name, "preset": s.preset, "table": table, "tables": tables})
        rows[-1].update(s.info)
    return rows


__all__ = [
    "ZOO",
    "Shipped",
    "ZooAgent",
    "ZooFallback",
    "available",
    "catalogue",
    "choose",
    "describe",
    "export",
    "path_of",
    "preset_of",
    "table_text",
]
