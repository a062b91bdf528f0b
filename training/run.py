"""A training run into its run folder (:func:`execute`), or straight to one checkpoint file (:func:`train_to_file`).

Layout of a run folder (the same for every ``algo``)::

    RUN/config.yaml              the resolved config (every key)
    RUN/events.out.tfevents.*    TensorBoard scalars (tensorboard --logdir RUN)
    RUN/checkpoints/latest.pt    the latest network, optimizer and counters (written atomically)
    RUN/checkpoints/best.pt      the checkpoint with the best evaluation against eval.opponent
    RUN/checkpoints/step-*.pt    with ``keep_checkpoints``: a copy of every ``latest.pt`` save
    RUN/checkpoints/kept.csv     with ``keep_checkpoints``: step, training and wall seconds of each copy
    RUN/eval.json                the last evaluation (duplicate-deal tournament, 95% intervals)
    RUN/evaluations.jsonl        every evaluation, one a line
    RUN/learning_curve.png       the evaluations drawn by learner decisions
    RUN/.lock                    while a run writes: its process id (removed when it ends)

The rooms: :mod:`training.run_folder` (the folder and its lock), :mod:`training.resume`
(whether a config can continue a run), :mod:`training.schedule` (the typed trainer seam,
checkpoints and evaluations), :mod:`training.evaluation` (the tournaments and the curve).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from training import evaluation
from training.config import Config, ConfigError
from training.evaluation import Evaluation
from training.run_folder import Run
from training.schedule import (
    NoProgress,
    NoStops,
    ProgressSink,
    Schedule,
    Stops,
    Trainer,
    resumed_clock,
)

if TYPE_CHECKING:
    from agents.policy import Checkpoint  # torch


class RunSummary(TypedDict):
    """What :func:`execute` returns: where the run is, how far it came, how it ended, its last evaluation."""

    out: str
    global_step: int
    start_step: int
    decisions_per_s: float
    seconds: float
    stop: KeyboardInterrupt | None
    """The stop (Ctrl-C or a stop signal raised as one); ``None`` when training ran to its end."""
    saved: bool
    time_limit: bool
    eval: Evaluation | None
    best_score: float
    best: str | None
    curve: str | None


def check_device(cfg: Config) -> None:
    """:class:`ConfigError` when ``cfg.device`` is not available here (before any folder is made)."""
    if cfg.device == "cpu":
        return
    import torch

    if not torch.cuda.is_available():
        build = "without CUDA" if torch.version.cuda is None else f"with CUDA {torch.version.cuda} but no GPU visible"
        raise ConfigError(f"device {cfg.device!r} is not available: torch {torch.__version__} is built {build}")
    index = int(cfg.device.partition(":")[2] or 0)
    if index >= torch.cuda.device_count():
        raise ConfigError(f"device {cfg.device!r} is not available: {torch.cuda.device_count()} CUDA device(s) here")


def check_init(cfg: Config) -> None:
    """:class:`ConfigError` when a fresh run's ``init`` names no file or folder (a resumed run does not read it)."""
    if cfg.init and not Path(cfg.init).exists():
        raise ConfigError(f"init: no checkpoint or run folder {cfg.init!r}")


def make_trainer(cfg: Config, resume: Checkpoint | None = None) -> Trainer:
    """The trainer of ``cfg.algo`` (``PPOTrainer``, ``Sb3Trainer``, ``ExpertTrainer``), continuing ``resume``."""
    trainer: type[Trainer]
    if cfg.algo == "sb3":
        from training.sb3 import Sb3Trainer as trainer
    elif cfg.algo == "expert":
        from training.expert import ExpertTrainer as trainer
    else:
        from training.ppo import PPOTrainer as trainer
    return trainer(cfg, resume)  # type: ignore[call-arg]


class _Updates:
    """A trainer ``schedule`` that only forwards each update's step and scalars to ``on_update``."""

    def __init__(self, on_update: Callable[[int, dict[str, float]], object] | None) -> None:
        self.on_update = on_update

    def after_update(self, step: int, decisions: int, seconds: float, logs: dict[str, float]) -> None:
        """Forward ``step`` and ``logs``."""
        if self.on_update is not None:
            self.on_update(step, logs)


def train_to_file(
    cfg: Config, path: str | Path, on_update: Callable[[int, dict[str, float]], object] | None = None
) -> Trainer:
    """Train ``cfg`` to ``total_steps`` (no run folder, no evaluation) and save the checkpoint to ``path``.

    The quick way to a trained agent (``ppo:PATH``) from code: ``agurk skill-report`` and
    the quickstart notebook use it. ``on_update(step, logs)`` is called after every update
    with the learner decisions so far and the update's scalars. Returns the trainer.
    """
    check_device(cfg)
    trainer = make_trainer(cfg)
    trainer.train(_Updates(on_update))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    trainer.save(path, trainer.best_score)
    return trainer


def execute(
    cfg: Config,
    out: Path,
    resume: Checkpoint | None,
    progress: ProgressSink | None = None,
    stops: Stops | None = None,
) -> RunSummary:
    """Train ``cfg`` into the run folder ``out`` (continuing ``resume``); return a summary.

    A ``KeyboardInterrupt`` (Ctrl-C, or a stop signal the application raises as one) stops
    training and saves ``latest``: the summary's ``stop`` is that exception (``None`` when
    training ran to its end), ``saved`` whether a checkpoint was written, ``time_limit``
    whether ``time_limit`` ended it before ``total_steps``. A run stopped before its first
    checkpoint leaves the folder as it found it. ``stops`` holds stops back while a
    checkpoint is written and is told when the run is stopping.
    """
    progress = progress or NoProgress()
    stops = stops or NoStops()
    check_device(cfg)
    if resume is None:
        check_init(cfg)
    start_step = int(resume["global_step"]) if resume else 0
    stopped: KeyboardInterrupt | None = None
    trainer: Trainer | None = None
    schedule: Schedule | None = None
    started = time.perf_counter()
    run = Run(out, cfg, start_step)
    try:
        trainer = make_trainer(cfg, resume)
        schedule = Schedule(run, progress, trainer, start_step, stops, resumed_clock(run, resume))
        progress.begin()
        try:
            trainer.train(schedule)
        except KeyboardInterrupt as e:
            stopped = e
            stops.stop()
        schedule.save()
        if stopped is None and trainer.global_step > start_step:
            schedule.evaluate(trainer.global_step, cfg.eval.final_deals)
    except KeyboardInterrupt as e:  # while building the trainer, saving at the end or the final evaluation
        stopped = stopped or e
    finally:
        stops.stop()
        progress.close()
        if schedule is None or schedule.saved_step is None:
            run.discard()
        else:
            run.close()
    step = trainer.global_step if trainer is not None else start_step
    curve = evaluation.write_curve(out) if schedule is not None and schedule.saved_step is not None else None
    return {
        "out": str(out),
        "global_step": step,
        "start_step": start_step,
        "decisions_per_s": schedule.steps / max(schedule.seconds, 1e-9) if schedule else 0.0,
        "seconds": time.perf_counter() - started,
        "stop": stopped,
        "saved": schedule is not None and schedule.saved_step is not None,
        "time_limit": stopped is None and bool(cfg.time_limit) and step < cfg.total_steps,
        "eval": schedule.last_eval if schedule else None,
        "best_score": schedule.best_score if schedule else float("-inf"),
        "best": str(run.best) if run.best.exists() else None,
        "curve": str(curve) if curve else None,
    }
