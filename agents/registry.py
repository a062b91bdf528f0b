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

import numpy as np

from agents.heuristics import DESCRIPTIONS, Heuristic
from agents.pimc import PIMC, Oracle
from agurk_env.agent import Agent, RandomAgent


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
    """Name of its argument (``ppo:PATH`` -> ``"PATH"``), or None when it takes none."""
    optional: bool = False
    """The argument may be left out (``pimc`` or ``pimc:worlds=N``)."""

    @property
    def usage(self) -> str:
        """How the spec is written: ``name``, ``name:ARG`` or ``name[:ARG]``."""
        if not self.arg:
            return self.name
        return f"{self.name}[:{self.arg}]" if self.optional else f"{self.name}:{self.arg}"


AGENTS: dict[str, AgentKind] = {}
"""Every known agent kind, by name."""


def register(name: str, factory: AgentFactory, help: str, arg: str | None = None, optional: bool = False) -> None:
    """Add (or replace) an agent kind; ``arg`` names its ``:ARG`` part, if any."""
    AGENTS[name] = AgentKind(name, factory, help, arg, optional)


def _search_options(spec: str, arg: str | None, defaults: dict[str, int | str]) -> dict[str, int | str]:
    """Parse ``key=value;key=value`` search options (``pimc:worlds=32;rollout=shed``) over ``defaults``."""
    options = dict(defaults)
    for item in (arg or "").split(";") if arg else []:
        key, sep, value = item.partition("=")
        if not sep or key not in defaults:
            raise AgentSpecError(f"bad option {item!r} in agent {spec!r}; options: {', '.join(defaults)} (key=value)")
        if isinstance(defaults[key], int):
            if not value.isdigit() or int(value) < 1:
                raise AgentSpecError(f"{key} in agent {spec!r} must be a positive integer, not {value!r}")
            options[key] = int(value)
        else:
            options[key] = value
    return options


def _pimc(cls: type[PIMC], defaults: dict[str, int | str]) -> AgentFactory:
    def factory(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
        options = _search_options(spec, arg, defaults)
        try:
            return cls(rng, worlds=int(options["worlds"]), rollout=str(options["rollout"]), spec=spec)
        except ValueError as err:
            raise AgentSpecError(f"agent {spec!r}: {err}") from None

    return factory


STRONGEST_HEURISTIC = "guard"
"""The heuristic that ``heuristic`` names (the strongest, measured with ``agurk evaluate``)."""

register("random", lambda spec, arg, rng: RandomAgent(rng, spec=spec), "plays a uniformly random legal card")
for _name, _help in DESCRIPTIONS.items():
    register(_name, lambda spec, arg, rng, name=_name: Heuristic(name, spec=spec), _help)
register(
    "heuristic",
    lambda spec, arg, rng: Heuristic(STRONGEST_HEURISTIC, spec=spec),
    f"the strongest heuristic ({STRONGEST_HEURISTIC})",
)
register(
    "pimc",
    _pimc(PIMC, {"worlds": 16, "rollout": "mixed"}),
    "search: samples deals consistent with what is public, rolls every legal card out (default worlds=16)",
    arg="worlds=N;rollout=shed|random|mixed",
    optional=True,
)
register(
    "oracle",
    _pimc(Oracle, {"worlds": 16, "rollout": "mixed"}),
    "CHEATING reference: the pimc search on the true deal (sees every hidden hand)",
    arg="worlds=N;rollout=...",
    optional=True,
)


def _ppo(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
    """``ppo:PATH`` (greedy) or ``ppo:PATH;sample``: a training checkpoint (or run folder) as an agent."""
    path, _, mode = (arg or "").partition(";")
    if mode not in ("", "greedy", "sample"):
        raise AgentSpecError(f"agent {spec!r}: the mode after ';' must be greedy or sample, not {mode!r}")
    try:
        from agents.policy import CheckpointError, PolicyAgent  # torch is an optional dependency
    except ImportError as e:
        raise AgentSpecError(f"agent {spec!r} needs torch: pip install -e \".[rl]\" ({e.name} missing)") from None
    try:
        agent = PolicyAgent.from_path(path, rng, greedy=mode != "sample")
    except CheckpointError as e:
        raise AgentSpecError(f"agent {spec!r}: {e}") from None
    agent.spec = spec
    return agent


register(
    "ppo",
    _ppo,
    "a trained policy: a checkpoint file or run folder from 'agurk train' (greedy; ';sample' draws from it)",
    arg="PATH[;sample]",
)


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
    if kind.arg and not arg and not kind.optional:
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


def opponents(spec_string: str, players: int) -> Callable[[int], list[Agent]]:
    """The opponents of a single-learner environment from specs: a factory ``seed -> players - 1 agents``.

    ``spec_string`` is one spec for every other seat or ``players - 1`` comma-separated
    specs (the seats after the learner's, clockwise); a bad spec is refused now. The
    agent of the ``r``-th seat after the learner draws from ``default_rng([seed, r])``;
    one spec for every seat gives one agent object for all of them.
    """
    specs = [s.strip() for s in spec_string.split(",")]
    if len(specs) not in (1, players - 1):
        raise AgentSpecError(
            f"give one opponent spec or {players - 1} (one per other seat), not {len(specs)}: {spec_string!r}"
        )
    for spec in dict.fromkeys(specs):
        parse_spec(spec)

    def build(seed: int) -> list[Agent]:
        agents = [make_agent(spec, seed, r + 1) for r, spec in enumerate(specs)]
        return agents * (players - 1) if len(specs) == 1 else agents

    return build

