"""``agurk bench engine|env|search|train|solver|tournament``: speed beside a reference measured in the same run."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agurk.cli.common import (
    RULE_NOTES,
    CliError,
    Formatter,
    JsonFlag,
    Parser,
    Seeded,
    Subcommands,
    add_options,
    from_args,
    resolve_rules,
    rules_label,
)
from agurk.game_options import TableOptions
from agurk.web import MAX_GAMES, MAX_SECONDS
from agurk_env.options import option

if TYPE_CHECKING:
    from agurk.bench.env import EnvResult


@dataclass(frozen=True, kw_only=True)
class BenchOptions(Seeded, JsonFlag):
    """What every ``agurk bench BENCH`` has: ``--seed`` (of the deals, unless its ``docs`` say more) and ``--json``."""


@dataclass(frozen=True, kw_only=True)
class TimedBench(BenchOptions):
    """A benchmark that measures for about ``--seconds`` (each redeclares it where its default differs)."""

    seconds: float = option(3.0, above=0, metavar="S")
    """time per measurement"""


@dataclass(frozen=True, kw_only=True)
class EngineBench(TableOptions, TimedBench):
    """``agurk bench engine``'s options."""

    batch: int = option(4096, low=1, metavar="B")
    """games played side by side"""
    seconds: float = option(5.0, above=0, metavar="S")
    """how long to run the engine"""
    reference_seconds: float | None = option(None, above=0, metavar="S")
    """how long to run the scalar reference; by default min(--seconds, 3)"""


@dataclass(frozen=True, kw_only=True)
class EnvBench(TableOptions, TimedBench):
    """``agurk bench env``'s options."""

    n_envs: int = option(1024, low=1, metavar="N")
    """vector env games"""


@dataclass(frozen=True, kw_only=True)
class SearchBench(TimedBench):
    """``agurk bench search``'s options."""

    agent: str = option("pimc", metavar="SPEC")
    """agent spec; pimc plays with worlds=16"""
    batch: int = option(64, low=1, metavar="B")
    """games per batched call"""


@dataclass(frozen=True, kw_only=True)
class TrainBench(TimedBench):
    """``agurk bench train``'s options."""

    seconds: float = option(20.0, above=0, metavar="S")
    """time per trainer"""
    threads: int = option(1, low=1, metavar="N")
    """torch threads"""


@dataclass(frozen=True, kw_only=True)
class SolverBench(TimedBench):
    """``agurk bench solver``'s options."""

    deals: int = option(200, low=1, metavar="N")
    """deals per configuration"""
    decisions: int = option(280, low=1, metavar="N")
    """PIMC decisions per search"""
    worlds: int = option(16, low=1, metavar="N")
    """worlds per PIMC search"""
    seconds: float = option(20.0, above=0, metavar="S")
    """time per pure-Python configuration"""


@dataclass(frozen=True, kw_only=True)
class TournamentBench(BenchOptions):
    """``agurk bench tournament``'s options."""

    matches: int = option(10_000, low=1, metavar="N")
    """matches in all"""
    workers: int = option(2, low=1, metavar="W")
    """worker processes / Ray CPUs"""


@dataclass(frozen=True, kw_only=True)
class ServeBench(TableOptions, TimedBench):
    """``agurk bench serve``'s options."""

    games: int = option(200, low=1, high=MAX_GAMES, metavar="N")
    """concurrent games"""
    opponents: str = option("guard", metavar="SPEC")
    """their opponents"""
    best_games: int = option(20, low=0, high=MAX_GAMES, metavar="N")
    """then this many against best; 0: none"""
    think: float = option(1.0, low=0, metavar="S")
    """mean think time per move"""
    expire: float = option(10.0, above=0, metavar="S")
    """finished games expire after"""
    seconds: float = option(900.0, above=0, high=MAX_SECONDS, metavar="S")
    """time limit"""


@dataclass(frozen=True, kw_only=True)
class OperatorBench(TableOptions, BenchOptions):
    """``agurk bench operator``'s options."""

    policy: str = option("zoo", metavar="P")
    """zoo, zoo:NAME or a checkpoint"""
    positions: int = option(2000, low=1, metavar="N")
    """decisions measured"""
    worlds: list[int] = option([16, 64], low=1, metavar="N,N", joined=True)
    """worlds of the operator, each measured"""
    belief: list[bool] = option([False, True], flag=("on", "off"), metavar="B,B", joined=True)
    """uniform worlds (off) and/or belief-weighted (on), each measured"""


def _options(b: argparse.ArgumentParser, cls: type, **docs: str) -> None:
    """The options of ``cls`` on the benchmark's parser ``b``; ``docs``: its wording of the shared ones."""
    add_options(b, cls, notes=RULE_NOTES, docs={"seed": "seed of the deals", **docs})


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
    for add in (
        _add_engine,
        _add_env,
        _add_search,
        _add_train,
        _add_solver,
        _add_tournament,
        _add_serve,
        _add_operator,
    ):
        add(bench_sub)


def _add_engine(bench_sub: Subcommands) -> None:
    """``agurk bench engine``."""
    b = bench_sub.add_parser(
        "engine",
        help="card plays per second: batched engine vs scalar reference",
        formatter_class=Formatter,
        description=(
            "Random legal play of whole matches (dealing, tricks, scoring, elimination, restarts)\n"
            "with the batched engine for about --seconds (on the compiled rules kernel when numba is\n"
            "installed, its compile or cache load timed apart), then the kernel's steps with no\n"
            "Python between them (the compiled loop, the engine's ceiling) for as long, then the\n"
            "scalar Python reference (agurk_env.reference) for about --reference-seconds, all in one\n"
            "process on one core (OMP_NUM_THREADS and friends are set to 1 before NumPy is loaded).\n"
            "Prints card plays per second of each, the ratios, and the bytes of one game's state."
        ),
        epilog=(
            "examples:\n"
            "  agurk bench engine\n"
            "  agurk bench engine --batch 16384 --seconds 10\n"
            "  agurk bench engine --rules danish21 --set players=6 --json"
        ),
    )
    _options(
        b,
        EngineBench,
        seed="seed of the deals and the random play",
        json="print every figure (plays_per_s, reference_plays_per_s, ratio, batch, bytes_per_game, rules, ...) as "
        "one JSON object",
    )


def _add_env(bench_sub: Subcommands) -> None:
    """``agurk bench env``."""
    b = bench_sub.add_parser(
        "env",
        help="environment speed: AEC turns/s beside PettingZoo's leduc_holdem_v4, and the vector envs' steps/s",
        formatter_class=Formatter,
        description=(
            "Plays random legal turns through the PettingZoo AEC env (one game) and through PettingZoo's\n"
            "leduc_holdem_v4 with the same loop, in this process, for about --seconds each, then steps\n"
            "sb3_vec_env (--n-envs games on the batched engine) with random opponents, then the same\n"
            "games through gymnasium.make_vec (the gymnasium VectorEnv)."
        ),
        epilog="examples:\n  agurk bench env\n  agurk bench env --seconds 10 --json",
    )
    _options(b, EnvBench)


def _add_search(bench_sub: Subcommands) -> None:
    """``agurk bench search``."""
    b = bench_sub.add_parser(
        "search",
        help="decisions per second of a search agent (pimc by default)",
        formatter_class=Formatter,
        description=(
            "Asks the agent for decisions in mid-round standard positions for about --seconds,\n"
            "one game per call (as an environment does) and --batch games per call (as a\n"
            "tournament does), and prints both rates."
        ),
        epilog=(
            "examples:\n  agurk bench search\n  agurk bench search --agent pimc:worlds=64 --json\n"
            "  agurk bench search --agent guided     # the search on the shipped policy (needs torch)"
        ),
    )
    _options(b, SearchBench)


def _add_train(bench_sub: Subcommands) -> None:
    """``agurk bench train``."""
    b = bench_sub.add_parser(
        "train",
        help="learner decisions per second: the PPO trainer vs SB3 MaskablePPO, same network",
        formatter_class=Formatter,
        description=(
            "Trains for about --seconds each, in this process: the PPO trainer (training/ppo.py) in\n"
            "self-play and against random opponents, then sb3-contrib's MaskablePPO on sb3_vec_env\n"
            "against random opponents, all with the same network (MLP 362-128-128, linear heads) and\n"
            "PPO settings (the quickstart's). A decision is one card chosen by the learner, collected and trained on;\n"
            "the rate is decisions over wall time after one warm-up update."
        ),
        epilog="examples:\n  agurk bench train\n  agurk bench train --seconds 30 --json",
    )
    _options(
        b,
        TrainBench,
        json="print every figure (decisions_per_s, sb3_decisions_per_s, ratio, ...) on the last line as one JSON "
        "object",
    )


def _add_solver(bench_sub: Subcommands) -> None:
    """``agurk bench solver``."""
    b = bench_sub.add_parser(
        "solver",
        help="ms per whole deal of the exact round solver (numba and pure Python); PIMC on it: decisions/s",
        formatter_class=Formatter,
        description=(
            "Solves the first --deals deals of --seed from the first lead with agurk_env.solver (every legal\n"
            "card of the leader valued to the round's end), one deal per call: standard 4x7, 6x7, 8x6, 4x7 with\n"
            "every-trick scoring, and the every_trick preset. The numba path solves every deal after a warm-up\n"
            "(its compile or cache load is reported apart); the pure-Python path solves the same deals until\n"
            "--seconds have passed per configuration, and says how many. Then the search on the solver beside\n"
            "the rollout search: decisions/s of pimc:eval=exact and of pimc (--worlds each), one game per call,\n"
            "on the same --decisions positions of standard 4x7 (every ply of round 1 under random play). And the\n"
            "fictive player's best response (agents.fictive) on the 4x7 deals: ms per seat from each seat's first\n"
            "decision to the round's end against guard, one seat per call and batched, beside the solver's lines."
        ),
        epilog="examples:\n  agurk bench solver\n  agurk bench solver --deals 50 --seconds 5 --decisions 140 --json",
    )
    _options(b, SolverBench, json="print every figure (on the last line of stdout) as one JSON object")


def _add_tournament(bench_sub: Subcommands) -> None:
    """``agurk bench tournament``."""
    b = bench_sub.add_parser(
        "tournament",
        help="seconds of one tournament: one process, local worker processes, a local Ray instance",
        formatter_class=Formatter,
        description=(
            "Times the same duplicate-deal tournament (shed, guard, counter, ducker; standard rules; --matches\n"
            "matches, 1000 bootstrap resamples) in this process, in --workers local worker processes, and on a\n"
            "local Ray instance with --workers CPUs (its start timed apart; a cold run while Ray's workers\n"
            "start, then a warm one), and checks that every run gives the same numbers. Needs ray."
        ),
        epilog="examples:\n  agurk bench tournament\n  agurk bench tournament --matches 2000 --workers 4 --json",
    )
    _options(b, TournamentBench)


def run(namespace: argparse.Namespace) -> int:
    """Run the benchmark named by ``namespace.bench``; without one, print the ``bench`` help on stderr (exit 2)."""
    if namespace.bench is None:
        namespace.bench_parser.print_help(sys.stderr)
        return 2
    options, measure = _BENCHES[namespace.bench]
    return measure(from_args(options, namespace))


def _engine(args: EngineBench) -> int:
    """Measure card plays per second of the batched engine and of the scalar reference."""
    from agurk.bench import engine as bench

    rules = resolve_rules(args.rules, args.set)
    result = bench.pinned(
        bench.engine_vs_reference,
        rules,
        batch=args.batch,
        seconds=args.seconds,
        reference_seconds=args.reference_seconds,
        seed=args.seed,
        preset=rules_label(args.rules, args.set),
    )
    if args.json:
        print(json.dumps(result))
        return 0
    eng, ref, warm = result["engine"], result["reference"], result["compile"]
    print(f"rules      {result['preset']}, {rules.players} players, hand size {rules.hand_size}")
    if warm:
        how = "loaded from numba's cache" if warm["from_cache"] else "compiled (first call; cached on disk after)"
        print(f"kernel     {warm['seconds']:.2f} s {how}, before the timing")
    path = "compiled kernel" if warm else "plain Python, numba not installed"
    print(
        f"engine     {eng['plays_per_s']:>13,.0f} card plays/s  {eng['matches_per_s']:>10,.0f} matches/s"
        f"  ({path}, batch {eng['batch']}, {eng['seconds']:.1f} s, {eng['bytes_per_game']} bytes per game state)"
    )
    loop = result["compiled_loop"]
    if loop:
        print(
            f"compiled   {loop['plays_per_s']:>13,.0f} card plays/s  {loop['matches_per_s']:>10,.0f} matches/s"
            f"  (the kernel's steps with no Python between them, {loop['first_call_s']:.2f} s first call;"
            f" engine / compiled {eng['plays_per_s'] / loop['plays_per_s']:.2f}x)"
        )
    print(
        f"reference  {ref['plays_per_s']:>13,.0f} card plays/s  {ref['matches_per_s']:>10,.0f} matches/s"
        f"  (scalar Python, {ref['seconds']:.1f} s)"
    )
    print(f"ratio      {result['ratio']:>12,.1f}x  (engine / reference, one core each)")
    return 0


def _env(args: EnvBench) -> int:
    """AEC turns per second beside PettingZoo's leduc_holdem_v4, and sb3_vec_env learner steps per second."""
    from agurk.bench.engine import pinned
    from agurk.bench.env import bench_env

    rules = resolve_rules(args.rules, args.set)
    result = pinned(bench_env, seconds=args.seconds, rules=rules, n_envs=args.n_envs, seed=args.seed)
    if args.json:
        print(json.dumps(result, default=str))
        return 0
    for line in env_lines(result, f"{rules_label(args.rules, args.set)}, {rules.players} players"):
        print(line)
    return 0


def env_lines(result: EnvResult, table: str) -> list[str]:
    """``agurk bench env``'s text: every figure of :func:`agurk.bench.env.bench_env`, or why it is missing."""

    def rate(value: float | None, error: str | None) -> str:
        return f"{'n/a':>12} ({error})" if value is None else f"{value:>12,.0f}"

    lines = [f"rules          {table}"]
    warm = result["compile"]
    if warm:
        how = "loaded from numba's cache" if warm["from_cache"] else "compiled (first call; cached on disk after)"
        lines.append(f"rules kernel   {warm['seconds']:>12.2f} s {how}, before the timing")
    path = "compiled rules kernel" if warm else "the rules kernel as plain Python, numba not installed"
    lines.append(f"AEC env        {result['turns_per_s']:>12,.0f} turns/s (random legal play, one game; {path})")
    leduc = rate(result.get("leduc_turns_per_s"), result.get("leduc_error"))
    lines.append(f"leduc_holdem   {leduc} turns/s (PettingZoo leduc_holdem_v4, same loop)")
    if result.get("ratio") is not None:
        lines.append(f"ratio          {result['ratio']:>12.2f}x  (Agurk AEC / Leduc)")
    beside = f"; {result['floor_ratio']:.2f}x Leduc" if result.get("floor_ratio") is not None else ""
    lines.append(
        f"floor          {result['floor_turns_per_s']:>12,.0f} turns/s (a do-nothing AEC env with Agurk's shapes,"
        f" same wrapper and loop: no AEC env beats it{beside})"
    )
    sb3, games = rate(result.get("sb3_steps_per_s"), result.get("sb3_error")), result["sb3_n_envs"]
    lines.append(f"sb3_vec_env    {sb3} learner steps/s ({games} games, random opponents)")
    gym = result["gym_vector_steps_per_s"]
    lines.append(f"gym_vector_env {gym:>12,.0f} learner steps/s (gymnasium.make_vec, the same {games} games)")
    return lines


def _search(args: SearchBench) -> int:
    """Decisions per second of a search agent, one game at a time and in a batch."""
    from agents.registry import AgentSpecError, parse_spec
    from agurk.bench import engine as bench

    try:
        parse_spec(args.agent)
    except AgentSpecError as e:
        raise CliError(str(e)) from None
    result = bench.pinned(bench.bench_search, args.agent, seconds=args.seconds, batch=args.batch, seed=args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"agent      {args.agent} (standard rules, 4 players, mid-round positions)")
    print(f"single     {result['single_decisions_per_s']:>10,.1f} decisions/s  (one game per call)")
    print(f"batched    {result['batched_decisions_per_s']:>10,.1f} decisions/s  ({args.batch} games per call)")
    return 0


def _train(args: TrainBench) -> int:
    """Learner decisions per second: the PPO trainer beside the SB3 route, same network, same run."""
    from agurk.cli.common import SB3_NEEDS, require_rl

    require_rl("agurk bench train", (("torch", "torch"), *SB3_NEEDS))
    from agurk.bench.engine import pinned
    from agurk.bench.train import bench_train

    result = pinned(bench_train, seconds=args.seconds, threads=args.threads, seed=args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"network    {result['network']}, {result['threads']} torch thread(s), standard rules, 4 players")
    for rate, label in (
        (result["decisions_per_s"], "PPO (self-play)"),
        (result["ppo_same_opponents_decisions_per_s"], f"PPO (vs {result['opponents']})"),
        (result["sb3_decisions_per_s"], f"SB3 (vs {result['opponents']})"),
    ):
        print(f"{label:<22} {rate:>12,.0f} decisions/s")
    print(f"{'ratio':<22} {result['ratio']:>12.1f}x  PPO self-play / SB3")
    same = result["ratio_same_opponents"]
    print(f"{'ratio, same opponents':<22} {same:>12.1f}x  PPO / SB3, both vs {result['opponents']}")
    return 0


def _solver(args: SolverBench) -> int:
    """Milliseconds per whole deal of the exact solver, compiled and pure Python."""
    from agurk.bench.engine import pinned
    from agurk.bench.solver import CONFIGS, PIMC_SPECS, bench_solver

    result = pinned(
        bench_solver,
        seconds=args.seconds,
        deals=args.deals,
        seed=args.seed,
        decisions=args.decisions,
        worlds=args.worlds,
    )
    if args.json:
        print(json.dumps(result))
        return 0
    warm = result.get("compile")
    if warm:
        how = "(loaded from cache)" if warm["from_cache"] else "to compile"
        print(f"numba      {warm['seconds']:.2f} s {how}")
    else:
        print("numba      not installed: pure-Python path only")
    for name in CONFIGS:
        for key in (name, f"{name}_python"):
            if key in result:
                r = result[key]
                print(
                    f"{key:<30} median {r['median_ms']:>9.2f} ms  max {r['max_ms']:>10.2f} ms"
                    f"  ({r['deals']} deals, {r['rules']})"
                )
        if f"fictive_{name}" in result:
            r = result[f"fictive_{name}"]
            print(
                f"{'fictive ' + name:<30} median {r['median_ms']:>9.2f} ms  max {r['max_ms']:>10.2f} ms"
                f"  batched {r['batched_ms_per_seat']:.2f} ms per seat  ({r['seats']} seats: each seat's first"
                " decision to the round's end, guard elsewhere)"
            )
    for key in PIMC_SPECS:
        r = result[key]
        print(
            f"{r['spec']:<30} {r['decisions_per_s']:>9,.1f} decisions/s  median {r['median_ms']:.2f} ms"
            f"  max {r['max_ms']:.1f} ms  ({r['decisions']} decisions, one game per call, standard 4x7)"
        )
    return 0


def _tournament(args: TournamentBench) -> int:
    """Seconds of one tournament in one process, in local worker processes and on a local Ray instance."""
    if importlib.util.find_spec("ray") is None:
        raise CliError('agurk bench tournament needs ray, from the ray extra: run pip install -e ".[ray]"')
    from agurk.bench.engine import pinned
    from agurk.bench.tournament import bench_tournament

    result = pinned(bench_tournament, matches=args.matches, workers=args.workers, seed=args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    w = result["workers"]
    print(f"tournament  {', '.join(result['agents'])}: {result['matches']:,} matches, standard rules, {w} workers")
    print(f"one process         {result['one_process_s']:>7.2f} s")
    print(f"local, {w} processes  {result['local_workers_s']:>7.2f} s  ({result['speedup_local']:.2f}x)")
    print(f"ray start           {result['ray_start_s']:>7.2f} s  (a local instance, {w} CPUs)")
    print(f"ray, cold           {result['ray_cold_s']:>7.2f} s  (its worker processes starting)")
    print(f"ray, warm           {result['ray_warm_s']:>7.2f} s  ({result['speedup_ray_warm']:.2f}x)")
    print(f"same numbers        {'yes' if result['same_numbers'] else 'NO'}")
    return 0


def _add_serve(bench_sub: Subcommands) -> None:
    """Register ``agurk bench serve``: the loopback load test of ``agurk serve`` (:mod:`agurk.web.load`)."""
    b = bench_sub.add_parser(
        "serve",
        help="agurk serve under load: move latency p50/p95 of many concurrent games over loopback HTTP",
        formatter_class=Formatter,
        description=(
            "Starts agurk serve on 127.0.0.1 (its own process, finished games expiring after --expire seconds)\n"
            "and plays --games concurrent games against --opponents, then --best-games against best, each\n"
            "to its end by a script (a random legal card after a think time of 0.5-1.5 x --think seconds),\n"
            "downloading and checking every record. Prints the client-timed latency of a move (the card and\n"
            "the agents' replies) beside the same plays in this process without HTTP, the errors and lost\n"
            "games, and the server's memory after the games and after they expired. Exits 1 on any error."
        ),
        epilog="examples:\n  agurk bench serve\n  agurk bench serve --games 20 --best-games 0 --think 0.1 --json",
    )
    _options(b, ServeBench, seed="seed of the deals and the cards")


def _serve(args: ServeBench) -> int:
    """Move latency, errors and memory of agurk serve under many concurrent games."""
    from agurk.cli.serve import require_web

    require_web("agurk bench serve")
    from agurk.web.load import Wave, run_load

    resolve_rules(args.rules, args.set)  # a bad table is refused here, in one line
    from agents.registry import AgentSpecError, parse_spec

    try:
        parse_spec(args.opponents)
    except AgentSpecError as e:
        raise CliError(str(e)) from None
    waves = [Wave(args.games, args.opponents, args.rules, tuple(args.set))]
    if args.best_games:
        waves.append(Wave(args.best_games, "best", args.rules, tuple(args.set)))
    result = run_load(waves, think_s=args.think, seed=args.seed, expire_s=args.expire, seconds=args.seconds)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"agurk serve on {result['host']}, {result['cpus']} CPUs; think {args.think:g} s per move (x0.5-1.5); "
            f"finished games expire after {args.expire:g} s; server memory at the start {result['rss_mb_start']} MiB; "
            f"load average {result['load_avg_start']} (1 min, every process on the machine)"
        )
        for w in result["waves"]:
            move, ref = w["move"], w["reference_move"]
            print(
                f"{w['games']:>4} games vs {w['opponents']:<6} ({w['rules']}): {w['finished']}/{w['games']} finished, "
                f"{w['errors']} errors, {w['moves']:,} moves in {w['seconds']:.0f} s (load avg {w['load_avg']})"
            )
            print(
                f"     move latency  p50 {move['p50_ms']} ms  p95 {move['p95_ms']} ms  max {move['max_ms']} ms"
                "  (request sent to answer received, timed by the client)"
            )
            print(
                f"     CPU per move  server {w['server_cpu_ms_per_move']} ms, "
                f"load client {w['client_cpu_ms_per_move']} ms; the server's event loop waited {w['server_waited_s']} s"
                " in all for a core (runnable while other processes held them)"
            )
            print(
                f"     reference     p50 {ref['p50_ms']} ms  p95 {ref['p95_ms']} ms  max {ref['max_ms']} ms"
                "  (the same kind of plays in this process, no HTTP, one game at a time)"
            )
            print(
                f"     memory        {w['rss_mb_played']} MiB after the games, {w['rss_mb_expired']} MiB after they "
                f"expired ({w['games_left_after_expiry']} games left)"
            )
            for error in w["first_errors"]:
                print(f"     error: {error}")
    lost = any(w["errors"] or w["finished"] != w["games"] for w in result["waves"])
    return 1 if lost else 0


def _add_operator(bench_sub: Subcommands) -> None:
    """Register ``agurk bench operator``."""
    b = bench_sub.add_parser(
        "operator",
        help="the rollout operator's gain over the policy it rolls out, per decision, on the true deals",
        formatter_class=Formatter,
        description=(
            "Draws --positions decisions with a choice from the policy's own greedy self-play, values every\n"
            "legal card on the TRUE deal by greedy policy rollouts (every seat the policy), and prints, for each\n"
            "--worlds x --belief, the mean true-deal gain of the operator's card (agents.guided.improve: what\n"
            "expert iteration learns from) over the policy's own card, in penalty points per decision with a 95%\n"
            "interval, how often they agree, and ms per decision (batched over all positions). Beside it the\n"
            "ceiling: the best card on the true deal (sees every hand). A gain above 0 is what one improvement\n"
            "step is worth in self-play against copies of the policy; see agurk/bench/operator.py."
        ),
        epilog=(
            "examples:\n  agurk bench operator --policy zoo:standard-4p\n"
            "  agurk bench operator --rules free_choice --set players=3 --set hand_size=5 --set ace_lock=any"
            " --set limit=1 --set match_end=first_out --policy zoo:free_choice-3x5-anyace-single --worlds 16,64"
        ),
    )
    _options(b, OperatorBench)


def _operator(args: OperatorBench) -> int:
    """The rollout operator's true-deal gain over its policy (agurk.bench.operator)."""
    if importlib.util.find_spec("torch") is None:
        raise CliError('agurk bench operator needs torch: pip install -e ".[rl]"')
    from agents.policy import CheckpointError
    from agurk.bench.engine import pinned
    from agurk.bench.operator import bench_operator

    rules = resolve_rules(args.rules, args.set)
    configs = [(w, b) for w in args.worlds for b in args.belief]
    try:
        result = pinned(bench_operator, rules, args.policy, args.positions, configs, args.seed)
    except CheckpointError as e:  # a missing, unknown or unfitting policy: the user's error, one line
        raise CliError(str(e)) from None
    if args.json:
        print(json.dumps(result))
        return 0
    label = rules_label(args.rules, args.set)
    print(f"operator   on {args.policy} ({label}), {result['positions']} positions of its greedy self-play")
    c = result["ceiling"]
    print(f"ceiling    {c['gain']:+.3f} [{c['ci'][0]:+.3f}, {c['ci'][1]:+.3f}] points/decision (best card, true deal)")
    for r in result["operators"]:
        name = f"worlds={r['worlds']} belief={'on' if r['belief'] else 'off'}"
        print(
            f"{name:<24} {r['gain']:+.3f} [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}] points/decision over the policy,"
            f" agrees {r['agrees']:.1%}, {r['ms_per_decision']:.1f} ms/decision"
        )
    return 0


_BENCHES: dict[str, tuple[type[BenchOptions], Callable[[Any], int]]] = {
    "engine": (EngineBench, _engine),
    "env": (EnvBench, _env),
    "search": (SearchBench, _search),
    "train": (TrainBench, _train),
    "solver": (SolverBench, _solver),
    "tournament": (TournamentBench, _tournament),
    "serve": (ServeBench, _serve),
    "operator": (OperatorBench, _operator),
}
"""The options and the benchmark behind each ``agurk bench BENCH``."""
