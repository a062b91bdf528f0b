"""``agurk train``: train a policy with PPO from a YAML config into a run folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agurk.cli.common import PROG, CliError, Formatter, stderr_console


def add_parser(sub: Any) -> None:
    """Register ``agurk train`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "train",
        help="train a policy with PPO from a YAML config (checkpoints, TensorBoard, evaluations)",
        formatter_class=Formatter,
        description=(
            "Train a policy from CONFIG.yaml (configs/quickstart.yaml and one config per headline preset\n"
            "are in configs/; docs/training.md explains every key). Writes a run folder: config.yaml\n"
            "(resolved), TensorBoard logs, checkpoints/latest.pt and best.pt (best evaluation against\n"
            "the heuristics), and eval.json (the last evaluation). Ctrl-C saves latest.pt; --resume\n"
            "continues from it. A checkpoint plays as the agent 'ppo:RUN/checkpoints/best.pt'."
        ),
        epilog=(
            "examples:\n"
            "  agurk train configs/quickstart.yaml\n"
            "  agurk train configs/quickstart.yaml --out runs/qs --set total_steps=2000000\n"
            "  agurk train --resume runs/qs\n"
            "  agurk evaluate --agents ppo:runs/qs/checkpoints/best.pt,heuristic,heuristic,heuristic"
        ),
    )
    p.add_argument("config", metavar="CONFIG.yaml", nargs="?", default=None, help="the training config")
    p.add_argument("--out", metavar="DIR", default=None, help="run folder (default: runs/<config>-<date>-<time>)")
    p.add_argument(
        "--resume",
        metavar="DIR",
        default=None,
        help="continue the run in DIR from checkpoints/latest.pt (config: CONFIG.yaml if given, else DIR/config.yaml)",
    )
    p.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a config key (dotted for sections: --set pool.self_play=0.5); repeatable",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train a policy from a YAML config into a run folder (or continue one with --resume)."""
    from agents.policy import CheckpointError
    from training.config import ConfigError
    from training.run import default_out, eval_text, execute, resolve_config, resume_checkpoint

    try:
        cfg = resolve_config(args.config, args.resume, args.set)
        resume = resume_checkpoint(args.resume, cfg) if args.resume else None
    except (ConfigError, CheckpointError) as e:
        raise CliError(str(e)) from None
    out = Path(args.out) if args.out else Path(args.resume) if args.resume else default_out(args.config)
    console = stderr_console()
    try:
        summary = execute(cfg, out, resume, console, not args.quiet and console.is_terminal)
    except (ConfigError, CheckpointError) as e:
        raise CliError(str(e)) from None
    steps = summary["global_step"] - summary["start_step"]
    line = (
        f"{summary['global_step']:,} steps ({steps:,} in this run, {summary['decisions_per_s']:,.0f} steps/s, "
        f"{summary['seconds']:.0f} s); eval vs {cfg.eval.opponent}: {eval_text(summary['eval'])} -> {out}"
    )
    if summary["interrupted"]:
        print(f"{PROG}: interrupted; checkpoint saved: {out / 'checkpoints' / 'latest.pt'}", file=sys.stderr)
        print(f"{PROG}: continue with: agurk train --resume {out}", file=sys.stderr)
        print(line, file=sys.stderr)
        return 130
    print(line)
    return 0
