"""What the commands show while they work: progress bars on a terminal, timestamped lines in a log file.

Each is the progress callback (or monitor) a library call takes: :class:`MatchProgress` of a tournament or a
simulation, :func:`match_lines` of the exploiter's gains, :class:`StageProgress` of ``agurk exploitability``,
:class:`LeaderboardLines`, :class:`SkillMonitor`, :class:`SweepProgress` and :class:`StudyLines` of the
leaderboard, the skill report, the sweep and the skill study. A training run's progress is
:class:`training.progress.Progress`.
"""

from __future__ import annotations

import datetime
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from training.progress import LOG_SECONDS, clock

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, ProgressColumn, TaskID

    from skill.leaderboard import LeaderboardPlan


def start_bar(console: Console, *count: str | ProgressColumn) -> Progress:
    """A started, transient rich progress display: description, bar, the ``count`` columns, elapsed time, eta."""
    from rich.progress import BarColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        *count,
        TimeElapsedColumn(),
        "eta",
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    bar.start()
    return bar


class MatchProgress:
    """A transient rich progress bar over ``total`` matches; yields the ``progress(n_done)`` callback."""

    def __init__(self, console: Console, total: int, enabled: bool) -> None:
        self.console, self.total, self.enabled = console, total, enabled
        self._bar: Progress | None = None

    def __enter__(self) -> Callable[[int], None] | None:
        if not self.enabled:
            return None
        from rich.progress import MofNCompleteColumn

        self._bar = start_bar(self.console, MofNCompleteColumn(), "matches")
        task = self._bar.add_task("simulating", total=self.total)
        bar = self._bar
        return lambda n_done: bar.update(task, completed=n_done)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def match_lines(total: int) -> Callable[[int], None]:
    """A ``progress(matches_done)`` that prints a plain timestamped line at most every ``LOG_SECONDS`` (a log file)."""
    last = [time.monotonic()]

    def show(done: int) -> None:
        now = time.monotonic()
        if now - last[0] >= LOG_SECONDS or done == total:
            last[0] = now
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            print(f"{stamp} gains: {done:,}/{total:,} matches", file=sys.stderr, flush=True)

    return show


class StageProgress:
    """Stage progress: a transient rich bar on a terminal, timestamped plain lines otherwise, or nothing."""

    def __init__(self, console: Console, mode: str) -> None:
        self.console, self.mode = console, mode
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Callable[[str, int, int], None] | None:
        if self.mode == "off":
            return None
        if self.mode == "bar":
            from rich.progress import MofNCompleteColumn

            self._bar = start_bar(self.console, MofNCompleteColumn(), "stages")
        return self.update

    def update(self, stage: str, done: int, total: int) -> None:
        """Show that ``stage`` starts, ``done`` of ``total`` stages finished."""
        if self._bar is not None:
            if self._task is None:
                self._task = self._bar.add_task(stage, total=total)
            self._bar.update(self._task, completed=done, description=stage)
        else:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            print(f"{stamp} exploitability: [{done}/{total}] {stage}", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


class LeaderboardLines:
    """Progress as timestamped lines on stderr: at the start, every :data:`LOG_SECONDS` (5 s on a terminal), the end."""

    def __init__(self, console: Console, plan: LeaderboardPlan, quiet: bool) -> None:
        self.console, self.plan, self.quiet = console, plan, quiet
        self.every = 5.0 if console.is_terminal else LOG_SECONDS
        self.started = self.last = time.monotonic()
        self.first: int | None = None
        self.ended = False

    def __call__(self, done: int, total: int) -> None:
        """``done`` of ``total`` matches played (the cached tables' included)."""
        now = time.monotonic()
        if self.quiet or self.ended:
            return
        if self.first is None:
            self.first = done
            tables = len(self.plan.tasks)
            cached = done // self.plan.deals
            self._say(
                f"{len(self.plan.groups)} group{'s' if len(self.plan.groups) > 1 else ''} of "
                f"{self.plan.rules.players} seats, {tables} tables, {total:,} matches "
                f"({cached} tables from the cache, {tables - cached} to play)"
            )
        elif done >= total:
            self.ended = True
            self._say(f"all {total:,} matches in, {clock(now - self.started)}")
        elif now - self.last >= self.every:
            self.last = now
            share = (done - self.first) / max(total - self.first, 1)
            left = f", about {clock((now - self.started) * (1 - share) / share)} left" if share > 0 else ""
            self._say(f"{done:,}/{total:,} matches{left}")

    def _say(self, text: str) -> None:
        leaderboard_line(self.console, text)


def leaderboard_line(console: Console, text: str) -> None:
    """One timestamped progress line on ``console``."""
    console.print(f"{time.strftime('%H:%M:%S')} leaderboard: {text}", markup=False, highlight=False, soft_wrap=True)


class SkillMonitor:
    """Progress of ``skill-report``: a bar per task (variant or atlas cell) and overall, or plain lines (``lines``).

    On a terminal (``enabled``) one bar over the whole run and one per task; otherwise, with
    ``lines``, one timestamped line per finished task and, every :data:`LOG_SECONDS`, one with
    the share of the whole run done and the time left (the tasks run largest first, so the
    variants tend to finish together, late).
    """

    def __init__(self, console: Any, variants: Sequence[str], enabled: bool, lines: bool = False) -> None:
        self.console, self.variants, self.enabled, self.lines = console, list(variants), enabled, lines
        self._bar: Any = None
        self._tasks: list[Any] = []
        self._finished: set[int] = set()
        self._started = self._logged = time.monotonic()

    def __enter__(self) -> Callable[[list[float], list[float], list[str]], None] | None:
        if self.enabled:
            from rich.progress import TaskProgressColumn

            self._bar = start_bar(self.console, TaskProgressColumn())
            self._overall = self._bar.add_task("all variants", total=1.0)
            self._tasks = [self._bar.add_task(f"  {v}: waiting", total=1.0) for v in self.variants]
            return self.update
        return self.print_finished if self.lines else None

    def update(self, done: list[float], totals: list[float], stages: list[str]) -> None:
        """Show each variant's share done and stage, and the whole run's."""
        for task, name, d, t, stage in zip(self._tasks, self.variants, done, totals, stages, strict=True):
            self._bar.update(task, completed=min(d / t, 1.0), description=f"  {name}: {stage}")
        self._bar.update(self._overall, completed=min(sum(done) / sum(totals), 1.0))

    def print_finished(self, done: list[float], totals: list[float], stages: list[str]) -> None:
        """One timestamped line for each task that has just finished, and one on the whole run now and then."""
        for i, stage in enumerate(stages):
            if stage == "done" and i not in self._finished:
                self._finished.add(i)
                self._say(f"{self.variants[i]}: done ({len(self._finished)}/{len(self.variants)})")
        now = time.monotonic()
        if now - self._logged >= LOG_SECONDS and len(self._finished) < len(self.variants):
            self._logged = now
            share = min(sum(done) / sum(totals), 1.0)
            left = (now - self._started) * (1 - share) / share if share > 0 else None
            eta = f", about {clock(left)} left" if left is not None else ""
            self._say(f"{share:.0%} of the work done, {len(self._finished)}/{len(self.variants)} finished{eta}")

    def _say(self, text: str) -> None:
        self.console.print(f"{time.strftime('%H:%M:%S')} {text}", markup=False, highlight=False)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


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
                # rich's add_task annotates completed as int, though a task's completed is a float (update takes one)
                self._task = self._bar.add_task("sweep", total=total, completed=completed, done=done)  # type: ignore[arg-type]
            assert self._task is not None  # added with the bar
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


class StudyLines:
    """Progress as timestamped lines on stderr: every finished piece on a terminal, else every 30 s."""

    def __init__(self, console: Any, quiet: bool) -> None:
        self.console, self.quiet = console, quiet
        self.last = 0.0

    def stage(self, name: str) -> Any:
        """The monitor of one stage of the study."""

        def monitor(done: int, total: int, piece: str) -> None:
            now = time.monotonic()
            if self.quiet or not total:
                return
            if done in (0, total) or now - self.last >= 30 or self.console.is_terminal:
                self.last = now
                what = f" ({piece})" if piece else ""
                text = f"{time.strftime('%H:%M:%S')} {name}: {done}/{total} pieces{what}"
                self.console.print(text, markup=False, highlight=False)

        return monitor
