"""The local backend's executors: tasks in this process, or in spawned worker processes (never imports ray)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, MutableSequence, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.process import BaseProcess
from typing import Generic

from agents.tasks.backend import Job, OnProgress, T

SPAWN = multiprocessing.get_context("spawn")
"""The start method of every local worker (no forked copies of torch or NumPy thread pools)."""
STOP_SECONDS = 3.0
"""How long a cancelled worker gets to end after SIGTERM before it is killed."""


class Here(Generic[T]):
    """Tasks run in this process, each as it is submitted; progress reaches ``on_progress`` at once."""

    window = 1

    def __init__(self, fn: Callable[..., T], jobs: Sequence[Job], on_progress: OnProgress | None):
        self.fn, self.jobs, self.on_progress = fn, jobs, on_progress
        self.units, self.stages = [0.0] * len(jobs), [0] * len(jobs)

    def submit(self, index: int) -> Future[T]:
        """Start task ``index``; return a handle."""

        def progress(units: float, stage: int = 0) -> None:
            self.units[index], self.stages[index] = units, stage
            if self.on_progress is not None:
                self.on_progress(list(self.units), list(self.stages))

        self.units[index], self.stages[index] = 0.0, 0
        done: Future[T] = Future()
        try:
            done.set_result(self.fn(progress, *self.jobs[index]))
        except Exception as e:
            done.set_exception(e)
        return done

    def wait(self, handles: set[Future[T]], timeout: float) -> set[Future[T]]:
        """Every handle (each task is done when submitted)."""
        return set(handles)

    def result(self, handle: Future[T]) -> T:
        """The task's result, or raise its error."""
        return handle.result()

    def failed(self, handle: Future[T], error: Exception) -> None:
        """Nothing to repair."""
        return None

    def progress(self) -> tuple[list[float], list[int]]:
        """Every task's latest ``progress(units, stage)``."""
        return list(self.units), list(self.stages)

    def close(self, cancel: bool) -> None:
        """Nothing to release."""
        return None


Shared = tuple[MutableSequence[float], MutableSequence[int]]
"""Every task's latest ``(units, stages)``, in shared memory (ctypes arrays of the spawn context)."""
_SHARED: Shared | None = None  # in a local worker process


def _init_pool(
    units: MutableSequence[float], stages: MutableSequence[int], initializer: Callable[[], None] | None, parent: int
) -> None:
    """Set a worker up: progress in shared memory, Ctrl-C left to the parent, an exit once the parent is gone."""
    global _SHARED
    _SHARED = (units, stages)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C reaches the whole group: the parent decides
    threading.Thread(target=_exit_with, args=(parent,), daemon=True, name="exit-with-parent").start()
    if initializer is not None:
        initializer()


def _exit_with(parent: int) -> None:
    """End this worker as soon as its parent process is gone (killed), so that no orphan goes on computing."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _end(processes: Sequence[BaseProcess]) -> None:
    """End worker processes now: SIGTERM, then SIGKILL for any still alive after :data:`STOP_SECONDS`."""
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()


def _pool_task(fn: Callable[..., T], index: int, job: Job) -> T:
    """``fn(progress, *job)`` in a worker, its progress written to the shared arrays."""
    assert _SHARED is not None, "set by _init_pool"
    units, stages = _SHARED

    def progress(done: float, stage: int = 0) -> None:
        units[index], stages[index] = done, stage

    return fn(progress, *job)


class Pool(Generic[T]):
    """Tasks in ``workers`` spawned processes, one per worker at a time; a broken pool is replaced."""

    def __init__(
        self,
        fn: Callable[..., T],
        jobs: Sequence[Job],
        workers: int,
        initializer: Callable[[], None] | None,
    ) -> None:
        self.fn, self.jobs, self.window, self.initializer = fn, jobs, workers, initializer
        self.units = SPAWN.Array("d", len(jobs), lock=False)
        self.stages = SPAWN.Array("i", len(jobs), lock=False)
        self.pool = self._new_pool()
        self.pool_of: dict[Future[T], ProcessPoolExecutor] = {}

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.window,
            mp_context=SPAWN,
            initializer=_init_pool,
            initargs=(self.units, self.stages, self.initializer, os.getpid()),
        )

    def submit(self, index: int) -> Future[T]:
        """Start task ``index``; return a handle."""
        self.units[index], self.stages[index] = 0.0, 0
        future = self.pool.submit(_pool_task, self.fn, index, self.jobs[index])
        self.pool_of[future] = self.pool
        return future

    def wait(self, handles: set[Future[T]], timeout: float) -> set[Future[T]]:
        """The handles among ``handles`` that are done, waiting up to ``timeout`` seconds for one."""
        return wait(handles, timeout=timeout, return_when=FIRST_COMPLETED).done

    def result(self, handle: Future[T]) -> T:
        """The task's result, or raise its error."""
        value = handle.result()
        del self.pool_of[handle]
        return value

    def failed(self, handle: Future[T], error: Exception) -> None:
        """Replace the pool when a worker was lost."""
        if isinstance(error, BrokenProcessPool) and self.pool_of.pop(handle) is self.pool:  # a worker was lost
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new_pool()

    def progress(self) -> tuple[list[float], list[int]]:
        """Every task's latest ``progress(units, stage)``."""
        return list(self.units), list(self.stages)

    def close(self, cancel: bool) -> None:
        """Shut the pool down; with ``cancel`` (a failure, Ctrl-C, a stop signal) end the workers now, tasks or not."""
        if not cancel:
            self.pool.shutdown(wait=True)
            return
        workers = list((self.pool._processes or {}).values())  # Python < 3.14 has no public terminate_workers
        manager: threading.Thread | None = getattr(self.pool, "_executor_manager_thread", None)  # typeshed: wrong type
        self.pool.shutdown(wait=False, cancel_futures=True)
        _end(workers)
        if manager is not None:  # let it close its wakeup pipe before exit, which else races a write to it (3.11)
            manager.join(STOP_SECONDS)
