"""The ray backend of :func:`agents.tasks.run_tasks`: each task one Ray task, progress through a small actor.

The only module that imports ray, and :mod:`agents.tasks.runner` imports it only for
``Backend("ray")``. Ray's own task retries are off (``max_retries=0``): ``run_tasks`` retries
failed and lost tasks alike, as on the local backend.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, cast

import ray

from agents.tasks.backend import BackendError, Job, T, one_line

SEND_EVERY = 0.5
"""Seconds between two progress messages of one task (the last value comes back with the result)."""
CONNECT_SECONDS = 10.0
"""Seconds to wait for a cluster's address to answer before giving up (``ray.init`` itself would wait for minutes)."""
INIT_SECONDS = 60.0
"""Seconds a connection to a cluster that answers may take before it is given up."""
WORKER_NICENESS = "0"
"""Niceness of a local instance's workers (Ray's default, 15, lets every other process on a busy machine go first)."""


def _check_reachable(address: str) -> None:
    """:class:`BackendError` when nothing answers at ``address``'s ``HOST:PORT`` (``auto``: ``RAY_ADDRESS``, if set)."""
    target = os.environ.get("RAY_ADDRESS", "") if address == "auto" else address
    host, colon, port = target.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        return  # an address Ray resolves itself (auto without RAY_ADDRESS: the cluster started on this machine)
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as e:
        timed_out = isinstance(e, TimeoutError)
        reason = f"no answer at {host}:{port} within {CONNECT_SECONDS:g} s" if timed_out else e.strerror or one_line(e)
        raise BackendError(f"cannot reach the Ray cluster at {address!r} ({reason})") from None


def _init_within(seconds: float, address: str, logging_level: int) -> None:
    """``ray.init(address=..., logging_level=...)``, given up after ``seconds`` (in a thread: Ctrl-C still works)."""
    failed: list[BaseException] = []

    def init() -> None:
        try:
            ray.init(address=address, logging_level=logging_level)
        except BaseException as e:  # re-raised in the caller's thread
            failed.append(e)

    thread = threading.Thread(target=init, name="ray-init", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise BackendError(
            f"cannot reach the Ray cluster at {address!r} (it answers, but no Ray cluster came up within {seconds:g} s)"
        )
    if failed:
        raise failed[0]


def connect(address: str | None, workers: int) -> None:
    """Use the Ray instance of this process, else connect to ``address``, else start one with ``workers`` CPUs."""
    if ray.is_initialized():
        return
    try:
        if address is None:
            os.environ.setdefault("RAY_worker_niceness", WORKER_NICENESS)  # read by the raylet ray.init starts
            ray.init(num_cpus=workers, logging_level=logging.WARNING)
        else:
            _check_reachable(address)
            _init_within(INIT_SECONDS, address=address, logging_level=logging.WARNING)
    except BackendError:
        raise
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray instance"
        raise BackendError(f"cannot reach {where}: {one_line(e)}") from None


class _Progress:
    """The latest ``progress(units, stage)`` of every task, set by the tasks and read by the driver."""

    def __init__(self, n: int) -> None:
        self.units, self.stages = [0.0] * n, [0] * n

    def set(self, index: int, units: float, stage: int) -> None:
        self.units[index], self.stages[index] = units, stage

    def get(self) -> tuple[list[float], list[int]]:
        return self.units, self.stages


_ProgressActor = ray.remote(num_cpus=0)(_Progress)
"""The actor class of :class:`_Progress` (ray.remote called: a type checker keeps a decorated class's own type)."""


@ray.remote(max_retries=0)
def _ray_task(
    fn: Callable[..., object],
    index: int,
    job: Job,
    initializer: Callable[[], None] | None,
    sink: ray.actor.ActorHandle[_Progress],
) -> tuple[object, float, int]:
    """Run ``fn(progress, *job)``; return its result with the task's last progress values."""
    if initializer is not None:
        initializer()
    latest: tuple[float, int] = (0.0, 0)
    sent = -SEND_EVERY

    def progress(units: float, stage: int = 0) -> None:
        nonlocal latest, sent
        latest = (units, stage)
        if time.monotonic() - sent >= SEND_EVERY:
            sent = time.monotonic()
            sink.set.remote(index, units, stage)

    value = fn(progress, *job)
    return value, *latest


class RayExecutor(Generic[T]):
    """Every task submitted to Ray at once; Ray schedules them on the cluster's CPUs."""

    def __init__(
        self,
        fn: Callable[..., T],
        jobs: Sequence[Job],
        workers: int,
        address: str | None,
        initializer: Callable[[], None] | None,
    ) -> None:
        connect(address, workers)
        self.fn, self.jobs, self.initializer = fn, jobs, initializer
        self.window = len(jobs)
        # ray types ActorClass.remote as its ActorProxy (an ActorHandle or the class itself), which ray.kill and the
        # tasks' ActorHandle arguments refuse; it returns an ActorHandle
        self.sink: ray.actor.ActorHandle[_Progress] = _ProgressActor.remote(len(jobs))  # type: ignore[assignment]
        self.index_of: dict[ray.ObjectRef, int] = {}
        self.final: dict[int, tuple[float, int]] = {}

    def submit(self, index: int) -> ray.ObjectRef:
        """Submit task ``index``; its object reference is the handle."""
        self.final.pop(index, None)
        ref = _ray_task.remote(self.fn, index, self.jobs[index], self.initializer, self.sink)
        self.index_of[ref] = index
        return ref

    def wait(self, handles: set[ray.ObjectRef], timeout: float) -> set[ray.ObjectRef]:
        """The finished tasks among ``handles`` after at most ``timeout`` seconds."""
        ready, _ = ray.wait(list(handles), num_returns=len(handles), timeout=timeout)
        return set(ready)

    def result(self, handle: ray.ObjectRef) -> T:
        """The task's result; a task's own error is raised as it was raised in the task."""
        index = self.index_of.pop(handle)
        try:
            value, units, stage = ray.get(handle)
        except ray.exceptions.RayTaskError as e:
            if isinstance(e.cause, Exception):
                raise e.cause from None
            raise
        self.final[index] = (units, stage)
        return cast(T, value)

    def failed(self, handle: ray.ObjectRef, error: Exception) -> None:
        """Nothing to repair: Ray replaces lost workers itself."""

    def progress(self) -> tuple[list[float], list[int]]:
        """Every task's latest progress (the last values of the finished ones)."""
        latest: ray.ObjectRef[tuple[list[float], list[int]]] = self.sink.get.remote()
        units, stages = ray.get(latest)
        for index, (u, s) in self.final.items():
            units[index], stages[index] = u, s
        return units, stages

    def close(self, cancel: bool) -> None:
        """Cancel the tasks still running (``cancel``) and end the progress actor."""
        if cancel:
            for ref in self.index_of:
                ray.cancel(ref)
        ray.kill(self.sink)
