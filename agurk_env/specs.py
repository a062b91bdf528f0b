"""Opponents named by agent specs (``"guard,pimc,random"``): built by whichever agent package registered the specs.

The environments take ``opponents="guard"`` as readily as agent objects, yet this layer
knows no agent but the random one. An agent package fills this registry when it is
imported (``agents`` does: :func:`register` with its ``opponents`` builder); a package
that ``pip`` installed declares itself under the :data:`PLUGIN_GROUP` entry-point group, and
the first lookup that finds the registry empty loads those (the way plugins are found,
with no import of ours going up the layers). Without any, a spec is refused in one line
naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.metadata import entry_points

from agurk_env.agent import Agent

OpponentsBuilder = Callable[[str, int], Callable[[int], Sequence[Agent]]]
"""``build(spec_string, players)``: checks the specs now and returns a factory ``seed -> players - 1 agents``."""

PLUGIN_GROUP = "agurk_env.agents"
"""The entry-point group under which an installed agent package names the module that registers its specs."""

_BUILDERS: dict[str, OpponentsBuilder] = {}
"""The registered builders, by the name of the package that registered each."""


class SpecError(ValueError):
    """An agent spec that no registered agent package can build (one-line message)."""


def register(package: str, build: OpponentsBuilder) -> None:
    """Let ``package`` build opponents from spec strings (replaces an earlier registration of the same name)."""
    _BUILDERS[package] = build


def _load_plugins() -> None:
    """Import every module declared under :data:`PLUGIN_GROUP` (importing it registers its specs)."""
    for point in entry_points(group=PLUGIN_GROUP):
        point.load()


def opponents(spec_string: str, players: int) -> Callable[[int], Sequence[Agent]]:
    """The factory ``seed -> players - 1 agents`` of ``spec_string``, from the agent package that registered specs."""
    if not _BUILDERS:
        _load_plugins()
    if not _BUILDERS:
        raise SpecError(f"opponents {spec_string!r}: no agent package has registered agent specs (import agents)")
    build = next(reversed(_BUILDERS.values()))  # the latest registration
    return build(spec_string, players)
