"""Agurk (Gurka, "Cucumber"): rules, a vectorized NumPy engine and game records.

The environments load on first use (they import PettingZoo and, for ``sb3_vec_env``,
stable-baselines3): ``env`` and ``raw_env`` (PettingZoo AEC, see
:mod:`agurk_env.aec_env`), ``single_agent_env`` and ``sb3_vec_env`` (see
:mod:`agurk_env.single_agent`), ``AgurkRewardWrapper`` (one policy for every seat, see
:mod:`agurk_env.wrappers`).

``gymnasium.make("Agurk-v0", rules=..., opponents="guard,pimc,random", **options)`` makes the
single-learner :class:`~agurk_env.single_agent.AgurkEnv`, and ``gymnasium.make_vec("Agurk-v0",
num_envs=n, **options)`` the :class:`~agurk_env.single_agent.AgurkVectorEnv` of ``n`` games on
one engine state (its ``vector_entry_point``): importing this package registers
the id with ``gymnasium.register``, as Gymnasium 1.x expects of a package that brings
environments (``gymnasium.make("agurk_env:Agurk-v0")`` imports it first). String
opponents are built by the agent package that registered its specs (:mod:`agurk_env.specs`).
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium

from agurk_env.rules import CARDS, OPTION_NAMES, PRESETS, Rules, RulesError

GYMNASIUM_ID = "Agurk-v0"
"""The gymnasium id of :class:`agurk_env.single_agent.AgurkEnv` (and, vectorized, ``AgurkVectorEnv``)."""

_LAZY = {
    "env": "agurk_env.aec_env",
    "raw_env": "agurk_env.aec_env",
    "single_agent_env": "agurk_env.single_agent",
    "sb3_vec_env": "agurk_env.single_agent",
    "AgurkRewardWrapper": "agurk_env.wrappers",
}

__all__ = [
    "CARDS",
    "GYMNASIUM_ID",
    "OPTION_NAMES",
    "PRESETS",
    "AgurkRewardWrapper",
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


if GYMNASIUM_ID not in gymnasium.registry:  # not again when the package is reloaded
    gymnasium.register(
        GYMNASIUM_ID,
        entry_point="agurk_env.single_agent:AgurkEnv",
        vector_entry_point="agurk_env.single_agent:AgurkVectorEnv",
    )
