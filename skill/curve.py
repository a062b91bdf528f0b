"""Learning curves: every kept checkpoint of a training run against a field of each opponent, by wall time.

A run trained with ``keep_checkpoints: true`` lists a copy of each of its checkpoints in
``checkpoints/kept.csv`` (:func:`training.run_folder.read_kept`) with the training and wall
seconds at which it was saved. :func:`learning_curve` plays each of them as the focal
entry of a duplicate-deal tournament ``[ppo:CHECKPOINT, OPP, OPP, ...]`` for every
opponent spec, on the same deals for every checkpoint, so the points of one curve differ
by the policy only. ``agurk curve RUN`` writes the result as ``curve.json``, ``curve.csv``
and ``curve.png``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from agents.tasks import LOCAL, Backend
from agents.tournament import tournament
from agurk_env.atomic import atomic_text, atomic_write_text
from agurk_env.rules import Rules
from training.config import load_config
from training.run_folder import CHECKPOINTS, KeptCheckpoint, read_kept


class CurvePoint(TypedDict):
    """One kept checkpoint against one opponent: its save's step and times, the focal win rate and mean penalty."""

    step: int
    train_seconds: float
    wall_seconds: float
    opponent: str
    win_rate: float
    win_rate_ci: list[float]
    """The win rate's 95% bootstrap interval ``[low, high]``."""
    mean_penalty: float
    """Penalty points per round."""


class Curve(TypedDict):
    """The ``curve.json`` object: one run's points, on the same deals for every checkpoint."""

    run: str
    players: int
    deals: int
    seed: int
    points: list[CurvePoint]
    beside: NotRequired[list[Curve]]
    """The curves of other runs on the same deals (``agurk curve --beside``)."""


class CurveError(ValueError):
    """A run folder without kept checkpoints, or rules it was not trained on (one-line message)."""


def curve_rules(run: str | Path, players: int | None = None) -> Rules:
    """The rules of ``run`` (its ``config.yaml``) at ``players`` seats (default: its first player count)."""
    sets = load_config(Path(run) / "config.yaml").rule_sets()
    if players is None:
        return sets[0]
    for rules in sets:
        if rules.players == players:
            return rules
    raise CurveError(f"the run was trained on {', '.join(str(r.players) for r in sets)} players, not {players}")


def kept_checkpoints(run: str | Path) -> list[KeptCheckpoint]:
    """The kept checkpoints of ``run`` (:func:`training.run_folder.read_kept`); :class:`CurveError` if none."""
    rows = read_kept(run)
    if not rows:
        raise CurveError(
            f"{str(run)!r} has no kept checkpoints (checkpoints/kept.csv): train it with --set keep_checkpoints=true"
        )
    return rows


def learning_curve(
    run: str | Path,
    opponents: Sequence[str],
    deals: int,
    seed: int,
    players: int | None = None,
    workers: int = 1,
    backend: Backend = LOCAL,
    on_point: Callable[[CurvePoint], object] | None = None,
) -> Curve:
    """Each kept checkpoint of ``run`` against ``players - 1`` copies of each opponent; one point per pair.

    A point has the checkpoint's ``step``, ``train_seconds``, ``wall_seconds``, the
    ``opponent``, the focal ``win_rate`` with its 95% bootstrap ``win_rate_ci`` and the
    ``mean_penalty`` per round. ``on_point(point)`` is called as each one is done.
    """
    rules = curve_rules(run, players)
    rows = kept_checkpoints(run)
    points: list[CurvePoint] = []
    for row in rows:
        path = (Path(run) / CHECKPOINTS / row["file"]).resolve()
        for opponent in opponents:
            specs = [f"ppo:{path}", *[opponent] * (rules.players - 1)]
            result = tournament(rules, specs, deals, seed, workers=workers, backend=backend)
            focal = result.entries[0]
            point: CurvePoint = {
                "step": row["step"],
                "train_seconds": row["train_seconds"],
                "wall_seconds": row["wall_seconds"],
                "opponent": opponent,
                "win_rate": focal.win_rate,
                "win_rate_ci": list(focal.win_rate_ci),
                "mean_penalty": focal.mean_penalty,
            }
            points.append(point)
            if on_point is not None:
                on_point(point)
    return {"run": str(run), "players": rules.players, "deals": deals, "seed": seed, "points": points}


def write_curve(curve: Curve, out: Path) -> None:
    """``curve.json``, ``curve.csv`` (one row per point) and ``curve.png`` into ``out``."""
    from skill.plots import plot_curve

    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "curve.json", json.dumps(curve, indent=2) + "\n")
    fields = ["step", "train_seconds", "wall_seconds", "opponent", "win_rate", "win_low", "win_high", "mean_penalty"]
    with atomic_text(out / "curve.csv") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(fields)
        for p in curve["points"]:
            writer.writerow(
                [p["step"], p["train_seconds"], p["wall_seconds"], p["opponent"], f"{p['win_rate']:.6f}"]
                + [f"{x:.6f}" for x in p["win_rate_ci"]]
                + [f"{p['mean_penalty']:.6f}"]
            )
    plot_curve(curve, out / "curve.png")
