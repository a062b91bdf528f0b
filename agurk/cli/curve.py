"""``agurk curve RUN``: a training run's learning curve, each kept checkpoint against fields of each opponent."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agurk.cli.common import (
    PROG,
    Backends,
    CliError,
    Formatter,
    Quiet,
    Seeded,
    Subcommands,
    add_options,
    backend_of,
    from_args,
    require_rl,
    stderr_console,
    task_errors,
)
from agurk.cli.stop_signals import stopped
from agurk_env.options import REQUIRED, option, split_list

if TYPE_CHECKING:
    from skill.curve import CurvePoint


@dataclass(frozen=True, kw_only=True)
class CurveOptions(Seeded, Backends, Quiet):
    """``agurk curve``'s options."""

    run: str = option(REQUIRED, metavar="RUN", positional=True)
    """a run folder trained with keep_checkpoints: true"""
    against: str = option("guard", metavar="SPEC[,SPEC...]")
    """opponent specs, one curve each, every other seat a copy"""
    beside: list[str] = option([], metavar="RUN")
    """another run of the same rules and table, played on the same deals and drawn beside (repeatable)"""
    deals: int = option(200, low=1, metavar="D")
    """duplicate deals per point"""
    seed: int = option(1, low=0, metavar="S")
    """seed of the deals and agents"""
    players: int | None = option(None, metavar="N")
    """table size (default: the run's first player count)"""
    workers: int | None = option(None, low=1, metavar="W")
    """worker processes per tournament (default: the CPU count, at most 4)"""
    out: str | None = option(None, metavar="DIR")
    """output folder, new or empty (default: RUN/curve)"""
    force: bool = False
    """move a --out folder that is not empty aside to DIR.old-<date>-<time>"""


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
    backend = backend_of(args)
    workers = args.workers or max(1, min(os.cpu_count() or 1, 4))
    folder = Path(args.run)
    for run_folder in (args.run, *args.beside):
        if not (Path(run_folder) / "config.yaml").is_file():
            raise CliError(f"{run_folder!r} is not a run folder (no config.yaml)")
    out = Path(args.out) if args.out is not None else folder / "curve"

    from agents.registry import AgentSpecError, make_agents
    from agurk.cli.run_folders import folder_error, moved_text
    from skill.curve import CurveError, curve_rules, kept_checkpoints, learning_curve, write_curve
    from training.config import ConfigError
    from training.run_folder import RunFolderError, claim_out

    opponents = [s for s in split_list(args.against) if s]
    if not opponents:
        raise CliError("--against needs at least one agent spec")
    try:
        rules = curve_rules(folder, args.players)
        rows = kept_checkpoints(folder)
        for other in args.beside:
            if curve_rules(other, rules.players) != rules:
                raise CliError(f"--beside {other!r} trained under other rules than {args.run!r}")
            rows += kept_checkpoints(other)
        for spec in opponents:
            make_agents(spec, rules.players, args.seed)
    except (CurveError, ConfigError, AgentSpecError, ValueError) as e:
        raise CliError(str(e)) from None
    if not args.force:  # after the arguments: a typo in --against is named first
        try:
            claim_out(out)  # a used --out is refused before the work, and moved aside (--force) only after it
        except RunFolderError as e:
            raise folder_error(e) from None
    console = stderr_console()
    total, start = len(rows) * len(opponents), time.perf_counter()
    done = 0

    def on_point(point: CurvePoint) -> None:
        nonlocal done
        done += 1
        if not args.quiet:
            low, high = point["win_rate_ci"]
            console.print(
                f"[{done}/{total}] step {point['step']:,} ({point['wall_seconds'] / 60:.1f} min) vs "
                f"{point['opponent']}: win rate {point['win_rate']:.3f} [{low:.3f}, {high:.3f}] "
                f"({time.perf_counter() - start:.0f} s)",
                highlight=False,
            )

    try:
        with task_errors():
            curve = learning_curve(folder, opponents, args.deals, args.seed, rules.players, workers, backend, on_point)
            beside = [
                learning_curve(other, opponents, args.deals, args.seed, rules.players, workers, backend, on_point)
                for other in args.beside
            ]
            if beside:
                curve["beside"] = beside
    except KeyboardInterrupt as e:
        return stopped(e)
    try:
        moved = claim_out(out, args.force)
        if moved:
            print(f"{PROG}: {moved_text(out, moved, 'the curve')}", file=sys.stderr)
        write_curve(curve, out)
    except RunFolderError as e:
        raise folder_error(e) from None
    except OSError as e:
        raise CliError(f"cannot write --out {str(out)!r}: {e.strerror or e}") from None
    console.print(f"wrote {out / 'curve.png'}, curve.json and curve.csv ({time.perf_counter() - start:.0f} s)")
    return 0
