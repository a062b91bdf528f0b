"""The cells a skill report or atlas plays, one job each, run as tasks: one job maker and runner for both.

A cell is a preset at a player count and hand size (:class:`Cell`); :func:`grid` lays out
presets x player counts x hand sizes and leaves out the combinations whose cards do not fit
the deck. A skill report is the atlas of one cell per preset (one player count, one hand
size). :func:`run_cells` makes each cell's :class:`skill.variant.VariantJob`, runs them as
tasks of :func:`agents.tasks.run_tasks` (local worker processes, or Ray tasks with
``backend=Backend("ray")``): one task per table of each ladder agent's tournament (a variant
that trains: one task), the largest first, then each variant's statistics
(:func:`play_jobs`), and ranks the results. Every result depends only on the jobs, not on
the backend, the worker count or the machine's speed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from agents.tasks import LOCAL, Backend, TaskProgress, run_tasks
from agents.tournament import TournamentPlan, play_planned
from agents.tournament_stats import SeatStats
from agurk_env.rules import Rules, RulesError
from skill import convergence as conv
from skill.budget import FIELD, Budget, LadderFields, ZooPolicy, ladder, match_cost, quickstart_settings
from skill.cache import TaskCache
from skill.control_variates import Captured, cv_settings
from skill.convergence import BudgetCheckpoint, BudgetRS, budget_rs, last_rs, seated
from skill.convergence import checkpoints as checkpoints_of
from skill.stats import focal_data
from skill.variant import (
    CV_STAGE,
    VariantJob,
    VariantRow,
    capture_best,
    capture_plans,
    run_variant,
    spec_plan,
    variant_result,
    with_control_variates,
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


WORKER_OPTIONS: dict[str, Any] = {"initializer": _init_worker, "every": 0.5}
"""How :func:`play_jobs` runs its tasks: one torch thread per worker, progress every half second."""


def _stage_names(job: VariantJob, extra: Sequence[str] = ()) -> list[str]:
    """The stages a variant reports, in order (a task reports its stage's index); ``extra``: the budgets' agents."""
    return ["waiting", "training PPO", *ladder(job.budget), *extra, CV_STAGE, "done"]


WHOLE = -1
"""The ladder index of a task that runs its whole variant (:func:`skill.variant.run_variant`): a variant that trains."""


Task = tuple[int, int, int]
"""A task of the first round: ``(variant, agent or WHOLE, table)`` (a whole variant: table 0); the agents are the
ladder's, then the convergence budgets' networks."""


def _task(
    progress: TaskProgress, job: VariantJob, index: int, table: tuple[Any, ...] | None, cost: float, stage: int
) -> Any:
    """A task of :func:`agents.tasks.run_tasks`: one table of an agent's tournament, or a whole variant.

    ``table`` is the arguments of :func:`agents.tournament.play_planned` (``None`` with ``WHOLE``),
    ``cost`` the agent's cost of one match and ``stage`` its stage's index. A variant that
    trains runs whole, so its checkpoint is read where it was written (on one node of a
    cluster); the stage reported is the agent's or the variant's.
    """
    if index == WHOLE:
        names = _stage_names(job)
        return run_variant(job, lambda units, name: progress(units, names.index(name)))
    assert table is not None  # an agent's table: None only with WHOLE
    return play_planned(lambda n: progress(n * cost, stage), *table)


def _result_task(
    progress: TaskProgress,
    job: VariantJob,
    plans: list[TournamentPlan],
    tables: list[list[SeatStats]],
    budget: int | None = None,
    last: bool = False,
) -> Any:
    """A variant's statistics from its agents' tournaments (each agent's plan and tables) as a task.

    The ladder's row (with ``last``: and its RS at the last convergence budget, the report's
    network, :func:`skill.convergence.last_rs`); or, with ``budget``, its RS with that earlier
    budget's network in the learned agent's place (:func:`skill.convergence.budget_rs`).
    """
    n = len(ladder(job.budget))
    if budget is not None:  # the seatings alone: no tournament summaries
        seatings = [seated(plan, t) for plan, t in zip(plans, tables, strict=True)]
        return budget_rs(job, seatings[:n], seatings[n + budget])
    results = [plan.result(t) for plan, t in zip(plans[:n], tables[:n], strict=True)]
    row = variant_result(job, results)
    return (row, last_rs(job, results, row)) if last else row


def _label(job: VariantJob) -> str:
    """A variant's name in task errors."""
    return f"variant {job.preset} ({job.rules.players} players, {job.rules.hand_size} cards)"


def budget_label(spec: str) -> str:
    """A convergence budget's agent as a stage and task name: its checkpoint's file name."""
    return f"network {Path(spec.partition(':')[2]).name}"


Budgets = list[tuple[BudgetRS, np.ndarray]]
"""A variant's RS at each convergence budget (the report's network last) and RS by win rate per bootstrap resample."""


@dataclass(frozen=True)
class Ran:
    """What :func:`play_jobs` played: each variant's row and, with convergence budgets, its RS at each."""

    rows: list[VariantRow]
    budgets: list[Budgets]
    """Per variant, per budget in training order (empty without budgets)."""
    played: int
    """Tables played (the rest came from the cache)."""


def play_jobs(
    jobs: Sequence[VariantJob],
    workers: int = 1,
    monitor: Monitor | None = None,
    backend: Backend = LOCAL,
    cache: TaskCache | None = None,
    budgets: Sequence[str] = (),
) -> Ran:
    """Run the variants and the convergence ``budgets`` (agent specs of earlier networks) on ``backend``.

    Two rounds of tasks: every table of every agent's tournament of every variant (the ladder's,
    then each budget's network's), one task each (a variant that trains: one task for all of
    it), the largest first (:func:`_task_order`), so the workers stay busy to the end; then each
    split variant's statistics, and its RS at each earlier budget. Every table is seeded by its
    job alone, so the results are :func:`skill.variant.run_variant`'s, whatever the order,
    backend or workers. With ``cache`` a table stored there is read instead of played, and
    each table played is stored as it finishes (:class:`skill.cache.TaskCache`); a variant
    that trains is never cached.
    """
    if budgets and any(job.trains for job in jobs):
        raise ValueError("convergence budgets need a ladder that trains nothing")
    specs = [[*ladder(job.budget, job.policy_spec), *budgets] for job in jobs]
    stages = [_stage_names(job, [budget_label(b) for b in budgets]) for job in jobs]
    plans = [[] if job.trains else [spec_plan(job, spec) for spec in specs[i]] for i, job in enumerate(jobs)]
    order = _task_order(jobs, plans, specs)
    tables: list[list[list[Any]]] = [[[None] * len(plan.tasks) for plan in job_plans] for job_plans in plans]
    materials: dict[int, str] = {}
    if cache is not None:
        for t, (i, k, j) in enumerate(order):
            if k != WHOLE:
                materials[t] = cache.material(plans[i][k].tasks[j], plans[i][k].labels)
                tables[i][k][j] = cache.load(materials[t])
    todo = [t for t, (i, k, j) in enumerate(order) if k == WHOLE or tables[i][k][j] is None]
    progress = _Progress(jobs, order, todo, stages, plans, specs, monitor)

    def task_name(i: int, k: int, t: int) -> str:
        label = _label(jobs[i])
        return label if k == WHOLE else f"{label}, {stages[i][2 + k]}, {plans[i][k].names[t]}"

    def finished(index: int, value: Any) -> None:
        t = todo[index]
        progress.finished(t)
        if t in materials:
            cache.store(materials[t], value)  # type: ignore[union-attr]

    def args(i: int, k: int, t: int) -> tuple[Any, ...]:
        if k == WHOLE:
            return jobs[i], k, None, 0.0, 0
        return jobs[i], k, plans[i][k].tasks[t], match_cost(specs[i][k]), 2 + k

    played = run_tasks(
        _task,
        [args(*order[t]) for t in todo],
        workers,
        backend,
        names=[task_name(*order[t]) for t in todo],
        on_progress=progress.tasks,
        on_result=finished,
        **WORKER_OPTIONS,
    )
    progress.done()
    results: list[Any] = [None] * len(jobs)
    for t, value in zip(todo, played, strict=True):
        i, k, j = order[t]
        if k == WHOLE:
            results[i] = value
        else:
            tables[i][k][j] = value
    found = _statistics(jobs, plans, tables, budgets, results, workers, backend)
    _control_variates(jobs, plans, tables, results, workers, backend, cache)
    return Ran(results, found, len(todo))


def _control_variates(
    jobs: Sequence[VariantJob],
    plans: list[list[TournamentPlan]],
    tables: list[list[list[Any]]],
    results: list[Any],
    workers: int,
    backend: Backend,
    cache: TaskCache | None,
) -> None:
    """The third round of :func:`play_jobs`: each split variant's best agent captured twice, its row corrected.

    Its matches on the fitting deals and on the variant's own (:func:`skill.variant.capture_best`),
    one task each, read from and kept in ``cache`` like the tables; a variant that trains did
    this in its own task.
    """
    split = [i for i in range(len(jobs)) if not jobs[i].trains]
    wanted = [(i, k) for i in split for k in range(2)]
    materials = [_capture_material(cache, jobs[i], results[i]["best_win"], k) for i, k in wanted]
    got: list[Any] = [None if m is None or cache is None else cache.load_arrays(m) for m in materials]
    todo = [t for t, g in enumerate(got) if g is None]

    def finished(index: int, captured: Captured) -> None:
        t = todo[index]
        got[t] = {"win": captured.win, "features": captured.features}
        material = materials[t]
        if cache is not None and material is not None:
            cache.store_arrays(material, got[t])

    run_tasks(
        _capture_task,
        [(jobs[wanted[t][0]], results[wanted[t][0]]["best_win"], wanted[t][1]) for t in todo],
        workers,
        backend,
        names=[f"{_label(jobs[wanted[t][0]])}, control variates {wanted[t][1]}" for t in todo],
        on_result=finished,
        **WORKER_OPTIONS,
    )
    for n, i in enumerate(split):
        job = jobs[i]
        n_ladder = len(ladder(job.budget))
        seatings = [seated(p, t) for p, t in zip(plans[i][:n_ladder], tables[i][:n_ladder], strict=True)]
        data = focal_data(ladder(job.budget), seatings)
        fitted, measured = (Captured(got[2 * n + k]["win"], got[2 * n + k]["features"]) for k in range(2))
        results[i] = with_control_variates(job, data, results[i], fitted, measured)


def _capture_task(progress: TaskProgress, job: VariantJob, label: str, which: int) -> Captured:
    """:func:`skill.variant.capture_best` as a task of :func:`agents.tasks.run_tasks`."""
    return capture_best(job, label, which)


def _capture_material(cache: TaskCache | None, job: VariantJob, label: str, which: int) -> str | None:
    """The cache key material of a captured tournament: its tables' and the features' settings (``None``: no cache)."""
    if cache is None:
        return None
    plan = capture_plans(job, label)[which]
    tables = [json.loads(cache.material(task, plan.labels)) for task in plan.tasks]
    return json.dumps({"control_variates": cv_settings(), "which": which, "tables": tables}, sort_keys=True)


def _statistics(
    jobs: Sequence[VariantJob],
    plans: list[list[TournamentPlan]],
    tables: list[list[list[Any]]],
    budgets: Sequence[str],
    results: list[Any],
    workers: int,
    backend: Backend,
) -> list[Budgets]:
    """The second round of :func:`play_jobs`: each split variant's statistics (into ``results``), its RS per budget."""
    split = [i for i in range(len(jobs)) if not jobs[i].trains]
    rounds = [(i, None) for i in split] + [(i, b) for i in split for b in range(len(budgets))]
    stats = run_tasks(
        _result_task,
        [(jobs[i], plans[i], tables[i], b, bool(budgets)) for i, b in rounds],
        workers,
        backend,
        names=[_label(jobs[i]) if b is None else f"{_label(jobs[i])}, {budget_label(budgets[b])}" for i, b in rounds],
        **WORKER_OPTIONS,
    )
    found: list[Budgets] = [[] for _ in jobs]
    for (i, b), value in zip(rounds, stats, strict=True):
        if b is None and budgets:
            results[i], last = value
            found[i].append(last)
        elif b is None:
            results[i] = value
        else:
            found[i].insert(b, value)
    return found


def _task_order(jobs: Sequence[VariantJob], plans: list[list[TournamentPlan]], specs: list[list[str]]) -> list[Task]:
    """Every task, the largest estimated first (so the workers end together).

    A tournament's task is one of its tables (:func:`skill.variant.agent_plan`), so no single
    agent's tournament keeps one worker busy after the others are done. The estimate: the
    task's share of its agent's work units (:func:`_units`, or :func:`skill.variant.work` of a
    whole variant) times the players and the hand size (a match has more plies); only the
    order depends on it, never a result.
    """
    tasks = [
        (i, k, t)
        for i, job in enumerate(jobs)
        for k in ([WHOLE] if job.trains else range(len(specs[i])))
        for t in (range(1) if k == WHOLE else range(len(plans[i][k].tasks)))
    ]

    def cost(task: Task) -> float:
        i, k, _ = task
        job = jobs[i]
        units = work(job) if k == WHOLE else _units(job, specs[i][k]) / len(plans[i][k].tasks)
        return units * job.players * job.rules.hand_size

    return sorted(tasks, key=lambda task: -cost(task))


def _units(job: VariantJob, spec: str) -> float:
    """Estimated work units of agent ``spec``'s tournament in ``job`` (:func:`skill.variant.agent_work`'s)."""
    return job.budget.deals * job.players * match_cost(spec)


class _Progress:
    """The tasks' progress as each variant's work done and stage, told to a :data:`Monitor`.

    Only the tasks ``todo`` run; the others (read from the cache) count as done from the start.
    """

    def __init__(
        self,
        jobs: Sequence[VariantJob],
        order: list[Task],
        todo: list[int],
        names: list[list[str]],
        plans: list[list[TournamentPlan]],
        specs: list[list[str]],
        monitor: Monitor | None,
    ) -> None:
        self.order, self.todo, self.names, self.monitor = order, todo, names, monitor
        self.totals = [
            work(job) + sum(_units(job, s) for s in specs[i][len(ladder(job.budget)) :]) for i, job in enumerate(jobs)
        ]
        self.is_finished = [True] * len(order)
        self.before = [0.0] * len(jobs)  # the work of the cached tasks
        for t in todo:
            self.is_finished[t] = False
        for t, (i, k, _) in enumerate(order):
            if self.is_finished[t]:
                self.before[i] += _units(jobs[i], specs[i][k]) / len(plans[i][k].tasks)
        self.units, self.stages = list(self.before), [0] * len(jobs)

    def show(self) -> None:
        """Tell the monitor each variant's work done and stage."""
        if self.monitor is not None:
            stages = [n[s] for n, s in zip(self.names, self.stages, strict=True)]
            self.monitor(list(self.units), self.totals, stages)

    def tasks(self, task_units: list[float], task_stages: list[int]) -> None:
        """Each running task's work done and stage index, summed per variant (a finished variant is done)."""
        running: dict[int, int] = {}
        self.units = list(self.before)
        for t, units, stage in zip(self.todo, task_units, task_stages, strict=True):
            i = self.order[t][0]
            self.units[i] += units
            if stage and not self.is_finished[t]:
                running[i] = max(running.get(i, 0), stage)
        for i in range(len(self.units)):
            done = all(self.is_finished[t] for t, (j, _, _) in enumerate(self.order) if j == i)
            self.stages[i] = len(self.names[i]) - 1 if done else running.get(i, 0)
        self.show()

    def finished(self, t: int) -> None:
        """Task ``t`` (of the order) has its result."""
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
    """The cells played: their ranked results (an atlas's each with its ``key``) and what to say of the ladder.

    With convergence budgets, ``checkpoints`` lists them (the report's network last) and
    ``budgets`` holds each cell's RS at each, in cell (grid) order.
    """

    ranked: list[VariantRow]
    ladder: LadderFields
    checkpoints: list[BudgetCheckpoint] = dataclasses.field(default_factory=list)
    budgets: list[Budgets] = dataclasses.field(default_factory=list)
    played: int = 0
    """Tables played in this run (the others came from the cache)."""


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
    cache: str | Path | None = None,
    convergence: Sequence[str] = (),
) -> Played:
    """Play the cells (``workers``: one per CPU core by default) and rank them; checkpoints named in ``out``.

    ``keyed`` (an atlas): each cell's checkpoint and result named by its key; else (a report) by
    its preset. ``cache``: the folder of the result cache (:mod:`skill.cache`; ``None``: none).
    ``convergence``: earlier checkpoints of the network every cell plays, in training order
    (:mod:`skill.convergence`; ``ValueError`` when the cells do not play one such network).
    """
    jobs = make_jobs(cells, plan, seed, out, checkpoints, train_settings, keyed)
    budgets = checkpoints_of(jobs, convergence) if convergence else []
    ran = play_jobs(
        jobs,
        workers or max(1, os.cpu_count() or 1),
        monitor,
        backend,
        None if cache is None else TaskCache(cache),
        [f"ppo:{b['checkpoint']}" for b in budgets[:-1]],
    )
    results = ran.rows
    for cell, result in zip(cells, results, strict=True):
        if result["ppo_checkpoint"] is not None and Path(result["ppo_checkpoint"]).is_relative_to(out):
            result["ppo_checkpoint"] = Path(result["ppo_checkpoint"]).relative_to(out).as_posix()
        if keyed:
            result["key"] = cell.key
    return Played(rank(results), ladder_fields(plan, jobs), budgets, ran.budgets, ran.played)


def write_convergence(
    played: Played, cells: Sequence[Cell], keyed: bool, plan: Budget, seed: int, command: str, out: Path
) -> None:
    """With convergence budgets, ``convergence.*`` in ``out``: each cell (named by its key, or its preset) at each."""
    if not played.checkpoints:
        return
    places = [(c.preset, c.players, c.hand_size) for c in cells]
    names = [c.key if keyed else c.preset for c in cells]
    found = conv.convergence(plan, seed, played.checkpoints, places, names, played.budgets, command)
    conv.write_files(found, out)
