"""Agurk (Gurka, "Cucumber"): rules, a vectorized NumPy engine and game records.

The environments load on first use (they import PettingZoo, gymnasium and, for
``sb3_vec_env``, stable-baselines3): ``env`` and ``raw_env`` (PettingZoo AEC, see
:mod:`agurk_env.aec_env`), ``single_agent_env`` and ``sb3_vec_env`` (see
:mod:`agurk_env.single_agent`).
"""

from __future__ import annotations

import importlib
from typing import Any

from agurk_env.rules import CARDS, OPTION_NAMES, PRESETS, Rules, RulesError

_LAZY = {
    "env": "agurk_env.aec_env",
    "raw_env": "agurk_env.aec_env",
    "single_agent_env": "agurk_env.single_agent",
    "sb3_vec_env": "agurk_env.single_agent",
}

__all__ = [
    "CARDS",
    "OPTION_NAMES",
    "PRESETS",
    "Rules",
    "RulesError",
    "env",
    "raw_env",
    "sb3_vec_env",
    "single_agent_env",
]


def __getattr__(name: str) -> Any:
    """Load the environment entry points lazily."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
