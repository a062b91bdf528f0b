"""The run folder of ``agurk train``: config, TensorBoard logs, checkpoints, evaluations, progress.

Layout of a run folder (the same for ``algo: fast`` and ``algo: sb3``)::

    RUN/config.yaml              the resolved config (every key)
    RUN/events.out.tfevents.*    TensorBoard scalars (tensorboard --logdir RUN)
    RUN/checkpoints/latest.pt    the latest network, optimizer and counters (written atomically)
    RUN/checkpoints/best.pt      the checkpoint with the best evaluation against the heuristics
    RUN/eval.json                the last evaluation (duplicate-deal tournament, 95% intervals)

An evaluation is ``agurk evaluate``'s tournament (:func:`agents.tournament.tournament`)
of ``ppo:RUN/checkpoints/latest.pt`` against ``eval.opponent`` in every other seat, for
each player count trained on. Its score is the mean over player counts of the win rate
times the player count (1.0 is a fair share); ``best.pt`` is the checkpoint that scored
highest so far.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.policy import CheckpointError, load_checkpoint
from training.checkpoint import atomic_copy, atomic_write_text
from training.config import Config, ConfigError, dump_config, load_config

CHECKPOINTS = "checkpoints"
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
"""TensorBoard scalar names every run writes (``eval/win_rate/<P>p`` and ``train/win_rate/<opponent>`` too)."""


class Run:
    """One run folder: writes the config, scalars, checkpoints and evaluations."""

    def __init__(self, folder: str | Path, cfg: Config, start_step: int = 0) -> None:
        self.folder = Path(folder)
        self.cfg = cfg
        try:
            (self.folder / CHECKPOINTS).mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.folder / "config.yaml", dump_config(cfg))
        except OSError as e:
            raise ConfigError(f"cannot write the run folder {str(self.folder)!r}: {e.strerror or e}") from None
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(self.folder), purge_step=start_step or None)
        self.last_eval: dict[str, Any] | None = None

    @property
    def latest(self) -> Path:
        """``checkpoints/latest.pt``."""
        return self.folder / CHECKPOINTS / "latest.pt"

    @property
    def best(self) -> Path:
        """``checkpoints/best.pt``."""
        return self.folder / CHECKPOINTS / "best.pt"

    def log(self, scalars: dict[str, float], step: int) -> None:
        """Write scalars at ``step`` (NaNs are skipped)."""
        for name, value in scalars.items():
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                self.writer.add_scalar(name, value, step)

    def evaluate(self, step: int, deals: int, progress: Any = None) -> dict[str, Any]:
        """Tournament of ``latest.pt`` against ``eval.opponent``; write ``eval.json`` and the ``eval/`` scalars."""
        from agents.tournament import tournament

        ev = self.cfg.eval
        spec = f"ppo:{self.latest.resolve()}" + (";sample" if ev.sample else "")
        results = []
        start = time.perf_counter()
        for rules in self.cfg.rule_sets():
            p = rules.players
            res = tournament(rules, [spec] + [ev.opponent] * (p - 1), deals, ev.seed, resamples=ev.resamples)
            entry = res.entries[0]
            results.append(
                {
                    "players": p,
                    "win_rate": entry.win_rate,
                    "win_rate_ci": list(entry.win_rate_ci),
                    "fair_share": 1.0 / p,
                    "mean_penalty": entry.mean_penalty,
                    "mean_penalty_ci": list(entry.mean_penalty_ci),
                    "rating": entry.rating,
                    "opponents": res.entries[1].to_dict() if p > 1 else None,
                }
            )
            self.log(
                {
                    f"eval/win_rate/{p}p": entry.win_rate,
                    f"eval/win_rate_low/{p}p": entry.win_rate_ci[0],
                    f"eval/mean_penalty/{p}p": entry.mean_penalty,
                },
                step,
            )
        score = sum(r["win_rate"] * r["players"] for r in results) / len(results)
        summary = {
            "step": step,
            "checkpoint": str(self.latest),
            "opponent": ev.opponent,
            "policy": "sampled" if ev.sample else "greedy",
            "deals": deals,
            "seed": ev.seed,
            "rules": self.cfg.preset,
            "score": score,
            "win_rate": sum(r["win_rate"] for r in results) / len(results),
            "results": results,
            "seconds": time.perf_counter() - start,
        }
        self.log({"eval/win_rate": summary["win_rate"], "eval/score": score}, step)
        self.writer.flush()
        atomic_write_text(self.folder / "eval.json", json.dumps(summary, indent=2) + "\n")
        self.last_eval = summary
        return summary

    def promote_if_best(self, score: float, best_score: float) -> bool:
        """Copy ``latest.pt`` to ``best.pt`` when ``score`` beats ``best_score``."""
        if score > best_score or not self.best.exists():
            atomic_copy(self.latest, self.best)
            return True
        return False

    def close(self) -> None:
        """Flush and close the TensorBoard writer."""
        self.writer.flush()
        self.writer.close()


def eval_text(summary: dict[str, Any] | None, short: bool = False) -> str:
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
    """A rich progress bar over learner decisions, with steps/s and the latest evaluation."""

    def __init__(self, console: Any, total: int, start: int, enabled: bool) -> None:
        self.enabled = enabled
        self._bar: Any = None
        if enabled:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("[bold]training"),
                BarColumn(),
                TextColumn("{task.completed:,.0f}/{task.total:,.0f} steps"),
                TextColumn("{task.fields[sps]} steps/s"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("win: {task.fields[eval]}"),
                console=console,
                transient=False,
            )
            self._task = self._bar.add_task("train", total=total, completed=start, sps="-", eval="-")
            self._bar.start()

    def update(self, step: int, sps: float | None = None, evaluation: str | None = None) -> None:
        """Move the bar to ``step``; refresh steps/s and the evaluation text when given."""
        if not self.enabled:
            return
        fields: dict[str, Any] = {}
        if sps is not None:
            fields["sps"] = f"{sps:,.0f}"
        if evaluation is not None:
            fields["eval"] = evaluation
        self._bar.update(self._task, completed=step, **fields)

    def close(self) -> None:
        """Stop the bar."""
        if self._bar is not None:
            self._bar.stop()


def resolve_config(config: str | None, resume: str | None, sets: list[str]) -> Config:
    """The run's config: ``CONFIG.yaml`` (or the resumed run's ``config.yaml``) with the ``--set`` overrides."""
    if config is None:
        if resume is None:
            raise ConfigError("give a CONFIG.yaml (or --resume RUN_DIR to continue a run)")
        config = str(Path(resume) / "config.yaml")
    return load_config(config, sets)


def resume_checkpoint(resume: str, cfg: Config) -> dict[str, Any]:
    """Load ``RUN/checkpoints/latest.pt`` and check that it fits ``cfg`` (one-line errors)."""
    path = Path(resume) / CHECKPOINTS / "latest.pt"
    if not Path(resume).is_dir():
        raise CheckpointError(f"--resume {resume!r} is not a run folder")
    data = load_checkpoint(path)
    algo = data.get("algo", "fast")
    if algo != cfg.algo:
        raise CheckpointError(f"checkpoint {str(path)!r} was trained with algo {algo!r}, the config says {cfg.algo!r}")
    actions = max(r.num_actions for r in cfg.rule_sets())
    if list(data["hidden"]) != list(cfg.hidden) or int(data["actions"]) != actions:
        raise CheckpointError(
            f"checkpoint {str(path)!r} does not match the config: hidden {list(data['hidden'])} and "
            f"{data['actions']} actions, the config needs hidden {cfg.hidden} and {actions} actions"
        )
    if "global_step" not in data:
        raise CheckpointError(f"checkpoint {str(path)!r} has no training state to resume from")
    return data


def default_out(config: str | None) -> Path:
    """``runs/<config name>-<date>-<time>``."""
    stem = Path(config).stem if config else "run"
    return Path("runs") / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"


class Schedule:
    """After each update: log the scalars with ``charts/SPS``, then checkpoint and evaluate when due."""

    def __init__(self, run: Run, progress: Progress, save: Any, start_step: int, best_score: float) -> None:
        self.run, self.progress, self.save = run, progress, save
        cfg = run.cfg
        self.best_score = best_score
        self.seconds = 0.0
        self.steps = 0
        self.next_eval = (start_step // cfg.eval.every + 1) * cfg.eval.every if cfg.eval.every else None
        every = cfg.checkpoint_every
        self.next_checkpoint = (start_step // every + 1) * every if every else None

    def after_update(self, step: int, decisions: int, seconds: float, logs: dict[str, float]) -> None:
        """Log, and checkpoint / evaluate if ``step`` reached the next one."""
        self.seconds += seconds
        self.steps += decisions
        sps = self.steps / max(self.seconds, 1e-9)
        self.run.log({**logs, "charts/SPS": sps}, step)
        if self.next_eval is not None and step >= self.next_eval:
            self.evaluate(step, self.run.cfg.eval.deals)
            while self.next_eval <= step:
                self.next_eval += self.run.cfg.eval.every
        elif self.next_checkpoint is not None and step >= self.next_checkpoint:
            self.save(self.best_score)
        if self.next_checkpoint is not None:
            while self.next_checkpoint <= step:
                self.next_checkpoint += self.run.cfg.checkpoint_every
        self.progress.update(step, sps=sps)

    def evaluate(self, step: int, deals: int) -> dict[str, Any]:
        """Save ``latest``, evaluate it, promote it to ``best`` if it scored best so far."""
        self.save(self.best_score)
        summary = self.run.evaluate(step, deals)
        if summary["score"] > self.best_score or not self.run.best.exists():
            self.best_score = max(summary["score"], self.best_score)
            self.save(self.best_score)  # latest now records the new best score
            self.run.promote_if_best(summary["score"], float("-inf"))
        self.progress.update(step, evaluation=eval_text(summary, short=True))
        return summary


def make_trainer(cfg: Config, resume: dict[str, Any] | None = None) -> Any:
    """The trainer of ``cfg.algo`` (``FastTrainer`` or ``Sb3Trainer``), continuing ``resume`` if given.

    Both have ``train(schedule)`` (``schedule.after_update(step, decisions, seconds, logs)``
    after every update), ``save(path, best_score)`` and ``global_step``.
    """
    if cfg.algo == "sb3":
        from training.sb3 import Sb3Trainer as Trainer
    else:
        from training.ppo import FastTrainer as Trainer
    return Trainer(cfg, resume)


class _Updates:
    """A trainer ``schedule`` that only forwards each update's step and scalars to ``on_update``."""

    def __init__(self, on_update: Callable[[int, dict[str, float]], Any] | None) -> None:
        self.on_update = on_update

    def after_update(self, step: int, decisions: int, seconds: float, logs: dict[str, float]) -> None:
        if self.on_update is not None:
            self.on_update(step, logs)


def train_to_file(
    cfg: Config, path: str | Path, on_update: Callable[[int, dict[str, float]], Any] | None = None
) -> Any:
    """Train ``cfg`` to ``total_steps`` (no run folder, no evaluation) and save the checkpoint to ``path``.

    The quick way to a trained agent (``ppo:PATH``) from code: ``agurk skill-report`` and
    the quickstart notebook use it. ``on_update(step, logs)`` is called after every update
    with the learner decisions so far and the update's scalars. Returns the trainer.
    """
    trainer = make_trainer(cfg)
    trainer.train(_Updates(on_update))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    trainer.save(path, trainer.best_score)
    return trainer


def execute(cfg: Config, out: Path, resume: dict[str, Any] | None, console: Any, show_progress: bool) -> dict[str, Any]:
    """Train ``cfg`` into the run folder ``out`` (continuing ``resume``); return a summary.

    Ctrl-C stops training, saves ``latest`` and returns with ``interrupted`` set.
    """
    start_step = int(resume["global_step"]) if resume else 0
    run = Run(out, cfg, start_step)
    progress = Progress(console, cfg.total_steps, start_step, show_progress)
    interrupted = False
    started = time.perf_counter()
    try:
        trainer = make_trainer(cfg, resume)
        schedule = Schedule(run, progress, lambda best: trainer.save(run.latest, best), start_step, trainer.best_score)
        try:
            trainer.train(schedule)
        except KeyboardInterrupt:
            interrupted = True
        trainer.save(run.latest, schedule.best_score)
        if not interrupted and trainer.global_step > start_step:
            try:
                schedule.evaluate(trainer.global_step, cfg.eval.final_deals)
            except KeyboardInterrupt:
                interrupted = True
    finally:
        progress.close()
        run.close()
    return {
        "out": str(out),
        "global_step": trainer.global_step,
        "start_step": start_step,
        "decisions_per_s": schedule.steps / max(schedule.seconds, 1e-9),
        "seconds": time.perf_counter() - started,
        "interrupted": interrupted,
        "eval": run.last_eval,
        "best_score": schedule.best_score,
    }
