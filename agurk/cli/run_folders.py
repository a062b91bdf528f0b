"""The command line's words for run-folder and resume errors: what the library says, with the flag that helps.

The training library says why a folder cannot be used and what would help
(:class:`training.run_folder.RunFolderError` ``remedy``, :class:`training.resume.ResumeError`
``fatal``); here that becomes one line in the options of the command (``--out``,
``--resume``, ``--force``). ``agurk train``, ``exploit``, ``skill-report``, ``sweep`` and ``curve`` share it;
:func:`train_with_progress` is the training of ``agurk train`` and ``agurk exploit``, its refusals one line each.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agurk.cli.common import CliError

if TYPE_CHECKING:
    from rich.console import Console

    from training.config import Config
    from training.progress import ProgressMode
    from training.resume import Resume, ResumeError
    from training.run import RunSummary
    from training.run_folder import RunFolderError
    from training.stop_signals import Signals


def folder_error(error: RunFolderError, flag: str = "--out") -> CliError:
    """``error`` as one line: ``FLAG 'DIR' <reason>; <what to do, in flags>``."""
    from training.run_folder import aside_name

    folder = error.folder
    aside = aside_name(folder)
    remedy = {
        "resume": f"continue it with --resume {folder}, or add --force to move it aside to {aside} and start afresh",
        "move_aside": f"give a new or empty folder, or add --force to move it aside to {aside}",
        "wait": "wait for it to end",
        "fix": "",
    }[error.remedy]
    if flag == "--resume" and error.remedy == "move_aside":
        remedy = f"it cannot be resumed; start afresh with --out {folder} --force (moves it aside to {aside})"
    return CliError(f"{flag} {str(folder)!r} {error.reason}" + (f"; {remedy}" if remedy else ""))


def resume_error(error: ResumeError) -> CliError:
    """A config that cannot continue the run, as one line naming each difference and what ``--force`` can do."""
    head = f"--resume {error.folder}: the config does not match the run: {'; '.join(error.differences)}; "
    if error.fatal:
        return CliError(
            head + "its saved state cannot be loaded under this config, even with --force "
            "(resume with the run's own config, or start a new run)"
        )
    return CliError(
        head + "continue with the run's own config (leave out CONFIG.yaml), or add --force to train it on the new game"
    )


def moved_text(out: Path, target: Path, what: str = "a new run") -> str:
    """What ``--force`` did with a used folder."""
    return f"--force: moved the old folder {out} aside to {target}; starting {what} in {out}"


def train_with_progress(
    cfg: Config, out: Path, resume: Resume | None, console: Console, mode: ProgressMode, signals: Signals
) -> RunSummary:
    """Train ``cfg`` into the run folder ``out`` (continuing ``resume``) showing its progress; the run's summary.

    A run-folder, config or checkpoint error is one line (:class:`agurk.cli.common.CliError`).
    """
    from agents.policy import CheckpointError
    from training.config import ConfigError
    from training.progress import Progress
    from training.run import execute
    from training.run_folder import RunFolderError

    progress = Progress(console, cfg.total_steps, resume.step if resume else 0, mode, cfg.time_limit * 60)
    try:
        return execute(cfg, out, resume.data if resume else None, progress, signals)
    except RunFolderError as e:
        raise folder_error(e) from None
    except (ConfigError, CheckpointError) as e:
        raise CliError(str(e)) from None
