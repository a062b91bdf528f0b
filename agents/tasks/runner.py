"""Run independent tasks on a backend, with retries and progress: worker processes here (``local``) or Ray (``ray``).

A task is ``fn(progress, *job)``: ``fn`` a module-level function, ``job`` its picklable
arguments. Everything a task draws must be seeded from its arguments, never from the worker
or the order tasks run in, so :func:`run_tasks` gives the same results, in task order, on
every backend and with any number of workers. Inside a task ``progress(units, stage=0)``
reports the work done so far (any unit the caller chooses) and a stage number; the caller
sees every task's latest values through ``on_progress(units, stages)``.

Backends (:class:`Backend`):

- ``local`` (the default): with one worker the tasks run in this process, one after the
  other; with more, in that many spawned worker processes (:data:`SPAWN`), at most one task
  per worker at a time. The local path never imports ray.
- ``ray``: every task is submitted to Ray at once (:mod:`agents.ray_backend`, the only module
  that imports ray); with ``address`` it connects to that cluster, otherwise it starts a local
  Ray instance with ``workers`` CPUs (or uses the one already started in this process). The
  cluster's nodes must have this package installed.

Faults: a task that raises, or whose worker is lost (a killed process, a lost Ray node), is
run again, up to :data:`RETRIES` more times; a lost local worker process costs each task
then in flight one attempt. A task that fails every attempt raises :class:`TaskError`, one
line naming the task and its last error: at once (the tasks still queued are dropped, those
running are cancelled where the backend can), or with ``keep_going`` after every other task
has run.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

SPAWN = multiprocessing.get_context("spawn")
"""The start method of every local worker (no forked copies of torch or NumPy thread pools)."""
RETRIES = 2
"""How many times a failed or lost task is run again before :class:`TaskError`."""
BackendName = Literal["local", "ray"]
BACKENDS: tuple[str, ...] = get_args(BackendName)
"""Where tasks run: worker processes on this machine, or a Ray cluster."""
TaskProgress = Callable[..., None]
"""``progress(units, stage=0)``, called by a task: its work done so far and what it does now."""
OnProgress = Callable[[list[float], list[int]], None]
"""``on_progress(units, stages)``: every task's latest ``progress`` values, in task order."""


class TaskError(RuntimeError):
    """A task that failed on every attempt (one line: the task, its attempts and its last error)."""


class BackendError(ValueError):
    """A backend that cannot be used: ray not installed, a cluster that cannot be reached (one line)."""


@dataclass(frozen=True)
class Backend:
    """Where :func:`run_tasks` runs tasks: ``local`` processes, or ``ray`` (a local instance or ``address``)."""

    kind: BackendName = "local"
    address: str | None = None
    """``ray`` only: the cluster to connect to (``ray.init(address=...)``: ``auto``, ``HOST:PORT``, ``ray://...``)."""

    def __post_init__(self) -> None:
        if self.kind not in BACKENDS:
            raise BackendError(f"backend must be one of {', '.join(BACKENDS)}, not {self.kind!r}")
        if self.address is not None and self.kind != "ray":
            raise BackendError("a Ray address needs the ray backend")


LOCAL = Backend()
"""The default backend: worker processes on this machine."""


def one_line(error: BaseException) -> str:
    """``Type: message`` of an exception on one line."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class Executor(Protocol):
    """What :func:`run_tasks` drives: a backend's way to start tasks, wait for them and read their progress."""

    window: int
    """Tasks in flight at most."""

    def submit(self, index: int) -> Any:
        """Start task ``index``; return a handle."""

    def wait(self, handles: set[Any], timeout: float) -> set[Any]:
        """The handles among ``handles`` that are done, waiting up to ``timeout`` seconds for one."""

    def result(self, handle: Any) -> Any:
        """The task's result, or raise its error."""

    def failed(self, handle: Any, error: Exception) -> None:
        """Note a failed task before it is run again (e.g. replace a broken pool)."""

    def progress(self) -> tuple[list[float], list[int]]:
        """Every task's latest ``progress(units, stage)``."""

    def close(self, cancel: bool) -> None:
        """Release the workers; with ``cancel`` stop the tasks still running where the backend can."""


class _Here:
    """Tasks run in this process, each as it is submitted; progress reaches ``on_progress`` at once."""

    window = 1

    def __init__(self, fn: Callable[..., Any], jobs: Sequence[tuple[Any, ...]], on_progress: OnProgress | None):
        self.fn, self.jobs, self.on_progress = fn, jobs, on_progress
        self.units, self.stages = [0.0] * len(jobs), [0] * len(jobs)

    def submit(self, index: int) -> Future:
        def progress(units: float, stage: int = 0) -> None:
            self.units[index], self.stages[index] = units, stage
            if self.on_progress is not None:
                self.on_progress(list(self.units), list(self.stages))

        self.units[index], self.stages[index] = 0.0, 0
        done: Future = Future()
        try:
            done.set_result(self.fn(progress, *self.jobs[index]))
        except Exception as e:
            done.set_exception(e)
        return done

    def wait(self, handles: set[Any], timeout: float) -> set[Any]:
        return set(handles)

    def result(self, handle: Future) -> Any:
        return handle.result()

    def failed(self, handle: Any, error: Exception) -> None:
        return None

    def progress(self) -> tuple[list[float], list[int]]:
        return list(self.units), list(self.stages)

    def close(self, cancel: bool) -> None:
        return None


_SHARED: Any = None  # in a local worker process: (units, stages) of every task, in shared memory


def _init_pool(units: Any, stages: Any, initializer: Callable[[], None] | None) -> None:
    global _SHARED
    _SHARED = (units, stages)
    if initializer is not None:
        initializer()


def _pool_task(fn: Callable[..., Any], index: int, job: tuple[Any, ...]) -> Any:
    units, stages = _SHARED

    def progress(done: float, stage: int = 0) -> None:
        units[index], stages[index] = done, stage

    return fn(progress, *job)


class _Pool:
    """Tasks in ``workers`` spawned processes, one per worker at a time; a broken pool is replaced."""

    def __init__(
        self,
        fn: Callable[..., Any],
        jobs: Sequence[tuple[Any, ...]],
        workers: int,
        initializer: Callable[[], None] | None,
    ) -> None:
        self.fn, self.jobs, self.window, self.initializer = fn, jobs, workers, initializer
        self.units = SPAWN.Array("d", len(jobs), lock=False)
        self.stages = SPAWN.Array("i", len(jobs), lock=False)
        self.pool = self._new_pool()
        self.pool_of: dict[Future, ProcessPoolExecutor] = {}

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.window, mp_context=SPAWN, initializer=_init_pool, initargs=(self.units, self.stages, self.initializer)
        )

    def submit(self, index: int) -> Future:
        self.units[index], self.stages[index] = 0.0, 0
        future = self.pool.submit(_pool_task, self.fn, index, self.jobs[index])
        self.pool_of[future] = self.pool
        return future

    def wait(self, handles: set[Any], timeout: float) -> set[Any]:
        return wait(handles, timeout=timeout, return_when=FIRST_COMPLETED).done

    def result(self, handle: Future) -> Any:
        value = handle.result()
        del self.pool_of[handle]
        return value

    def failed(self, handle: Future, error: Exception) -> None:
        if isinstance(error, BrokenProcessPool) and self.pool_of.pop(handle) is self.pool:  # a worker was lost
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new_pool()

    def progress(self) -> tuple[list[float], list[int]]:
        return list(self.units), list(self.stages)

    def close(self, cancel: bool) -> None:
        self.pool.shutdown(wait=True, cancel_futures=cancel)


def run_tasks(
    fn: Callable[..., Any],
    jobs: Sequence[tuple[Any, ...]],
    workers: int = 1,
    backend: Backend = LOCAL,
    *,
    names: Sequence[str] | None = None,
    initializer: Callable[[], None] | None = None,
    on_progress: OnProgress | None = None,
    on_result: Callable[[int, Any], None] | None = None,
    keep_going: bool = False,
    every: float = 0.2,
) -> list[Any]:
    """``fn(progress, *job)`` for every job on ``backend``; the results in job order.

    ``workers`` is the local worker processes (one: this process), or the CPUs of the local
    Ray instance the ray backend starts. ``names`` label the tasks in errors (default
    ``task N``). ``initializer()`` runs in each worker process (under Ray before each task)
    before its tasks, not in this process. ``on_progress(units, stages)`` is called in this
    process as the tasks report (every ``every`` seconds from other processes);
    ``on_result(index, result)`` as each task finishes, in finishing order (e.g. to store it).
    A task is run again up to :data:`RETRIES` times; one that still fails raises :class:`TaskError`
    at once, or with ``keep_going`` after every other task has run.
    """
    if not jobs:
        return []
    names = list(names) if names is not None else [f"task {i}" for i in range(len(jobs))]
    executor: Executor
    if backend.kind == "ray":
        try:
            from agents import ray_backend
        except ImportError as e:
            raise BackendError(
                f'the ray backend needs {e.name or "ray"}, from the ray extra: run pip install -e ".[ray]" '
                "in the root of the clone"
            ) from None
        executor = ray_backend.RayExecutor(fn, jobs, workers, backend.address, initializer)
    elif workers <= 1 or len(jobs) <= 1:
        executor = _Here(fn, jobs, on_progress)
    else:
        executor = _Pool(fn, jobs, min(workers, len(jobs)), initializer)
    results: list[Any] = [None] * len(jobs)
    attempts = [0] * len(jobs)
    queue = deque(range(len(jobs)))
    running: dict[Any, int] = {}
    failure: tuple[int, Exception] | None = None
    cancel = True
    try:
        while (queue or running) and (failure is None or keep_going):
            while queue and len(running) < executor.window:
                index = queue.popleft()
                running[executor.submit(index)] = index
            for handle in executor.wait(set(running), every):
                index = running.pop(handle)
                try:
                    value = executor.result(handle)
                except Exception as e:
                    attempts[index] += 1
                    executor.failed(handle, e)
                    if attempts[index] <= RETRIES:
                        queue.appendleft(index)
                    elif failure is None:
                        failure = (index, e)
                    continue
                results[index] = value
                if on_result is not None:
                    on_result(index, value)
            if on_progress is not None and not isinstance(executor, _Here):
                on_progress(*executor.progress())
        cancel = failure is not None
    finally:
        executor.close(cancel)
    if failure is not None:
        index, error = failure
        raise TaskError(f"{names[index]} failed {attempts[index]} times; the last time: {one_line(error)}") from error
    return results
