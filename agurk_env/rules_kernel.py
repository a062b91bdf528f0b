"""The compiled rules kernel: :mod:`agurk_env._rules_kernel` compiled with numba, and the rules laid out for it.

The engine (:func:`agurk_env.engine.play`, :func:`~agurk_env.engine.legal_bits`,
:func:`~agurk_env.engine.advance`) and the observation (:func:`agurk_env.observation.observe`) run
the kernel's loops over games when numba is installed (:func:`active` says when), and their NumPy
vectorisation otherwise (or with ``AGURK_JIT=0``); the two give the same states and vectors
(tests/test_kernel_differential.py). The kernel is compiled once per machine: numba keeps the
machine code in its disk cache, so later starts only load it (:func:`warm_up` says which happened).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from agurk_env import _rules_kernel as kernel

if TYPE_CHECKING:
    from agurk_env.engine import Tables

HAS_NUMBA = importlib.util.find_spec("numba") is not None
"""Whether numba is installed (the compiled path is available)."""
JIT_ENV = "AGURK_JIT"
"""Environment variable: ``0`` keeps the engine and the observation on their NumPy path even with numba."""
ENABLED = HAS_NUMBA and os.environ.get(JIT_ENV, "1") != "0"
"""Whether the engine and the observation run the compiled kernel (read once, at import; see :func:`active`)."""
LOAD_AFTER_S = 1.0
"""Seconds of engine work on NumPy after which a process starts loading the compiled kernel, in a thread."""
_loaded: ModuleType | None = None
_numpy_s = 0.0
_loader: threading.Thread | None = None
_lock = threading.Lock()
_BEAT_CHOICES = ("forced", "nearest", "optional")
_ACE_LOCKS = ("none", "led", "any")


def rule_array(sp: Tables) -> np.ndarray:
    """The engine's tables and flags in the kernel's layout (read-only int64; see :mod:`agurk_env._rules_kernel`)."""
    out = np.zeros(kernel.SIZE, dtype=np.int64)
    tables = (
        (kernel.STRENGTH, sp.strength[:-1]),
        (kernel.STRENGTH + kernel.W, sp.strength_last[:-1]),
        (kernel.POINTS_OF, sp.points_of),
        (kernel.POINTS_OF + kernel.W, sp.points_of_last),
        (kernel.AT_LEAST, sp.at_least),
        (kernel.AT_LEAST + kernel.W, sp.at_least_last),
        (kernel.WEAKER, sp.weaker),
        (kernel.WEAKER + kernel.W, sp.weaker_last),
        (kernel.POINTS_LAST, sp.points_last[:-1]),
        (kernel.SHOWN, sp.shown),
        (kernel.SHOWN + kernel.S, sp.shown_last),
    )
    for offset, table in tables:
        out[offset : offset + table.size] = table
    out[kernel.FLAGS : kernel.SIZE] = (
        sp.players,
        sp.hand_size,
        sp.ace_low,
        sp.low_last,
        sp.not_equal,
        sp.not_equal_last,
        sp.target_previous,
        _BEAT_CHOICES.index(sp.beat_choice),
        _ACE_LOCKS.index(sp.ace_lock),
        sp.twos,
        sp.every_trick,
        sp.ties_all,
        sp.lives,
        sp.limit,
        sp.exceed,
        sp.rebuys,
        sp.rebuy_min_others,
        sp.first_out,
        sp.actions,
        sp.dealer_leads,
    )
    out.flags.writeable = False
    return out


def _signatures() -> dict[str, Any]:
    """The one signature of each entry point: the engine state's dtypes, C-contiguous (others take the NumPy path)."""
    import numba

    t = numba.types
    i8, i16, i32, i64, b1, f32 = t.int8, t.int16, t.int32, t.int64, t.boolean, t.float32
    v64, vb = i64[::1], b1[::1]
    m = lambda dtype: dtype[:, ::1]  # noqa: E731 - (B, P) and (B, H)
    c = lambda dtype: dtype[:, :, ::1]  # noqa: E731 - (B, P, A) and (B, H, P)
    rules = t.Array(t.int64, 1, "C", readonly=True)  # rule_array's
    legal_args = (m(i16), c(i8), v64, v64, v64, v64, v64, v64, vb)
    play_args = (c(i8), m(i16), m(i16), c(i8), m(i8), m(i8), m(b1), m(i64), v64, m(i32), m(i16), m(i16), m(i32))
    play_args += (m(b1), m(b1), m(b1), v64, v64, v64, v64, v64, v64, v64, vb, vb, vb)
    observe_args = (c(i8), m(i16), c(i8), m(b1), m(i32), m(i16), m(i16), v64, v64, v64, v64, v64, v64, vb)
    advance_args = (c(i8), m(i16), m(i16), c(i8), m(b1), m(i64), v64, m(i32), m(i16), m(i16), m(i32), m(b1))
    advance_args += (v64, v64, v64, v64, v64, vb, vb, v64, t.uint64, i64, b1)
    return {
        "advance_games": i64(rules, v64, *advance_args),
        "legal_all": t.void(rules, *legal_args, v64, i8[::1]),
        "play_games": t.void(rules, *play_args, v64, v64),
        "observe_all": t.void(rules, v64, f32[::1], *observe_args, v64, f32[:, ::1]),
    }


def active() -> ModuleType | None:
    """The compiled kernel for the engine's next call, or ``None`` for its NumPy path.

    The kernel once it is loaded (while :data:`ENABLED`). Before that NumPy: once the engine has
    worked :data:`LOAD_AFTER_S` seconds on NumPy (:data:`numpy_timer`), a thread loads the kernel
    (numba's import and disk-cache load, about a second; the first compile on a machine, several)
    while the engine goes on with NumPy, and the process waits for it at exit (a first compile
    ends in the disk cache). So a run whose engine work is short never pays for numba, and one
    that plays a lot runs compiled as soon as the kernel is there; both paths give the same results.
    """
    global _loader
    if not ENABLED:
        return None
    if _loaded is None and _loader is None and _numpy_s >= LOAD_AFTER_S:
        _loader = threading.Thread(target=_load_quietly, name="agurk-rules-kernel", daemon=True)
        _loader.start()
        atexit.register(_loader.join)  # a first compile finishes into the disk cache, for the next start
    return _loaded


class _NumpyTimer:
    """Adds the time of each ``with`` block to the engine's work on NumPy (see :func:`active`)."""

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        global _numpy_s
        _numpy_s += time.perf_counter() - self.start


numpy_timer = _NumpyTimer()
"""``with numpy_timer:`` around the engine's NumPy path (one thread at a time: the sum is a heuristic)."""


def _after_fork_in_child() -> None:
    """A forked child starts its own load if the parent's had not finished (the loader thread is not copied)."""
    global _loader, _lock
    if _loaded is None:
        _loader, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _load_quietly() -> None:
    """:func:`compiled`, in the loader thread: a failure leaves the engine on NumPy, with one warning."""
    try:
        compiled()
    except Exception as e:  # any failure to compile only costs speed
        warnings.warn(f"the compiled rules kernel could not be loaded, the engine stays on NumPy: {e}", stacklevel=1)


def compiled() -> ModuleType:
    """A second copy of the kernel module with its functions compiled by ``numba.njit`` (cached on disk).

    The entry points get their one signature (compiled now, or loaded from numba's cache); the
    functions they call are compiled into them. Built once per process; a second caller waits for it.
    """
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _build()
    return _loaded


def _build() -> ModuleType:
    """Compile (or load) the kernel module copy."""
    import numba

    spec = importlib.util.spec_from_file_location(f"{kernel.__name__}_jit", kernel.__file__)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's disk cache imports the module by name
    spec.loader.exec_module(module)
    for name in ("lowest", "choose", "finish_rounds", "mix64", "deal_order", "next_in"):
        setattr(module, name, numba.njit(cache=True)(getattr(module, name)))
    for name, signature in _signatures().items():
        setattr(module, name, numba.njit(signature, cache=True)(getattr(module, name)))
    module.random_play = numba.njit(cache=True)(module.random_play)  # the benchmark reference: compiled when called
    return module


def warm_up() -> dict[str, float | bool]:
    """Compile the kernel (or load it from numba's disk cache): ``{"seconds": ..., "from_cache": ...}``."""
    start = time.perf_counter()
    module = compiled()
    return {"seconds": time.perf_counter() - start, "from_cache": bool(module.play_games.stats.cache_hits)}


@contextlib.contextmanager
def use(enabled: bool) -> Iterator[None]:
    """Run the engine and the observation on the compiled kernel (``True``, loaded now) or on NumPy, then restore.

    For benchmarks and tests that measure or compare both paths in one process (not thread-safe).
    """
    global ENABLED
    if enabled and not HAS_NUMBA:
        raise RuntimeError("the compiled kernel needs numba (pip install numba)")
    if enabled:
        compiled()
    before, ENABLED = ENABLED, enabled
    try:
        yield
    finally:
        ENABLED = before
