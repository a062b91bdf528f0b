"""What the zoo ships: the universal network, the per-table policies still measured stronger, and what each is.

Every ``NAME.pt`` beside this module is a weights-only checkpoint (:mod:`agents.zoo.export`)
of a training run; the config it keeps names what it was trained for. :data:`UNIVERSAL` is
the rules-conditioned network trained on a mixture of every preset and table
(``configs/universal.yaml``): the one ``zoo`` plays. A per-table file ships only while it is
measured stronger than that network at its own table; :data:`KEPT_BECAUSE` says why, with
the numbers, and a file not named there is not shipped (a test holds the two equal).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.policy import CheckpointError, load_checkpoint
from agents.zoo.table_names import table_text
from agurk_env.rules import Rules

ZOO = Path(__file__).resolve().parent
"""The folder of the shipped policies."""
UNIVERSAL = "universal"
"""The rules-conditioned network every table plays (``zoo``, ``zoo:universal``)."""
PRESET_TABLE = ZOO / "presets.json"
"""The universal network's measured win rate at every preset, beside the search ``best`` plays where it does."""
KEPT_BECAUSE: dict[str, str] = {
    "standard-4p": "standard 4x7 vs 3 guards, 5000 deals: 0.465 [0.459, 0.471], the network 0.455 [0.449, 0.461]",
    "standard-3p": "standard 3x7 vs 2 guards, 400 deals: 0.517 [0.490, 0.542], 2.47 pts; the network 0.500, 2.53 pts",
    "free_choice-3x5-anyace-single": (
        "free_choice 3x5 any-ace single rounds vs two pimc:eval=exact, 3000 deals, seeds 5-9: 0.239 points a round"
        " below the search, the network 0.223"
    ),
}
"""Each shipped per-table policy and, in one line, the measurement that keeps it beside the universal network."""


@dataclass(frozen=True)
class Shipped:
    """One shipped policy: its name (``zoo:NAME``), file, preset and the tables it was trained for (none: a mixture)."""

    name: str
    path: Path
    preset: str
    tables: tuple[Rules, ...]
    info: dict[str, Any]

    @property
    def universal(self) -> bool:
        """Whether the network was trained on a mixture of rules and tables (plays any of them)."""
        return not self.tables


@functools.cache
def catalogue() -> tuple[Shipped, ...]:
    """Every shipped policy, sorted by name (each file read once)."""
    out = []
    for path in sorted(ZOO.glob("*.pt")):
        data = load_checkpoint(path)
        cfg = data.get("config") or {}
        preset = cfg.get("preset", path.stem)
        mixture = (cfg.get("mixture") or {}).get("families") or {}
        base = Rules.preset(preset, **cfg.get("rules", {}))
        tables = () if mixture else tuple(base.replace(players=p) for p in (cfg.get("players") or [base.players]))
        info = {
            "decisions": int(data.get("global_step", 0)),
            "hidden": [int(h) for h in data["hidden"]],
            "algo": cfg.get("algo", "ppo"),
            "episode": cfg.get("episode", "round"),
            "train_seconds": data.get("train_seconds"),
            "strength": data.get("strength"),
            "blend": data.get("blend"),
            "ensemble": [{k: m[k] for k in ("source", "weight", "decisions")} for m in data.get("ensemble") or []],
            "families": sorted(mixture),
            "init": cfg.get("init") or "",
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


def specialist_for(rules: Rules) -> str | None:
    """The shipped per-table policy trained for exactly ``rules`` (table included) and kept, or ``None``.

    Where several are, the one trained for the fewest tables (then by name).
    """
    kept = [s for s in catalogue() if s.name in KEPT_BECAUSE and rules in s.tables]
    return min(kept, key=lambda s: (len(s.tables), s.name)).name if kept else None


def describe() -> list[dict[str, Any]]:
    """Per shipped policy: name, tables, decisions, training time, strength and why it ships (``agurk zoo``, docs)."""
    rows = []
    for s in catalogue():
        if s.universal:
            table = f"every table ({len(s.info['families'])} families)"
            tables = [table]
        else:
            counts = sorted(t.players for t in s.tables)
            players = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else str(counts[0])
            table = table_text(s.tables[0], players, s.preset)
            tables = [table_text(t, preset=s.preset) for t in s.tables]
        start = f" (these decisions after starting from {Path(s.info['init']).stem})" if s.info["init"] else ""
        why = f"the network of every table{start}" if s.universal else KEPT_BECAUSE.get(s.name, "")
        rows.append({"name": s.name, "preset": s.preset, "table": table, "tables": tables, "why": why})
        rows[-1].update(s.info)
    return rows


@functools.cache
def preset_table() -> dict[str, Any]:
    """The shipped table of every preset (:data:`PRESET_TABLE`): its command, per preset ``zoo`` and the search's."""
    table: dict[str, Any] = json.loads(PRESET_TABLE.read_text())
    return table
