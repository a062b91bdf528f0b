"""Run independent tasks on a backend, with retries and progress: worker processes here (``local``) or Ray (``ray``).

A task is ``fn(progress, *job)``: ``fn`` a module-level function, ``job`` its picklable
arguments. Everything a task draws must be seeded from its arguments, never from the worker
or the order tasks run in, so :func:`run_tasks` gives the same results, in task order, on
every backend and with any number of workers. Inside a task ``progress(units, stage=0)``
reports the work done so far (any unit the caller chooses) and a stage number; the caller
sees every task's latest values through ``on_progress(units, stages)``.

Backends (:class:`Backend`):

- ``local`` (the default): with one worker the tasks run in this process, one after the
  other; with more, in that many spawned worker processes (:data:`agents.tasks.local.SPAWN`), at most one task
  per worker at a time. The local path never imports ray.
- ``ray``: every task is submitted to Ray at once (:mod:`agents.tasks.ray_executor`, the
  only module that imports ray); with ``address`` it connects to that cluster, otherwise it starts a local
  Ray instance with ``workers`` CPUs (or uses the one already started in this process). The
  cluster's nodes must have this package installed.

Faults: a task that raises, or whose worker is lost (a killed process, a lost Ray node), is
run again, up to :data:`RETRIES` more times; a lost local worker process costs each task
then in flight one attempt. A task that fails every attempt raises :class:`TaskError`, one
line naming the task and its last error: at once (the tasks still queued are dropped, those
running are cancelled where the backend can), or with ``keep_going`` after every other task
has run.
"""

from agents.tasks.backend import (
    BACKENDS,
    LOCAL,
    RETRIES,
    Backend,
    BackendError,
    BackendName,
    OnProgress,
    TaskError,
    TaskProgress,
    one_line,
)
from agents.tasks.runner import run_tasks

__all__ = [
    "BACKENDS",
    "LOCAL",
    "RETRIES",
    "Backend",
    "BackendError",
    "BackendName",
    "OnProgress",
    "TaskError",
    "TaskProgress",
    "one_line",
    "run_tasks",
]
