"""What every PNG plot shares (pyplot on the file-only backend, error bars, the atomic save) and the atlas's heatmaps.

Each report draws its own plot beside its other files, with these: the skill report's relative skill and
ladder (:mod:`skill.report`), the convergence (:mod:`skill.convergence`), the sweep (:mod:`skill.sweep`), the
learning curve (:mod:`skill.curve`), the study's (:mod:`skill.study_plots`) and the leaderboard's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from agurk_env.atomic import atomic_write

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def pyplot() -> ModuleType:
    """Matplotlib's pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def error_bars(
    values: Sequence[float | None], cis: Sequence[Sequence[float | None]], cap: float
) -> tuple[np.ndarray, np.ndarray]:
    """Values (NaN where undefined) and ``(2, n)`` error-bar lengths; an unbounded end is drawn to ``cap``."""
    v = np.array([np.nan if x is None else x for x in values], dtype=float)
    low = np.array([v[i] if c[0] is None else c[0] for i, c in enumerate(cis)], dtype=float)
    high = np.array([cap if c[1] is None else c[1] for c in cis], dtype=float)
    return v, np.stack([np.maximum(v - low, 0), np.maximum(high - v, 0)])


_DPI = 120
_METADATA = {"Software": None}  # no version stamp: the same report, byte for byte


def save(fig: Figure, path: Path) -> None:
    """Write ``fig`` as a PNG to ``path`` atomically (an interruption leaves the previous image)."""
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=_DPI, metadata=_METADATA))


Panel = tuple[str, list[list[float | None]], list[list[str]], bool]
"""One heatmap panel: title, values per (row, column) (``None``: no colour), annotations, log colour scale."""


def plot_heatmaps(path: Path, title: str, players: list[int], hands: list[int], panels: list[Panel]) -> None:
    """Heatmaps side by side over players (rows) x hand size (columns), each cell's text written on it (grey: none)."""
    plt = pyplot()
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
