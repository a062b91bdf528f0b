"""``agurk bench solver``: milliseconds per whole deal of the exact round solver, compiled and pure Python.

A deal is solved from its first lead: every legal card of the leader valued to the end of the
round (:func:`agurk_env.solver.solve_deals`, one deal per call, so the times include the call's
own overhead). The deals are matches ``0..deals-1`` of ``seed``, round 1, the same for both
paths. The compiled path is warmed up first (numba's compile, or its load from numba's disk
cache, is timed apart as ``compile``) and solves every deal; the pure-Python path solves the
same deals in order until ``seconds`` have passed (at least one), and says how many it did.

Beside it, the search on the solver: decisions per second of ``pimc:eval=exact`` and of the
rollout ``pimc`` (both ``worlds`` worlds, default 16), one game per call through
:func:`agurk_env.agent.decide`, in standard 4 x 7 on the same ``decisions`` positions: every
ply of round 1 of matches ``0, 1, ...`` of ``seed`` under random play, first lead to last card.

And the fictive player's search, :func:`agents.fictive.best_response`, on the same deals of
:data:`FICTIVE_CONFIGS`: from every seat's first decision of round 1 (the seats before it in
the first trick played by ``guard``) to the round's end, against ``guard`` in every other seat,
one seat per call and then every seat of every deal in batches (:func:`bench_fictive`).
"""

from __future__ import annotations

import platform
import time
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

if TYPE_CHECKING:
    from agurk_env.rules import Rules, RuleValue

CONFIGS: dict[str, tuple[str, dict[str, RuleValue]]] = {
    "4x7": ("standard", {}),
    "6x7": ("standard", {"players": 6}),
    "8x6": ("standard", {"players": 8, "hand_size": 6}),
    "4x7_every_trick": ("standard", {"scoring": "every_trick"}),
    "4x7_every_trick_preset": ("every_trick", {}),
}
"""Each measured configuration: a preset and the options changed on top of it."""


FICTIVE_CONFIGS = ("4x7", "4x7_every_trick", "4x7_every_trick_preset")
"""The configurations of :data:`CONFIGS` the fictive player's search is measured on."""


PIMC_SPECS: dict[str, str] = {"pimc_exact": "pimc:eval=exact;worlds={w}", "pimc_rollout": "pimc:worlds={w}"}
"""The two searches measured side by side (``{w}``: the worlds), keyed as in the result."""


class DealTimes(TypedDict):
    """Milliseconds per whole deal of the exact solver on one configuration, on one path."""

    median_ms: float
    mean_ms: float
    max_ms: float
    deals: int
    """The deals solved (the pure-Python path stops after ``seconds``)."""
    rules: str
    """The preset and the options changed on top of it."""
    path: str
    """``numba`` or ``python``."""


class FictiveTimes(TypedDict):
    """Milliseconds per seat of the fictive player's best response against ``guard`` (:func:`bench_fictive`)."""

    median_ms: float
    max_ms: float
    batched_ms_per_seat: float
    seats: int
    chunk: int
    """Seats per batched call."""
    rules: NotRequired[str]
    """Added by :func:`bench_solver`: the configuration's label, as in :class:`DealTimes`."""


class PimcTimes(TypedDict):
    """Decisions per second of one of :data:`PIMC_SPECS`, one game per call (:func:`bench_pimc`)."""

    decisions_per_s: float
    median_ms: float
    max_ms: float
    decisions: int
    spec: str
    rules: str


def bench_solver(
    seconds: float = 20.0, deals: int = 200, seed: int = 0, decisions: int = 280, worlds: int = 16
) -> dict[str, Any]:
    """Median, mean and max ms per deal for each of :data:`CONFIGS` (``NAME``: compiled, ``NAME_python``), and PIMC.

    A mapping, not a TypedDict: besides ``bench``, ``deals``, ``seed``, ``python_seconds``, ``numba``,
    ``python`` and (with numba) ``compile``, its keys are the configurations' names: a :class:`DealTimes`
    under ``NAME`` and ``NAME_python``, a :class:`FictiveTimes` under ``fictive_NAME`` (each of
    :data:`FICTIVE_CONFIGS`), and a :class:`PimcTimes` under each key of :data:`PIMC_SPECS` (see :func:`bench_pimc`).
    """
    import numpy as np

    from agurk_env import engine, solver
    from agurk_env.rules import Rules

    result: dict[str, Any] = {
        "bench": "solver",
        "deals": deals,
        "seed": seed,
        "python_seconds": seconds,
        "numba": solver.HAS_NUMBA,
        "python": platform.python_version(),
    }
    if solver.HAS_NUMBA:
        result["compile"] = solver.warm_up()
    for name, (preset, options) in CONFIGS.items():
        rules = Rules.preset(preset, **options)
        state = engine.init(rules, deals, seed)
        label = f"{preset}{''.join(f', {k}={v}' for k, v in options.items())}"
        for suffix, jit in (("", True), ("_python", False)):
            if jit and not solver.HAS_NUMBA:
                continue
            times: list[float] = []
            start = time.perf_counter()
            for i in range(deals):
                if not jit and times and time.perf_counter() - start > seconds:
                    break
                t = time.perf_counter()
                solver.solve_deals(rules, state.hands[i : i + 1], state.cur[i : i + 1], jit=jit)
                times.append(time.perf_counter() - t)
            ms = np.array(times) * 1e3
            measured: DealTimes = {
                "median_ms": float(np.median(ms)),
                "mean_ms": float(ms.mean()),
                "max_ms": float(ms.max()),
                "deals": len(times),
                "rules": label,
                "path": "numba" if jit else "python",
            }
            result[name + suffix] = measured
        if name in FICTIVE_CONFIGS:
            fictive = bench_fictive(rules, deals, seed)
            fictive["rules"] = label
            result[f"fictive_{name}"] = fictive
    result.update(bench_pimc(decisions=decisions, worlds=worlds, seed=seed))
    return result


def bench_fictive(rules: Rules, deals: int, seed: int) -> FictiveTimes:
    """Milliseconds per seat of the best response against ``guard``: one seat per call (median, max) and batched."""
    import numpy as np

    from agents.belief import concat
    from agents.fictive import CHUNK, best_response
    from agents.heuristics import Heuristic
    from agurk_env import engine
    from agurk_env.agent import act_seats

    table = [Heuristic("guard")] * rules.players
    state = engine.init(rules, deals, seed)
    firsts = []
    for _ in range(rules.players):  # every seat's first decision: the seats before it played guard's card
        firsts.append(state)
        state = engine.play(rules, state, act_seats(rules, state, engine.legal_bits(rules, state), table))
    roots = concat(firsts)
    best_response(rules, roots.take(np.arange(1)), table)  # first-call costs (the engine's compile or load) apart
    times = []
    for i in range(roots.batch):
        t = time.perf_counter()
        best_response(rules, roots.take(np.array([i])), table)
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    for start in range(0, roots.batch, CHUNK):
        best_response(rules, roots.take(np.arange(start, min(start + CHUNK, roots.batch))), table)
    batched = (time.perf_counter() - t) / roots.batch
    ms = np.array(times) * 1e3
    return {
        "median_ms": float(np.median(ms)),
        "max_ms": float(ms.max()),
        "batched_ms_per_seat": batched * 1e3,
        "seats": roots.batch,
        "chunk": CHUNK,
    }


def bench_pimc(decisions: int = 280, worlds: int = 16, seed: int = 0) -> dict[str, PimcTimes]:
    """Decisions per second (and median / max ms per decision) of each of :data:`PIMC_SPECS`, one game per call."""
    import numpy as np

    from agents.registry import make_agent
    from agurk_env import engine, solver
    from agurk_env.agent import decide
    from agurk_env.rules import Rules

    if solver.HAS_NUMBA:
        solver.warm_up()  # numba's compile or cache load is not a decision's
    rules = Rules.preset("standard")
    plies = rules.players * rules.hand_size
    state = engine.init(rules, -(-decisions // plies), seed)
    rng = np.random.default_rng(seed)
    taken = []
    for _ in range(plies):  # every position of round 1, first lead to last card
        taken.append(state)
        state = engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng))
    positions = [(s, g) for g in range(state.batch) for s in taken][:decisions]
    result: dict[str, PimcTimes] = {}
    for key, spec in PIMC_SPECS.items():
        agent = make_agent(spec.format(w=worlds), seed, 0)
        times = []
        for position, g in positions:
            games = np.array([g])
            bits = engine.legal_bits(rules, position.take(games))
            t = time.perf_counter()
            decide(agent, rules, position, games, bits)
            times.append(time.perf_counter() - t)
        ms = np.array(times) * 1e3
        result[key] = {
            "decisions_per_s": float(len(times) / ms.sum() * 1e3),
            "median_ms": float(np.median(ms)),
            "max_ms": float(ms.max()),
            "decisions": len(times),
            "spec": agent.spec,
            "rules": "standard",
        }
    return result
