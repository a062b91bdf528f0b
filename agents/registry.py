"""Agent specs: the strings ``--agents`` takes, and the factories that build agents from them.

A spec is ``NAME`` or ``NAME:ARG`` (``ARG`` for agents that need one, e.g. a checkpoint
path, or the ``key=value;key=value`` options a kind declares: ``pimc:worlds=32;eval=exact``).
``make_agents("random", 4, seed)`` gives every seat a random agent;
``"random,random,random"`` names one spec per seat. Seat ``s`` draws its randomness from
``np.random.default_rng([seed, s])``, so a seat's agent does not depend on the others.

New agent kinds plug in with :func:`register` (or an entry in :data:`AGENTS`). A kind with
options declares them once, as a dataclass of :mod:`agurk_env.options`; the registry parses
specs with it, and ``agurk agents`` and the docs (:func:`kinds`) read it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar, overload

import numpy as np

from agents.best import EVERY_TRICK_SEARCH, POLICY_FROM, SEARCH, Best
from agents.fictive import Fictive, FictiveOptions
from agents.heuristics import DESCRIPTIONS, Heuristic
from agents.search import PIMC, GuidedOptions, Oracle, OracleOptions, PimcOptions
from agurk_env import options as declared_options
from agurk_env.agent import Agent, RandomAgent
from agurk_env.install import install
from agurk_env.options import OptionError


class AgentSpecError(ValueError):
    """A malformed or unknown agent spec (one-line message)."""


_Options = TypeVar("_Options")

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
    options: type | None = None
    """The dataclass that declares its ``key=value;...`` options (:mod:`agurk_env.options`), if any."""

    @property
    def usage(self) -> str:
        """How the spec is written: ``name``, ``name:ARG`` or ``name[:ARG]``."""
        if not self.arg:
            return self.name
        return f"{self.name}[:{self.arg}]" if self.optional else f"{self.name}:{self.arg}"


AGENTS: dict[str, AgentKind] = {}
"""Every known agent kind, by name."""

OPTIONS_ARG = "KEY=VALUE;..."
"""How the usage of a kind with declared options writes its argument (``agurk agents`` lists the keys)."""


@overload
def register(
    name: str,
    factory: AgentFactory,
    help: str,
    arg: str | None = None,
    optional: bool = False,
    options: None = None,
) -> None: ...


@overload
def register(
    name: str,
    factory: Callable[[str, _Options, np.random.Generator], Agent],
    help: str,
    arg: str | None = None,
    optional: bool = False,
    *,
    options: type[_Options],
) -> None: ...


def register(
    name: str,
    factory: Callable[[str, Any, np.random.Generator], Agent],
    help: str,
    arg: str | None = None,
    optional: bool = False,
    options: type | None = None,
) -> None:
    """Add (or replace) an agent kind; ``arg`` names its ``:ARG`` part, if any.

    With ``options`` (a dataclass of :mod:`agurk_env.options`) the argument is its optional
    ``key=value;key=value`` text, and ``factory`` gets the parsed options in place of it:
    ``factory(spec, options, rng)``.
    """
    if options is not None:
        factory = _parsing(options, factory)
        arg, optional = OPTIONS_ARG, True
    AGENTS[name] = AgentKind(name, factory, help, arg, optional, options)


def _parsing(
    options: type[_Options], options_factory: Callable[[str, _Options, np.random.Generator], Agent]
) -> AgentFactory:
    """The factory of a kind with declared options: its ``key=value;...`` argument parsed, then ``options_factory``."""

    def factory(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
        try:
            parsed = declared_options.parse(options, arg)
        except OptionError as e:
            raise AgentSpecError(f"agent {spec!r}: {e}") from None
        return options_factory(spec, parsed, rng)

    return factory


def _heuristic(name: str) -> AgentFactory:
    """The factory of the heuristic ``name``."""
    return lambda spec, arg, rng: Heuristic(name, spec=spec)


STRONGEST_HEURISTIC = "guard"
"""The heuristic that ``heuristic`` names (the strongest, measured with ``agurk evaluate``)."""

register("random", lambda spec, arg, rng: RandomAgent(rng, spec=spec), "plays a uniformly random legal card")
for _name, _help in DESCRIPTIONS.items():
    register(_name, _heuristic(_name), _help)
register(
    "heuristic",
    lambda spec, arg, rng: Heuristic(STRONGEST_HEURISTIC, spec=spec),
    f"the strongest heuristic ({STRONGEST_HEURISTIC})",
)
register(
    "pimc",
    lambda spec, options, rng: PIMC(rng, options, spec=spec),
    "search: samples deals consistent with what is public and values every legal card in each by rollouts or"
    " the exact round solver (eval=exact); the card of best mean value is played",
    options=PimcOptions,
)
register(
    "oracle",
    lambda spec, options, rng: Oracle(rng, options, spec=spec),
    "CHEATING reference (sees every hidden hand): the exact solver's best card on the true deal, ties by"
    " rollouts on it, or (eval=rollout) pimc's rollouts on the true deal",
    options=OracleOptions,
)
register(
    "fictive",
    lambda spec, options, rng: Fictive(Oracle(rng, spec="oracle"), objective=options.objective, spec=spec),
    "CHEATING reference, the fictive player (sees every hidden hand): the exact best response to the table's actual"
    " opponents, every line of its own cards to the round's end searched with the others played by their agents"
    " (exact against deterministic ones, the heuristics; against any other, the oracle's card)",
    options=FictiveOptions,
)


def _ppo(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
    """``ppo:PATH`` (greedy) or ``ppo:PATH;sample``: a training checkpoint (or run folder) as an agent."""
    path, _, mode = (arg or "").partition(";")
    if mode not in ("", "greedy", "sample"):
        raise AgentSpecError(f"agent {spec!r}: the mode after ';' must be greedy or sample, not {mode!r}")
    try:
        from agents.policy import CheckpointError, PolicyAgent  # torch is an optional dependency
    except ImportError as e:
        raise AgentSpecError(f"agent {spec!r} needs torch: {install('rl')} ({e.name} missing)") from None
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


def _zoo(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
    """``zoo`` (the universal network, at any rules) or ``zoo:NAME`` (that shipped policy)."""
    try:
        from agents.policy import CheckpointError
        from agents.zoo import ZooAgent  # torch is an optional dependency
    except ImportError as e:
        raise AgentSpecError(f"agent {spec!r} needs torch: {install('rl')} ({e.name} missing)") from None
    try:
        return ZooAgent(rng, name=arg or None, spec=spec)
    except CheckpointError as e:
        raise AgentSpecError(f"agent {spec!r}: {e}") from None


register(
    "zoo",
    _zoo,
    "a shipped policy (agurk zoo lists them): zoo alone is the universal network, which plays every rule set and"
    " table; zoo:NAME one file",
    arg="NAME",
    optional=True,
)


def _guided(spec: str, options: GuidedOptions, rng: np.random.Generator) -> Agent:
    """``guided[:KEY=VALUE;...]`` (:class:`agents.guided.Guided`; torch is an optional dependency)."""
    try:
        from agents.guided import Guided
    except ImportError as e:
        raise AgentSpecError(f"agent {spec!r} needs torch: {install('rl')} ({e.name} missing)") from None
    try:
        return Guided(rng, options, spec=spec)
    except ValueError as err:  # a bad checkpoint or zoo preset
        raise AgentSpecError(f"agent {spec!r}: {err}") from None


register(
    "guided",
    _guided,
    "search on a trained policy (needs torch): pimc's sampled worlds weighted by how likely the opponents' plays"
    " were under the policy, valued by the exact solver late and before that by rollouts in which the policy plays"
    " every seat, plus prior=W times log pi of the own card",
    options=GuidedOptions,
)


def _best(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
    """``best`` (:class:`agents.best.Best`): per table the agent :func:`agents.best.choice` names, under ``spec``."""

    def make(chosen: str) -> Agent:
        kind, chosen_arg = parse_spec(chosen)
        return kind.factory(spec, chosen_arg, rng)

    return Best(make, spec=spec)


register(
    "best",
    _best,
    "the strongest fair agent measured for the table: below"
    f" {POLICY_FROM} players of a preset where the search measured stronger (agents.best.SEARCH_STRONGER), and at"
    f" the tables of agents.best.SEARCH_TABLES, {SEARCH} ({EVERY_TRICK_SEARCH} under every-trick scoring); else a zoo"
    " policy kept for exactly the table in play; else the universal network (zoo; needs torch, else the search)",
)


def known() -> str:
    """Return the known specs, comma-separated (for error messages)."""
    return ", ".join(kind.usage for kind in AGENTS.values())


class OptionDoc(TypedDict):
    """One declared option of an agent kind, as the docs show it."""

    name: str
    type: str
    default: str
    doc: str


class KindDoc(TypedDict):
    """One agent kind for the docs: its name, usage, help and declared options."""

    name: str
    usage: str
    help: str
    options: list[OptionDoc]


def kinds() -> list[KindDoc]:
    """Every agent kind for the docs: name, usage, help and its declared options (name, type, default, doc)."""
    return [
        {
            "name": kind.name,
            "usage": kind.usage,
            "help": kind.help,
            "options": [
                {"name": o.name, "type": o.kind, "default": o.shown_default, "doc": o.doc}
                for o in (declared_options.declared(kind.options).values() if kind.options else ())
            ],
        }
        for kind in AGENTS.values()
    ]


def describe(width: int = 80) -> list[str]:
    """The lines of ``agurk agents``: per kind its spec form, what it does and its options, ``width`` columns."""
    lines: list[str] = []
    for kind in kinds():
        lines.append(kind["usage"])
        lines += textwrap.wrap(kind["help"], width, initial_indent="    ", subsequent_indent="    ")
        for o in kind["options"]:
            head = f"{o['name']}={o['type']} (default {o['default']}):"
            lines += textwrap.wrap(f"{head} {o['doc']}", width, initial_indent="    - ", subsequent_indent="      ")
    return lines


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


def split_specs(spec_string: str) -> list[str]:
    """``"SPEC,SPEC,..."`` to its stripped specs; raise :class:`AgentSpecError` for an empty one."""
    specs = declared_options.split_list(spec_string)
    if any(not s for s in specs):
        raise AgentSpecError(f"empty agent spec in {spec_string!r}; known agents: {known()}")
    return specs


def make_agents(spec_string: str, players: int, seed: int) -> list[Agent]:
    """One agent per seat from ``"SPEC"`` (every seat) or ``"SPEC,SPEC,..."`` (one per seat)."""
    if seed < 0:
        raise AgentSpecError(f"seed must be >= 0, not {seed}")
    specs = split_specs(spec_string)
    if len(specs) == 1:
        specs = specs * players
    elif len(specs) != players:
        raise AgentSpecError(
            f"{len(specs)} agent specs given for {players} players; give one spec or exactly {players}"
        )
    for spec in dict.fromkeys(specs):
        parse_spec(spec)  # report a bad spec before building anything
    return introduce([make_agent(spec, seed, seat) for seat, spec in enumerate(specs)])


def introduce(agents: list[Agent]) -> list[Agent]:
    """Tell every agent that asks (``meet_table``: the fictive player) which agent plays each seat; returns them."""
    for agent in {id(agent): agent for agent in agents}.values():
        meet = getattr(agent, "meet_table", None)
        if callable(meet):
            meet(agents)
    return agents


def opponents(spec_string: str, players: int) -> Callable[[int], list[Agent]]:
    """The opponents of a single-learner environment from specs: a factory ``seed -> players - 1 agents``.

    ``spec_string`` is one spec for every other seat or ``players - 1`` comma-separated
    specs (the seats after the learner's, clockwise); a bad spec is refused now. The
    agent of the ``r``-th seat after the learner draws from ``default_rng([seed, r])``;
    one spec for every seat gives one agent object for all of them.
    """
    specs = split_specs(spec_string)
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
