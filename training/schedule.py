"""The schedule of a run: after each update of a :class:`Trainer`, log, checkpoint and evaluate when due.

A trainer (:class:`Trainer`: ``training/ppo.py``, ``training/sb3.py``, ``training/expert.py``)
calls ``schedule.after_update(step, decisions, seconds, logs)`` after every update; the
:class:`Schedule` writes the scalars, saves ``latest.pt`` every ``checkpoint_every``
decisions or ``checkpoint_minutes``, and evaluates every ``eval.every`` decisions, promoting
the best-scoring checkpoint to ``best.pt``. What it shows (:class:`ProgressSink`) and how
stop signals wait for a checkpoint (:class:`Stops`) the application passes in.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from training import evaluation
from training.evaluation import Evaluation
from training.run_folder import Run

if TYPE_CHECKING:
    from agents.policy import Checkpoint  # torch

STABLE_SCALARS = (
    "charts/SPS",
    "charts/learning_rate",
    "charts/round_reward",
    "losses/value_loss",
    "losses/policy_loss",
    "losses/entropy",
    "losses/approx_kl",
    "losses/clipfrac",
    "losses/explained_variance",
    "eval/win_rate",
    "eval/score",
)
"""TensorBoard scalar names every run writes (``eval/win_rate/<P>p`` and ``train/win_rate/<agent>`` too)."""
WIN_RATE = "train/win_rate/"
"""Prefix of the training win rates: one scalar per ``pool.agents`` spec, and ``snapshots`` for all snapshots."""


class UpdateSink(Protocol):
    """What a trainer reports to after every update."""

    def after_update(self, step: int, decisions: int, seconds: float, logs: dict[str, float]) -> None:
        """``step``: learner decisions so far; ``decisions`` and ``seconds``: this update's; ``logs``: its scalars."""


class Trainer(Protocol):
    """A training algorithm behind ``agurk train``: built from ``(cfg, resume)``, trained against a schedule."""

    @property
    def global_step(self) -> int:
        """Learner decisions trained on so far."""

    @property
    def best_score(self) -> float:
        """The best evaluation score so far (restored on resume)."""

    def train(self, schedule: UpdateSink) -> None:
        """Train to ``total_steps`` (or ``time_limit``), calling ``schedule.after_update`` after every update."""

    def save(self, path: Path, best_score: float, **clock: float) -> None:
        """Write a resumable checkpoint to ``path`` (atomically), recording ``best_score`` and ``clock``.

        ``clock``: the run's ``train_seconds`` and ``wall_seconds`` so far (a resume counts on from them).
        """


class ProgressSink(Protocol):
    """Where the schedule shows progress (the application draws it)."""

    def begin(self) -> None:
        """Training starts now (the trainer is built): ``time_limit`` counts from here."""

    def update(self, step: int, sps: float | None = None, evaluation: Evaluation | None = None) -> None:
        """Learner decisions so far, their rate, and an evaluation just made."""

    def close(self) -> None:
        """Training is over."""


class Stops(Protocol):
    """How stop requests wait for checkpoints: ``held()`` around a save, ``stop()`` once the run is stopping."""

    def held(self) -> contextlib.AbstractContextManager[None]:
        """A block in which a stop request waits until the block ends."""

    def stop(self) -> None:
        """The run is stopping: later requests are only noted."""


class NoProgress:
    """Shows nothing."""

    def begin(self) -> None:
        """Nothing."""

    def update(self, step: int, sps: float | None = None, evaluation: Evaluation | None = None) -> None:
        """Nothing."""

    def close(self) -> None:
        """Nothing."""


class NoStops:
    """No stop requests to hold back (a run from code: Ctrl-C is a plain KeyboardInterrupt)."""

    def held(self) -> contextlib.AbstractContextManager[None]:
        """A block that holds nothing back."""
        return contextlib.nullcontext()

    def stop(self) -> None:
        """Nothing to note."""


def fold_snapshot_rates(logs: dict[str, float], agents: Iterable[str]) -> dict[str, float]:
    """``logs`` with the per-snapshot training win rates replaced by their mean, ``train/win_rate/snapshots``.

    The win rates of the ``agents`` (the ``pool.agents`` specs) keep their own scalars; every
    other ``train/win_rate/...`` is a snapshot's, which would make one TensorBoard tag per snapshot.
    """
    named = {WIN_RATE + spec for spec in agents}
    snapshots = [v for k, v in logs.items() if k.startswith(WIN_RATE) and k not in named]
    out = {k: v for k, v in logs.items() if not k.startswith(WIN_RATE) or k in named}
    if snapshots:
        out[WIN_RATE + "snapshots"] = sum(snapshots) / len(snapshots)
    return out


class Schedule:
    """After each update: log the scalars with ``charts/SPS``, then checkpoint and evaluate when due.

    ``trainer.save`` runs inside ``stops.held()`` (a stop waits for the file); ``saved_step``
    is the step of the last checkpoint written, ``None`` before the first. ``clock``: the
    training and wall seconds the run had before (:func:`resumed_clock`); every checkpoint
    records them plus this session's, so ``agurk zoo`` and ``agurk curve`` show a run's whole time.
    """

    def __init__(
        self,
        run: Run,
        progress: ProgressSink,
        trainer: Trainer,
        start_step: int,
        stops: Stops,
        clock: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        self.run, self.progress, self.trainer, self.stops = run, progress, trainer, stops
        cfg = run.cfg
        self.best_score = trainer.best_score
        self.seconds = 0.0
        self.steps = 0
        self.saved_step: int | None = None
        self.last_eval: Evaluation | None = None
        self.last_save = self.started = time.monotonic()
        self.kept_train, self.kept_wall = clock
        self.next_eval = (start_step // cfg.eval.every + 1) * cfg.eval.every if cfg.eval.every else None
        every = cfg.checkpoint_every
        self.next_checkpoint = (start_step // every + 1) * every if every else None

    def save(self) -> None:
        """Write ``latest.pt`` (a stop waits until it is complete)."""
        with self.stops.held():
            now = time.monotonic()
            train, wall = self.kept_train + self.seconds, self.kept_wall + now - self.started
            self.trainer.save(self.run.latest, self.best_score, train_seconds=train, wall_seconds=wall)
            self.saved_step = self.trainer.global_step
            self.last_save = now
            if self.run.cfg.keep_checkpoints:
                self.run.keep(self.saved_step, train, wall)

    def checkpoint_due(self, step: int) -> bool:
        """Whether ``checkpoint_every`` decisions or ``checkpoint_minutes`` have passed since the last one."""
        minutes = self.run.cfg.checkpoint_minutes
        by_time = bool(minutes) and time.monotonic() - self.last_save >= minutes * 60
        return by_time or (self.next_checkpoint is not None and step >= self.next_checkpoint)

    def after_update(self, step: int, decisions: int, seconds: float, logs: dict[str, float]) -> None:
        """Log, and checkpoint / evaluate if ``step`` reached the next one."""
        cfg = self.run.cfg
        self.seconds += seconds
        self.steps += decisions
        sps = self.steps / max(self.seconds, 1e-9)
        self.run.log({**fold_snapshot_rates(logs, cfg.pool.agents), "charts/SPS": sps}, step)
        self.progress.update(step, sps=sps)
        if self.next_eval is not None and step >= self.next_eval:
            self.evaluate(step, cfg.eval.deals)
            while self.next_eval <= step:
                self.next_eval += cfg.eval.every
        elif self.checkpoint_due(step):
            self.save()
        if self.next_checkpoint is not None:
            while self.next_checkpoint <= step:
                self.next_checkpoint += cfg.checkpoint_every

    def evaluate(self, step: int, deals: int) -> Evaluation:
        """Save ``latest``, evaluate it, promote it to ``best`` if it scored best so far."""
        self.save()
        summary = evaluation.evaluate(self.run.cfg, self.run.latest, step, deals)
        self.run.log(evaluation.scalars(summary), step)
        self.run.writer.flush()
        evaluation.record(self.run.folder, summary)
        self.last_eval = summary
        if summary["score"] > self.best_score or not self.run.best.exists():
            self.best_score = max(summary["score"], self.best_score)
            with self.stops.held():
                self.save()  # latest now records the new best score
                self.run.promote()
        self.progress.update(step, evaluation=summary)
        return summary


def resumed_clock(run: Run, resume: Checkpoint | None) -> tuple[float, float]:
    """The training and wall seconds a run continues from: its checkpoint's (older ones: the last kept copy's)."""
    if resume is None:
        return 0.0, 0.0
    if "train_seconds" in resume:
        return float(resume["train_seconds"]), float(resume["wall_seconds"])
    return run.kept_seconds()
