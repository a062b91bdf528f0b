"""The PNG plots: the skill report's relative skill and ladder, the atlas's heatmaps, sweeps, learning curves."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from agurk_env.atomic import atomic_write

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from skill.convergence import Convergence
    from skill.curve import Curve
    from skill.report import Report
    from skill.sweep import SweepRow


def _pyplot() -> ModuleType:
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


def save(fig: Figure, path: Path) -> None:
    """Write ``fig`` as a PNG to ``path`` atomically (an interruption leaves the previous image)."""
    atomic_write(path, lambda f: fig.savefig(f, format="png", **_SAVE))


def plot_rs(report: Report, path: Path) -> None:
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
    ax.set_xlabel("relative skill: 0 = random, 1 = the fictive player (sees every card)")
    ax.set_title(f"Relative skill per variant ({report['budget']} budget, seed {report['seed']})")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def plot_ladder(report: Report, path: Path) -> None:
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
    save(fig, path)
    plt.close(fig)


def plot_sweep(rows: list[SweepRow], path: Path) -> None:
    """``results.png`` of ``agurk sweep``: each agent's win rate at each grid point, 95% intervals, the fair share."""
    plt = _pyplot()
    keys = list(dict.fromkeys(r["key"] for r in rows))
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    y = np.arange(len(keys))
    step = 0.8 / len(agents)
    fig, ax = plt.subplots(figsize=(8, 1.4 + 0.35 * len(keys)))
    for j, agent in enumerate(agents):
        mine = [r for r in rows if r["agent"] == agent]
        at = np.array([keys.index(r["key"]) for r in mine]) - 0.4 + (j + 0.5) * step
        cis = [[r["win_rate_low"], r["win_rate_high"]] for r in mine]
        values, err = _errors([r["win_rate"] for r in mine], cis, cap=1.0)
        ax.errorbar(values, at, xerr=err, fmt="o", ms=3, capsize=2, label=agent)
    fair = {r["key"]: 1 / r["players"] for r in rows}
    names = {r["key"]: f"{r['key']} ({r['override']})" if r["override"] else r["key"] for r in rows}
    ax.scatter([fair[k] for k in keys], y, marker="|", s=150, color="black", label="fair share")
    ax.set_yticks(y, [names[k] for k in keys])
    ax.invert_yaxis()
    ax.set_xlabel(f"win rate against {rows[0]['opponent']} in every other seat")
    ax.set_title("Sweep: the focal agents' win rates per grid point")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


Panel = tuple[str, list[list[float | None]], list[list[str]], bool]
"""One heatmap panel: title, values per (row, column) (``None``: no colour), annotations, log colour scale."""


def plot_heatmaps(path: Path, title: str, players: list[int], hands: list[int], panels: list[Panel]) -> None:
    """Heatmaps side by side over players (rows) x hand size (columns), each cell's text written on it (grey: none)."""
    plt = _pyplot()
    from matplotlib.colors import LogNorm, Normalize
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    width = max(3.8, 1.8 + 1.3 * len(hands))
    fig, axes = plt.subplots(1, len(panels), figsize=(len(panels) * width, 1.8 + 0.8 * len(players)), squeeze=False)
    for ax, (name, values, texts, log) in zip(axes[0], panels, strict=True):
        grid = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
        finite = grid[np.isfinite(grid)]
        if log and finite.size and finite.min() > 0:
            low, high = float(finite.min()), float(finite.max())
            norm: Normalize = LogNorm(low / 1.5, high * 1.5) if low == high else LogNorm(low, high)
            cmap = plt.get_cmap("viridis_r").with_extremes(bad="#d9d9d9")
        else:
            norm = Normalize(min(0.0, *finite), max(1.0, *finite)) if finite.size else Normalize(0.0, 1.0)
            cmap = plt.get_cmap("viridis").with_extremes(bad="#d9d9d9")
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto")
        for i in range(len(players)):
            for j in range(len(hands)):
                dark = np.isfinite(grid[i, j]) and np.dot(cmap(norm(grid[i, j]))[:3], (0.299, 0.587, 0.114)) < 0.5
                ax.text(j, i, texts[i][j], ha="center", va="center", fontsize=8, color="white" if dark else "black")
        ax.set_xticks(range(len(hands)), [str(h) for h in hands])
        ax.set_yticks(range(len(players)), [str(p) for p in players])
        ax.set_xlabel("cards per hand")
        ax.set_ylabel("players")
        ax.set_title(name, fontsize="medium")
        bar = fig.colorbar(image, ax=ax, shrink=0.85)
        if isinstance(norm, LogNorm):  # plain numbers at 1, 2, 3, 5, 7 x 10^k
            bar.ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 3.0, 5.0, 7.0)))
            bar.ax.yaxis.set_minor_locator(NullLocator())
            bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def plot_curve(curve: Curve, path: Path) -> None:
    """``curve.png``: the focal win rate of each kept checkpoint by wall time, one line per run and opponent.

    The curves of ``curve["beside"]`` (other runs on the same deals) are drawn with their run's name.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    runs = [curve, *curve.get("beside", [])]
    for one in runs:
        name = f"{Path(one['run']).name}: " if len(runs) > 1 else ""
        for opponent in dict.fromkeys(p["opponent"] for p in one["points"]):
            points = [p for p in one["points"] if p["opponent"] == opponent]
            minutes = np.array([p["wall_seconds"] / 60 for p in points])
            values, err = _errors([p["win_rate"] for p in points], [p["win_rate_ci"] for p in points], cap=1.0)
            label = f"{name}vs {curve['players'] - 1} x {opponent}"
            ax.errorbar(minutes, values, yerr=err, fmt="o-", capsize=3, label=label)
    ax.axhline(1 / curve["players"], color="grey", lw=0.8, ls="--", label="fair share")
    ax.set_xlabel("training wall time (minutes)")
    ax.set_ylabel("win rate (95% interval)")
    ax.set_title(f"Learning curve: {curve['deals']} duplicate deals per point, seed {curve['seed']}", fontsize="medium")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def plot_convergence(data: Convergence, path: Path) -> None:
    """``convergence.png``: RS (win rate and penalty) against training decisions, one line per variant, 95% intervals.

    The x axis is logarithmic; each variant's points are set a little apart so the error bars do not hide each other.
    """
    plt = _pyplot()
    variants = data["variants"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    colours = plt.get_cmap("tab20" if len(variants) > 10 else "tab10")
    spread = np.linspace(-1, 1, len(variants)) * 0.03 if len(variants) > 1 else np.zeros(1)
    for ax, key, title in ((axes[0], "rs_win", "RS by win rate"), (axes[1], "rs_penalty", "RS by penalty per round")):
        for j, v in enumerate(variants):
            steps = np.maximum([b["decisions"] for b in v["budgets"]], 1).astype(float) * 10 ** spread[j]
            values, err = _errors([b[key] for b in v["budgets"]], [b[f"{key}_ci"] for b in v["budgets"]], cap=1.0)
            ax.errorbar(
                steps, values, yerr=err, fmt="o-", ms=3, capsize=2, color=colours(j % colours.N), label=v["name"]
            )
        ax.axhline(1, color="grey", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xlabel("training decisions of the network")
        ax.set_title(title, fontsize="medium")
    axes[0].set_ylabel("relative skill: 0 = random, 1 = the fictive player")
    axes[1].legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(
        f"Relative skill against training budget ({data['deals']} deals, {data['budget']} budget, seed {data['seed']})",
        fontsize="medium",
    )
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
