"""``agurk leaderboard``: any set of agents rated at one table, from duplicate deals in mixed tables."""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from agurk.cli.common import (
    RULE_NOTES,
    CliError,
    Formatter,
    Subcommands,
    add_options,
    from_args,
    rl_extra_error,
    stderr_console,
    task_errors,
    warn_other_players,
)
from agurk.cli.rich_tables import print_table
from agurk.monitors import LeaderboardLines, leaderboard_line
from agurk_env.install import install
from skill.leaderboard_plan import LeaderboardOptions, claim_board, plan_board, play_board
from training.stop_signals import stopped

if TYPE_CHECKING:
    from skill.leaderboard import LeaderboardPlan
    from skill.people import PersonMatches

DESCRIPTION = (
    "Rate any set of agents at one table (--rules, --set players=N, --set hand_size=H): every pair\n"
    "alone at the table, half the seats each (--design pairs, the default), or every players-subset\n"
    "(--design subsets), at every seating on the same --deals duplicate deals. One Plackett-Luce fit\n"
    "to every finishing order gives Elo-scale ratings (mean 0, 95% bootstrap intervals over deals);\n"
    "beside them, Nash-averaged ratings (Balduzzi et al. 2018): each agent's advantage against the\n"
    "maximum-entropy Nash equilibrium of the head-to-head meta-game (0 for the agents it plays).\n"
    "Writes leaderboard.json, .md and .png into --out; every table is kept in --cache (default\n"
    "OUT/cache), so adding an agent plays only its tables. The same seed gives the same files with\n"
    "any --workers or --backend. --people DB adds agurk serve's duplicate players as person:NAME,\n"
    "rated by the same model with the agents held as fitted. docs/leaderboard.md says more."
)
"""``agurk leaderboard --help``: what the command does."""
EXAMPLES = (
    "examples:\n"
    "  agurk leaderboard --agents random,shed,guard,counter,ducker --deals 200 --out runs/leaderboard\n"
    "  agurk leaderboard --agents random,shed,guard,counter,ducker,heuristic --deals 200 --out runs/leaderboard\n"
    "  agurk leaderboard --design subsets --agents random,shed,guard,counter --deals 50 --out runs/lb-subsets\n"
    "  agurk leaderboard --rules every_trick --set players=3 --agents random,guard,ducker,pimc:worlds=4 \\\n"
    "    --deals 100 --out runs/leaderboard-every-trick\n"
    "  agurk leaderboard --agents random,shed,guard,counter,ducker,pimc:worlds=4,pimc:worlds=16,zoo,best \\\n"
    "    --deals 500 --backend ray --ray-address auto --out runs/leaderboard-all"
)
"""``agurk leaderboard --help``: the examples (the tour runs them, --deals shrunk)."""


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk leaderboard`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "leaderboard",
        help="rate any set of agents at one table: Plackett-Luce ratings with 95%% CIs and Nash averaging",
        formatter_class=Formatter,
        description=DESCRIPTION,
        epilog=EXAMPLES,
    )
    add_options(
        p,
        LeaderboardOptions,
        notes=RULE_NOTES,
        docs={"quiet": "no progress lines and no table (the last line is still printed)"},
    )
    p.set_defaults(func=run)


def _needs() -> None:
    """Refuse at once, in one line, when what the ratings or the plot need is not installed."""
    try:
        import scipy.optimize  # noqa: F401  (the Nash averaging's linear programs)
    except ImportError:
        raise CliError(
            "agurk leaderboard needs scipy (the Nash averaging), from the openspiel extra: run "
            f"{install('openspiel')} in the root of the clone"
        ) from None
    try:
        import matplotlib  # noqa: F401  (leaderboard.png)
    except ImportError:
        raise rl_extra_error("agurk leaderboard", "matplotlib") from None


def _people(db: str, plan: LeaderboardPlan) -> tuple[list[PersonMatches], list[str]]:
    """The people of ``db`` with matches at the plan's table, and a line on each; one line and exit 2 when none."""
    from agurk.web.people import people_matches, read_rows, reasons

    try:
        rows = read_rows(Path(db))
    except ValueError as e:
        raise CliError(f"--people {db!r}: {e}") from None
    people, dropped = people_matches(rows, plan.rules, plan.specs)
    if not people:
        raise CliError(
            f"--people {db!r}: none of its {len(rows)} duplicate matches is at this leaderboard's table, against its "
            f"agents: {reasons(sum(dropped.values(), Counter()))}"
        )
    used = {p.name: len(p.seats) for p in people}
    lines = []
    for name in sorted({*used, *dropped}):
        counted = f"{used.get(name, 0)} duplicate matches at this table"
        lines.append(f"person:{name}: {counted}" + (f", left out {reasons(dropped[name])}" if name in dropped else ""))
    return people, lines


def run(namespace: argparse.Namespace) -> int:
    """Play the leaderboard's tables (those not in the cache), rate the agents and write the files."""
    args = from_args(LeaderboardOptions, namespace)
    args.tasks_backend()
    args.resolve()
    _needs()
    board = plan_board(args)
    plan = board.plan
    people, notes = _people(args.people, plan) if args.people is not None else ([], [])
    warn_other_players(plan.specs, plan.rules)
    claim_board(board)
    console = stderr_console()
    for line in [] if args.quiet else notes:
        leaderboard_line(console, line)
    start = time.perf_counter()
    try:
        with task_errors():
            played, data = play_board(board, LeaderboardLines(console, plan, args.quiet), people)
    except KeyboardInterrupt as e:
        return stopped(e, f": the tables finished so far are in {args.cache_dir()}; run the same command to go on")
    seconds = time.perf_counter() - start
    if not args.quiet:
        from skill.leaderboard import table

        print_table(table(data))
    rated = f" and {len(people)} {'person' if len(people) == 1 else 'people'}" if people else ""
    print(
        f"{len(plan.specs)} agents{rated}, {len(plan.tasks)} tables ({played.played} played, {played.cached} from the "
        f"cache), {seconds:.0f} s -> {Path(args.out) / 'leaderboard.md'}"
    )
    return 0
