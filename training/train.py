"""``agurk train``'s work: its options, the config, resume and run folder checked, and the run trained.

:func:`train` takes the options the command parses (:class:`TrainOptions`) and returns the run's
summary (:class:`training.run.RunSummary`); :func:`plan_training` is every check before the run
starts (what the command reports before it trains), :func:`training.run.execute` the run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agents.command import Quiet
from agurk_env.options import OptionError, option

if TYPE_CHECKING:
    from training.config import Config
    from training.resume import Resume
    from training.run import RunSummary
    from training.schedule import ProgressSink, Stops

QUICKSTART = "quickstart.yaml"
"""The packaged config ``agurk train`` trains without one."""


@dataclass(frozen=True, kw_only=True)
class TrainOptions(Quiet):
    """``agurk train``'s options (:func:`train`)."""

    config: str | None = option(None, metavar="CONFIG.yaml", positional=True)
    """the training config (default: the quick start, configs/quickstart.yaml, shipped with the package)"""
    out: str | None = option(None, metavar="DIR")
    """run folder, new or empty (default: a new runs/<config>-<date>-<time>; with --resume: that run)"""
    resume: str | None = option(None, metavar="DIR")
    """continue the run in DIR from checkpoints/latest.pt (config: CONFIG.yaml if given, else DIR/config.yaml)"""
    force: bool = False
    """--out: move a used folder aside to DIR.old-<date>-<time> and start afresh; --resume: continue even if
    CONFIG.yaml differs from the run's config (rules, players and episode included)"""
    set: list[str] = option([], metavar="KEY=VALUE")
    """override a config key (dotted for sections: --set pool.self_play=0.5); repeatable"""

    def with_config(self) -> TrainOptions:
        """These options, training the packaged quick start when they name no config and resume no run."""
        from training.config import packaged_config

        if self.config is None and self.resume is None:
            return replace(self, config=str(packaged_config(QUICKSTART)))
        return self

    def resolved(self) -> Config:
        """The run's config: CONFIG.yaml (or the resumed run's) with every ``--set`` on top."""
        from training.resume import resolve_config

        return resolve_config(self.config, self.resume, self.set)


@dataclass(frozen=True)
class TrainPlan:
    """A run checked before it trains: its config, folder, the resume (if any) and where a used folder went."""

    options: TrainOptions
    config: Config
    out: Path
    resume: Resume | None
    moved: Path | None


def plan_training(options: TrainOptions, cfg: Config | None = None) -> TrainPlan:
    """Check the config (``cfg``, else resolved), the device, the init, the resumed run and the run folder; claim it.

    Refusals: :class:`OptionError` (a finished run, a config change not asked for), and the library's
    ``ConfigError``, ``CheckpointError``, ``ResumeError`` and ``RunFolderError``.
    """
    from training.resume import resume_checkpoint
    from training.run import check_device, check_init
    from training.run_folder import claim_out, default_out

    options = options.with_config()
    cfg = cfg or options.resolved()
    out = Path(options.out) if options.out else Path(options.resume) if options.resume else None
    check_device(cfg)
    if options.resume is None:
        check_init(cfg)
    resume = resume_checkpoint(options.resume, cfg, options.force) if options.resume else None
    if resume is not None and resume.step >= cfg.total_steps:
        raise OptionError(
            f"--resume {options.resume}: the run is finished: it reached its total_steps ({cfg.total_steps:,}) at "
            f"step {resume.step:,}; to train it on, raise total_steps (e.g. --set total_steps={2 * cfg.total_steps})"
        )
    if resume is not None and options.config is not None and not options.force:
        _refuse_config_changes(options, resume.changed)
    moved = claim_out(out, options.force, options.resume) if out is not None else None
    return TrainPlan(options, cfg, out if out is not None else default_out(options.config), resume, moved)


def _refuse_config_changes(options: TrainOptions, changed: list[str]) -> None:
    """Refuse a CONFIG.yaml that would change the resumed run's keys other than those given with ``--set``."""
    asked = {item.partition("=")[0].strip() for item in options.set}
    unasked = [change for change in changed if change.split(" ")[0] not in asked]
    if unasked:
        raise OptionError(
            f"{options.config} differs from the config of the run in {options.resume} ({', '.join(unasked)}): resume "
            f"without it (agurk train --resume {options.resume}) and give the keys meant to change with --set (e.g. "
            "--set total_steps=N, --set time_limit=M), or --force to apply it"
        )


def train_planned(plan: TrainPlan, progress: ProgressSink | None = None, stops: Stops | None = None) -> RunSummary:
    """Train the planned run into its folder (continuing its resume), showing ``progress``; the run's summary."""
    from training.run import execute

    return execute(plan.config, plan.out, plan.resume.data if plan.resume else None, progress, stops)


def train(options: TrainOptions, progress: ProgressSink | None = None, stops: Stops | None = None) -> RunSummary:
    """``agurk train``: train (or continue) the run of ``options`` into its folder; the run's summary."""
    return train_planned(plan_training(options), progress, stops)
