"""``agurk sweep CONFIG.yaml``: evaluate (and optionally train) a grid of variants as tasks, into one results table."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from agurk.cli.common import (
    PROG,
    Formatter,
    Subcommands,
    add_options,
    from_args,
    rl_extra_error,
    stderr_console,
    task_errors,
)
from agurk.cli.run_folders import folder_error, moved_text
from agurk.monitors import SweepProgress
from skill.sweep import SweepOptions, load_sweep, results_table, sweep
from training.stop_signals import stopped


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk sweep`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "sweep",
        help="evaluate (and optionally train) a grid: presets x players x hand sizes x seeds x overrides",
        formatter_class=Formatter,
        description=(
            "Runs the grid of a sweep config (presets x player counts x hand sizes x seeds x overrides)\n"
            "as independent tasks, one per grid point, in worker processes or on Ray. Each task trains\n"
            "a PPO agent for its game if the config has train.steps > 0, then plays each agent of the\n"
            "config as the focal entry against the opponent in every other seat (duplicate deals of the\n"
            "point's seed, 95% bootstrap intervals). Writes results.csv, results.json and results.png\n"
            "into --out, and every finished task at once into --out/tasks/: run the same command again\n"
            "after an interruption or a failed task and it resumes, running only the missing tasks.\n"
            "A failed task is retried twice. The table is the same on every backend and worker count.\n"
            "configs/sweep_tiny.yaml shows every key."
        ),
        epilog=(
            "examples:\n"
            "  agurk sweep configs/sweep_tiny.yaml --out runs/sweep-tiny\n"
            "  agurk sweep configs/sweep_tiny.yaml --out runs/sweep-tiny --backend ray --workers 2\n"
            "  agurk sweep my_sweep.yaml --out runs/big --backend ray --ray-address auto"
        ),
    )
    add_options(p, SweepOptions, docs={"quiet": "no progress bar or progress lines"})
    p.set_defaults(func=run)


def run(namespace: argparse.Namespace) -> int:
    """Run (or resume) a sweep and write its results table."""
    args = from_args(SweepOptions, namespace)
    try:
        from agurk.cli.rich_tables import print_table
        from training.run_folder import RunFolderError
    except ImportError as e:  # torch and matplotlib are optional dependencies
        raise rl_extra_error("agurk sweep", (e.name or "torch").split(".")[0]) from None
    args.tasks_backend()
    cfg = load_sweep(args.config)
    console = stderr_console()
    mode = "off" if args.quiet else "bar" if console.is_terminal else "lines"
    start = time.perf_counter()
    try:
        with task_errors(), SweepProgress(console, mode) as progress:
            result = sweep(args, progress)
    except RunFolderError as e:
        raise folder_error(e) from None
    except KeyboardInterrupt as e:
        return stopped(e, "; run the same command again to resume")
    if result.moved:
        print(f"{PROG}: {moved_text(Path(args.out), result.moved, 'the sweep')}", file=sys.stderr)
    seconds = time.perf_counter() - start
    print_table(results_table(result.rows, f"sweep {args.config}: each agent against {cfg.opponent}, 95% intervals"))
    print(
        f"{len(result.ran) + len(result.resumed)} tasks ({len(result.resumed)} resumed, {len(result.ran)} run), "
        f"{len(result.rows)} rows, {seconds:.0f} s -> {Path(args.out) / 'results.csv'}"
    )
    return 0
