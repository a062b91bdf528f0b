"""``agurk curve RUN``: a training run's learning curve, each kept checkpoint against fields of each opponent."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from agurk.cli.common import (
    PROG,
    CliError,
    Formatter,
    Subcommands,
    add_options,
    from_args,
    require_rl,
    stderr_console,
    task_errors,
)
from skill.curve import CurveOptions, plan_curve, play_curve, write_planned
from training.stop_signals import stopped

if TYPE_CHECKING:
    from skill.curve import CurvePoint


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk curve`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "curve",
        help="learning curve of a run: its kept checkpoints against each opponent, by wall time",
        formatter_class=Formatter,
        description=(
            "Plays every kept checkpoint of a run trained with keep_checkpoints: true (listed in\n"
            "RUN/checkpoints/kept.csv with the training and wall seconds of its save) as the focal\n"
            "entry of a duplicate-deal tournament against copies of each --against opponent, on the\n"
            "same deals for every checkpoint (agurk evaluate's tournament, 95% bootstrap intervals).\n"
            "Writes curve.json, curve.csv and curve.png (win rate by wall time, one line per\n"
            "opponent) into --out; --beside RUN adds another run's curves (e.g. PPO beside expert\n"
            "iteration) on the same deals to the plot and curve.json."
        ),
        epilog=(
            "examples:\n"
            "  agurk train configs/quickstart.yaml --set keep_checkpoints=true --set checkpoint_minutes=1 \\\n"
            "      --out runs/curve\n"
            "  agurk curve runs/curve --against guard,pimc --deals 200\n"
            "  agurk curve runs/expert --beside runs/ppo      # expert iteration beside PPO"
        ),
    )
    add_options(p, CurveOptions, docs={"quiet": "no progress lines"})
    p.set_defaults(func=run)


def run(namespace: argparse.Namespace) -> int:
    """Evaluate the kept checkpoints and write the curve files."""
    args = from_args(CurveOptions, namespace)
    require_rl("agurk curve", (("torch", "torch"),))
    from agurk.cli.run_folders import folder_error, moved_text
    from training.run_folder import RunFolderError

    try:
        plan = plan_curve(args)
    except RunFolderError as e:
        raise folder_error(e) from None
    console = stderr_console()
    start = time.perf_counter()
    done = 0

    def on_point(point: CurvePoint) -> None:
        nonlocal done
        done += 1
        if not args.quiet:
            low, high = point["win_rate_ci"]
            console.print(
                f"[{done}/{plan.points}] step {point['step']:,} ({point['wall_seconds'] / 60:.1f} min) vs "
                f"{point['opponent']}: win rate {point['win_rate']:.3f} [{low:.3f}, {high:.3f}] "
                f"({time.perf_counter() - start:.0f} s)",
                highlight=False,
            )

    try:
        with task_errors():
            curve = play_curve(plan, on_point)
    except KeyboardInterrupt as e:
        return stopped(e)
    try:
        moved = write_planned(plan, curve)
    except RunFolderError as e:
        raise folder_error(e) from None
    except OSError as e:
        raise CliError(f"cannot write --out {str(plan.out)!r}: {e.strerror or e}") from None
    if moved:
        print(f"{PROG}: {moved_text(plan.out, moved, 'the curve')}", file=sys.stderr)
    console.print(f"wrote {plan.out / 'curve.png'}, curve.json and curve.csv ({time.perf_counter() - start:.0f} s)")
    return 0
