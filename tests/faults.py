"""Faults injected into sweep tasks by the tests (monkeypatched in; the production code has no hook)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skill import sweep


class InjectedFault(RuntimeError):
    """The failure :func:`fail_task` injects."""


def failing_point(key: str, times: int, counter: Path) -> Callable[..., Any]:
    """``skill.sweep.run_point``, but task ``key`` raises on its first ``times`` attempts (counted in ``counter``).

    The count lives in a file, so it adds up over restarts and in whichever worker runs the task.
    """
    real = sweep.run_point

    def run_point(progress: Any, point: Any, *rest: Any) -> Any:
        if point.key == key:
            failed = int(counter.read_text()) if counter.is_file() else 0
            if failed < times:
                counter.parent.mkdir(parents=True, exist_ok=True)
                counter.write_text(str(failed + 1))
                raise InjectedFault(f"fault {failed + 1} of {times} injected into {key}")
        return real(progress, point, *rest)

    return run_point


def fail_task(monkeypatch: pytest.MonkeyPatch, key: str, counter: Path, times: int = 1) -> None:
    """Make the sweep task ``key`` fail its first ``times`` attempts (until the test ends)."""
    monkeypatch.setattr(sweep, "run_point", failing_point(key, times, counter))
