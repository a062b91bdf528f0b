"""``agurk bench tournament``: one duplicate-deal tournament in one process, in local worker processes and on Ray.

The same tournament (:func:`agents.tournament.tournament`, default 4 heuristics, 2,500 deals
x 4 seatings = 10,000 matches, 1,000 bootstrap resamples) is timed in this process, on the
local backend with ``workers`` spawned processes, and on a local Ray instance started with
``workers`` CPUs: first with Ray's worker processes still starting (cold), then again (warm).
Ray's own start is timed apart. Every run must give the same numbers; the benchmark checks it.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Sequence
from typing import TypedDict

from agents.tasks import LOCAL, Backend
from agents.tournament import tournament
from agurk_env.rules import Rules

AGENTS = ("shed", "guard", "counter", "ducker")
"""The default entries: the four heuristics, as in the README's ``agurk evaluate`` figure."""


class TournamentResult(TypedDict):
    """The ``agurk bench tournament`` result (:func:`bench_tournament`): seconds on each backend."""

    agents: list[str]
    matches: int
    deals: int
    workers: int
    one_process_s: float
    local_workers_s: float
    ray_start_s: float
    """Ray's own start, apart from the runs."""
    ray_cold_s: float
    """The first Ray run, its worker processes still starting."""
    ray_warm_s: float
    speedup_local: float
    speedup_ray_warm: float
    same_numbers: bool
    """Whether every run gave the same numbers."""
    cpus: int | None
    python: str
    ray: str


def bench_tournament(
    matches: int = 10_000, workers: int = 2, seed: int = 0, agents: Sequence[str] = AGENTS
) -> TournamentResult:
    """Seconds of a ``matches``-match tournament of ``agents`` (one per seat, standard rules) on each backend."""
    import ray

    from agents.tasks.ray_executor import connect

    rules = Rules.preset("standard", players=len(agents))
    deals = max(1, matches // rules.players)

    def timed(workers: int = 1, backend: Backend = LOCAL) -> tuple[float, dict[str, object]]:
        start = time.perf_counter()
        result = tournament(rules, list(agents), deals, seed, workers=workers, backend=backend)
        return time.perf_counter() - start, result.to_dict()

    one, expected = timed()
    local, local_numbers = timed(workers=workers)
    start = time.perf_counter()
    connect(None, workers)  # as --backend ray does
    try:
        ray_start = time.perf_counter() - start
        cold, cold_numbers = timed(workers=workers, backend=Backend("ray"))
        warm, warm_numbers = timed(workers=workers, backend=Backend("ray"))
    finally:
        ray.shutdown()
    return {
        "agents": list(agents),
        "matches": deals * rules.players,
        "deals": deals,
        "workers": workers,
        "one_process_s": one,
        "local_workers_s": local,
        "ray_start_s": ray_start,
        "ray_cold_s": cold,
        "ray_warm_s": warm,
        "speedup_local": one / local,
        "speedup_ray_warm": one / warm,
        "same_numbers": local_numbers == cold_numbers == warm_numbers == expected,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "ray": ray.__version__,
    }
