"""Learning curves: every kept checkpoint of a training run against a field of each opponent, by wall time.

A run trained with ``keep_checkpoints: true`` lists a copy of each of its checkpoints in
``checkpoints/kept.csv`` (:func:`training.run_folder.read_kept`) with the training and wall
seconds at which it was saved. :func:`learning_curve` plays each of them as the focal
entry of a duplicate-deal tournament ``[ppo:CHECKPOINT, OPP, OPP, ...]`` for every
opponent spec, on the same deals for every checkpoint, so the points of one curve differ
by the policy only. ``agurk curve RUN`` writes the result as ``curve.json``, ``curve.csv``
and ``curve.png``: :func:`curve` on its options (:class:`CurveOptions`), in the stages the
command shows (:func:`plan_curve`, :func:`play_curve`, :func:`write_planned`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

import numpy as np

from agents.command import Backends, Quiet, Seeded, worker_count
from agents.tasks import LOCAL, Backend
from agents.tournament import tournament
from agurk_env.atomic import atomic_text, atomic_write_text
from agurk_env.options import REQUIRED, OptionError, option, split_list
from agurk_env.rules import Rules
from skill.plots import error_bars, pyplot, save
from training.config import load_config
from training.run_folder import CHECKPOINTS, KeptCheckpoint, claim_out, read_kept


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


def plot_curve(curve: Curve, path: Path) -> None:
    """``curve.png``: the focal win rate of each kept checkpoint by wall time, one line per run and opponent.

    The curves of ``curve["beside"]`` (other runs on the same deals) are drawn with their run's name.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    runs = [curve, *curve.get("beside", [])]
    for one in runs:
        name = f"{Path(one['run']).name}: " if len(runs) > 1 else ""
        for opponent in dict.fromkeys(p["opponent"] for p in one["points"]):
            points = [p for p in one["points"] if p["opponent"] == opponent]
            minutes = np.array([p["wall_seconds"] / 60 for p in points])
            values, err = error_bars([p["win_rate"] for p in points], [p["win_rate_ci"] for p in points], cap=1.0)
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


@dataclass(frozen=True, kw_only=True)
class CurveOptions(Seeded, Backends, Quiet):
    """``agurk curve``'s options (:func:`curve`)."""

    run: str = option(REQUIRED, metavar="RUN", positional=True)
    """a run folder trained with keep_checkpoints: true"""
    against: str = option("guard", metavar="SPEC[,SPEC...]")
    """opponent specs, one curve each, every other seat a copy"""
    beside: list[str] = option([], metavar="RUN")
    """another run of the same rules and table, played on the same deals and drawn beside (repeatable)"""
    deals: int = option(200, low=1, metavar="D")
    """duplicate deals per point"""
    seed: int = option(1, low=0, metavar="S")
    """seed of the deals and agents"""
    players: int | None = option(None, metavar="N")
    """table size (default: the run's first player count)"""
    workers: int | None = option(None, low=1, metavar="W")
    """worker processes per tournament (default: the CPU count, at most 4)"""
    out: str | None = option(None, metavar="DIR")
    """output folder, new or empty (default: RUN/curve)"""
    force: bool = False
    """move a --out folder that is not empty aside to DIR.old-<date>-<time>"""


@dataclass(frozen=True)
class CurvePlan:
    """A curve checked before it plays: its options, rules, opponents, output folder and number of points."""

    options: CurveOptions
    rules: Rules
    opponents: list[str]
    out: Path
    points: int


def plan_curve(options: CurveOptions) -> CurvePlan:
    """Check the runs, their rules and kept checkpoints, the opponents, and (without ``force``) the output folder.

    :class:`OptionError` names the option; a used ``--out`` is ``RunFolderError``, refused before any play.
    """
    from agents.registry import AgentSpecError, make_agents
    from training.config import ConfigError

    options.tasks_backend()
    for run_folder in (options.run, *options.beside):
        if not (Path(run_folder) / "config.yaml").is_file():
            raise OptionError(f"{run_folder!r} is not a run folder (no config.yaml)")
    out = Path(options.out) if options.out is not None else Path(options.run) / "curve"
    opponents = [s for s in split_list(options.against) if s]
    if not opponents:
        raise OptionError("--against needs at least one agent spec")
    try:
        rules = curve_rules(options.run, options.players)
        rows = kept_checkpoints(options.run)
        for other in options.beside:
            if curve_rules(other, rules.players) != rules:
                raise OptionError(f"--beside {other!r} trained under other rules than {options.run!r}")
            rows += kept_checkpoints(other)
        for spec in opponents:
            make_agents(spec, rules.players, options.seed)
    except (CurveError, ConfigError, AgentSpecError, ValueError) as e:
        raise OptionError(str(e)) from None
    if not options.force:  # after the arguments: a typo in --against is named first
        claim_out(out)  # a used --out is refused before the work, and moved aside (--force) only after it
    return CurvePlan(options, rules, opponents, out, len(rows) * len(opponents))


def play_curve(plan: CurvePlan, on_point: Callable[[CurvePoint], object] | None = None) -> Curve:
    """The run's curve, and each ``--beside`` run's under ``beside``; ``on_point(point)`` as each is done."""
    o = plan.options
    workers = worker_count(o.workers, 4)
    backend = o.tasks_backend()
    runs = [o.run, *o.beside]
    curve, *beside = [
        learning_curve(run, plan.opponents, o.deals, o.seed, plan.rules.players, workers, backend, on_point)
        for run in runs
    ]
    if beside:
        curve["beside"] = beside
    return curve


def write_planned(plan: CurvePlan, curve: Curve) -> Path | None:
    """Claim the output folder (moving a used one aside with ``force``) and write the curve's files; where it went."""
    moved = claim_out(plan.out, plan.options.force)
    write_curve(curve, plan.out)
    return moved


def curve(options: CurveOptions, on_point: Callable[[CurvePoint], object] | None = None) -> Curve:
    """``agurk curve``: the learning curve of the run of ``options`` against each opponent, written into ``--out``."""
    plan = plan_curve(options)
    played = play_curve(plan, on_point)
    write_planned(plan, played)
    return played
