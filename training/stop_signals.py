"""Stop signals: SIGINT, SIGTERM and SIGHUP stop a run like Ctrl-C, never mid-checkpoint.

:class:`Signals` raises :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread. It is the
``stops`` of :func:`training.run.execute` (and of :func:`training.train.train`), which saves ``latest.pt``
when one arrives and holds a signal back while a checkpoint is being written: a script that trains under
``with Signals() as stops:`` is stopped by ``kill`` as by Ctrl-C, its checkpoint whole. :func:`agurk.cli.main`
enters it around every command, so a command's ``except KeyboardInterrupt`` (which ends its worker
processes, keeps its outputs whole and says :func:`stopped`) handles a ``kill`` as it handles Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
"""The signals that stop training and save ``latest.pt`` (those the platform has)."""


class Interrupted(KeyboardInterrupt):
    """Training stopped by the signal ``signum`` (a KeyboardInterrupt, so whatever handles Ctrl-C handles it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_number(stop: KeyboardInterrupt) -> int:
    """The signal behind ``stop``: its ``signum``, or SIGINT for a plain KeyboardInterrupt."""
    return int(getattr(stop, "signum", signal.SIGINT))


def stopped(stop: KeyboardInterrupt, detail: str = "") -> int:
    """Say in one line that ``stop`` (Ctrl-C or a stop signal) ended the command, with ``detail``; the exit status.

    The frames it interrupted are let go first, quietly: an object they were building may fail in its
    ``__del__`` (llvmlite's, when the stop came while numba compiled), which is no error of the command.
    """
    hook, sys.unraisablehook = sys.unraisablehook, lambda info: None
    try:
        stop.__traceback__ = None
    finally:
        sys.unraisablehook = hook
    signum = signal_number(stop)
    _note(f"interrupted by {signal.Signals(signum).name}{detail}")
    return 128 + signum


def _note(text: str) -> None:
    """One ``agurk: ...`` line on stderr, safe inside a signal handler (one unbuffered write, no ``print``)."""
    with contextlib.suppress(OSError):
        os.write(2, f"agurk: {text}\n".encode())


class Signals:
    """While entered: SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` in the main thread, like Ctrl-C.

    Inside :meth:`held` (a checkpoint being written) a signal is noted on stderr and raised
    when the outermost block ends, so the file is complete first. After :meth:`stop` (the
    final checkpoint) every signal is only noted, until the outermost ``with`` ends (the
    handlers are installed once, however deeply entered). A signal the process ignores
    (SIGHUP under ``nohup``) stays ignored; outside the main thread nothing is installed.
    A stop raised where Python cannot raise it (a ctypes callback of numba's compiler, a
    ``__del__``: it would be printed and dropped) is sent again, until it stops the command.
    """

    def __init__(self) -> None:
        self.stopping = False
        self._depth = 0
        self._held = 0
        self._pending: int | None = None
        self._previous: dict[int, Any] = {}
        self._unraisable: Callable[[sys.UnraisableHookArgs], object] | None = None

    def __enter__(self) -> Signals:
        self._depth += 1
        if self._depth == 1 and threading.current_thread() is threading.main_thread():
            for name in STOP_SIGNALS:
                signum = getattr(signal, name, None)
                if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._handle)
            self._unraisable, sys.unraisablehook = sys.unraisablehook, self._dropped
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)
            self._previous.clear()
            if self._unraisable is not None:
                sys.unraisablehook, self._unraisable = self._unraisable, None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self._held:
            _note(f"{name} received while writing a checkpoint; stopping once it is written")
            if self._pending is None:
                self._pending = signum
        elif self.stopping:
            _note(f"{name} received; already stopping")
        else:
            self.stopping = True
            raise Interrupted(signum)

    def _dropped(self, info: sys.UnraisableHookArgs) -> None:
        """An exception Python could not raise: a stop of ours is sent again, anything else reported as before."""
        if isinstance(info.exc_value, Interrupted) and self._unraisable is not None:
            self.stopping = False
            again = threading.Timer(0.01, os.kill, (os.getpid(), info.exc_value.signum))  # once out of this hook
            again.daemon = True
            again.start()
        elif self._unraisable is not None:
            self._unraisable(info)

    def stop(self) -> None:
        """From now on, only note signals (the run is stopping or done)."""
        self.stopping = True

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold signals back for the block; one that arrived is raised once the outermost block ends."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
        if not self._held and self._pending is not None:
            signum, self._pending = self._pending, None
            if not self.stopping:
                self.stopping = True
                raise Interrupted(signum)
