"""The cells a skill report or atlas plays, one job each, run as tasks: one job maker and runner for both.

A cell is a preset at a player count and hand size (:class:`Cell`); :func:`grid` lays out
presets x player counts x hand sizes and leaves out the combinations whose cards do not fit
the deck. A skill report is the atlas of one cell per preset (one player count, one hand
size). :func:`run_cells` makes each cell's :class:`skill.variant.VariantJob`, runs them as
tasks of :func:`agents.tasks.run_tasks` (local worker processes, or Ray tasks with
``backend=Backend("ray")``): one task per table of each ladder agent's tournament (a variant
that trains: one task), the largest first, then each variant's statistics
(:func:`run_jobs`), and ranks the results. Every result depends only on the jobs, not on
the backend, the worker count or the machine's speed.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from agents.tasks import LOCAL, Backend, TaskProgress, run_tasks
from agents.tournament import TournamentPlan, play_planned
from agents.tournament_stats import SeatStats
from agurk_env.rules import Rules, RulesError
from skill.budget import FIELD, Budget, ladder, quickstart_settings
from skill.variant import (
    VariantJob,
    VariantRow,
    agent_match_cost,
    agent_plan,
    agent_work,
    run_variant,
    variant_result,
    work,
)

Monitor = Callable[[list[float], list[float], list[str]], None]
"""``monitor(units_done, units_total, stages)``: per cell, work done and to do (see
:func:`skill.variant.work`) and what runs now."""


@dataclass(frozen=True)
class Cell:
    """One cell: a preset at a player count and hand size."""

    preset: str
    players: int
    hand_size: int

    @property
    def key(self) -> str:
        """``PRESET-<P>p-<H>c``: the cell's name in an atlas's tables and files."""
        return f"{self.preset}-{self.players}p-{self.hand_size}c"

    @property
    def label(self) -> str:
        """``PRESET PpxHc`` for progress and errors."""
        return f"{self.preset} {self.players}p x {self.hand_size}c"


class LeftOut(TypedDict):
    """A combination of the grid whose cards do not fit the deck, and why."""

    preset: str
    players: int
    hand_size: int
    reason: str


class ZooPolicy(TypedDict):
    """A shipped policy a ``zoo`` ladder plays: its table, decisions trained and its file's SHA-256 (16 digits)."""

    table: str
    decisions: int
    sha256: str


class LadderFields(TypedDict):
    """What a report and an atlas say of their ladder."""

    policy: str
    train_steps: int
    zoo: dict[str, ZooPolicy] | None
    bootstrap_resamples: int
    field: str
    ladder: list[str]


def grid(
    variants: Sequence[str], players: Sequence[int], hand_sizes: Sequence[int] = ()
) -> tuple[list[Cell], list[LeftOut]]:
    """The cells whose rules are valid, in grid order (presets, players, hand sizes), and the left-out combinations.

    An empty ``hand_sizes`` takes each preset's own.
    """
    cells: list[Cell] = []
    left_out: list[LeftOut] = []
    for preset in variants:
        for p in players:
            for h in hand_sizes or [Rules.preset(preset).hand_size]:
                try:
                    Rules.preset(preset, players=p, hand_size=h)
                except RulesError as e:
                    left_out.append({"preset": preset, "players": p, "hand_size": h, "reason": str(e)})
                    continue
                cells.append(Cell(preset, p, h))
    return cells, left_out


def make_jobs(
    cells: Sequence[Cell],
    budget: Budget,
    seed: int,
    out: Path,
    checkpoints: dict[str, str] | None = None,
    train_settings: dict[str, Any] | None = None,
    keyed: bool = False,
) -> list[VariantJob]:
    """One :class:`VariantJob` per cell; a preset in ``checkpoints`` reuses that checkpoint instead of training.

    A cell that trains writes ``checkpoints/PRESET.pt`` (``keyed``, in an atlas: ``checkpoints/KEY.pt``).
    """
    checkpoints = checkpoints or {}
    settings = train_settings or quickstart_settings()
    trains = budget.policy == "train"
    return [
        VariantJob(
            preset=c.preset,
            players=c.players,
            budget=budget,
            seed=seed,
            train_settings=settings,
            checkpoint=checkpoints.get(c.preset),
            checkpoint_out=(
                str(out / "checkpoints" / f"{c.key if keyed else c.preset}.pt")
                if trains and c.preset not in checkpoints
                else None
            ),
            hand_size=c.hand_size,
        )
        for c in cells
    ]


def _init_worker() -> None:
    """One torch thread in each worker process: one core per variant."""
    import torch

    torch.set_num_threads(1)


def _stage_names(job: VariantJob) -> list[str]:
    """The stages a variant reports, in order (a task reports its stage's index)."""
    return ["waiting", "training PPO", *ladder(job.budget), "done"]


WHOLE = -1
"""The ladder index of a task that runs its whole variant (:func:`skill.variant.run_variant`): a variant that trains."""


Task = tuple[int, int, int]
"""A task of the first round: ``(variant, ladder agent or WHOLE, table)`` (a whole variant: table 0)."""


def _task(progress: TaskProgress, job: VariantJob, index: int, table: tuple[Any, ...] | None) -> Any:
    """A task of :func:`agents.tasks.run_tasks`: one table of a ladder agent's tournament, or a whole variant.

    ``table`` is the arguments of :func:`agents.tournament.play_planned` (``None`` with ``WHOLE``).
    A variant that trains runs whole, so its checkpoint is read where it was written (on one
    node of a cluster); the stage reported is the agent's or the variant's.
    """
    if index == WHOLE:
        names = _stage_names(job)
        return run_variant(job, lambda units, name: progress(units, names.index(name)))
    cost = agent_match_cost(job, index)
    return play_planned(lambda n: progress(n * cost, 2 + index), *table)


def _result_task(
    progress: TaskProgress, job: VariantJob, plans: list[TournamentPlan], tables: list[list[SeatStats]]
) -> VariantRow:
    """A variant's statistics from its ladder's tournaments (each agent's plan and tables) as a task."""
    return variant_result(job, [plan.result(t) for plan, t in zip(plans, tables, strict=True)])


def _task_order(jobs: Sequence[VariantJob], plans: list[list[TournamentPlan]]) -> list[Task]:
    """Every task, the largest estimated first (so the workers end together).

    A tournament's task is one of its tables (:func:`skill.variant.agent_plan`), so no single
    agent's tournament keeps one worker busy after the others are done. The estimate: the
    task's share of its work units (:func:`skill.variant.agent_work`, or :func:`skill.variant.work`
    of a whole variant) times the players and the hand size (a match has more plies); only the
    order depends on it, never a result.
    """
    tasks = [
        (i, k, t)
        for i, job in enumerate(jobs)
        for k in ([WHOLE] if job.trains else range(len(ladder(job.budget))))
        for t in (range(1) if k == WHOLE else range(len(plans[i][k].tasks)))
    ]

    def cost(task: Task) -> float:
        i, k, _ = task
        job = jobs[i]
        units = work(job) if k == WHOLE else agent_work(job, k) / len(plans[i][k].tasks)
        return units * job.players * job.rules.hand_size

    return sorted(tasks, key=lambda task: -cost(task))


def _label(job: VariantJob) -> str:
    """A variant's name in task errors."""
    return f"variant {job.preset} ({job.rules.players} players, {job.rules.hand_size} cards)"


def run_jobs(
    jobs: Sequence[VariantJob], workers: int = 1, monitor: Monitor | None = None, backend: Backend = LOCAL
) -> list[VariantRow]:
    """Run the variants on ``backend``, ``workers`` at a time (locally: in this process when 1); results in order.

    Two rounds of tasks: every table of every ladder agent's tournament of every variant, one
    task each (a variant that trains: one task for all of it), the largest first
    (:func:`_task_order`), so the workers stay busy to the end; then each split variant's
    statistics. Every table is seeded by its job alone, so the results are
    :func:`skill.variant.run_variant`'s, whatever the order, backend or workers.
    """
    plans = [[] if job.trains else [agent_plan(job, k) for k in range(len(ladder(job.budget)))] for job in jobs]
    order = _task_order(jobs, plans)
    progress = _Progress(jobs, order, monitor)

    def task_name(i: int, k: int, t: int) -> str:
        label = _label(jobs[i])
        return label if k == WHOLE else f"{label}, {ladder(jobs[i].budget)[k]}, {plans[i][k].names[t]}"

    common = {"initializer": _init_worker, "every": 0.5}
    played = run_tasks(
        _task,
        [(jobs[i], k, None if k == WHOLE else plans[i][k].tasks[t]) for i, k, t in order],
        workers,
        backend,
        names=[task_name(*task) for task in order],
        on_progress=progress.tasks,
        on_result=progress.finished,
        **common,
    )
    progress.done()
    results: list[Any] = [None] * len(jobs)
    tables: list[list[list[Any]]] = [[[None] * len(plan.tasks) for plan in job_plans] for job_plans in plans]
    for (i, k, t), value in zip(order, played, strict=True):
        if k == WHOLE:
            results[i] = value
        else:
            tables[i][k][t] = value
    split = [i for i in range(len(jobs)) if not jobs[i].trains]
    stats = run_tasks(
        _result_task,
        [(jobs[i], plans[i], tables[i]) for i in split],
        workers,
        backend,
        names=[_label(jobs[i]) for i in split],
        **common,
    )
    for i, value in zip(split, stats, strict=True):
        results[i] = value
    return results


class _Progress:
    """The tasks' progress as each variant's work done and stage, told to a :data:`Monitor`."""

    def __init__(self, jobs: Sequence[VariantJob], order: list[Task], monitor: Monitor | None) -> None:
        self.order, self.monitor = order, monitor
        self.names = [_stage_names(job) for job in jobs]
        self.totals = [work(job) for job in jobs]
        self.units, self.stages = [0.0] * len(jobs), [0] * len(jobs)
        self.is_finished = [False] * len(order)

    def show(self) -> None:
        """Tell the monitor each variant's work done and stage."""
        if self.monitor is not None:
            stages = [n[s] for n, s in zip(self.names, self.stages, strict=True)]
            self.monitor(list(self.units), self.totals, stages)

    def tasks(self, task_units: list[float], task_stages: list[int]) -> None:
        """Each task's work done and stage index, summed per variant (a finished variant is done)."""
        running: dict[int, int] = {}
        self.units = [0.0] * len(self.units)
        for t, (i, _, _) in enumerate(self.order):
            self.units[i] += task_units[t]
            if task_stages[t] and not self.is_finished[t]:
                running[i] = max(running.get(i, 0), task_stages[t])
        for i in range(len(self.units)):
            done = all(self.is_finished[t] for t, (j, _, _) in enumerate(self.order) if j == i)
            self.stages[i] = len(self.names[i]) - 1 if done else running.get(i, 0)
        self.show()

    def finished(self, t: int, _: Any) -> None:
        """Task ``t`` has its result."""
        self.is_finished[t] = True

    def done(self) -> None:
        """Every task has its result: every variant done."""
        self.units = list(self.totals)
        self.stages = [len(n) - 1 for n in self.names]
        self.show()


def rank(variants: list[VariantRow]) -> list[VariantRow]:
    """Variants by ``rs_win``, highest first (undefined last), each with its ``rank`` (1 = most skill)."""
    ordered = sorted(variants, key=lambda v: -v["rs_win"] if v["rs_win"] is not None else math.inf)
    return [{"rank": i + 1, **v} for i, v in enumerate(ordered)]


def zoo_policies(jobs: Sequence[VariantJob]) -> dict[str, ZooPolicy]:
    """Per shipped policy a ``zoo`` ladder plays: its table, decisions trained and its file's SHA-256 (16 digits)."""
    from agents.zoo import describe, path_of

    shipped = {d["name"]: d for d in describe()}
    return {
        name: {
            "table": shipped[name]["table"],
            "decisions": shipped[name]["decisions"],
            "sha256": hashlib.sha256(path_of(name).read_bytes()).hexdigest()[:16],
        }
        for name in dict.fromkeys(job.zoo_policy for job in jobs)
    }


def ladder_fields(plan: Budget, jobs: Sequence[VariantJob]) -> LadderFields:
    """What a report and an atlas say of their ladder: policy, training, shipped policies, resamples, field, agents."""
    return {
        "policy": plan.policy,
        "train_steps": plan.train_steps if plan.policy == "train" else 0,
        "zoo": zoo_policies(jobs) if plan.policy == "zoo" else None,
        "bootstrap_resamples": plan.resamples,
        "field": FIELD,
        "ladder": ladder(plan),
    }


@dataclass(frozen=True)
class Played:
    """The cells played: their ranked results (an atlas's each with its ``key``) and what to say of the ladder."""

    ranked: list[VariantRow]
    ladder: LadderFields


def run_cells(
    cells: Sequence[Cell],
    plan: Budget,
    seed: int,
    out: Path,
    checkpoints: dict[str, str],
    train_settings: dict[str, Any] | None,
    workers: int | None,
    monitor: Monitor | None,
    backend: Backend,
    keyed: bool = False,
) -> Played:
    """Play the cells (``workers``: one per CPU core by default) and rank them; checkpoints named in ``out``.

    ``keyed`` (an atlas): each cell's checkpoint and result named by its key; else (a report) by its preset.
    """
    jobs = make_jobs(cells, plan, seed, out, checkpoints, train_settings, keyed)
    results = run_jobs(jobs, workers or max(1, os.cpu_count() or 1), monitor, backend)
    for cell, result in zip(cells, results, strict=True):
        if result["ppo_checkpoint"] is not None and Path(result["ppo_checkpoint"]).is_relative_to(out):
            result["ppo_checkpoint"] = Path(result["ppo_checkpoint"]).relative_to(out).as_posix()
        if keyed:
            result["key"] = cell.key
    return Played(rank(results), ladder_fields(plan, jobs))
