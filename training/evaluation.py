"""A run's evaluations: ``agurk evaluate``'s tournament of a checkpoint, their history and the learning curve.

An evaluation is the duplicate-deal tournament (:func:`agents.tournament.tournament`) of
``ppo:CHECKPOINT`` against ``eval.opponent`` in every other seat, for each player count
trained on. Its score is the mean over player counts of the win rate times the player
count (1.0 is a fair share). Every evaluation of a run is one line of
``RUN/evaluations.jsonl``; ``RUN/eval.json`` is the last one and ``RUN/learning_curve.png``
draws them all (win rate by learner decisions, 95% intervals, the fair share dashed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TypedDict

from agurk_env.atomic import atomic_write, atomic_write_text
from training.config import Config

HISTORY = "evaluations.jsonl"
"""Every evaluation of the run, one JSON object a line, in step order."""
LAST = "eval.json"
"""The last evaluation."""
CURVE = "learning_curve.png"
"""The run's learning curve, drawn from :data:`HISTORY`."""


class PlayersResult(TypedDict):
    """The checkpoint's figures at one player count of an :class:`Evaluation` (intervals as ``[low, high]``)."""

    players: int
    win_rate: float
    win_rate_ci: list[float]
    fair_share: float
    mean_penalty: float
    mean_penalty_ci: list[float]
    rating: float
    opponents: dict[str, object] | None
    """The opponents' entry of the tournament (:meth:`agents.tournament_stats.EntryStats.to_dict`)."""


class Evaluation(TypedDict):
    """One evaluation of a run's checkpoint: a line of :data:`HISTORY`, the whole of :data:`LAST`."""

    step: int
    checkpoint: str
    opponent: str
    policy: str
    deals: int
    seed: int
    rules: str
    score: float
    win_rate: float
    results: list[PlayersResult]
    seconds: float


def evaluate(cfg: Config, checkpoint: Path, step: int, deals: int) -> Evaluation:
    """Tournament of ``checkpoint`` against ``eval.opponent`` at every player count of ``cfg``; the summary."""
    from agents.tournament import tournament

    ev = cfg.eval
    spec = f"ppo:{checkpoint.resolve()}" + (";sample" if ev.sample else "")
    results: list[PlayersResult] = []
    start = time.perf_counter()
    for rules in cfg.rule_sets():
        p = rules.players
        specs = [spec] + [ev.opponent] * (p - 1)
        res = tournament(rules, specs, deals, ev.seed, resamples=ev.resamples, deck=cfg.deck(rules))
        entry = res.entries[0]
        results.append(
            {
                "players": p,
                "win_rate": entry.win_rate,
                "win_rate_ci": list(entry.win_rate_ci),
                "fair_share": 1.0 / p,
                "mean_penalty": entry.mean_penalty,
                "mean_penalty_ci": list(entry.mean_penalty_ci),
                "rating": entry.rating,
                "opponents": res.entries[1].to_dict() if p > 1 else None,
            }
        )
    return {
        "step": step,
        "checkpoint": str(checkpoint),
        "opponent": ev.opponent,
        "policy": "sampled" if ev.sample else "greedy",
        "deals": deals,
        "seed": ev.seed,
        "rules": cfg.preset,
        "score": sum(r["win_rate"] * r["players"] for r in results) / len(results),
        "win_rate": sum(r["win_rate"] for r in results) / len(results),
        "results": results,
        "seconds": time.perf_counter() - start,
    }


def scalars(summary: Evaluation) -> dict[str, float]:
    """The ``eval/`` TensorBoard scalars of an evaluation."""
    out = {"eval/win_rate": summary["win_rate"], "eval/score": summary["score"]}
    for r in summary["results"]:
        p = r["players"]
        out |= {
            f"eval/win_rate/{p}p": r["win_rate"],
            f"eval/win_rate_low/{p}p": r["win_rate_ci"][0],
            f"eval/mean_penalty/{p}p": r["mean_penalty"],
        }
    return out


def record(folder: Path, summary: Evaluation) -> None:
    """Write ``summary`` as ``eval.json`` and add it to the history (an evaluation of a resumed step replaces it)."""
    atomic_write_text(folder / LAST, json.dumps(summary, indent=2) + "\n")
    rows = [r for r in history(folder) if r["step"] < summary["step"]] + [summary]
    atomic_write_text(folder / HISTORY, "".join(json.dumps(r) + "\n" for r in rows))


def history(folder: Path) -> list[Evaluation]:
    """The evaluations recorded in ``folder``, in step order (``[]`` if none)."""
    path = folder / HISTORY
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_curve(folder: Path) -> Path | None:
    """Draw the run's evaluations into ``learning_curve.png``; its path, or None (no evaluation, or no matplotlib)."""
    rows = history(folder)
    if not rows:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    for p in sorted({r["players"] for row in rows for r in row["results"]}):
        points = [(row["step"], r) for row in rows for r in row["results"] if r["players"] == p]
        steps = [s for s, _ in points]
        (line,) = ax.plot(steps, [r["win_rate"] for _, r in points], marker="o", label=f"{p} players")
        low, high = ([r["win_rate_ci"][i] for _, r in points] for i in (0, 1))
        ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.2)
        ax.axhline(1.0 / p, color=line.get_color(), linestyle="--", linewidth=1)
    ax.set_xlabel("learner decisions")
    ax.set_ylabel(f"win rate against {rows[-1]['opponent']}")
    ax.set_title(f"{rows[-1]['rules']}: evaluations (95% intervals; dashed: fair share)")
    ax.legend()
    fig.tight_layout()
    path = folder / CURVE
    atomic_write(path, lambda f: fig.savefig(f, format="png"))
    plt.close(fig)
    return path
