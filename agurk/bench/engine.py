"""Throughput measurements: the batched engine (the compiled rules kernel) against the scalar reference, on one core.

Each function returns a JSON-ready dict (a TypedDict below); ``agurk bench engine`` only formats them.
``agurk bench`` runs each measurement through :func:`pinned`, in a fresh process whose
BLAS/OpenMP pools start at one thread; the engine's own kernels are single-threaded NumPy anyway.
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import random
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, NotRequired, TypedDict, TypeVar

if TYPE_CHECKING:
    from agurk_env.rules import Rules, RuleValue

THREAD_VARS: tuple[str, ...] = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
"""Environment variables that size the thread pools of NumPy's linear-algebra back ends."""

T = TypeVar("T")


class Rates(TypedDict):
    """Counts and rates of the batched engine's steps (:func:`bench_engine`, :func:`bench_compiled_loop`)."""

    plays: int
    """Card plays: steps times the batch."""
    steps: int
    seconds: float
    plays_per_s: float
    matches_per_s: float
    batch: int
    bytes_per_game: NotRequired[int]
    """:func:`bench_engine`'s: the bytes of one game's state."""
    first_call_s: NotRequired[float]
    """:func:`bench_compiled_loop`'s: its first call (a compile or a load from numba's cache), before the timing."""


class ReferenceRates(TypedDict):
    """Counts and rates of the scalar reference's whole matches (:func:`bench_reference`)."""

    plays: int
    matches: int
    seconds: float
    plays_per_s: float
    matches_per_s: float


class EngineResult(TypedDict):
    """The ``agurk bench engine`` result (:func:`engine_vs_reference`)."""

    bench: str
    plays_per_s: float
    reference_plays_per_s: float
    ratio: float
    """The engine's plays per second over the reference's."""
    compiled_loop_plays_per_s: float | None
    """``None`` without numba."""
    batch: int
    bytes_per_game: int
    preset: str | None
    """The table's label (the preset and its ``--set`` items)."""
    rules: dict[str, RuleValue]
    engine: Rates
    compiled_loop: Rates | None
    compile: dict[str, float | bool] | None
    """The rules kernel's compile or cache load on import (:data:`agurk_env.rules_kernel.LOADED`)."""
    reference: ReferenceRates
    threads_pinned: bool
    """Whether NumPy's thread pools were one thread each (:func:`pinned`)."""
    python: str
    numpy: str
    machine: str


class SearchResult(TypedDict):
    """The ``agurk bench search`` result (:func:`bench_search`)."""

    bench: str
    spec: str
    batch: int
    single_decisions_per_s: float
    """One game per call."""
    batched_decisions_per_s: float
    """``batch`` games per call."""


def pinned(measure: Callable[..., T], *args: object, **kwargs: object) -> T:
    """``measure(*args, **kwargs)`` in a spawned process whose NumPy thread pools are one thread each.

    NumPy's linear-algebra back ends size their pools from :data:`THREAD_VARS` once, when NumPy
    loads, and this process has loaded it already; a spawned process starts with them set.
    ``measure`` and its arguments are pickled, so they must be importable functions and plain values.
    """
    saved = {var: os.environ.get(var) for var in THREAD_VARS}
    os.environ.update(dict.fromkeys(THREAD_VARS, "1"))
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(measure, *args, **kwargs).result()
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


def bench_engine(rules: Rules, batch: int = 4096, seconds: float = 5.0, seed: int = 0) -> Rates:
    """Random legal play of ``batch`` whole matches at once for about ``seconds``.

    Every step computes the legal sets (``engine.legal_bits``), draws a random legal card per
    game (``random_legal``), plays it (``engine.play``) and deals / restarts where a round or
    match ended (``engine.advance``), so dealing, scoring and elimination are in the figure.
    The loop never looks back, so it donates each state to the next step (``donate=True``:
    written in place, no copies; the states are the same as with pure steps, see the tests).
    """
    import numpy as np

    from agurk_env import engine

    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)

    def step(state: engine.State) -> engine.State:
        actions = engine.random_legal(engine.legal_bits(rules, state), rng)
        return engine.advance(rules, engine.play(rules, state, actions, donate=True), donate=True)

    for _ in range(3):  # warm up: caches, first allocations
        state = step(state)
    first_match, steps = state.next_match, 0
    start = time.perf_counter()
    while True:
        state = step(state)
        steps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    rates = _rates(steps, batch, elapsed, state.next_match - first_match)
    rates["bytes_per_game"] = state.nbytes_per_game()
    return rates


def _rates(steps: int, batch: int, elapsed: float, matches: int) -> Rates:
    """The counts and rates of ``steps`` engine steps over ``batch`` games in ``elapsed`` seconds."""
    plays = steps * batch
    return {
        "plays": plays,
        "steps": steps,
        "seconds": elapsed,
        "plays_per_s": plays / elapsed,
        "matches_per_s": matches / elapsed,
        "batch": batch,
    }


def bench_compiled_loop(rules: Rules, batch: int = 4096, seconds: float = 5.0, seed: int = 0) -> Rates:
    """The engine's steps (legal sets, a random legal card, the play, deals and restarts) in compiled calls.

    ``_rules_kernel.random_play``: the same kernel loops as the engine, 32 steps per call, so no
    Python runs between steps; the batched engine's ceiling on this machine. Its first call (a
    compile, or a load from numba's cache) is made before the timing. Needs numba.
    """
    import numpy as np

    from agurk_env import _rules_kernel as kernel
    from agurk_env import engine

    state = engine.init(rules, batch, seed)
    s = engine.State._make(v.copy() if isinstance(v, np.ndarray) else v for v in state)  # the kernel plays copies
    draws = np.array([seed], dtype=np.uint64)
    size, kth = engine.SET_SIZE.astype(np.int64), engine.KTH_MEMBER.reshape(-1).astype(np.int64)
    seed64, next_match = np.uint64(state.seed & 0xFFFFFFFFFFFFFFFF), state.next_match
    loop = lambda n, start: kernel.random_play(  # noqa: E731
        engine.rule_array(rules), engine.tables(rules).deck, s.hands, s.held, s.void, s.tricks, s.trick_leader,
        s.trick_winner, s.alive, s.next_seat, s.n_alive, s.scores, s.lives, s.rebuys, s.round_penalty, s.out_now,
        s.rebought_now, s.winners, s.dealer, s.round_no, s.trick_no, s.cur, s.npos, s.leader, s.top, s.top_seat,
        s.prev, s.locked, s.round_over, s.match_over, s.match_id, seed64, start, n, draws, size, kth,
    )  # fmt: skip
    start_compile = time.perf_counter()
    next_match = loop(1, next_match)
    compile_s = time.perf_counter() - start_compile
    first_match, steps, chunk = next_match, 0, 32
    start = time.perf_counter()
    while True:
        next_match = loop(chunk, next_match)
        steps += chunk
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    rates = _rates(steps, batch, elapsed, next_match - first_match)
    rates["first_call_s"] = compile_s
    return rates


def in_turns(runs: dict[str, Callable[[float], Rates]], seconds: float, slices: int = 3) -> dict[str, Rates]:
    """Each measurement for about ``seconds`` in all, in ``slices`` parts taken in rotation, its counts summed.

    Taking turns spreads a busy machine's changing load over all of them, so their ratios hold
    better than those of one measurement after the other. The rates are recomputed from the sums.
    """
    parts: dict[str, list[Rates]] = {name: [] for name in runs}
    for _ in range(slices):
        for name, run in runs.items():
            parts[name].append(run(seconds / slices))
    out = {}
    for name, measured in parts.items():
        total = measured[0].copy()
        elapsed = sum(m["seconds"] for m in measured)
        matches = sum(m["matches_per_s"] * m["seconds"] for m in measured)
        total["plays"] = sum(m["plays"] for m in measured)
        total["steps"] = sum(m["steps"] for m in measured)
        total["seconds"] = elapsed
        total["plays_per_s"] = total["plays"] / elapsed
        total["matches_per_s"] = matches / elapsed
        out[name] = total
    return out


def bench_reference(rules: Rules, seconds: float = 3.0, seed: int = 0) -> ReferenceRates:
    """Whole random matches with the scalar reference (``play_random_match``) for about ``seconds``."""
    from agurk_env.reference import play_random_match

    rng = random.Random(seed)
    plays = matches = 0
    start = time.perf_counter()
    while True:
        plays += play_random_match(rules, rng)
        matches += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "plays": plays,
        "matches": matches,
        "seconds": elapsed,
        "plays_per_s": plays / elapsed,
        "matches_per_s": matches / elapsed,
    }


def engine_vs_reference(
    rules: Rules,
    batch: int = 4096,
    seconds: float = 5.0,
    reference_seconds: float | None = None,
    seed: int = 0,
    preset: str | None = None,
) -> EngineResult:
    """The engine, its compiled loop and the scalar reference in one run (``reference_seconds``: default 3 at most).

    The engine runs the compiled rules kernel when numba is installed (its compile or cache load on
    import is reported under ``compile``, apart from the timing), as plain Python without it.
    """
    import numpy as np

    from agurk_env import rules_kernel

    pinned = all(os.environ.get(var) == "1" for var in THREAD_VARS)
    compiled = rules_kernel.LOADED  # on import, apart from the timing: the compile is not the engine's speed
    runs: dict[str, Callable[[float], Rates]] = {"engine": lambda s: bench_engine(rules, batch, s, seed)}
    if compiled:
        runs["compiled_loop"] = lambda s: bench_compiled_loop(rules, batch, s, seed)
    rates = in_turns(runs, seconds)
    eng, loop = rates["engine"], rates.get("compiled_loop")
    ref = bench_reference(rules, min(seconds, 3.0) if reference_seconds is None else reference_seconds, seed)
    return {
        "bench": "engine",
        "plays_per_s": eng["plays_per_s"],
        "reference_plays_per_s": ref["plays_per_s"],
        "ratio": eng["plays_per_s"] / ref["plays_per_s"],
        "compiled_loop_plays_per_s": loop["plays_per_s"] if loop else None,
        "batch": batch,
        "bytes_per_game": eng["bytes_per_game"],
        "preset": preset,
        "rules": rules.to_dict(),
        "engine": eng,
        "compiled_loop": loop,
        "compile": compiled,
        "reference": ref,
        "threads_pinned": pinned,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
    }


def bench_search(spec: str = "pimc", seconds: float = 3.0, batch: int = 64, seed: int = 0) -> SearchResult:
    """Decisions per second of a search agent (``pimc`` by default), one game at a time and ``batch`` at once.

    The decisions are taken in mid-round positions of standard 4-player games reached by
    random play, as :func:`agurk_env.agent.dispatch` asks them in the environments and tournaments.
    """
    import numpy as np

    from agents.registry import make_agent
    from agurk_env import engine
    from agurk_env.agent import decide
    from agurk_env.rules import Rules

    rules = Rules.preset("standard")
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    for _ in range(9):  # into the round: some cards played, some shown voids
        actions = engine.random_legal(engine.legal_bits(rules, state), rng)
        state = engine.advance(rules, engine.play(rules, state, actions))
    bits = engine.legal_bits(rules, state)
    agent = make_agent(spec, seed, 0)
    decide(agent, rules, state, np.arange(1), bits[:1])  # one-time loading (a policy's weights) is not timed

    def rate(size: int) -> float:
        decisions, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            games = (np.arange(size) + decisions) % batch
            decide(agent, rules, state, games, bits[games])
            decisions += size
        return decisions / (time.perf_counter() - start)

    single = rate(1)
    return {
        "bench": "search",
        "spec": spec,
        "batch": batch,
        "single_decisions_per_s": single,
        "batched_decisions_per_s": rate(batch),
    }
