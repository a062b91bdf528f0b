"""Agurk (Gurka, "Cucumber"): rules, a vectorized NumPy engine and game records.

The environments load on first use (they import PettingZoo, gymnasium and, for
``sb3_vec_env``, stable-baselines3): ``env`` and ``raw_env`` (PettingZoo AEC, see
:mod:`agurk_env.aec_env`), ``single_agent_env`` and ``sb3_vec_env`` (see
:mod:`agurk_env.single_agent`), ``AgurkRewardWrapper`` (one policy for every seat, see
:mod:`agurk_env.wrappers`).

``gymnasium.make("Agurk-v0", rules=..., **options)`` makes the single-learner
:class:`~agurk_env.single_agent.AgurkEnv` once this package is imported. Importing it loads
neither gymnasium nor NumPy (``agurk bench`` pins NumPy's threads before NumPy loads):
the id is registered at once when gymnasium is already imported, else as soon as it is.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from agurk_env.rules import CARDS, OPTION_NAMES, PRESETS, Rules, RulesError

GYMNASIUM_ID = "Agurk-v0"
"""The gymnasium id of :class:`agurk_env.single_agent.AgurkEnv`."""

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


def _register(gymnasium: ModuleType) -> None:
    """Register :data:`GYMNASIUM_ID` in ``gymnasium``'s registry (once; the env module loads on ``make``)."""
    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(GYMNASIUM_ID, entry_point="agurk_env.single_agent:AgurkEnv")


class _RegisterOnImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Lets gymnasium's first import run as usual, then registers :data:`GYMNASIUM_ID` (removes itself first)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """Gymnasium's own spec with this object as its loader; ``None`` for every other module."""
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            self.loader, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        """Gymnasium's loader creates the module."""
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        """Gymnasium's loader runs it (and is put back as its loader), then the id is registered."""
        module.__loader__ = module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _register(module)


if "gymnasium" in sys.modules:
    _register(sys.modules["gymnasium"])
else:
    sys.meta_path.insert(0, _RegisterOnImport())
