"""``agurk sweep CONFIG.yaml``: evaluate (and optionally train) a grid of variants as tasks, into one results table."""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from agurk.cli.common import (
    PROG,
    Formatter,
    Subcommands,
    add_options,
    from_args,
    rl_extra_error,
    start_bar,
    stderr_console,
    task_errors,
)
from agurk.cli.run_folders import folder_error, moved_text
from skill.sweep import SweepOptions, load_sweep, results_table, sweep
from training.stop_signals import stopped

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID


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


class SweepProgress:
    """One progress bar over every task on a terminal (tasks done, eta), else one plain line per finished task."""

    def __init__(self, console: Console, mode: str) -> None:
        self.console, self.mode = console, mode
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._started = time.monotonic()
        self._first: int | None = None

    def __enter__(self) -> SweepProgress:
        return self

    def __call__(self, done: int, total: int, completed: float, key: str | None) -> None:
        """Show ``done`` of ``total`` tasks (``completed`` with the running ones' shares); ``key`` just finished."""
        if self._first is None:
            self._first = done
            if self.mode == "lines":
                self._line(f"{total} tasks, {done} stored before (resumed), {total - done} to run")
        if self.mode == "bar":
            if self._bar is None:
                from rich.progress import TextColumn

                self._bar = start_bar(self.console, TextColumn("{task.fields[done]}/{task.total:.0f} tasks"))
                self._task = self._bar.add_task("sweep", total=total, completed=completed, done=done)
            self._bar.update(self._task, completed=completed, done=done)
        elif self.mode == "lines" and key is not None:
            elapsed = time.monotonic() - self._started
            ran = done - self._first
            eta = datetime.timedelta(seconds=round(elapsed / ran * (total - done))) if ran else "-"
            self._line(
                f"{done}/{total} tasks ({100 * done / total:.0f}%), "
                f"elapsed {datetime.timedelta(seconds=round(elapsed))}, eta {eta}: {key} done"
            )

    def _line(self, text: str) -> None:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} sweep: {text}", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


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
