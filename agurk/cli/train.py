"""``agurk train``: train a policy with PPO from a YAML config into a run folder."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agurk.cli.common import (
    PROG,
    SB3_NEEDS,
    TRAIN_NEEDS,
    CliError,
    Formatter,
    Subcommands,
    add_options,
    from_args,
    require_rl,
    stderr_console,
)
from training.stop_signals import Signals, signal_number
from training.train import TrainOptions, plan_training

if TYPE_CHECKING:
    from training.config import Config
    from training.progress import ProgressMode
    from training.run import RunSummary


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk train`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "train",
        help="train a policy with PPO from a YAML config (checkpoints, TensorBoard, evaluations)",
        formatter_class=Formatter,
        description=(
            "Train a policy from CONFIG.yaml (configs/quickstart.yaml and one config per headline preset\n"
            "are in configs/; docs/training.md explains every key). Writes a run folder: config.yaml\n"
            "(resolved), TensorBoard logs, checkpoints/latest.pt and best.pt (best evaluation against\n"
            "the heuristics), and eval.json (the last evaluation). --out refuses a folder that is not\n"
            "empty (--force moves it aside). Ctrl-C, SIGTERM and SIGHUP save latest.pt and exit with\n"
            "128 + the signal number (130, 143, 129); --resume continues from it, and refuses a CONFIG.yaml\n"
            "that differs from the run's config but in the keys given with --set (unless --force); a run\n"
            "stopped before its first checkpoint leaves its folder empty. Progress counts learner\n"
            "decisions toward total_steps or time_limit, whichever ends the run first: on a terminal a\n"
            "progress bar, otherwise (a log file) a plain line every 30 s and at each evaluation. The run\n"
            "ends with learning_curve.png (every evaluation) and the command that evaluates checkpoints/best.pt."
        ),
        epilog=(
            "examples:\n"
            "  agurk train configs/quickstart.yaml\n"
            "  agurk train configs/quickstart.yaml --out runs/long --set total_steps=2000000\n"
            "  agurk train --resume runs/long\n"
            "  agurk train --resume runs/long --set total_steps=16000000\n"
            "  nohup agurk train configs/standard.yaml --out runs/std > runs/std.log 2>&1 &\n"
            "  agurk evaluate --agents ppo:runs/long/checkpoints/best.pt,heuristic,heuristic,heuristic --matches 1000"
        ),
    )
    add_options(p, TrainOptions, docs={"quiet": "no progress bar and no progress lines"})
    p.set_defaults(func=run)


def _note(text: str) -> None:
    """One ``agurk: ...`` line on stderr."""
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)


def run(namespace: argparse.Namespace) -> int:
    """Train a policy from a YAML config into a run folder (or continue one with --resume)."""
    args = from_args(TrainOptions, namespace)
    try:
        with Signals() as signals:  # from here to the last line printed: a stop signal is never a traceback
            require_rl("agurk train", TRAIN_NEEDS)
            return _train(args, signals)
    except KeyboardInterrupt as e:  # before training began (loading torch, the config, the checkpoint)
        return _stopped_early(signal_number(e))


def _stopped_early(signum: int) -> int:
    """Say that the signal ``signum`` stopped the command before training began; its exit status."""
    _note(f"interrupted by {signal.Signals(signum).name} before training began; no checkpoint written")
    return 128 + signum


def _train(args: TrainOptions, signals: Signals) -> int:
    """Check the config, the device, the resumed run and the run folder, train, and report (``signals`` entered)."""
    from agents.policy import CheckpointError
    from agurk.cli.run_folders import folder_error, moved_text, resume_error, train_with_progress
    from training.config import ConfigError, read_mapping
    from training.progress import eval_text
    from training.resume import ResumeError
    from training.run_folder import RunFolderError

    args = args.with_config()
    try:
        cfg = args.resolved()
        if cfg.algo == "sb3":
            require_rl("agurk train with algo: sb3", SB3_NEEDS)
        plan = plan_training(args, cfg)
    except ResumeError as e:
        raise resume_error(e) from None
    except RunFolderError as e:
        raise folder_error(e, "--resume" if args.resume and e.folder == Path(args.resume) else "--out") from None
    except (ConfigError, CheckpointError) as e:
        raise CliError(str(e)) from None
    out, moved, resume = plan.out, plan.moved, plan.resume
    if args.config is not None and not read_mapping(args.config):
        _note(f"{args.config} sets no key: training on the defaults of every key")
    if moved:
        _note(moved_text(out, moved))
    if resume is not None:
        for difference in resume.forced:
            _note(f"--force: continuing the run on a new game; {difference}")
        if not args.quiet:
            changes = f"; config changes: {', '.join(resume.changed)}" if resume.changed else ""
            _note(f"resuming {args.resume} at step {resume.step:,}{changes}")
    console = stderr_console()
    mode: ProgressMode = "off" if args.quiet else "bar" if console.is_terminal else "lines"
    summary = train_with_progress(cfg, out, resume, console, mode, signals)
    decisions = summary["global_step"] - summary["start_step"]
    ended = f"stopped at the time limit ({cfg.time_limit:g} min) " if summary["time_limit"] else ""
    line = (
        f"{ended}{summary['global_step']:,} decisions ({decisions:,} in this run, "
        f"{summary['decisions_per_s']:,.0f} decisions/s, {summary['seconds']:.0f} s); "
        f"eval vs {cfg.eval.opponent}: {eval_text(summary['eval'])} -> {out}"
    )
    if summary["stop"] is not None:
        signum = signal_number(summary["stop"])
        if not summary["saved"]:
            return _stopped_early(signum)
        latest, name = out / "checkpoints" / "latest.pt", signal.Signals(signum).name
        _note(f"interrupted by {name}; checkpoint saved at step {summary['global_step']:,}: {latest}")
        _note(f"continue with: agurk train --resume {out}")
        print(line, file=sys.stderr)
        return 128 + signum
    print(line)
    for text in _next_steps(cfg, summary):
        print(text)
    return 0


def _next_steps(cfg: Config, summary: RunSummary) -> list[str]:
    """Where the best checkpoint and the learning curve are, and the command that evaluates the checkpoint."""
    out = []
    if summary["curve"]:
        out.append(f"learning curve: {summary['curve']}")
    if summary["best"]:
        players = cfg.rule_sets()[0].players
        agents = ",".join([f"ppo:{summary['best']}"] + [cfg.eval.opponent] * (players - 1))
        preset = "" if cfg.preset == "standard" else f" --rules {cfg.preset}"
        extra = "".join(f" --set {k}={v}" for k, v in {**cfg.rules, "players": players}.items())
        out.append(f"best checkpoint: {summary['best']}")
        deals = f" --matches {cfg.eval.final_deals} --seed {cfg.eval.seed}"  # the final evaluation's deals
        out.append(f"next: agurk evaluate --agents {agents}{deals}{preset}{extra}")
    return out
