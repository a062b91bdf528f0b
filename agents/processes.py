"""Run independent jobs in spawned worker processes, polling their progress: tournaments and skill reports."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from typing import Any

SPAWN = multiprocessing.get_context("spawn")
"""The start method of every worker (no forked copies of torch or NumPy thread pools); make shared counters with
``SPAWN.Array``."""


def map_spawned(
    fn: Callable[..., Any],
    jobs: Sequence[tuple[Any, ...]],
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    poll: Callable[[], None] | None = None,
    every: float = 0.2,
) -> list[Any]:
    """``fn(*job)`` for every job in ``workers`` spawned processes; the results in job order.

    ``initializer(*initargs)`` runs once in each worker (e.g. to keep shared counters);
    ``poll()`` runs in this process every ``every`` seconds while jobs are pending. The
    first failure cancels the jobs not yet started and is raised here.
    """
    with ProcessPoolExecutor(workers, mp_context=SPAWN, initializer=initializer, initargs=initargs) as pool:
        futures = [pool.submit(fn, *job) for job in jobs]
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=every, return_when=FIRST_EXCEPTION)
            if any(f.exception() is not None for f in finished):
                for f in pending:
                    f.cancel()
                break
            if poll is not None:
                poll()
    for f in futures:  # the first real failure, not a cancellation it caused
        if not f.cancelled() and f.exception() is not None:
            raise f.exception()  # type: ignore[misc]
    return [f.result() for f in futures]
