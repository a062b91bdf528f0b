"""``agurk skill-report``: which rule variants favour skill (agent ladder, relative skill, N*); the variant atlas."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any, cast

from agurk.cli.common import (
    Formatter,
    Subcommands,
    add_options,
    from_args,
    rl_extra_error,
    stderr_console,
    task_errors,
)
from agurk.cli.rich_tables import print_table
from agurk.monitors import SkillMonitor
from agurk_env.rules import PRESETS
from skill.budget import BUDGETS
from skill.report_plan import SkillReportOptions
from training.stop_signals import stopped

if TYPE_CHECKING:
    from skill.atlas import Atlas

DESCRIPTION = (
    "For each variant (a rule preset), an agent ladder (random, every heuristic, PIMC at two\n"
    "world counts, PIMC on the exact solver (best's search), a PPO agent trained for the variant\n"
    "or the zoo's universal network (the same network in every variant), and two that see every\n"
    "card: the maxN oracle and the fictive player,\n"
    "the exact best response to the field) plays focal-vs-field: each agent takes one seat\n"
    "against copies of the strongest heuristic (guard), on the same duplicate deals, rotated\n"
    "through every seat. Per variant, with 95% bootstrap intervals over deals: relative skill\n"
    "RS = (R_best - R_random) / (R_fictive - R_random) by win rate and by penalty, with its two\n"
    "parts, the learning effect R_best - R_random and the random effect R_fictive - R_best (the\n"
    "gap from the best real agent to the fictive player), the skill share of outcome variance\n"
    "and N* (matches until skill outweighs luck), the ladder's Plackett-Luce rating spread and\n"
    "the upset rate.\n"
    "\n"
    "Writes report.md, report.json, report.csv, ladder.csv, rs.png, ladder.png and each\n"
    "variant's PPO checkpoint into --out. Variants run in parallel worker processes (or as Ray\n"
    "tasks: --backend ray); the same seed gives the same report. docs/skill_report.md explains\n"
    "every statistic.\n"
    "\n"
    "The variant atlas: several --players and/or --hand-sizes run every preset at every\n"
    "combination (each cell a variant; those whose cards do not fit the deck are left out, and\n"
    "said so) and write atlas.md, atlas.json, atlas.csv, atlas-ladder.csv and per preset a\n"
    "heatmap of RS and N* with their intervals (heatmaps/PRESET.png). --policy zoo puts the\n"
    "zoo's universal network (zoo:universal) in every cell instead of training a PPO agent.\n"
    "\n"
    "--cache DIR keeps every ladder table played and reads it back in later runs, so a report\n"
    "re-run after one agent changed plays only that agent (the files are the same). --convergence\n"
    "plays earlier checkpoints of the network on the same deals and writes convergence.md, .json,\n"
    ".csv and .png: RS at each training budget and whether the variants' ranking is stable.\n"
    "\n"
    "budgets (deals per agent, PPO decisions per variant, default variants):\n"
    + "".join(
        f"  {b.name:<6} {b.deals:>4} deals, {b.train_steps / 1e6:g}M decisions, "
        f"{len(b.variants)} variants{' (every preset)' if len(b.variants) == len(PRESETS) else ''}\n"
        for b in BUDGETS.values()
    )
)
"""``agurk skill-report --help``: what the command does, and the budgets."""
EXAMPLES = (
    "examples:\n"
    "  agurk skill-report --budget smoke\n"
    "  agurk skill-report --variants standard,danish21,swedish --budget small --seed 1 --out runs/skill\n"
    "  agurk skill-report --variants standard --checkpoint standard=runs/quickstart --budget small"
    " --out runs/skill-mine\n"
    "  agurk skill-report --budget full --backend ray --ray-address auto --workers 17\n"
    "  agurk skill-report --variants standard,swedish --policy zoo --budget small --out runs/skill-zoo\n"
    "  agurk skill-report --budget full --policy zoo --cache runs/skill-cache \\\n"
    "    --convergence runs/net/step-8M.pt,runs/net/step-47M.pt     # RS at 3 training budgets\n"
    "  agurk skill-report --variants standard,free_choice --players 3,4 --hand-sizes 5,7 --policy zoo \\\n"
    "    --budget smoke --deals 20 --backend ray      # an atlas of 8 cells, minutes"
)
"""``agurk skill-report --help``: the examples."""


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk skill-report`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "skill-report",
        help="measure which rule variants favour skill: agent ladder, relative skill, N*, with 95%% CIs",
        formatter_class=Formatter,
        description=DESCRIPTION,
        epilog=EXAMPLES,
    )
    add_options(
        p,
        SkillReportOptions,
        docs={"seed": "seed of deals, agents and training", "quiet": "no progress bar, progress lines or table"},
    )
    p.set_defaults(func=run)


def run(namespace: argparse.Namespace) -> int:
    """Measure which variants favour skill: ladder vs field per variant (or atlas cell), RS / N* / spread / upsets."""
    from agurk.cli.run_folders import folder_error, moved_text
    from training.run_folder import RunFolderError

    args = from_args(SkillReportOptions, namespace)
    args.tasks_backend()
    try:
        from skill.report_plan import plan_report, run_planned
        from skill.report_text import ranking_table

        plan = plan_report(args)  # its checks load the agents (torch)
    except ImportError as e:  # torch and matplotlib are optional dependencies
        raise rl_extra_error("agurk skill-report", (e.name or "torch").split(".")[0]) from None
    except RunFolderError as e:
        raise folder_error(e) from None
    console = stderr_console()
    if not args.quiet:
        if plan.moved:
            console.print(moved_text(plan.out, plan.moved, "the report"), markup=False, highlight=False)
        for c in plan.left_out:
            where = f"{c['preset']} {c['players']}p x {c['hand_size']}c"
            console.print(f"left out {where}: {c['reason']}", markup=False, highlight=False)
    bar = not args.quiet and console.is_terminal
    start = time.perf_counter()
    try:
        with task_errors(), SkillMonitor(console, plan.names, bar, lines=not args.quiet) as monitor:
            data = run_planned(plan, monitor)
    except KeyboardInterrupt as e:
        return stopped(e)
    seconds = time.perf_counter() - start
    rows: list[Any] = cast("Atlas", data)["cells"] if plan.is_atlas else data["variants"]
    what = "atlas cells" if plan.is_atlas else "variants"
    if not args.quiet:
        print_table(ranking_table(rows, f"{what} ranked by relative skill ({args.budget}, seed {args.seed})"))
    if plan.is_atlas:
        gone = f" ({len(plan.left_out)} left out: they do not fit the deck)" if plan.left_out else ""
        print(f"{len(plan.names)} cells{gone}, {args.budget} budget, {seconds:.0f} s -> {plan.out / 'atlas.md'}")
    else:
        print(f"{len(plan.variants)} variants, {args.budget} budget, {seconds:.0f} s -> {plan.out / 'report.md'}")
    return 0
