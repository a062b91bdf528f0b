"""``agurk simulate``: play matches and write their game records as JSON Lines."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from agents.simulation import SimulateOptions, plan_simulation, play_simulation
from agurk.cli.common import (
    RULE_NOTES,
    CliError,
    Formatter,
    Subcommands,
    add_options,
    from_args,
    json_default,
    output_file,
    stderr_console,
    warn_other_players,
)
from agurk.monitors import MatchProgress
from agurk_env.atomic import atomic_file
from training.stop_signals import stopped


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk simulate`` on the subcommands ``sub``."""
    from agurk_env.matches import DEFAULT_BATCH

    p = sub.add_parser(
        "simulate",
        help="play matches and write their game records as JSON Lines",
        formatter_class=Formatter,
        description=(
            "Play N whole matches with the batched engine and write one game record per line\n"
            "(the RULES.md 'Game records' format, plus the match number) to --out, in match order.\n"
            "\n"
            "Seeds: match m of seed S is dealt the same cards whatever --batch is; seat s's agent\n"
            "draws its randomness from numpy.random.default_rng([S, s]). The same command line\n"
            "always writes the same file."
        ),
        epilog=(
            "examples:\n"
            "  agurk simulate --rules standard --agents random --matches 1000 --seed 0 --out runs/sim.jsonl\n"
            "  agurk simulate --rules danish21 --set players=6 --agents random --matches 100 --seed 1 --out d6.jsonl\n"
            "  agurk simulate --rules lives --set players=3 --agents random,random,random --matches 10 --out -"
        ),
    )
    add_options(
        p,
        SimulateOptions,
        notes={**RULE_NOTES, "batch": f" (default: min(N, {DEFAULT_BATCH}))"},
        docs={"quiet": "no progress bar and no summary line"},
    )
    p.set_defaults(func=run)


@contextlib.contextmanager
def _records_out(path: Path | None) -> Iterator[IO[bytes]]:
    """Where the records go: a file that replaces ``path`` once every record is written, or stdout (``None``)."""
    if path is None:
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with atomic_file(path) as f:
        yield f


def run(namespace: argparse.Namespace) -> int:
    """Play ``--matches`` matches and write their records, one JSON object per line."""
    args = from_args(SimulateOptions, namespace)
    plan = plan_simulation(args)
    warn_other_players(args.agents.split(","), plan.rules)
    path = output_file("--out", args.out)
    where = str(path) if path is not None else "stdout"
    console = stderr_console()
    show_progress = not args.quiet and console.is_terminal
    matches = rounds = plays = 0
    start = time.perf_counter()
    try:
        with MatchProgress(console, args.matches, show_progress) as progress, _records_out(path) as out:
            for record in play_simulation(plan, progress):
                out.write(json.dumps(record, separators=(",", ":"), default=json_default).encode() + b"\n")
                matches += 1
                rounds += len(record["rounds"])
                plays += sum(len(trick["plays"]) for rnd in record["rounds"] for trick in rnd["tricks"])
    except KeyboardInterrupt as e:
        return stopped(e, f" after {matches} matches" + ("" if path is None else f"; {where} left as it was"))
    except OSError as e:
        if path is None:  # stdout: a closed pipe is main's to handle
            raise
        raise CliError(f"cannot write --out {where!r}: {e.strerror or e}") from None
    seconds = time.perf_counter() - start
    if not args.quiet:
        summary = (
            f"{matches} matches, {rounds} rounds, {plays} card plays in {seconds:.2f} s "
            f"({matches / max(seconds, 1e-9):,.1f} matches/s; {args.label()}, "
            f"{plan.rules.players} players, seed {args.seed}) -> {where}"
        )
        print(summary, file=sys.stdout if path is not None else sys.stderr)
    return 0
