"""``agurk skill-report``: run every variant (in parallel worker processes) and write the report files.

``skill_report(variants, players, budget, seed, out)`` runs every preset's variant as
:func:`skill.variant.run_variant` would, as tasks of :func:`agents.tasks.run_tasks` (local
worker processes, or Ray tasks with ``backend=Backend("ray")``): one task per table of each
ladder agent's tournament (a variant that trains: one task), the largest first, then each variant's
statistics (:func:`run_jobs`), with one progress bar over the whole run, then writes into ``out``:

- ``report.json``: ``{"seed", "budget", "players", "variants": [...]}`` (variants ranked by
  ``rs_win``; see :func:`skill.variant.run_variant` for each object's keys);
- ``report.csv``: one row per variant (the statistics and their intervals);
- ``ladder.csv``: one row per variant and ladder agent;
- ``report.md``: the ranked table, what the differences mean, the command and seed;
- ``rs.png`` and ``ladder.png`` (:mod:`skill.plots`);
- ``checkpoints/PRESET.pt``: each variant's trained PPO agent (not with the ``zoo`` policy,
  which plays the zoo's policy for each variant's table instead).

:mod:`skill.atlas` runs the same variants over a grid of player counts and hand sizes.

Every file depends only on the arguments, not on the backend, the worker count or the
machine's speed: the same seed gives the same report.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agents.tasks import LOCAL, Backend, TaskProgress, run_tasks
from agents.tournament import TournamentPlan, play_planned
from agents.tournament_stats import SeatStats
from agurk_env.atomic import atomic_text, atomic_write_text
from skill.budget import BUDGETS, FIELD, Budget, ladder, quickstart_settings
from skill.variant import (
    EFFECT_KEYS,
    VariantJob,
    agent_match_cost,
    agent_plan,
    agent_work,
    run_variant,
    variant_result,
    work,
)

Monitor = Callable[[list[float], list[float], list[str]], None]
"""``monitor(units_done, units_total, stages)``: per variant, work done and to do (see
:func:`skill.variant.work`) and what runs now."""


def make_jobs(
    variants: Sequence[str],
    players: int,
    budget: Budget,
    seed: int,
    out: Path,
    checkpoints: dict[str, str] | None = None,
    train_settings: dict[str, Any] | None = None,
    hand_size: int | None = None,
) -> list[VariantJob]:
    """One :class:`VariantJob` per preset; a preset in ``checkpoints`` reuses that checkpoint instead of training."""
    checkpoints = checkpoints or {}
    settings = train_settings or quickstart_settings()
    trains = budget.policy == "train"
    return [
        VariantJob(
            preset=preset,
            players=players,
            budget=budget,
            seed=seed,
            train_settings=settings,
            checkpoint=checkpoints.get(preset),
            checkpoint_out=str(out / "checkpoints" / f"{preset}.pt") if trains and preset not in checkpoints else None,
            hand_size=hand_size,
        )
        for preset in variants
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
) -> dict[str, Any]:
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


def run_jobs(
    jobs: Sequence[VariantJob], workers: int = 1, monitor: Monitor | None = None, backend: Backend = LOCAL
) -> list[dict[str, Any]]:
    """Run the variants on ``backend``, ``workers`` at a time (locally: in this process when 1); results in order.

    Two rounds of tasks: every table of every ladder agent's tournament of every variant, one
    task each (a variant that trains: one task for all of it), the largest first
    (:func:`_task_order`), so the workers stay busy to the end; then each split variant's
    statistics. Every table is seeded by its job alone, so the results are
    :func:`skill.variant.run_variant`'s, whatever the order, backend or workers.
    """
    names = [_stage_names(job) for job in jobs]
    totals = [work(job) for job in jobs]
    units, stages = [0.0] * len(jobs), [0] * len(jobs)

    def show() -> None:
        if monitor is not None:
            monitor(list(units), totals, [n[s] for n, s in zip(names, stages, strict=True)])

    def label(i: int) -> str:
        job = jobs[i]
        return f"variant {job.preset} ({job.rules.players} players, {job.rules.hand_size} cards)"

    plans = [[] if job.trains else [agent_plan(job, k) for k in range(len(ladder(job.budget)))] for job in jobs]
    order = _task_order(jobs, plans)
    finished = [False] * len(order)

    def on_progress(task_units: list[float], task_stages: list[int]) -> None:
        running: dict[int, int] = {}
        for i in range(len(jobs)):
            units[i] = 0.0
        for t, (i, _, _) in enumerate(order):
            units[i] += task_units[t]
            if task_stages[t] and not finished[t]:
                running[i] = max(running.get(i, 0), task_stages[t])
        for i in range(len(jobs)):
            done = all(finished[t] for t, (j, _, _) in enumerate(order) if j == i)
            stages[i] = len(names[i]) - 1 if done else running.get(i, 0)
        show()

    def on_done(t: int, _: Any) -> None:
        finished[t] = True

    def task_name(i: int, k: int, t: int) -> str:
        return label(i) if k == WHOLE else f"{label(i)}, {ladder(jobs[i].budget)[k]}, {plans[i][k].names[t]}"

    common = {"initializer": _init_worker, "every": 0.5}
    played = run_tasks(
        _task,
        [(jobs[i], k, None if k == WHOLE else plans[i][k].tasks[t]) for i, k, t in order],
        workers,
        backend,
        names=[task_name(*task) for task in order],
        on_progress=on_progress,
        on_result=on_done,
        **common,
    )
    for i in range(len(jobs)):
        units[i], stages[i] = totals[i], len(names[i]) - 1
    show()
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
        names=[label(i) for i in split],
        **common,
    )
    for i, value in zip(split, stats, strict=True):
        results[i] = value
    return results


def rank(variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Variants by ``rs_win``, highest first (undefined last), each with its ``rank`` (1 = most skill)."""
    ordered = sorted(variants, key=lambda v: -v["rs_win"] if v["rs_win"] is not None else math.inf)
    return [{"rank": i + 1, **v} for i, v in enumerate(ordered)]


def command_line(
    variants: Sequence[str],
    players: int | Sequence[int],
    budget: str,
    seed: int,
    out: str,
    checkpoints: dict[str, str],
    train_config: str | None,
    hand_sizes: Sequence[int] = (),
    policy: str | None = None,
    deals: int | None = None,
) -> str:
    """The ``agurk skill-report`` command that reproduces a report (or an atlas: several players or hand sizes)."""
    counts = [players] if isinstance(players, int) else list(players)
    words = ["agurk", "skill-report", "--variants", ",".join(variants), "--players", ",".join(map(str, counts))]
    if hand_sizes:
        words += ["--hand-sizes", ",".join(map(str, hand_sizes))]
    words += ["--budget", budget]
    if policy is not None:
        words += ["--policy", policy]
    if deals is not None:
        words += ["--deals", str(deals)]
    words += ["--seed", str(seed), "--out", out]
    for preset, path in checkpoints.items():
        words += ["--checkpoint", f"{preset}={path}"]
    if train_config:
        words += ["--train-config", train_config]
    return " ".join(words)


def zoo_policies(jobs: Sequence[VariantJob]) -> dict[str, dict[str, Any]]:
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


def relative_checkpoints(results: list[dict[str, Any]], out: Path) -> None:
    """Name each result's trained checkpoint relative to ``out`` when it lies there (a report names its own files)."""
    for result in results:
        if result["ppo_checkpoint"] is not None:
            path = Path(result["ppo_checkpoint"])
            if path.is_relative_to(out):
                result["ppo_checkpoint"] = path.relative_to(out).as_posix()


def run_variants(
    jobs: list[Any], workers: int | None, monitor: Monitor | None, backend: Backend, out: Path
) -> list[dict[str, Any]]:
    """Run the jobs (``workers``: one per CPU core by default); checkpoints named in ``out``."""
    results = run_jobs(jobs, workers or max(1, os.cpu_count() or 1), monitor, backend)
    relative_checkpoints(results, out)
    return results


def ladder_fields(plan: Budget, jobs: Sequence[VariantJob]) -> dict[str, Any]:
    """What a report and an atlas say of their ladder: policy, training, shipped policies, resamples, field, agents."""
    return {
        "policy": plan.policy,
        "train_steps": plan.train_steps if plan.policy == "train" else 0,
        "zoo": zoo_policies(jobs) if plan.policy == "zoo" else None,
        "bootstrap_resamples": plan.resamples,
        "field": FIELD,
        "ladder": ladder(plan),
    }


def skill_report(
    variants: Sequence[str],
    players: int = 4,
    budget: str | Budget = "smoke",
    seed: int = 0,
    out: str | Path = "runs/skill-report",
    checkpoints: dict[str, str] | None = None,
    train_settings: dict[str, Any] | None = None,
    workers: int | None = None,
    monitor: Monitor | None = None,
    command: str | None = None,
    backend: Backend = LOCAL,
    hand_size: int | None = None,
) -> dict[str, Any]:
    """Run a skill report and write its files into ``out``; return the ``report.json`` object.

    ``budget`` is a :data:`skill.budget.BUDGETS` name or a :class:`Budget` (its ``policy``
    says whether each variant trains a PPO agent or plays the zoo's policy for its table).
    ``workers`` defaults to one per variant, at most one per CPU core. ``command`` is quoted
    in ``report.md`` (the CLI passes the command line that reproduces the run). The variants
    run on ``backend`` (see :func:`agents.tasks.run_tasks`); the report is the same on
    each. ``hand_size`` deals that many cards in every variant (``None``: each preset's own).
    """
    from skill.plots import plot_ladder, plot_rs

    plan = BUDGETS[budget] if isinstance(budget, str) else budget
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    checkpoints = dict(checkpoints or {})
    jobs = make_jobs(variants, players, plan, seed, out, checkpoints, train_settings, hand_size)
    results = run_variants(jobs, workers, monitor, backend, out)
    sizes = [hand_size] if hand_size is not None else []
    report = {
        "seed": seed,
        "budget": plan.name,
        "players": players,
        "hand_size": hand_size,
        "deals": plan.deals,
        "matches_per_agent": plan.deals * players,
        **ladder_fields(plan, jobs),
        "command": command
        or command_line(
            variants, players, plan.name, seed, str(out), checkpoints, None, sizes, plan.policy, plan.deals
        ),
        "variants": rank(results),
    }
    atomic_write_text(out / "report.json", json.dumps(report, indent=2) + "\n")
    write_csv(report, out)
    plot_rs(report, out / "rs.png")
    plot_ladder(report, out / "ladder.png")
    atomic_write_text(out / "report.md", markdown(report))
    return report


# ----------------------------------------------------------------------------- files

STAT_KEYS = ("rs_win", "rs_penalty", "skill_share", "n_star", "rating_spread", "upset_rate")
"""Variant statistics of the ranked table, each with an interval (``KEY`` and ``KEY_ci``)."""
INTERVAL_KEYS = STAT_KEYS + EFFECT_KEYS
"""Every variant statistic with an interval: the ranked table's, then the learning and random effects."""


def write_csv(report: dict[str, Any], out: Path) -> None:
    """``report.csv`` (one row per variant) and ``ladder.csv`` (one row per variant and agent)."""
    with atomic_text(out / "report.csv") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(
            [
                "rank",
                "preset",
                *(f"{k}{s}" for k in INTERVAL_KEYS for s in ("", "_low", "_high")),
                "best_win",
                "best_penalty",
            ]
        )
        for v in report["variants"]:
            w.writerow(
                [
                    v["rank"],
                    v["preset"],
                    *(csv_number(x) for k in INTERVAL_KEYS for x in (v[k], *v[f"{k}_ci"])),
                    v["best_win"],
                    v["best_penalty"],
                ]
            )
    with atomic_text(out / "ladder.csv") as f:
        w = csv.writer(f, lineterminator="\n")
        keys = ("win_rate", "mean_penalty", "rating")
        w.writerow(["preset", "spec", *(f"{k}{s}" for k in keys for s in ("", "_low", "_high"))])
        for v in report["variants"]:
            for a in v["ladder"]:
                w.writerow([v["preset"], a["spec"], *(csv_number(x) for k in keys for x in (a[k], *a[f"{k}_ci"]))])


def csv_number(x: float | None) -> str:
    """A CSV number: empty for ``None`` (unbounded or undefined), else 6 significant digits."""
    return "" if x is None else f"{x:.6g}"


DIGITS = {
    "rs_win": 2,
    "rs_penalty": 2,
    "skill_share": 3,
    "n_star": 0,
    "rating_spread": 0,
    "upset_rate": 3,
    "learning_win": 3,
    "random_win": 3,
    "learning_penalty": 2,
    "random_penalty": 2,
}
"""Decimals shown for each statistic in tables."""


def stat_text(variant: dict[str, Any], key: str) -> str:
    """``value [low, high]`` of one statistic for tables; ``None`` reads ∞ for ``n_star``, else n/a."""
    missing = "∞" if key == "n_star" else "n/a"
    digits = DIGITS[key]

    def fmt(x: float | None) -> str:
        return missing if x is None else f"{x:.{digits}f}"

    low, high = variant[f"{key}_ci"]
    return f"{fmt(variant[key])} [{fmt(low)}, {fmt(high)}]"


def _overlap(a: Sequence[float | None], b: Sequence[float | None]) -> bool:
    """Whether two intervals overlap (``None`` ends are unbounded)."""
    low = max(x for x in (a[0], b[0], -math.inf) if x is not None)
    high = min(x for x in (a[1], b[1], math.inf) if x is not None)
    return low <= high


def meaning(report: dict[str, Any]) -> str:
    """A few sentences on what the ranking means, from the numbers themselves."""
    every = [v for v in report["variants"] if v["rs_win"] is not None]
    beyond = [v["preset"] for v in every if v["rs_win"] > 1]
    vs = [v for v in every if v["rs_win"] <= 1]  # RS is a share of the gap to the fictive player only up to 1
    if len(vs) < 2:
        return "One variant only: nothing to compare." if len(every) < 2 else _beyond_text(beyond)
    top, bottom = vs[0], vs[-1]
    apart = not _overlap(top["rs_win_ci"], bottom["rs_win_ci"])
    text = (
        f"In **{top['preset']}** the best real agent ({top['best_win']}) closes {top['rs_win']:.0%} of the gap in "
        f"win rate between random play and the fictive player, the best response to the field that sees every "
        f"card; in **{bottom['preset']}** {bottom['best_win']} closes {bottom['rs_win']:.0%}. "
    )
    text += (
        "Their 95% intervals do not overlap, so at this budget the first rewards skill measurably more. "
        if apart
        else "Their 95% intervals overlap, so this budget cannot tell them apart; a larger --budget narrows them. "
    )
    tied = [v["preset"] for v in vs[1:] if _overlap(v["rs_win_ci"], top["rs_win_ci"])]
    if tied:
        text += f"Not told apart from {top['preset']} (their intervals overlap its): {', '.join(tied)}. "
    if beyond:
        text += _beyond_text(beyond) + " "
    finite = [v for v in vs if v["n_star"] is not None]
    if finite:
        fast = min(finite, key=lambda v: v["n_star"])
        text += (
            f"Skill differences among the real agents outweigh luck after about {fast['n_star']:.0f} matches in "
            f"{fast['preset']} (N*); a smaller N* means fewer matches before the better player reliably shows."
        )
    return text


def _beyond_text(beyond: list[str]) -> str:
    """The caveat for variants whose RS is above 1 (a real agent beats the fictive player)."""
    return (
        f"In {', '.join(beyond)} RS is above 1: a real agent beat the fictive player there, which is optimal for "
        "one round at a time against the field's actual play (it searches no later rounds); read their ladder win "
        "rates and the effects' intervals instead (the comparison above leaves them out)."
    )


def policy_sentence(report: dict[str, Any]) -> str:
    """What the ladder's learned agent is: the PPO agent trained per variant, or the zoo's policy for each table."""
    if report.get("policy", "train") == "train":
        return f"The PPO agent of each variant trained for {report['train_steps']:,} decisions."
    variants = report.get("cells", report.get("variants", []))
    played = {name: [v.get("key", v["preset"]) for v in variants if v["zoo_policy"] == name] for name in report["zoo"]}
    each = "; ".join(
        f"`zoo:{name}` ({z['table']}, {z['decisions']:,} decisions) in {', '.join(played[name])}"
        for name, z in report["zoo"].items()
    )
    return (
        "The learned agent `zoo` is the shipped policy the zoo plays at every table (`agurk zoo`: the universal "
        f"network, trained on a mixture of every preset and table): {each}. Nothing was trained for this report."
    )


def markdown(report: dict[str, Any]) -> str:
    """``report.md``: ranked table, ladder win rates, meaning, command and seed."""
    cards = f", {report['hand_size']} cards" if report.get("hand_size") is not None else ""
    lines = [
        f"# Agurk variant skill report ({report['budget']} budget, {report['players']} players{cards}, "
        f"seed {report['seed']})",
        "",
        f"Each ladder agent played {report['deals']} duplicate deals ({report['matches_per_agent']} matches, every "
        f"seat rotation) as the focal player against {report['players'] - 1} copies of `{report['field']}`. "
        f"{policy_sentence(report)} Intervals are 95% "
        f"bootstrap intervals over deals ({report['bootstrap_resamples']} resamples).",
        "",
        "## Variants ranked by relative skill",
        "",
        "| rank | variant | RS (win rate) | RS (penalty) | skill share | N* matches | rating spread | upset rate |",
        "|---:|---|---|---|---|---|---|---|",
    ]
    for v in report["variants"]:
        lines.append(f"| {v['rank']} | {v['preset']} | " + " | ".join(stat_text(v, k) for k in STAT_KEYS) + " |")
    lines += [
        "",
        meaning(report),
        "",
        "## Learning and random effects",
        "",
        "Learning effect: the best real agent's result minus random play's (what skill buys); random effect: the "
        "fictive player's minus the best real agent's (the gap that only knowing every card closes). RS = learning "
        "/ (learning + random). By win rate in match wins per match, by penalty in penalty points per round saved.",
        "",
        "| variant | learning (win rate) | random (win rate) | learning (penalty) | random (penalty) "
        "| best real agent |",
        "|---|---|---|---|---|---|",
    ]
    for v in report["variants"]:
        effects = " | ".join(stat_text(v, k) for k in EFFECT_KEYS)
        best = v["best_win"] if v["best_win"] == v["best_penalty"] else f"{v['best_win']} / {v['best_penalty']}"
        lines.append(f"| {v['preset']} | {effects} | {best} |")
    lines += ["", "## Ladder win rates (focal agent against the field)", ""]
    specs = report["ladder"]
    lines.append("| variant | " + " | ".join(specs) + " |")
    lines.append("|---|" + "---:|" * len(specs))
    for v in report["variants"]:
        rates = {a["spec"]: a["win_rate"] for a in v["ladder"]}
        lines.append(f"| {v['preset']} | " + " | ".join(f"{rates[s]:.3f}" for s in specs) + " |")
    lines += [
        "",
        "![relative skill per variant](rs.png)",
        "",
        "![ladder win rates per variant](ladder.png)",
        "",
        "## How to read it",
        "",
        "- **RS** (relative skill, Borm and van der Genugten): (R_best - R_random) / (R_fictive - R_random), with R "
        "the focal result: the match win rate, or minus the mean penalty per round. 0: the best real agent does no "
        "better than random; 1: it does as well as the fictive player (`fictive`), which sees every hidden card and "
        "plays the exact best response to the field's actual play, round by round. The best real agent is the best "
        "that sees no hidden card: the maxN oracle (`oracle`, the exact solver's card on the true deal) cheats too "
        "and is on the ladder for comparison only.",
        "- **skill share**: the share of one match's win/lose variance explained by which real agent plays "
        "(variance of their win rates, less sampling variance, over p(1-p)); **N*** = 1 / skill share, the matches "
        "after which skill differences are as large as luck (∞: no skill difference detected).",
        "- **rating spread**: Plackett-Luce (Elo-scale) rating of the strongest real agent minus the weakest, each "
        "rated against the field. **upset rate**: how often the weaker of a focal agent and a field seat finished "
        "ahead of the stronger (a shared place counts half).",
        "",
        "## Reproduce",
        "",
        "```",
        report["command"],
        "```",
        "",
        f"Seed {report['seed']}: the same command gives the same report.",
        "",
    ]
    return "\n".join(lines)
