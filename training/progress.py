"""A run's progress on stderr: a progress bar on a terminal, plain lines in a log file (what ``agurk train`` shows).

:class:`Progress` is a :class:`training.schedule.ProgressSink`: ``train(options, Progress(...))`` shows it from
code too. Progress is over learner decisions, toward whichever ends the run first: ``total_steps``
decisions or ``time_limit`` minutes (the share done and the ETA follow the nearer one).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console, RenderableType
    from rich.progress import Progress as Bar

    from training.evaluation import Evaluation

LOG_SECONDS = 30.0
"""Seconds between two plain progress lines when stderr is not a terminal."""
ProgressMode = Literal["bar", "lines", "off"]
"""``bar``: a rich progress bar (a terminal); ``lines``: plain progress lines (a log file); ``off``: nothing."""


def clock(seconds: float) -> str:
    """``H:MM:SS``."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def eval_text(summary: Evaluation | None, short: bool = False) -> str:
    """An evaluation as text: win rate and 95% CI per player count (``short``: for the progress bar)."""
    if not summary:
        return "-"
    parts = []
    for r in summary["results"]:
        lo, hi = r["win_rate_ci"]
        if short:
            parts.append(f"{r['players']}p {r['win_rate']:.3f} [{lo:.3f},{hi:.3f}]")
        else:
            parts.append(f"{r['players']}p win {r['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] (fair {r['fair_share']:.2f})")
    return "; ".join(parts)


class Progress:
    """Progress over learner decisions on stderr, with decisions/s, the ETA and the latest evaluation.

    ``bar`` draws a rich progress bar; ``lines`` prints one plain, timestamped line after the
    first update, after every evaluation and at most every ``every`` seconds between them.
    ``time_limit`` (seconds, 0: none) ends the run early: the share done and the ETA follow it
    when it comes first.
    """

    def __init__(
        self,
        console: Console,
        total: int,
        start: int,
        mode: ProgressMode,
        time_limit: float = 0.0,
        every: float = LOG_SECONDS,
    ) -> None:
        self.mode, self.total, self.start, self.time_limit, self.every = mode, total, start, time_limit, every
        self._bar: Bar | None = None
        self._sps: float | None = None
        self._eval = self._eta = "-"
        self._started = time.monotonic()
        self._last_line: float | None = None
        if mode == "bar":
            self._bar = _two_line_bar(console, self)
            self._task = self._bar.add_task("train", total=1.0, decisions=f"{start:,}/{total:,}", sps="-")
            self._bar.update(self._task, completed=self.done(start, self._started))
            self._bar.start()

    def begin(self) -> None:
        """Training starts now: elapsed time and ``time_limit`` count from here, as the trainer's do."""
        self._started = time.monotonic()
        if self._bar is not None:
            self._bar.reset(self._task)
            self._bar.update(self._task, completed=self.done(self.start, self._started))

    def done(self, step: int, now: float) -> float:
        """The share of the run done: of ``total_steps``, or of ``time_limit`` if that is nearer its end."""
        share = step / self.total if self.total else 1.0
        if self.time_limit:
            share = max(share, (now - self._started) / self.time_limit)
        return min(share, 1.0)

    def eta(self, step: int, now: float) -> str:
        """Time left: to ``total_steps`` at the current rate, or to ``time_limit`` if that comes first."""
        left = [max(self.total - step, 0) / self._sps] if self._sps else []
        if self.time_limit:
            left.append(max(self.time_limit - (now - self._started), 0.0))
        if not left:
            return "-"
        text = clock(min(left))
        return f"{text} (time limit)" if self.time_limit and min(left) == left[-1] else text

    def update(self, step: int, sps: float | None = None, evaluation: Evaluation | None = None) -> None:
        """Move to ``step``; refresh decisions/s and the evaluation when given."""
        if sps is not None:
            self._sps = sps
        if evaluation is not None:
            self._eval = eval_text(evaluation, short=True)
        now = time.monotonic()
        if self._bar is not None:
            fields: dict[str, Any] = {"decisions": f"{step:,}/{self.total:,}"}
            self._eta = self.eta(step, now)
            if self._sps is not None:
                fields["sps"] = f"{self._sps:,.0f}"
            self._bar.update(self._task, completed=self.done(step, now), **fields)
        elif self.mode == "lines":
            if evaluation is not None or self._last_line is None or now - self._last_line >= self.every:
                self._last_line = now
                print(self.line(step, now), file=sys.stderr, flush=True)

    def line(self, step: int, now: float) -> str:
        """One plain progress line: time, decisions, share done, decisions/s, elapsed, eta, latest evaluation."""
        sps = f"{self._sps:,.0f}" if self._sps else "-"
        return (
            f"{time.strftime('%Y-%m-%d %H:%M:%S')} training: {step:,}/{self.total:,} decisions "
            f"({100 * self.done(step, now):.1f}%), {sps} decisions/s, elapsed {clock(now - self._started)}, "
            f"eta {self.eta(step, now)}, win: {self._eval}"
        )

    def second_line(self) -> str:
        """The bar's second line: the ETA and the latest evaluation (the bar's line keeps to 80 columns)."""
        return f"  eta {self._eta} · win: {self._eval}"

    def close(self) -> None:
        """Stop the bar."""
        if self._bar is not None:
            self._bar.stop()


def _two_line_bar(console: Console, progress: Progress) -> Bar:
    """A rich progress bar on two lines, each readable at 80 columns: the bar, then ETA and win rate.

    On one line, an 80-column terminal cut every field short (the win rate unreadable); the
    second line wraps at words when the evaluation names several player counts.
    """
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar
    from rich.text import Text

    class TwoLines(Bar):
        def get_renderables(self) -> Iterable[RenderableType]:
            yield self.make_tasks_table(self.tasks)
            yield Text(progress.second_line())

    return TwoLines(
        TextColumn("[bold]training"),
        BarColumn(bar_width=16),
        TextColumn("{task.fields[decisions]} decisions ·"),
        TextColumn("{task.fields[sps]}/s ·"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
