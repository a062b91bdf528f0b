"""``agurk bench engine|env|...|operator``: speed beside a reference measured in the same run.

Each benchmark is one call on its options (:mod:`agurk.bench.benches`: ``EngineBench(...).measure()``); this module
parses, checks what a benchmark needs installed, calls it and prints.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

from agurk.bench.benches import BENCHES, Bench, OperatorBench
from agurk.cli.common import (
    RULE_NOTES,
    SB3_NEEDS,
    CliError,
    Formatter,
    Parser,
    Subcommands,
    add_options,
    from_args,
    require_rl,
)
from agurk_env.options import OptionError


class _Help(NamedTuple):
    """A benchmark's ``--help``: its line in the list, description, examples and wording of the shared options."""

    help: str
    description: str
    epilog: str
    docs: dict[str, str]


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk bench`` and its benchmarks on the subcommands ``sub``."""
    p = sub.add_parser(
        "bench",
        help="measure beside a reference: engine, env, search, train, solver, tournament, serve, operator",
        formatter_class=Formatter,
        description=(
            "Benchmarks, each beside a reference measured in the same run: engine (vs the scalar\n"
            "reference), env (vs PettingZoo's leduc_holdem_v4), search (PIMC decisions/s), train\n"
            "(vs sb3-contrib's MaskablePPO), solver (the exact round solver, compiled vs pure Python),\n"
            "tournament (one process vs local worker processes vs a local Ray instance), serve (move\n"
            "latency of agurk serve under load), operator (the rollout operator's gain over a policy).\n"
            "All but serve run in a fresh process whose NumPy thread pools are one thread each.\n"
            "'agurk bench BENCH --help' for each."
        ),
    )
    bench_sub = p.add_subparsers(dest="bench", metavar="BENCH", title="benchmarks", parser_class=Parser)
    p.set_defaults(func=run, bench_parser=p)
    for name, cls in BENCHES.items():
        h = _HELP[name]
        b = bench_sub.add_parser(
            name, help=h.help, formatter_class=Formatter, description=h.description, epilog=h.epilog
        )
        add_options(b, cls, notes=RULE_NOTES, docs={"seed": "seed of the deals", **h.docs})


_HELP = {
    "engine": _Help(
        "card plays per second: batched engine vs scalar reference",
        "Random legal play of whole matches (dealing, tricks, scoring, elimination, restarts)\n"
        "with the batched engine for about --seconds (on the compiled rules kernel when numba is\n"
        "installed, its compile or cache load timed apart), then the kernel's steps with no\n"
        "Python between them (the compiled loop, the engine's ceiling) for as long, then the\n"
        "scalar Python reference (agurk_env.reference) for about --reference-seconds, all in one\n"
        "process on one core (OMP_NUM_THREADS and friends are set to 1 before NumPy is loaded).\n"
        "Prints card plays per second of each, the ratios, and the bytes of one game's state.",
        "examples:\n"
        "  agurk bench engine\n"
        "  agurk bench engine --batch 16384 --seconds 10\n"
        "  agurk bench engine --rules danish21 --set players=6 --json",
        {
            "seed": "seed of the deals and the random play",
            "json": "print every figure (plays_per_s, reference_plays_per_s, ratio, batch, bytes_per_game, rules, "
            "...) as one JSON object",
        },
    ),
    "env": _Help(
        "environment speed: AEC turns/s beside PettingZoo's leduc_holdem_v4, and the vector envs' steps/s",
        "Plays random legal turns through the PettingZoo AEC env (one game) and through PettingZoo's\n"
        "leduc_holdem_v4 with the same loop, in this process, for about --seconds each, then steps\n"
        "sb3_vec_env (--n-envs games on the batched engine) with random opponents, then the same\n"
        "games through gymnasium.make_vec (the gymnasium VectorEnv).",
        "examples:\n  agurk bench env\n  agurk bench env --seconds 10 --json",
        {},
    ),
    "search": _Help(
        "decisions per second of a search agent (pimc by default)",
        "Asks the agent for decisions in mid-round standard positions for about --seconds,\n"
        "one game per call (as an environment does) and --batch games per call (as a\n"
        "tournament does), and prints both rates.",
        "examples:\n  agurk bench search\n  agurk bench search --agent pimc:worlds=64 --json\n"
        "  agurk bench search --agent guided     # the search on the shipped policy (needs torch)",
        {},
    ),
    "train": _Help(
        "learner decisions per second: the PPO trainer vs SB3 MaskablePPO, same network",
        "Trains for about --seconds each, in this process: the PPO trainer (training/ppo.py) in\n"
        "self-play and against random opponents, then sb3-contrib's MaskablePPO on sb3_vec_env\n"
        "against random opponents, all with the same network (MLP 362-128-128, linear heads) and\n"
        "PPO settings (the quickstart's). A decision is one card chosen by the learner, collected and trained on;\n"
        "the rate is decisions over wall time after one warm-up update.",
        "examples:\n  agurk bench train\n  agurk bench train --seconds 30 --json",
        {
            "json": "print every figure (decisions_per_s, sb3_decisions_per_s, ratio, ...) on the last line as one "
            "JSON object"
        },
    ),
    "solver": _Help(
        "ms per whole deal of the exact round solver (numba and pure Python); PIMC on it: decisions/s",
        "Solves the first --deals deals of --seed from the first lead with agurk_env.solver (every legal\n"
        "card of the leader valued to the round's end), one deal per call: standard 4x7, 6x7, 8x6, 4x7 with\n"
        "every-trick scoring, and the every_trick preset. The numba path solves every deal after a warm-up\n"
        "(its compile or cache load is reported apart); the pure-Python path solves the same deals until\n"
        "--seconds have passed per configuration, and says how many. Then the search on the solver beside\n"
        "the rollout search: decisions/s of pimc:eval=exact and of pimc (--worlds each), one game per call,\n"
        "on the same --decisions positions of standard 4x7 (every ply of round 1 under random play). And the\n"
        "fictive player's best response (agents.fictive) on the 4x7 deals: ms per seat from each seat's first\n"
        "decision to the round's end against guard, one seat per call and batched, beside the solver's lines.",
        "examples:\n  agurk bench solver\n  agurk bench solver --deals 50 --seconds 5 --decisions 140 --json",
        {"json": "print every figure (on the last line of stdout) as one JSON object"},
    ),
    "tournament": _Help(
        "seconds of one tournament: one process, local worker processes, a local Ray instance",
        "Times the same duplicate-deal tournament (shed, guard, counter, ducker; standard rules; --matches\n"
        "matches, 1000 bootstrap resamples) in this process, in --workers local worker processes, and on a\n"
        "local Ray instance with --workers CPUs (its start timed apart; a cold run while Ray's workers\n"
        "start, then a warm one), and checks that every run gives the same numbers. Needs ray.",
        "examples:\n  agurk bench tournament\n  agurk bench tournament --matches 2000 --workers 4 --json",
        {},
    ),
    "serve": _Help(
        "agurk serve under load: move latency p50/p95 of many concurrent games over loopback HTTP",
        "Starts agurk serve on 127.0.0.1 (its own process, finished games expiring after --expire seconds)\n"
        "and plays --games concurrent games against --opponents, then --best-games against best, each\n"
        "to its end by a script (a random legal card after a think time of 0.5-1.5 x --think seconds),\n"
        "downloading and checking every record. Prints the client-timed latency of a move (the card and\n"
        "the agents' replies) beside the same plays in this process without HTTP, the errors and lost\n"
        "games, and the server's memory after the games and after they expired. Exits 1 on any error.",
        "examples:\n  agurk bench serve\n  agurk bench serve --games 20 --best-games 0 --think 0.1 --json",
        {"seed": "seed of the deals and the cards"},
    ),
    "operator": _Help(
        "the rollout operator's gain over the policy it rolls out, per decision, on the true deals",
        "Draws --positions decisions with a choice from the policy's own greedy self-play, values every\n"
        "legal card on the TRUE deal by greedy policy rollouts (every seat the policy), and prints, for each\n"
        "--worlds x --belief, the mean true-deal gain of the operator's card (agents.guided.improve: what\n"
        "expert iteration learns from) over the policy's own card, in penalty points per decision with a 95%\n"
        "interval, how often they agree, and ms per decision (batched over all positions). Beside it the\n"
        "ceiling: the best card on the true deal (sees every hand). A gain above 0 is what one improvement\n"
        "step is worth in self-play against copies of the policy; see agurk/bench/operator.py.",
        "examples:\n  agurk bench operator --policy zoo:standard-4p\n"
        "  agurk bench operator --rules free_choice --set players=3 --set hand_size=5 --set ace_lock=any"
        " --set limit=1 --set match_end=first_out --policy zoo:free_choice-3x5-anyace-single --worlds 16,64",
        {},
    ),
}
"""Each benchmark's ``--help``."""


def _needs_ray() -> None:
    """Refuse ``agurk bench tournament`` without ray, in one line."""
    if importlib.util.find_spec("ray") is None:
        raise CliError('agurk bench tournament needs ray, from the ray extra: run pip install -e ".[ray]"')


def _needs_torch() -> None:
    """Refuse ``agurk bench operator`` without torch, in one line."""
    if importlib.util.find_spec("torch") is None:
        raise CliError('agurk bench operator needs torch: pip install -e ".[rl]"')


def _needs_web() -> None:
    """Refuse ``agurk bench serve`` without the web extra, in one line."""
    from agurk.cli.serve import require_web

    require_web("agurk bench serve")


_NEEDS: dict[str, Callable[[], None]] = {
    "train": lambda: require_rl("agurk bench train", (("torch", "torch"), *SB3_NEEDS)),
    "tournament": _needs_ray,
    "serve": _needs_web,
    "operator": _needs_torch,
}
"""What a benchmark needs installed, checked before it starts."""


def run(namespace: argparse.Namespace) -> int:
    """Run the benchmark named by ``namespace.bench``; without one, print the ``bench`` help on stderr (exit 2)."""
    if namespace.bench is None:
        namespace.bench_parser.print_help(sys.stderr)
        return 2
    options = from_args(BENCHES[namespace.bench], namespace)
    _NEEDS.get(namespace.bench, lambda: None)()
    result = _measure(options)
    if options.json:
        print(json.dumps(result, default=str))
    else:
        print("\n".join(options.lines(result)))
    return 0 if options.ok(result) else 1


def _measure(options: Bench) -> Any:
    """The benchmark's result; a refusal (a bad table, agent spec or policy) is one line."""
    refusals: tuple[type[Exception], ...] = (OptionError,)
    if isinstance(options, OperatorBench):  # a missing, unknown or unfitting policy: the user's error
        from agents.policy import CheckpointError

        refusals += (CheckpointError,)
    try:
        return options.measure()
    except refusals as e:
        raise CliError(str(e)) from None
