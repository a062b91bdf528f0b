"""What the task runner's parts share: the backends, the task signatures, the errors, the executor protocol."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar, get_args

RETRIES = 2
"""How many times a failed or lost task is run again before :class:`TaskError`."""
BackendName = Literal["local", "ray"]
BACKENDS: tuple[str, ...] = get_args(BackendName)
"""Where tasks run: worker processes on this machine, or a Ray cluster."""
TaskProgress = Callable[..., None]
"""``progress(units, stage=0)``, called by a task: its work done so far and what it does now."""
OnProgress = Callable[[list[float], list[int]], None]
"""``on_progress(units, stages)``: every task's latest ``progress`` values, in task order."""
Job = tuple[object, ...]
"""One task's picklable arguments (after its ``progress``)."""
T = TypeVar("T")
"""What a task returns."""
T_co = TypeVar("T_co", covariant=True)
H = TypeVar("H", bound=Hashable)
"""An executor's handle of a running task."""


class TaskError(RuntimeError):
    """A task that failed on every attempt (one line: the task, its attempts and its last error)."""


class BackendError(ValueError):
    """A backend that cannot be used: ray not installed, a cluster that cannot be reached (one line)."""


@dataclass(frozen=True)
class Backend:
    """Where tasks run: ``local`` processes, or ``ray`` (a local instance or ``address``)."""

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


class Executor(Protocol[H, T_co]):
    """What the task runner drives: a backend's way to start tasks, wait for them and read their progress.

    ``H``: its handles of running tasks; ``T_co``: what the tasks return.
    """

    window: int
    """Tasks in flight at most."""

    def submit(self, index: int) -> H:
        """Start task ``index``; return a handle."""

    def wait(self, handles: set[H], timeout: float) -> set[H]:
        """The handles among ``handles`` that are done, waiting up to ``timeout`` seconds for one."""

    def result(self, handle: H) -> T_co:
        """The task's result, or raise its error."""

    def failed(self, handle: H, error: Exception) -> None:
        """Note a failed task before it is run again (e.g. replace a broken pool)."""

    def progress(self) -> tuple[list[float], list[int]]:
        """Every task's latest ``progress(units, stage)``."""

    def close(self, cancel: bool) -> None:
        """Release the workers; with ``cancel`` stop the tasks still running where the backend can."""
