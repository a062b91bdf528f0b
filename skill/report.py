"""``agurk skill-report``: the skill report, the atlas of one cell per variant, and its files.

``skill_report(variants, players, budget, seed, out)`` plays each preset at one player count
and hand size, as one cell each of :func:`skill.cells.run_cells` (the atlas's job maker and
runner, :mod:`skill.atlas`), then writes into ``out``:

- ``report.json``: ``{"seed", "budget", "players", "variants": [...]}`` (variants ranked by
  ``rs_win``; see :func:`skill.variant.run_variant` for each object's keys);
- ``report.csv``: one row per variant (the statistics and their intervals);
- ``ladder.csv``: one row per variant and ladder agent;
- ``report.md``: the ranked table, what the differences mean, the command and seed;
- ``rs.png`` and ``ladder.png`` (:func:`plot_rs`, :func:`plot_ladder`);
- ``checkpoints/PRESET.pt``: each variant's trained PPO agent (not with the ``zoo`` policy,
  which plays the zoo's universal network in every variant instead);
- with ``convergence``: ``convergence.md``, ``.json``, ``.csv`` and ``.png`` (:mod:`skill.convergence`).

Every file depends only on the arguments, not on the backend, the worker count or the
machine's speed: the same seed gives the same report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.tasks import LOCAL, Backend
from agurk_env.atomic import atomic_write_text
from agurk_env.rules import RulesError
from skill.budget import BUDGETS, Budget, LadderFields
from skill.cells import Monitor, grid, run_cells, write_convergence
from skill.plots import error_bars, pyplot, save
from skill.report_text import STAT_KEYS, meaning, policy_sentence, python_call, reproduce, stat_text, write_csv
from skill.variant import EFFECT_KEYS, VariantRow


class Report(LadderFields):
    """The ``report.json`` object."""

    seed: int
    budget: str
    players: int
    hand_size: int | None
    deals: int
    matches_per_agent: int
    command: str
    variants: list[VariantRow]


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
    cache: str | Path | None = None,
    convergence: Sequence[str] = (),
) -> Report:
    """Run a skill report and write its files into ``out``; return the ``report.json`` object.

    ``budget`` is a :data:`skill.budget.BUDGETS` name or a :class:`Budget` (its ``policy``
    says whether each variant trains a PPO agent or plays the zoo's universal network).
    ``workers`` defaults to one per variant, at most one per CPU core. ``command`` is quoted
    in ``report.md`` (the CLI passes the command line that reproduces the run; by default the
    Python call). The variants run on ``backend`` (see :func:`agents.tasks.run_tasks`); the
    report is the same on each. ``hand_size`` deals that many cards in every variant (``None``:
    each preset's own). A variant whose cards do not fit the deck raises :class:`agurk_env.rules.RulesError`.

    ``cache`` is the folder of the result cache (:mod:`skill.cache`): a ladder table stored
    there is read instead of played, and each one played is stored; the files are the same
    with and without it. ``convergence`` names earlier checkpoints of the report's network (the
    same in every variant: the ``zoo`` policy, or one checkpoint for every preset), in training
    order: each plays the variants' deals too, and ``convergence.md``, ``.json``, ``.csv`` and
    ``.png`` say how RS and its ranking change with training (:mod:`skill.convergence`).
    """
    plan = BUDGETS[budget] if isinstance(budget, str) else budget
    cells, left_out = grid(variants, [players], [] if hand_size is None else [hand_size])
    if left_out:
        raise RulesError(left_out[0]["reason"])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    checkpoints = dict(checkpoints or {})
    settings = (train_settings, workers, monitor, backend)
    played = run_cells(cells, plan, seed, out, checkpoints, *settings, cache=cache, convergence=convergence)
    report: Report = {
        "seed": seed,
        "budget": plan.name,
        "players": players,
        "hand_size": hand_size,
        "deals": plan.deals,
        "matches_per_agent": plan.deals * players,
        **played.ladder,
        "command": command
        or python_call(
            "skill.report.skill_report",
            list(variants),
            players,
            plan,
            seed,
            str(out),
            checkpoints,
            train_settings,
            hand_size=hand_size,
            **({"convergence": list(convergence)} if convergence else {}),
        ),
        "variants": played.ranked,
    }
    _write_files(report, out)
    write_convergence(played, cells, False, plan, seed, report["command"], out)
    return report


def _write_files(report: Report, out: Path) -> None:
    """Write the report files into ``out``: report.json, .csv and .md, ladder.csv, rs.png and ladder.png."""
    atomic_write_text(out / "report.json", json.dumps(report, indent=2) + "\n")
    write_csv(report["variants"], ["preset"], out / "report.csv", out / "ladder.csv")
    plot_rs(report, out / "rs.png")
    plot_ladder(report, out / "ladder.png")
    atomic_write_text(out / "report.md", markdown(report))


# ----------------------------------------------------------------------------- files


def markdown(report: Report) -> str:
    """``report.md``: ranked table, ladder win rates, meaning, command and seed."""
    rows = report["variants"]
    cards = f", {report['hand_size']} cards" if report["hand_size"] is not None else ""
    lines = [
        f"# Agurk variant skill report ({report['budget']} budget, {report['players']} players{cards}, "
        f"seed {report['seed']})",
        "",
        f"Each ladder agent played {report['deals']} duplicate deals ({report['matches_per_agent']} matches, every "
        f"seat rotation) as the focal player against {report['players'] - 1} copies of `{report['field']}`. "
        f"{policy_sentence(report, rows, [v['preset'] for v in rows])} Intervals are 95% "
        f"bootstrap intervals over deals ({report['bootstrap_resamples']} resamples).",
        "",
        "## Variants ranked by relative skill",
        "",
        "| rank | variant | RS (win rate) | RS (win rate, plain) | RS (penalty) | skill share | N* matches "
        "| rating spread | upset rate |",
        "|---:|---|---|---|---|---|---|---|---|",
    ]
    for v in rows:
        lines.append(f"| {v['rank']} | {v['preset']} | " + " | ".join(stat_text(v, k) for k in STAT_KEYS) + " |")
    lines += [
        "",
        meaning(rows),
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
    for v in rows:
        effects = " | ".join(stat_text(v, k) for k in EFFECT_KEYS)
        best = v["best_win"] if v["best_win"] == v["best_penalty"] else f"{v['best_win']} / {v['best_penalty']}"
        lines.append(f"| {v['preset']} | {effects} | {best} |")
    lines += ["", "## Ladder win rates (focal agent against the field)", ""]
    specs = report["ladder"]
    lines.append("| variant | " + " | ".join(specs) + " |")
    lines.append("|---|" + "---:|" * len(specs))
    for v in rows:
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
        *reproduce(report["command"], report["seed"], "report"),
    ]
    return "\n".join(lines)


def plot_rs(report: Report, path: Path) -> None:
    """``rs.png``: relative skill (win rate and penalty) per variant with 95% intervals, ranked."""
    plt = pyplot()
    variants = report["variants"]
    names = [v["preset"] for v in variants]
    y = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.4 * len(names)))
    series = (
        (-0.15, [v["rs_win"] for v in variants], [v["rs_win_ci"] for v in variants], "win rate"),
        (0.15, [v["rs_penalty"] for v in variants], [v["rs_penalty_ci"] for v in variants], "penalty per round"),
    )
    for offset, rs, cis, label in series:
        values, err = error_bars(rs, cis, cap=1.0)
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
    plt = pyplot()
    variants = report["variants"]
    specs = report["ladder"]
    x = np.arange(len(variants))
    width = 0.8 / len(specs)
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(variants) + 2), 4.5))
    for j, spec in enumerate(specs):
        rows = [next(a for a in v["ladder"] if a["spec"] == spec) for v in variants]
        values, err = error_bars([a["win_rate"] for a in rows], [a["win_rate_ci"] for a in rows], cap=1.0)
        ax.bar(x - 0.4 + (j + 0.5) * width, values, width, yerr=err, capsize=1.5, label=spec)
    ax.axhline(1 / report["players"], color="black", lw=0.8, ls="--", label="fair share")
    ax.set_xticks(x, [v["preset"] for v in variants], rotation=30, ha="right")
    ax.set_ylabel(f"win rate against {report['players'] - 1} x {report['field']}")
    ax.set_title("Ladder win rates per variant (ranked by relative skill)")
    ax.legend(fontsize="x-small", ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
