"""Each ``agurk bench BENCH`` as one call on its options: ``EngineBench(seconds=1).measure()`` and its text.

Every benchmark's options are the command's (one dataclass each); :meth:`Bench.measure` runs it
(in a fresh process whose NumPy thread pools start at one thread, :func:`agurk.bench.engine.pinned`,
but ``serve``) and returns its JSON-ready result, :meth:`Bench.lines` writes that result as the
command prints it; :data:`HELP` is each benchmark's ``--help``. This module imports nothing heavy: the command line
builds its parser from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from agents.command import JsonFlag, Seeded, TableOptions
from agurk.web import MAX_GAMES, MAX_SECONDS
from agurk_env.options import OptionError, option

if TYPE_CHECKING:
    from agurk.bench.engine import EngineResult, SearchResult
    from agurk.bench.env import EnvResult
    from agurk.bench.operator import OperatorResult
    from agurk.bench.tournament import TournamentResult
    from agurk.bench.train import TrainResult
    from agurk.web.load import LoadResult


@dataclass(frozen=True, kw_only=True)
class Bench(Seeded, JsonFlag):
    """What every ``agurk bench BENCH`` has: ``--seed`` (of the deals, unless its ``docs`` say more) and ``--json``."""

    def measure(self) -> Any:
        """Run the benchmark; its JSON-ready result."""
        raise NotImplementedError

    def lines(self, result: Any) -> list[str]:
        """``result`` as the command prints it."""
        raise NotImplementedError

    def ok(self, result: Any) -> bool:
        """Whether ``result`` has no error (the command's exit status 0)."""
        return True


@dataclass(frozen=True, kw_only=True)
class TimedBench(Bench):
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

    def measure(self) -> EngineResult:
        """Card plays per second of the batched engine, its compiled loop and the scalar reference."""
        from agurk.bench.engine import engine_vs_reference, pinned

        return pinned(
            engine_vs_reference,
            self.resolve(),
            batch=self.batch,
            seconds=self.seconds,
            reference_seconds=self.reference_seconds,
            seed=self.seed,
            preset=self.label(),
        )

    def lines(self, result: EngineResult) -> list[str]:
        """The rates, the ratios and the bytes of one game's state."""
        rules, eng, ref, warm = self.resolve(), result["engine"], result["reference"], result["compile"]
        out = [f"rules      {result['preset']}, {rules.players} players, hand size {rules.hand_size}"]
        if warm:
            how = "loaded from numba's cache" if warm["from_cache"] else "compiled (first call; cached on disk after)"
            out.append(f"kernel     {warm['seconds']:.2f} s {how}, before the timing")
        path = "compiled kernel" if warm else "plain Python, numba not installed"
        out.append(
            f"engine     {eng['plays_per_s']:>13,.0f} card plays/s  {eng['matches_per_s']:>10,.0f} matches/s"
            f"  ({path}, batch {eng['batch']}, {eng['seconds']:.1f} s, {eng['bytes_per_game']} bytes per game state)"
        )
        loop = result["compiled_loop"]
        if loop:
            out.append(
                f"compiled   {loop['plays_per_s']:>13,.0f} card plays/s  {loop['matches_per_s']:>10,.0f} matches/s"
                f"  (the kernel's steps with no Python between them, {loop['first_call_s']:.2f} s first call;"
                f" engine / compiled {eng['plays_per_s'] / loop['plays_per_s']:.2f}x)"
            )
        out.append(
            f"reference  {ref['plays_per_s']:>13,.0f} card plays/s  {ref['matches_per_s']:>10,.0f} matches/s"
            f"  (scalar Python, {ref['seconds']:.1f} s)"
        )
        out.append(f"ratio      {result['ratio']:>12,.1f}x  (engine / reference, one core each)")
        return out


@dataclass(frozen=True, kw_only=True)
class EnvBench(TableOptions, TimedBench):
    """``agurk bench env``'s options."""

    n_envs: int = option(1024, low=1, metavar="N")
    """vector env games"""

    def measure(self) -> EnvResult:
        """AEC turns per second beside PettingZoo's leduc_holdem_v4, and the vector envs' learner steps per second."""
        from agurk.bench.engine import pinned
        from agurk.bench.env import bench_env

        return pinned(bench_env, seconds=self.seconds, rules=self.resolve(), n_envs=self.n_envs, seed=self.seed)

    def lines(self, result: EnvResult) -> list[str]:
        """Every figure of :func:`agurk.bench.env.bench_env`, or why it is missing."""
        from agurk.bench.env import env_lines

        return env_lines(result, f"{self.label()}, {self.resolve().players} players")


@dataclass(frozen=True, kw_only=True)
class SearchBench(TimedBench):
    """``agurk bench search``'s options."""

    agent: str = option("pimc", metavar="SPEC")
    """agent spec; pimc plays with worlds=16"""
    batch: int = option(64, low=1, metavar="B")
    """games per batched call"""

    def measure(self) -> SearchResult:
        """Decisions per second of a search agent, one game at a time and in a batch (a bad spec: OptionError)."""
        from agents.registry import AgentSpecError, parse_spec
        from agurk.bench.engine import bench_search, pinned

        try:
            parse_spec(self.agent)
        except AgentSpecError as e:
            raise OptionError(str(e)) from None
        return pinned(bench_search, self.agent, seconds=self.seconds, batch=self.batch, seed=self.seed)

    def lines(self, result: SearchResult) -> list[str]:
        """Both rates."""
        return [
            f"agent      {self.agent} (standard rules, 4 players, mid-round positions)",
            f"single     {result['single_decisions_per_s']:>10,.1f} decisions/s  (one game per call)",
            f"batched    {result['batched_decisions_per_s']:>10,.1f} decisions/s  ({self.batch} games per call)",
        ]


@dataclass(frozen=True, kw_only=True)
class TrainBench(TimedBench):
    """``agurk bench train``'s options."""

    seconds: float = option(20.0, above=0, metavar="S")
    """time per trainer"""
    threads: int = option(1, low=1, metavar="N")
    """torch threads"""

    def measure(self) -> TrainResult:
        """Decisions per second of the PPO trainer beside the SB3 route (same network and run); the network's share."""
        from agurk.bench.engine import pinned
        from agurk.bench.train import bench_train

        return pinned(bench_train, seconds=self.seconds, threads=self.threads, seed=self.seed)

    def lines(self, result: TrainResult) -> list[str]:
        """Each trainer's rate, the ratios and the network's figures (:func:`network_lines`)."""
        out = [f"network    {result['network']}, {result['threads']} torch thread(s), standard rules, 4 players"]
        for rate, label in (
            (result["decisions_per_s"], "PPO (self-play)"),
            (result["ppo_same_opponents_decisions_per_s"], f"PPO (vs {result['opponents']})"),
            (result["sb3_decisions_per_s"], f"SB3 (vs {result['opponents']})"),
        ):
            out.append(f"{label:<22} {rate:>12,.0f} decisions/s")
        out.append(f"{'ratio':<22} {result['ratio']:>12.1f}x  PPO self-play / SB3")
        same = result["ratio_same_opponents"]
        out.append(f"{'ratio, same opponents':<22} {same:>12.1f}x  PPO / SB3, both vs {result['opponents']}")
        return out + network_lines(result)


def network_lines(result: TrainResult) -> list[str]:
    """``agurk bench train``'s network figures: its share of the clocked self-play updates and its FLOP rate."""
    p = result["network_profile"]
    wall = p["seconds"]
    forward = p["forward_collect_s"] + p["forward_train_s"]
    collect = p["collect_s"] - p["forward_collect_s"]
    train = p["train_s"] - p["network_s"] + p["forward_collect_s"]
    return [
        f"{'network share':<22} {p['share']:>12.1%}  of the clocked self-play updates: forward {forward / wall:.1%}, "
        f"backward {p['backward_s'] / wall:.1%}, optimizer {p['optimizer_s'] / wall:.1%}",
        f"{'rest':<22} {1 - p['share']:>12.1%}  collecting {collect / wall:.1%} (engine, observations, sampling, "
        f"advantages), training {train / wall:.1%} (minibatches, loss, gradient clipping)",
        f"{'network FLOP rate':<22} {p['flop_per_s'] / 1e9:>6.1f} GFLOP/s  {p['matmul_fraction']:.0%} of the "
        f"machine's matrix-multiply rate for these shapes (torch.addmm/mm: {p['matmul_flop_per_s'] / 1e9:.1f} "
        f"GFLOP/s, {p['threads']} thread(s))",
        f"{'clocked updates':<22} {p['updates']:>12}  at {p['decisions_per_s'] / result['decisions_per_s']:.0%} "
        "of the plain self-play updates' rate (the clock's cost; plain and clocked updates alternate)",
    ]


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

    def measure(self) -> dict[str, Any]:
        """Milliseconds per whole deal of the exact solver, compiled and pure Python; PIMC on it."""
        from agurk.bench.engine import pinned
        from agurk.bench.solver import bench_solver

        o = self
        return pinned(
            bench_solver, seconds=o.seconds, deals=o.deals, seed=o.seed, decisions=o.decisions, worlds=o.worlds
        )

    def lines(self, result: dict[str, Any]) -> list[str]:
        """Each configuration's median and max, the fictive player's, and the searches' rates."""
        from agurk.bench.solver import CONFIGS, PIMC_SPECS

        warm = result.get("compile")
        if warm:
            out = [
                f"numba      {warm['seconds']:.2f} s {'(loaded from cache)' if warm['from_cache'] else 'to compile'}"
            ]
        else:
            out = ["numba      not installed: pure-Python path only"]
        for name in CONFIGS:
            for key in (name, f"{name}_python"):
                if key in result:
                    r = result[key]
                    out.append(
                        f"{key:<30} median {r['median_ms']:>9.2f} ms  max {r['max_ms']:>10.2f} ms"
                        f"  ({r['deals']} deals, {r['rules']})"
                    )
            if f"fictive_{name}" in result:
                r = result[f"fictive_{name}"]
                out.append(
                    f"{'fictive ' + name:<30} median {r['median_ms']:>9.2f} ms  max {r['max_ms']:>10.2f} ms"
                    f"  batched {r['batched_ms_per_seat']:.2f} ms per seat  ({r['seats']} seats: each seat's first"
                    " decision to the round's end, guard elsewhere)"
                )
        for key in PIMC_SPECS:
            r = result[key]
            out.append(
                f"{r['spec']:<30} {r['decisions_per_s']:>9,.1f} decisions/s  median {r['median_ms']:.2f} ms"
                f"  max {r['max_ms']:.1f} ms  ({r['decisions']} decisions, one game per call, standard 4x7)"
            )
        return out


@dataclass(frozen=True, kw_only=True)
class TournamentBench(Bench):
    """``agurk bench tournament``'s options."""

    matches: int = option(10_000, low=1, metavar="N")
    """matches in all"""
    workers: int = option(2, low=1, metavar="W")
    """worker processes / Ray CPUs"""

    def measure(self) -> TournamentResult:
        """Seconds of one tournament in one process, in local worker processes and on a local Ray instance."""
        from agurk.bench.engine import pinned
        from agurk.bench.tournament import bench_tournament

        return pinned(bench_tournament, matches=self.matches, workers=self.workers, seed=self.seed)

    def lines(self, result: TournamentResult) -> list[str]:
        """Each backend's seconds and speed-up, and whether they gave the same numbers."""
        w = result["workers"]
        return [
            f"tournament  {', '.join(result['agents'])}: {result['matches']:,} matches, standard rules, {w} workers",
            f"one process         {result['one_process_s']:>7.2f} s",
            f"local, {w} processes  {result['local_workers_s']:>7.2f} s  ({result['speedup_local']:.2f}x)",
            f"ray start           {result['ray_start_s']:>7.2f} s  (a local instance, {w} CPUs)",
            f"ray, cold           {result['ray_cold_s']:>7.2f} s  (its worker processes starting)",
            f"ray, warm           {result['ray_warm_s']:>7.2f} s  ({result['speedup_ray_warm']:.2f}x)",
            f"same numbers        {'yes' if result['same_numbers'] else 'NO'}",
        ]


@dataclass(frozen=True, kw_only=True)
class ServeBench(TableOptions, TimedBench):
    """``agurk bench serve``'s options."""

    games: int = option(200, low=1, high=MAX_GAMES, metavar="N")
    """concurrent games"""
    opponents: str = option("guard", metavar="SPEC")
    """their opponents"""
    best_games: int = option(20, low=0, high=MAX_GAMES, metavar="N")
    """then this many against best; 0: none"""
    duplicate: str = option("", metavar="SPEC")
    """play duplicate games against this agent (its match in the server's threads, a row per game); empty: none"""
    think: float = option(1.0, low=0, metavar="S")
    """mean think time per move"""
    expire: float = option(10.0, above=0, metavar="S")
    """finished games expire after"""
    seconds: float = option(900.0, above=0, high=MAX_SECONDS, metavar="S")
    """time limit"""

    def measure(self) -> LoadResult:
        """Move latency, errors and memory of agurk serve under many concurrent games (a bad table or spec: refused)."""
        from agents.registry import AgentSpecError, parse_spec
        from agurk.web.load import Wave, run_load

        self.resolve()  # a bad table is refused here, in one line
        try:
            for spec in filter(None, (self.opponents, self.duplicate)):
                parse_spec(spec)
        except AgentSpecError as e:
            raise OptionError(str(e)) from None
        waves = [Wave(self.games, self.opponents, self.preset(), tuple(self.set), self.duplicate)]
        if self.best_games:
            waves.append(Wave(self.best_games, "best", self.preset(), tuple(self.set), self.duplicate))
        return run_load(waves, think_s=self.think, seed=self.seed, expire_s=self.expire, seconds=self.seconds)

    def lines(self, result: LoadResult) -> list[str]:
        """Each wave's games, latency, CPU, reference and memory, and its first errors."""
        out = [
            f"agurk serve on {result['host']}, {result['cpus']} CPUs; think {self.think:g} s per move (x0.5-1.5); "
            f"finished games expire after {self.expire:g} s; server memory at the start {result['rss_mb_start']} MiB; "
            f"load average {result['load_avg_start']} (1 min, every process on the machine)"
        ]
        for w in result["waves"]:
            move, ref = w["move"], w["reference_move"]
            out += [
                f"{w['games']:>4} games vs {w['opponents']:<6} ({w['rules']}"
                f"{', duplicate vs ' + w['duplicate'] if w['duplicate'] else ''}): {w['finished']}/{w['games']} "
                f"finished, {w['errors']} errors, {w['moves']:,} moves in {w['seconds']:.0f} s "
                f"(load avg {w['load_avg']})",
                f"     move latency  p50 {move['p50_ms']} ms  p95 {move['p95_ms']} ms  max {move['max_ms']} ms"
                "  (request sent to answer received, timed by the client)",
                f"     CPU per move  server {w['server_cpu_ms_per_move']} ms, "
                f"load client {w['client_cpu_ms_per_move']} ms; the server's event loop waited {w['server_waited_s']} s"
                " in all for a core (runnable while other processes held them)",
                f"     reference     p50 {ref['p50_ms']} ms  p95 {ref['p95_ms']} ms  max {ref['max_ms']} ms"
                "  (the same kind of plays in this process, no HTTP, one game at a time)",
                f"     memory        {w['rss_mb_played']} MiB after the games, {w['rss_mb_expired']} MiB after they "
                f"expired ({w['games_left_after_expiry']} games left)",
            ]
            out += [f"     error: {error}" for error in w["first_errors"]]
        return out

    def ok(self, result: LoadResult) -> bool:
        """No error and no game lost."""
        return not any(w["errors"] or w["finished"] != w["games"] for w in result["waves"])


@dataclass(frozen=True, kw_only=True)
class OperatorBench(TableOptions, Bench):
    """``agurk bench operator``'s options."""

    policy: str = option("zoo", metavar="P")
    """zoo, zoo:NAME or a checkpoint"""
    positions: int = option(2000, low=1, metavar="N")
    """decisions measured"""
    worlds: list[int] = option([16, 64], low=1, metavar="N,N", joined=True)
    """worlds of the operator, each measured"""
    belief: list[bool] = option([False, True], flag=("on", "off"), metavar="B,B", joined=True)
    """uniform worlds (off) and/or belief-weighted (on), each measured"""

    def measure(self) -> OperatorResult:
        """The rollout operator's true-deal gain over its policy (``CheckpointError``: a policy that cannot play)."""
        from agurk.bench.engine import pinned
        from agurk.bench.operator import bench_operator

        configs = [(w, b) for w in self.worlds for b in self.belief]
        return pinned(bench_operator, self.resolve(), self.policy, self.positions, configs, self.seed)

    def lines(self, result: OperatorResult) -> list[str]:
        """The ceiling and each operator's gain, agreement and time."""
        c = result["ceiling"]
        out = [
            f"operator   on {self.policy} ({self.label()}), {result['positions']} positions of its greedy self-play",
            f"ceiling    {c['gain']:+.3f} [{c['ci'][0]:+.3f}, {c['ci'][1]:+.3f}] points/decision"
            " (best card, true deal)",
        ]
        for r in result["operators"]:
            name = f"worlds={r['worlds']} belief={'on' if r['belief'] else 'off'}"
            out.append(
                f"{name:<24} {r['gain']:+.3f} [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}] points/decision over the policy,"
                f" agrees {r['agrees']:.1%}, {r['ms_per_decision']:.1f} ms/decision"
            )
        return out


BENCHES: dict[str, type[Bench]] = {
    "engine": EngineBench,
    "env": EnvBench,
    "search": SearchBench,
    "train": TrainBench,
    "solver": SolverBench,
    "tournament": TournamentBench,
    "serve": ServeBench,
    "operator": OperatorBench,
}
"""The options of each ``agurk bench BENCH``."""


class BenchHelp(NamedTuple):
    """A benchmark's ``--help``: its line in the list, description, examples and wording of the shared options."""

    help: str
    description: str
    epilog: str
    docs: dict[str, str]


HELP = {
    "engine": BenchHelp(
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
    "env": BenchHelp(
        "environment speed: AEC turns/s beside PettingZoo's leduc_holdem_v4, and the vector envs' steps/s",
        "Plays random legal turns through the PettingZoo AEC env (one game) and through PettingZoo's\n"
        "leduc_holdem_v4 with the same loop, in this process, for about --seconds each, then steps\n"
        "sb3_vec_env (--n-envs games on the batched engine) with random opponents, then the same\n"
        "games through gymnasium.make_vec (the gymnasium VectorEnv).",
        "examples:\n  agurk bench env\n  agurk bench env --seconds 10 --json",
        {},
    ),
    "search": BenchHelp(
        "decisions per second of a search agent (pimc by default)",
        "Asks the agent for decisions in mid-round standard positions for about --seconds,\n"
        "one game per call (as an environment does) and --batch games per call (as a\n"
        "tournament does), and prints both rates.",
        "examples:\n  agurk bench search\n  agurk bench search --agent pimc:worlds=64 --json\n"
        "  agurk bench search --agent guided     # the search on the shipped policy (needs torch)",
        {},
    ),
    "train": BenchHelp(
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
    "solver": BenchHelp(
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
    "tournament": BenchHelp(
        "seconds of one tournament: one process, local worker processes, a local Ray instance",
        "Times the same duplicate-deal tournament (shed, guard, counter, ducker; standard rules; --matches\n"
        "matches, 1000 bootstrap resamples) in this process, in --workers local worker processes, and on a\n"
        "local Ray instance with --workers CPUs (its start timed apart; a cold run while Ray's workers\n"
        "start, then a warm one), and checks that every run gives the same numbers. Needs ray.",
        "examples:\n  agurk bench tournament\n  agurk bench tournament --matches 2000 --workers 4 --json",
        {},
    ),
    "serve": BenchHelp(
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
    "operator": BenchHelp(
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
"""Each benchmark's ``--help`` (``agurk bench BENCH --help``): what it measures, and how to run it."""
