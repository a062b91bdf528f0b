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

from agents.best import EVERY_TRICK_SEARCH, POLICY_FROM, SEARCH, Best
from agents.fictive import OBJECTIVES, Fictive
from agents.heuristics import DESCRIPTIONS, Heuristic
from agents.pimc import EXACT_TRICKS, PIMC, Oracle
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
        tricks = str(options["tricks"])
        if tricks != "auto" and not (tricks.isdigit() and int(tricks) >= 1):
            raise AgentSpecError(f"tricks in agent {spec!r} must be auto or a positive integer, not {tricks!r}")
        try:
            return cls(
                rng,
                worlds=int(options["worlds"]),
                rollout=str(options["rollout"]),
                spec=spec,
                evaluation=str(options["eval"]),
                tricks=None if tricks == "auto" else int(tricks),
                tie=str(options["tie"]),
                **{key: options[key] for key in ("belief", "pool") if key in options},
            )
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
_AUTO = f"auto: {EXACT_TRICKS['last_trick']}, {EXACT_TRICKS['every_trick']} with every-trick scoring"
register(
    "pimc",
    _pimc(
        PIMC,
        {
            "worlds": 16,
            "rollout": "mixed",
            "eval": "rollout",
            "tricks": "auto",
            "tie": "rollout",
            "belief": "off",
            "pool": 64,
        },
    ),
    "search: samples deals consistent with what is public, values every legal card in each by a rollout"
    " (E=rollout; R=shed|random|mixed) or the exact round solver (E=exact: ties between best cards by rollouts,"
    f" T=lowest: the lowest card; rollouts above tricks=N tricks left, {_AUTO}); belief=models draws the worlds"
    " from pool=N sampled ones by how well the heuristic player types explain the opponents' plays this round."
    " Options are separated by ';'. Default worlds=16;rollout=mixed;eval=rollout;belief=off;pool=64",
    arg="worlds=N;rollout=R;eval=E;tricks=N;tie=T;belief=B;pool=N",
    optional=True,
)
register(
    "oracle",
    _pimc(Oracle, {"worlds": 16, "rollout": "mixed", "eval": "exact", "tricks": "auto", "tie": "rollout"}),
    "CHEATING reference (sees every hidden hand): the exact solver's best card on the true deal, ties by"
    " rollouts on it (default; tricks, tie as for pimc), or E=rollout: the pimc rollouts on the true deal",
    arg="eval=E;worlds=N;rollout=R;tricks=N;tie=T",
    optional=True,
)


def _fictive(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
    """``fictive[:objective=O]``: the best response; the maxN oracle where it cannot simulate the table."""
    objective = str(_search_options(spec, arg, {"objective": "match"})["objective"])
    if objective not in OBJECTIVES:
        raise AgentSpecError(f"objective in agent {spec!r} must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
    return Fictive(AGENTS["oracle"].factory("oracle", None, rng), objective=objective, spec=spec)


register(
    "fictive",
    _fictive,
    "CHEATING reference, the fictive player (sees every hidden hand): the exact best response to the table's actual"
    " opponents, every line of its own cards to the round's end searched with the others played by their agents"
    " (exact against deterministic ones, the heuristics; against any other, the oracle's card). objective=match"
    " (default): stay in, then the least own penalty, then put others out; knockout: others out before the own"
    " penalty; round: the least own penalty",
    arg="objective=match|knockout|round",
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
        raise AgentSpecError(f'agent {spec!r} needs torch: pip install -e ".[rl]" ({e.name} missing)') from None
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
    """``zoo`` (the shipped policy of each game's preset) or ``zoo:PRESET`` (that preset's policy)."""
    try:
        from agents.policy import CheckpointError
        from agents.zoo import ZooAgent  # torch is an optional dependency
    except ImportError as e:
        raise AgentSpecError(f'agent {spec!r} needs torch: pip install -e ".[rl]" ({e.name} missing)') from None
    try:
        return ZooAgent(rng, preset=arg or None, spec=spec)
    except CheckpointError as e:
        raise AgentSpecError(f"agent {spec!r}: {e}") from None


register(
    "zoo",
    _zoo,
    "a shipped policy (agurk zoo lists them): zoo:PRESET, or zoo alone for the policy of the preset in play",
    arg="PRESET",
    optional=True,
)
GUIDED_DEFAULTS: dict[str, int | str] = {
    "worlds": 16,
    "eval": "exact",
    "policy": "zoo",
    "belief": "on",
    "prior": "0",
    "top": "all",
    "tricks": "auto",
    "tie": "prior",
    "rollout": "greedy",
    "out": "off",
}
"""The options of ``guided`` and their defaults."""


def _guided(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
    """``guided[:worlds=N;eval=E;policy=P;belief=on|off;prior=W;top=K;tricks=N;tie=T;rollout=R;out=on|off]``."""
    options = _search_options(spec, arg, GUIDED_DEFAULTS)
    belief, out, prior, top, tricks = (str(options[key]) for key in ("belief", "out", "prior", "top", "tricks"))
    for key, value in (("belief", belief), ("out", out)):
        if value not in ("on", "off"):
            raise AgentSpecError(f"{key} in agent {spec!r} must be on or off, not {value!r}")
    try:
        weight = float(prior)
    except ValueError:
        weight = -1.0
    if not weight >= 0 or weight == float("inf"):
        raise AgentSpecError(f"prior in agent {spec!r} must be a number >= 0, not {prior!r}")
    for key, value in (("top", top), ("tricks", tricks)):
        if value not in ("all", "auto") and not (value.isdigit() and int(value) >= 1):
            word = "all" if key == "top" else "auto"
            raise AgentSpecError(f"{key} in agent {spec!r} must be {word} or a positive integer, not {value!r}")
    try:
        from agents.guided import Guided  # torch is an optional dependency
        from agents.policy import CheckpointError
    except ImportError as e:
        raise AgentSpecError(f'agent {spec!r} needs torch: pip install -e ".[rl]" ({e.name} missing)') from None
    try:
        return Guided(
            rng,
            policy=str(options["policy"]),
            worlds=int(options["worlds"]),
            evaluation=str(options["eval"]),
            belief=belief == "on",
            prior=weight,
            top=None if top == "all" else int(top),
            tricks=None if tricks == "auto" else int(tricks),
            tie=str(options["tie"]),
            moves=str(options["rollout"]),
            going_out=out == "on",
            spec=spec,
        )
    except (CheckpointError, ValueError) as err:
        raise AgentSpecError(f"agent {spec!r}: {err}") from None


register(
    "guided",
    _guided,
    "search on a trained policy (P=zoo, zoo:PRESET or a checkpoint PATH): pimc's sampled worlds weighted by how"
    " likely the opponents' plays were under the policy (belief), valued by the exact solver at most tricks=N"
    " tricks left and before that by rollouts in which the policy plays every seat (R=greedy|sample, or mixed:"
    " pimc's rollout policy; E=rollout: rollouts only), plus prior=W times log pi of the own card; top=K searches"
    " the K likeliest cards, tie=rollout settles equal exact values by rollouts; out=on charges going out in the"
    " exact values. Default worlds=16;eval=exact;policy=zoo;belief=on;prior=0;out=off",
    arg="worlds=N;eval=E;policy=P;belief=on|off;prior=W;top=K;tricks=N;tie=T;rollout=R;out=on|off",
    optional=True,
)
def _best(spec: str, arg: str | None, rng: np.random.Generator) -> Agent:
    """``best`` (:class:`agents.best.Best`): the search of :data:`agents.best.SEARCH`, or the shipped policy."""
    searches = []
    for search in (SEARCH, EVERY_TRICK_SEARCH):
        kind, search_arg = parse_spec(search)
        searches.append(kind.factory(spec, search_arg, rng))
    return Best(*searches, rng, spec=spec)


register(
    "best",
    _best,
    "the strongest fair agent measured for the table: the zoo's policy trained by expert iteration for exactly the"
    f" rules in play where there is one; else below {POLICY_FROM} players {SEARCH} ({EVERY_TRICK_SEARCH} under"
    " every-trick scoring), from there the shipped policy of the preset in play (zoo; needs torch, else the search)",
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
