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
from typing import Any

from agurk.bench.benches import BENCHES, HELP, Bench, OperatorBench
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
from agurk_env.install import install
from agurk_env.options import OptionError


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
        h = HELP[name]
        b = bench_sub.add_parser(
            name, help=h.help, formatter_class=Formatter, description=h.description, epilog=h.epilog
        )
        add_options(b, cls, notes=RULE_NOTES, docs={"seed": "seed of the deals", **h.docs})


def _needs_ray() -> None:
    """Refuse ``agurk bench tournament`` without ray, in one line."""
    if importlib.util.find_spec("ray") is None:
        raise CliError(f"agurk bench tournament needs ray, from the ray extra: run {install('ray')}")


def _needs_torch() -> None:
    """Refuse ``agurk bench operator`` without torch, in one line."""
    if importlib.util.find_spec("torch") is None:
        raise CliError(f"agurk bench operator needs torch: {install('rl')}")


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
