"""Agent specs: the strings ``--agents`` takes, and the factories that build agents from them.

A spec is ``NAME`` or ``NAME:ARG`` (``ARG`` for agents that need one, e.g. a checkpoint
path). ``make_agents("random", 4, seed)`` gives every seat a random agent;
``"random,random,random"`` names one spec per seat. Seat ``s`` draws its randomness from
``np.random.default_rng([seed, s])``, so a seat's agent does not depend on the others.

New agent kinds plug in with :func:`register` (or an entry in :data:`AGENTS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from agents.random_agent import RandomAgent


@runtime_checkable
class Agent(Protocol):
    """What ``simulate`` needs from an agent: its spec string and a batched ``act``."""

    spec: str

    def act(self, legal: np.ndarray) -> np.ndarray:
        """``(k, A)`` bool legal masks in, ``(k,)`` actions out."""
        ...


class AgentSpecError(ValueError):
    """A malformed or unknown agent spec (one-line message)."""


AgentFactory = Callable[[str, str | None, np.random.Generator], Agent]
"""``factory(spec, arg, rng)``: ``spec`` is the full spec string, ``arg`` the part after ``:`` (or None)."""


@dataclass(frozen=True)
class AgentKind:
    """One registered agent kind."""

    name: str
    factory: AgentFactory
    help: str
    arg: str | None = None
    """Name of the required argument (``ppo:PATH`` -> ``"PATH"``), or None when it takes none."""

    @property
    def usage(self) -> str:
        """How the spec is written: ``name`` or ``name:ARG``."""
        return f"{self.name}:{self.arg}" if self.arg else self.name


AGENTS: dict[str, AgentKind] = {}
"""Every known agent kind, by name."""


def register(name: str, factory: AgentFactory, help: str, arg: str | None = None) -> None:
    """Add (or replace) an agent kind; ``arg`` names its required ``:ARG`` part, if any."""
    AGENTS[name] = AgentKind(name, factory, help, arg)


register("random", lambda spec, arg, rng: RandomAgent(rng, spec=spec), "plays a uniformly random legal card")


def known() -> str:
    """Return the known specs, comma-separated (for error messages)."""
    return ", ".join(kind.usage for kind in AGENTS.values())


def describe() -> list[str]:
    """One line per agent kind: its spec form and what it does (for ``agurk agents``)."""
    width = max(len(kind.usage) for kind in AGENTS.values())
    return [f"{kind.usage:<{width}}  {kind.help}" for kind in AGENTS.values()]


def parse_spec(spec: str) -> tuple[AgentKind, str | None]:
    """Split ``NAME[:ARG]`` and look the name up; raise :class:`AgentSpecError` when it is unknown."""
    spec = spec.strip()
    name, sep, arg = spec.partition(":")
    kind = AGENTS.get(name)
    if kind is None:
        raise AgentSpecError(f"unknown agent {spec!r}; known agents: {known()}")
    if kind.arg and not arg:
        raise AgentSpecError(f"agent {name!r} needs an argument: {kind.usage}")
    if sep and not kind.arg:
        raise AgentSpecError(f"agent {name!r} takes no argument, got {spec!r}")
    return kind, (arg if sep else None)


def make_agent(spec: str, seed: int, seat: int) -> Agent:
    """One agent for ``seat``, with the generator ``np.random.default_rng([seed, seat])``."""
    kind, arg = parse_spec(spec)
    return kind.factory(spec.strip(), arg, np.random.default_rng([seed, seat]))


def make_agents(spec_string: str, players: int, seed: int) -> list[Agent]:
    """One agent per seat from ``"SPEC"`` (every seat) or ``"SPEC,SPEC,..."`` (one per seat)."""
    if seed < 0:
        raise AgentSpecError(f"seed must be >= 0, not {seed}")
    specs = [s.strip() for s in spec_string.split(",")]
    if any(not s for s in specs):
        raise AgentSpecError(f"empty agent spec in {spec_string!r}; known agents: {known()}")
    if len(specs) == 1:
        specs = specs * players
    elif len(specs) != players:
        raise AgentSpecError(
            f"{len(specs)} agent specs given for {players} players; give one spec or exactly {players}"
        )
    for spec in dict.fromkeys(specs):
        parse_spec(spec)  # report a bad spec before building anything
    return [make_agent(spec, seed, seat) for seat, spec in enumerate(specs)]
