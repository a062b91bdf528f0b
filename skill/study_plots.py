"""The skill study's plots: tiers with rank intervals, the robustness grid, RS against the network's budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from skill.plots import pyplot, save


def plot_tiers(data: dict[str, Any], path: Path) -> None:
    """``tiers.png``: RS (win rate) per preset with its 95% interval and rank interval, coloured by tier."""
    plt = pyplot()
    vs = data["variants"]
    y = np.arange(len(vs))
    fig, (ax, ax_rank) = plt.subplots(
        1, 2, figsize=(10, 1.4 + 0.38 * len(vs)), sharey=True, gridspec_kw={"width_ratios": [3, 2]}
    )
    colours = plt.get_cmap("tab10")
    for i, v in enumerate(vs):
        c = colours((v["tier"] - 1) % 10)
        low, high = v["rs_win_ci"]
        ax.errorbar(v["rs_win"], i, xerr=[[v["rs_win"] - low], [high - v["rs_win"]]], fmt="o", color=c, capsize=3)
        for k, rep in enumerate(v["replications"]):
            ax.plot(rep["rs_win"], i + (k - 0.5) * 0.3, marker="|", color="grey", ms=8)
        ax_rank.plot([v["rank_ci"][0], v["rank_ci"][1]], [i, i], color=c, lw=4, solid_capstyle="butt")
        ax_rank.plot(v["rank"], i, "o", color="black", ms=4)
    ax.set_yticks(y, [f"{v['preset']} (tier {v['tier']})" for v in vs])
    ax.invert_yaxis()
    ax.set_xlabel("RS by win rate, pooled, 95% interval (grey ticks: each replication)")
    ax_rank.set_xlabel("rank, 95% bootstrap interval")
    ax_rank.set_xlim(0.5, len(vs) + 0.5)
    fig.suptitle("Which variant rewards skill: tiers (colour) and rank intervals")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def plot_robustness(data: dict[str, Any], path: Path) -> None:
    """``robustness.png``: each preset's rank in the main study and in every robustness setting."""
    plt = pyplot()
    rob = data["robustness"]
    columns = [
        ("main (win)", {v["preset"]: v["rank"] for v in data["variants"]}),
        ("main (penalty)", {v["preset"]: v["rank_penalty"] for v in data["variants"]}),
    ]
    for kind, groups in (("field", rob["fields"]), ("players", rob["players"])):
        for key, g in groups.items():
            columns.append((f"{kind} {key}", {r["preset"]: r["rank"] for r in g["variants"]}))
    names = [v["preset"] for v in data["variants"]]
    grid = np.array([[col[n] for _, col in columns] for n in names], dtype=float)
    fig, ax = plt.subplots(figsize=(2 + 1.3 * len(columns), 1.2 + 0.35 * len(names)))
    image = ax.imshow(grid, cmap="viridis_r", aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            ax.text(j, i, f"{grid[i, j]:g}", ha="center", va="center", color="white", fontsize=8)
    ax.set_xticks(np.arange(len(columns)), [c for c, _ in columns], rotation=20, ha="right")
    ax.set_yticks(np.arange(len(names)), names)
    ax.set_title(f"Rank by RS in each setting (Kendall's W {rob['kendall_w']:.2f})")
    fig.colorbar(image, ax=ax, label="rank (1 = most skill)")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def plot_convergence(conv: dict[str, Any], path: Path) -> None:
    """``convergence.png``: RS (win rate) of each preset against the network's training decisions."""
    plt = pyplot()
    x = np.array(conv["decisions"], dtype=float)
    fig, ax = plt.subplots(figsize=(8, 5))
    for v in conv["variants"]:
        style = "-" if v["preset"] in conv["moving"] else ":"
        ax.plot(x, v["rs_win"], style, marker="o", ms=3, label=v["preset"])
    ax.set_xscale("log")
    ax.set_xlabel("training decisions of the network")
    ax.set_ylabel("RS by win rate")
    ax.set_title("RS against the network's training budget (solid: still moving at the last doubling)")
    ax.legend(fontsize="x-small", ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
