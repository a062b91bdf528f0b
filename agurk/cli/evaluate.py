"""``agurk evaluate``: a duplicate-deal tournament with per-entry statistics and ratings."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from agents.evaluate import EvaluateOptions, plan_evaluation, play_evaluation
from agurk.cli.common import (
    PROG,
    RULE_NOTES,
    Formatter,
    Subcommands,
    add_options,
    from_args,
    output_file,
    stderr_console,
    stdout_console,
    task_errors,
    warn_other_players,
    write_json,
)
from agurk.monitors import MatchProgress
from training.stop_signals import stopped

if TYPE_CHECKING:
    from agents.tournament import TournamentResult

DESCRIPTION = (
    "Play a tournament between the entries of --agents (one spec per seat; the same spec\n"
    "may appear several times, entries are told apart by position). Duplicate deals: each\n"
    "of the --matches deals (match m of --seed) is played once at every table of the\n"
    "--seating design, so every entry gets every seat's cards and no seat order favours one:\n"
    "  permutations  every distinct order of the entries around the table (24 at 4 players);\n"
    "                entries with the same spec are one player and share its figures\n"
    "  balanced      every rotation of circular orders in which each entry sits after each\n"
    "                other equally often (players x (players - 1) tables, twice that at 4 and 6)\n"
    "  cyclic        the players rotations of the list (entry i in seat (i + r) % players):\n"
    "                who sits after whom never changes, which can favour an entry\n"
    "  auto          permutations up to 24 tables, else balanced (the default)\n"
    "tables x --matches matches are played in all.\n"
    "\n"
    "Per entry: match win rate (a win shared by k counts 1/k), mean penalty per round\n"
    "played, rate of taking the last trick, each with a 95% bootstrap CI over deals, and a\n"
    "Plackett-Luce rating from the finishing orders (Elo scale, entries' mean 0) with a\n"
    "bootstrap CI. --unit round scores single rounds of the same matches instead: the round\n"
    "win rate (the k seats with a round's lowest penalty share it, 1/k each) per round played\n"
    "and a rating from the rounds' orders by penalty. The same command line always gives the\n"
    "same numbers. docs/evaluate.md explains the statistics."
)
"""``agurk evaluate --help``: what the command does."""
EXAMPLES = (
    "examples:\n"
    "  agurk evaluate --agents guard,random,random,random --matches 1000 --seed 0\n"
    "  agurk evaluate --agents shed,guard,counter,ducker --matches 10000 --seed 0 --json runs/h.json\n"
    "  agurk evaluate --rules every_trick --set players=3 --agents ducker,guard,random --matches 500\n"
    "  agurk evaluate --agents guard,random,random,random --matches 1000 --unit round\n"
    "  agurk evaluate --agents shed,guard,counter,ducker --matches 2500 --backend ray --ray-address auto"
)
"""``agurk evaluate --help``: the examples (the tour runs them as printed)."""


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk evaluate`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "evaluate",
        help="duplicate-deal tournament: win rates, penalties, last tricks and ratings with 95%% CIs",
        formatter_class=Formatter,
        description=DESCRIPTION,
        epilog=EXAMPLES,
    )
    add_options(
        p,
        EvaluateOptions,
        notes=RULE_NOTES,
        docs={
            "json": "also write the results (rules, seed, matches, entries, ...) as JSON; '-' prints it to stdout and "
            "the table to stderr",
            "quiet": "no progress bar, and no table when --json is given",
        },
    )
    p.set_defaults(func=run)


def run(namespace: argparse.Namespace) -> int:
    """Play a duplicate-deal tournament and print (and with ``--json`` write) per-entry statistics."""
    from agents.tournament import PARALLEL_MIN_MATCHES

    args = from_args(EvaluateOptions, namespace)
    plan = plan_evaluation(args)
    warn_other_players(plan.specs, plan.rules)
    path = output_file("--json", args.json)
    matches = args.matches * plan.tables
    if (args.workers or 1) > 1 and args.backend == "local" and matches < PARALLEL_MIN_MATCHES:
        print(
            f"{PROG}: note: {args.matches:,} deals x {plan.tables} seatings = {matches:,} matches run in one "
            f"process: --workers {args.workers} takes effect from {PARALLEL_MIN_MATCHES:,} matches",
            file=sys.stderr,
        )
    console = stderr_console()
    start = time.perf_counter()
    try:
        with task_errors(), MatchProgress(console, matches, not args.quiet and console.is_terminal) as progress:
            result = play_evaluation(plan, progress)
    except KeyboardInterrupt as e:
        return stopped(e)
    seconds = time.perf_counter() - start
    data = result.to_dict()
    data["seconds"] = round(seconds, 3)
    write_json(args.json, path, json.dumps(data, indent=2) + "\n")
    if not args.quiet or args.json is None:
        _print_evaluation(result, args.label(), seconds, args.json == "-")
    return 0


def _print_evaluation(result: TournamentResult, label: str, seconds: float, to_stderr: bool) -> None:
    """The per-entry table: win rate, penalty per round, last-trick rate and rating with their 95% CIs.

    On a terminal too narrow for it (80 columns), the last-trick rate is left out (``--json`` has it) rather
    than a number split over two rows.
    """
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    def num(value: float, fmt: str) -> str:
        text = format(value, fmt)
        return format(0.0, fmt) if float(text) == 0 else text  # no "-0"

    def ci(value: float, low_high: tuple[float, float], fmt: str) -> Text:
        interval = f"[{num(low_high[0], fmt)}, {num(low_high[1], fmt)}]"
        return Text.assemble(f"{num(value, fmt)} ", (interval, "dim"))

    p, tables = result.rules.players, len(result.tables)
    by_round = result.unit == "round"
    played = f", {result.rounds_played} rounds" if by_round else ""
    orders = "each round's order by penalty" if by_round else "finishing orders"
    won = "round win: the lowest round penalty (k tied: 1/k each); " if by_round else ""

    def build(last_trick: bool) -> Table:
        left_out = "" if last_trick else "; the last-trick rate is left out at this width (--json has it)"
        table = Table(
            title=f"evaluate: {label}, {p} players, seed {result.seed}" + (", unit: round" if by_round else ""),
            title_justify="left",
            caption=Text(
                f"{result.deals} deals x {tables} seatings ({result.seating.design}) = {result.deals * tables} "
                f"matches{played} in {seconds:.1f} s; "
                f"[95% bootstrap CI over deals, {result.resamples} resamples]; {won}rating: Plackett-Luce "
                f"on {orders}, Elo scale (400 * log10 strength), entries' mean 0{left_out}"
            ),
            caption_justify="left",
        )
        table.add_column("#", justify="right")
        table.add_column("agent", style="bold", overflow="fold")
        table.add_column("round win rate" if by_round else "win rate", justify="right", no_wrap=True)
        table.add_column("penalty / round", justify="right", no_wrap=True)
        if last_trick:
            table.add_column("last trick", justify="right", no_wrap=True)
        table.add_column("rating", justify="right", no_wrap=True)
        for i, e in enumerate(result.entries):
            rate = [ci(e.last_trick_rate, e.last_trick_rate_ci, ".3f")] if last_trick else []
            table.add_row(
                str(i),
                e.spec,
                ci(e.win_rate, e.win_rate_ci, ".3f"),
                ci(e.mean_penalty, e.mean_penalty_ci, ".2f"),
                *rate,
                ci(e.rating, e.rating_ci, "+.0f"),
            )
        return table

    console = stderr_console() if to_stderr else stdout_console()
    if not console.is_terminal:
        console.width = max(console.width, 132)  # a file or pipe: one line per entry
    table = build(last_trick=True)
    if Measurement.get(console, console.options.update_width(10_000), table).maximum > console.width:
        table = build(last_trick=False)
    console.print(table)
