"""The compiled rules kernel: :mod:`agurk_env._rules_kernel` made ready on import (the one compile path).

The engine (:func:`agurk_env.engine.play`, :func:`~agurk_env.engine.legal_bits`,
:func:`~agurk_env.engine.advance`) and the observation (:func:`agurk_env.observation.observe`) run
the kernel's loops over games, the one rules implementation at run time (tested against the scalar
:mod:`agurk_env.reference`, tests/test_kernel_differential.py). With numba, importing this module
compiles the kernel's entry points for the engine state's dtypes once per machine, or (every start
after that) loads them from numba's disk cache in about a second; a compile says so in one line on
stderr, with its time (:data:`LOADED`). Without numba the same functions run as plain Python.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from agurk_env import _rules_kernel as kernel

HAS_NUMBA = kernel.numba is not None
"""Whether numba is installed (the kernel runs compiled; else as plain Python)."""


def _signatures() -> dict[str, object]:
    """The one signature of each entry point: the engine state's dtypes, C-contiguous (the engine's)."""
    import numba

    t = numba.types
    i8, i16, i32, i64, b1, f32 = t.int8, t.int16, t.int32, t.int64, t.boolean, t.float32
    v64, vb = i64[::1], b1[::1]
    m = lambda dtype: dtype[:, ::1]  # noqa: E731 - (B, P) and (B, H)
    c = lambda dtype: dtype[:, :, ::1]  # noqa: E731 - (B, P, A) and (B, H, P)
    rules = t.Array(t.int64, 1, "C", readonly=True)  # rule_array's
    legal_args = (m(i16), c(i8), v64, v64, v64, v64, v64, v64, vb)
    play_args: tuple[Any, ...] = (
        c(i8),
        m(i16),
        m(i16),
        c(i8),
        m(i8),
        m(i8),
        m(b1),
        m(i64),
        v64,
        m(i32),
        m(i16),
        m(i16),
        m(i32),
    )
    play_args += (m(b1), m(b1), m(b1), v64, v64, v64, v64, v64, v64, v64, vb, vb, vb)
    observe_args = (c(i8), m(i16), c(i8), m(b1), m(i32), m(i16), m(i16), v64, v64, v64, v64, v64, v64, vb)
    advance_args: tuple[Any, ...] = (
        c(i8),
        m(i16),
        m(i16),
        c(i8),
        m(b1),
        m(i64),
        v64,
        m(i32),
        m(i16),
        m(i16),
        m(i32),
        m(b1),
    )
    advance_args += (v64, v64, v64, v64, v64, vb, vb, v64, t.uint64, i64, b1)
    return {
        "advance_games": i64(rules, v64, *advance_args),
        "legal_all": t.void(rules, *legal_args, v64, i8[::1]),
        "play_games": t.void(rules, *play_args, v64, v64),
        "observe_all": t.void(rules, v64, f32[::1], *observe_args, v64, f32[:, ::1]),
        "takes_all": t.void(rules, v64, v64, v64, vb, m(b1)),
    }


def fresh_cache(module: ModuleType) -> None:
    """Forget the disk cache of ``module``'s compiled functions when ``_rules_kernel.py`` changed since it was made.

    numba checks a cached function against its own file only, and a function that calls the kernel
    (the solver's search, the fictive player's guard loop) has the kernel's constants and functions
    compiled into it: a stamp of the kernel's source beside ``module``'s cache files says which
    kernel they were compiled against. No-op without numba or for the kernel itself.
    """
    if not HAS_NUMBA or module is kernel:
        return
    functions = [f for f in vars(module).values() if getattr(f, "_cache", None) is not None and hasattr(f, "py_func")]
    functions = [f for f in functions if f.py_func.__module__ == module.__name__]
    if not functions:
        return
    digest = hashlib.sha256(Path(kernel.__file__).read_bytes()).hexdigest()
    stamp = Path(functions[0]._cache.cache_path) / f"{module.__name__}.rules-kernel.sha256"
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    for function in functions:
        function._cache.flush()
    try:
        stamp.write_text(digest)
    except OSError:  # a read-only cache: every start compiles, as numba does there
        pass


def load(
    module: ModuleType, signatures: Callable[[], dict[str, object]], what: str, frozen: bool = False
) -> dict[str, float | bool] | None:
    """Compile the entry points of ``module`` for their signatures, in order, or load them from numba's disk cache.

    The one compile path of the kernels: this one on import, :mod:`agurk_env._solver_kernel` on
    the exact solver's first use. ``signatures`` gives each entry point's (it imports numba).
    ``frozen``: each entry point then compiles for no other signature, so later calls convert to
    it (numba's disk cache cannot load back a recursive function compiled for two signatures,
    numba issue 6061). A compile says so on stderr; ``None`` without numba.
    """
    if not HAS_NUMBA:
        return None
    fresh_cache(module)
    start = time.perf_counter()
    entry_points = {getattr(module, name): signature for name, signature in signatures().items()}
    for function, signature in entry_points.items():
        function.compile(signature)
        if frozen:
            function.disable_compile()
    seconds = time.perf_counter() - start
    from_cache = not any(function.stats.cache_misses for function in entry_points)
    if not from_cache:
        logging.getLogger(__name__).warning(
            "agurk_env: compiled the %s in %.1f s (numba's disk cache keeps it for later starts)", what, seconds
        )
    return {"seconds": seconds, "from_cache": from_cache}


LOADED = load(kernel, _signatures, "rules kernel")
"""How the kernel was made ready on import: ``{"seconds": ..., "from_cache": ...}``; ``None`` without numba."""
