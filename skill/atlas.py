"""The variant atlas: the skill report of every preset at every player count and hand size of a grid.

``atlas(variants, players, hand_sizes, budget, seed, out)`` builds the grid (:func:`grid`:
presets x player counts x hand sizes; the combinations whose cards do not fit the deck
are left out, with the reason), runs each cell as a variant of :func:`skill.cells.play_jobs`
(one task per table of each ladder agent's tournament in each cell on :func:`agents.tasks.run_tasks`;
:func:`skill.variant.run_variant`'s numbers on that cell's rules: the same code, seed and
numbers as a one-cell ``agurk skill-report``), then writes into ``out``:

- ``atlas.json``: ``{"format", "seed", "budget", "policy", ..., "left_out", "cells"}``, the
  cells ranked by ``rs_win`` (each a :func:`skill.variant.run_variant` object with its
  ``rank`` and ``key``);
- ``atlas.csv``: the ranked table, one row per cell (every statistic with its interval);
- ``atlas-ladder.csv``: one row per cell and ladder agent;
- ``heatmaps/PRESET.png``: per preset, RS (win rate) and N* over players x hand size, each
  cell annotated with its value and 95% interval (:func:`skill.plots.plot_heatmaps`);
- ``atlas.md``: the left-out combinations, the ranked table, the heatmaps, the command.

With the budget's ``policy`` ``zoo`` (the atlas's usual one) no cell trains: every cell
plays the zoo's universal network, the same network in every cell. Every
file depends only on the arguments, not on the backend, the worker count or the machine's
speed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.tasks import LOCAL, Backend
from agurk_env.atomic import atomic_write_text
from agurk_env.rules import RulesError
from skill.budget import BUDGETS, Budget, LadderFields
from skill.cells import LeftOut, Monitor, grid, run_cells, write_convergence
from skill.report_text import STAT_KEYS, meaning, policy_sentence, python_call, reproduce, stat_text, write_csv
from skill.variant import VariantRow

FORMAT = "agurk-atlas"
"""The ``format`` of ``atlas.json``."""
HEATMAPS = "heatmaps"
"""The folder of the per-preset heatmaps in ``out``."""


class Atlas(LadderFields):
    """The ``atlas.json`` object."""

    format: str
    seed: int
    budget: str
    variants: list[str]
    players: list[int]
    hand_sizes: list[int]
    deals: int
    command: str
    left_out: list[LeftOut]
    cells: list[VariantRow]


def atlas(
    variants: Sequence[str],
    players: Sequence[int],
    hand_sizes: Sequence[int] = (),
    budget: str | Budget = "smoke",
    seed: int = 0,
    out: str | Path = "runs/atlas",
    checkpoints: dict[str, str] | None = None,
    train_settings: dict[str, Any] | None = None,
    workers: int | None = None,
    monitor: Monitor | None = None,
    command: str | None = None,
    backend: Backend = LOCAL,
    cache: str | Path | None = None,
    convergence: Sequence[str] = (),
) -> Atlas:
    """Run the atlas and write its files into ``out``; return the ``atlas.json`` object.

    ``budget`` is a :data:`skill.budget.BUDGETS` name or a :class:`Budget`; ``workers``
    defaults to one per cell, at most one per CPU core; the cells run on ``backend``.
    ``command`` is quoted in ``atlas.md`` (by default the Python call). A grid with no
    cell that fits the deck raises :class:`agurk_env.rules.RulesError`. ``cache`` and
    ``convergence`` as in :func:`skill.report.skill_report` (the convergence files name each cell by its key).
    """
    plan = BUDGETS[budget] if isinstance(budget, str) else budget
    out = Path(out)
    cells, left_out = grid(variants, players, hand_sizes)
    if not cells:
        raise RulesError(f"no cell of the grid fits the deck: {left_out[0]['reason']}")
    out.mkdir(parents=True, exist_ok=True)
    checkpoints = dict(checkpoints or {})
    played = run_cells(
        cells,
        plan,
        seed,
        out,
        checkpoints,
        train_settings,
        workers,
        monitor,
        backend,
        keyed=True,
        cache=cache,
        convergence=convergence,
    )
    data: Atlas = {
        "format": FORMAT,
        "seed": seed,
        "budget": plan.name,
        "variants": list(variants),
        "players": list(players),
        "hand_sizes": list(hand_sizes),
        "deals": plan.deals,
        **played.ladder,
        "command": command
        or python_call(
            "skill.atlas.atlas",
            list(variants),
            list(players),
            list(hand_sizes),
            plan,
            seed,
            str(out),
            checkpoints,
            train_settings,
            **({"convergence": list(convergence)} if convergence else {}),
        ),
        "left_out": left_out,
        "cells": played.ranked,
    }
    write_files(data, out)
    write_convergence(played, cells, True, plan, seed, data["command"], out)
    return data


# ----------------------------------------------------------------------------- files


def write_files(data: Atlas, out: Path) -> None:
    """Every file of the atlas from its ``atlas.json`` object."""
    atomic_write_text(out / "atlas.json", json.dumps(data, indent=2) + "\n")
    write_csv(data["cells"], CELL_COLUMNS, out / "atlas.csv", out / "atlas-ladder.csv")
    (out / HEATMAPS).mkdir(exist_ok=True)
    for preset in data["variants"]:
        write_heatmap(data, preset, out / HEATMAPS / f"{preset}.png")
    atomic_write_text(out / "atlas.md", markdown(data))


CELL_COLUMNS = ("key", "preset", "players", "hand_size")
"""The columns that name a cell in the CSV files."""


HEATMAP_STATS = (("rs_win", "RS (win rate): 0 = random, 1 = fictive", False), ("n_star", "N* (matches)", True))
"""The heatmap panels: statistic, title, and whether its colour scale is logarithmic."""


def write_heatmap(data: Atlas, preset: str, path: Path) -> None:
    """``heatmaps/PRESET.png``: RS and N* of the preset's cells over players x hand size, values and 95% intervals."""
    from skill.plots import plot_heatmaps

    cells = {(c["players"], c["hand_size"]): c for c in data["cells"] if c["preset"] == preset}
    left = {(c["players"], c["hand_size"]) for c in data["left_out"] if c["preset"] == preset}
    players = sorted({p for p, _ in [*cells, *left]})
    hands = sorted({h for _, h in [*cells, *left]})
    panels = []
    for key, title, log in HEATMAP_STATS:
        values = [[_value(cells.get((p, h)), key) for h in hands] for p in players]
        texts = [[_annotation(cells.get((p, h)), key) for h in hands] for p in players]
        panels.append((title, values, texts, log))
    title = f"{preset}: {data['deals']} deals per agent and cell, {data['budget']} budget, seed {data['seed']}"
    plot_heatmaps(path, title, players, hands, panels)


def _value(cell: VariantRow | None, key: str) -> float | None:
    """A cell's statistic (``None``: left out, undefined or unbounded)."""
    if cell is None:
        return None
    stats: Mapping[str, Any] = cell  # read by the statistic's key
    return stats[key]


def _annotation(cell: VariantRow | None, key: str) -> str:
    """``value`` over ``[low, high]`` for a heatmap cell; a left-out cell says so."""
    if cell is None:
        return "left out\n(deck)"
    return stat_text(cell, key).replace(" [", "\n[", 1)


def cell_name(cell: VariantRow | LeftOut) -> str:
    """``PRESET, P players x H cards`` in prose."""
    return f"{cell['preset']}, {cell['players']} players x {cell['hand_size']} cards"


def markdown(data: Atlas) -> str:
    """``atlas.md``: what was played, the left-out combinations, the ranked cells, the heatmaps, the command."""
    cards = ", ".join(map(str, data["hand_sizes"])) if data["hand_sizes"] else "each preset's own"
    policy = policy_sentence(data, data["cells"], [c["key"] for c in data["cells"]])
    lines = [
        f"# Agurk variant atlas ({data['budget']} budget, seed {data['seed']})",
        "",
        f"Presets {', '.join(data['variants'])} at {', '.join(map(str, data['players']))} players and {cards} cards "
        f"per hand: {len(data['cells'])} cells. In each cell every ladder agent "
        f"({', '.join(f'`{s}`' for s in data['ladder'])}) played {data['deals']} duplicate deals (deals x players "
        f"matches, every seat rotation) as the focal player against copies of `{data['field']}`. "
        f"{policy} The fictive player (`fictive`, RS = 1) sees every card and plays the exact best "
        "response to the field's actual play, round by round; the maxN oracle (`oracle`, the exact solver's card on "
        "the true deal) cheats too and is no real agent. Intervals are 95% bootstrap intervals over deals "
        f"({data['bootstrap_resamples']} resamples).",
        "",
        "## Left out",
        "",
    ]
    if data["left_out"]:
        lines += ["Combinations whose cards do not fit the deck (not played):", ""]
        lines += [f"- {cell_name(c)}: {c['reason']}" for c in data["left_out"]]
    else:
        lines.append("None: every combination fits the deck.")
    lines += [
        "",
        "## Cells ranked by relative skill",
        "",
        "| rank | preset | players | cards | RS (win rate) | RS (win rate, plain) | RS (penalty) | skill share "
        "| N* matches | rating spread | upset rate | best real agent |",
        "|---:|---|---:|---:|---|---|---|---|---|---|---|---|",
    ]
    for c in data["cells"]:
        stats = " | ".join(stat_text(c, k) for k in STAT_KEYS)
        lines.append(f"| {c['rank']} | {c['preset']} | {c['players']} | {c['hand_size']} | {stats} | {c['best_win']} |")
    named: list[VariantRow] = [{**c, "preset": cell_name(c)} for c in data["cells"]]
    lines += ["", meaning(named), "", "## Heatmaps", ""]
    for preset in data["variants"]:
        lines += [f"![{preset}: relative skill and N* per cell]({HEATMAPS}/{preset}.png)", ""]
    lines += [
        "## How to read it",
        "",
        "Each cell is a skill report variant (docs/skill_report.md defines every statistic): **RS** is the share "
        "of the win-rate gap between random play and the fictive player that the best real agent closes; **N*** is the "
        "number of matches after which the skill differences among the real agents are as large as luck (∞: none "
        "detected). RS and N* compare cells of one atlas (the same ladder and field), not cells of different "
        "atlases. `atlas.csv` holds every number with its interval, `atlas-ladder.csv` every agent of every cell.",
        "",
        *reproduce(data["command"], data["seed"], "atlas, on any backend"),
    ]
    return "\n".join(lines)
