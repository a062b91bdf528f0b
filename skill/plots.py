"""The skill report's PNG plots: relative skill per variant, and the ladder's win rates per variant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def _pyplot() -> Any:
    """Matplotlib's pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _errors(values: list[float | None], cis: list[list[float | None]], cap: float) -> tuple[np.ndarray, np.ndarray]:
    """Values (NaN where undefined) and ``(2, n)`` error-bar lengths; an unbounded end is drawn to ``cap``."""
    v = np.array([np.nan if x is None else x for x in values], dtype=float)
    low = np.array([v[i] if c[0] is None else c[0] for i, c in enumerate(cis)], dtype=float)
    high = np.array([cap if c[1] is None else c[1] for c in cis], dtype=float)
    return v, np.stack([np.maximum(v - low, 0), np.maximum(high - v, 0)])


_SAVE = {"dpi": 120, "metadata": {"Software": None}}  # no version stamp: the same report, byte for byte


def plot_rs(report: dict[str, Any], path: Path) -> None:
    """``rs.png``: relative skill (win rate and penalty) per variant with 95% intervals, ranked."""
    plt = _pyplot()
    variants = report["variants"]
    names = [v["preset"] for v in variants]
    y = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.4 * len(names)))
    for offset, key, label in ((-0.15, "rs_win", "win rate"), (0.15, "rs_penalty", "penalty per round")):
        values, err = _errors([v[key] for v in variants], [v[f"{key}_ci"] for v in variants], cap=1.0)
        ax.errorbar(values, y + offset, xerr=err, fmt="o", capsize=3, label=label)
    ax.axvline(0, color="grey", lw=0.8)
    ax.axvline(1, color="grey", lw=0.8, ls="--")
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel("relative skill: 0 = random, 1 = oracle (sees every card)")
    ax.set_title(f"Relative skill per variant ({report['budget']} budget, seed {report['seed']})")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, **_SAVE)
    plt.close(fig)


def plot_ladder(report: dict[str, Any], path: Path) -> None:
    """``ladder.png``: each ladder agent's focal win rate per variant, with 95% intervals and the fair share."""
    plt = _pyplot()
    variants = report["variants"]
    specs = report["ladder"]
    x = np.arange(len(variants))
    width = 0.8 / len(specs)
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(variants) + 2), 4.5))
    for j, spec in enumerate(specs):
        rows = [next(a for a in v["ladder"] if a["spec"] == spec) for v in variants]
        values, err = _errors([a["win_rate"] for a in rows], [a["win_rate_ci"] for a in rows], cap=1.0)
        ax.bar(x - 0.4 + (j + 0.5) * width, values, width, yerr=err, capsize=1.5, label=spec)
    ax.axhline(1 / report["players"], color="black", lw=0.8, ls="--", label="fair share")
    ax.set_xticks(x, [v["preset"] for v in variants], rotation=30, ha="right")
    ax.set_ylabel(f"win rate against {report['players'] - 1} x {report['field']}")
    ax.set_title("Ladder win rates per variant (ranked by relative skill)")
    ax.legend(fontsize="x-small", ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, **_SAVE)
    plt.close(fig)
