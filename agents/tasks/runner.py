"""The task runner: every task on an executor in task order, with retries and progress (:func:`run_tasks`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from agents.tasks.backend import (
    LOCAL,
    RETRIES,
    Backend,
    BackendError,
    Executor,
    H,
    Job,
    OnProgress,
    T,
    TaskError,
    one_line,
)
from agents.tasks.local import Here, Pool
from agurk_env.install import install


def run_tasks(
    fn: Callable[..., T],
    jobs: Sequence[Job],
    workers: int = 1,
    backend: Backend = LOCAL,
    *,
    names: Sequence[str] | None = None,
    initializer: Callable[[], None] | None = None,
    on_progress: OnProgress | None = None,
    on_result: Callable[[int, T], None] | None = None,
    keep_going: bool = False,
    every: float = 0.2,
) -> list[T]:
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
    if backend.kind == "ray":
        try:
            from agents.tasks.ray_executor import RayExecutor
        except ImportError as e:
            raise BackendError(
                f"the ray backend needs {e.name or 'ray'}, from the ray extra: run {install('ray')} "
                "in the root of the clone"
            ) from None
        ray = RayExecutor(fn, jobs, workers, backend.address, initializer)
        return _run(ray, names, keep_going, every, on_result, on_progress)
    if workers <= 1 or len(jobs) <= 1:  # progress reaches on_progress from the tasks themselves
        return _run(Here(fn, jobs, on_progress), names, keep_going, every, on_result, None)
    pool = Pool(fn, jobs, min(workers, len(jobs)), initializer)
    return _run(pool, names, keep_going, every, on_result, on_progress)


def _run(
    executor: Executor[H, T],
    names: Sequence[str],
    keep_going: bool,
    every: float,
    on_result: Callable[[int, T], None] | None,
    on_progress: OnProgress | None,
) -> list[T]:
    """Every task of ``names`` on ``executor``, with retries (see :func:`run_tasks`); the results in task order."""
    results: dict[int, T] = {}
    attempts = [0] * len(names)
    queue = deque(range(len(names)))
    running: dict[H, int] = {}
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
            if on_progress is not None:
                on_progress(*executor.progress())
        cancel = failure is not None
    finally:
        executor.close(cancel)
    if failure is not None:
        index, error = failure
        raise TaskError(f"{names[index]} failed {attempts[index]} times; the last time: {one_line(error)}") from error
    return [results[i] for i in range(len(names))]
