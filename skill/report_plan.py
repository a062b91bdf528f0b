"""``agurk skill-report``'s work: its options, every check of them, and the report or atlas they ask for.

:func:`run_skill_report` takes the options the command parses (:class:`SkillReportOptions`): one
cell per variant (a report, :func:`skill.report.skill_report`) or, with several ``--players`` or
``--hand-sizes``, the variant atlas (:func:`skill.atlas.atlas`). :func:`plan_report` checks
every option and claims the output folder first (what the command reports before it plays);
the command that reproduces the run is :func:`agents.command.command_line` of the options.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.command import Backends, Quiet, Seeded, command_line
from agurk_env.options import OptionError, option, split_list
from agurk_env.rules import PRESETS, Rules
from skill.budget import BUDGETS, Budget, BudgetName, Policy

if TYPE_CHECKING:
    from agents.policy import Ensemble, PolicyNet
    from skill.atlas import Atlas
    from skill.cells import LeftOut, Monitor
    from skill.report import Report

UNWRITTEN = ("workers", "cache", "force", "backend", "ray_address", "quiet")
"""Options the reproducing command leaves out: they change where and how it runs, never the files."""


@dataclass(frozen=True, kw_only=True)
class SkillReportOptions(Seeded, Backends, Quiet):
    """``agurk skill-report``'s options, the report's and the atlas's (several --players or --hand-sizes)."""

    variants: str | None = option(None, metavar="PRESET,...")
    """rule presets to compare ('agurk rules' lists them; default: the budget's)"""
    players: list[int] = option([4], metavar="N[,N...]", joined=True)
    """players at every table; several make an atlas over player counts"""
    hand_sizes: list[int] | None = option(None, metavar="H[,H...]", joined=True)
    """cards dealt to each player (default: each preset's own); several make an atlas over hand sizes"""
    budget: BudgetName = "smoke"
    """how much to play and train"""
    policy: Policy | None = None
    """the ladder's learned agent: train a PPO agent per variant (train), or play the zoo's universal network
    (zoo:universal, agurk zoo) in every variant and train nothing (zoo). Default: the budget's (train)"""
    deals: int | None = option(None, low=1, metavar="D")
    """duplicate deals per ladder agent (default: the budget's)"""
    out: str | None = option(None, metavar="DIR")
    """report folder, new or empty (default: runs/skill-report-BUDGET, an atlas runs/atlas-BUDGET)"""
    checkpoint: list[str] = option([], metavar="[PRESET=]PATH")
    """put this trained checkpoint (file or run folder) on PRESET's ladder instead of training one (repeatable); PATH
    alone: on every variant's ladder not named otherwise"""
    train_config: str | None = option(None, metavar="YAML")
    """PPO settings for the trained agents (an 'agurk train' config; its preset, players, total_steps, seed and
    time_limit are replaced by the report's). Default: the quickstart's settings"""
    workers: int | None = option(None, low=1, metavar="W")
    """tasks (one per ladder agent of each variant or atlas cell) run side by side: local worker processes, or the
    CPUs of a local Ray instance (default: the CPU count)"""
    cache: str | None = option(None, metavar="DIR")
    """result cache: read each ladder table stored in DIR instead of playing it, and store each one played (keyed by
    rules, agent, checkpoint content, deals, seed and code; the files are the same with and without it). Default: no
    cache"""
    convergence: str | None = option(None, metavar="PATH[,PATH...]")
    """earlier checkpoints of the network every variant plays (--policy zoo, or --checkpoint PATH), in training
    order: each plays the same deals, and convergence.md/.json/.csv/.png give RS per training budget and the
    ranking's stability (the report's network is the last budget)"""
    force: bool = False
    """move an --out folder that is not empty aside and write a new one"""


@dataclass(frozen=True)
class ReportPlan:
    """A skill report or atlas checked before it plays: its tables, networks, settings and claimed folder."""

    options: SkillReportOptions
    variants: list[str]
    players: list[int]
    hands: list[int]
    budget: Budget
    names: list[str]
    """The tasks the progress shows: the variants, or the atlas cells' labels."""
    left_out: list[LeftOut]
    checkpoints: dict[str, str]
    convergence: list[str]
    settings: dict[str, Any] | None
    out: Path
    moved: Path | None
    """Where ``--force`` moved a used folder (None: nothing moved)."""

    @property
    def is_atlas(self) -> bool:
        """Whether several player counts or hand sizes make it an atlas."""
        return len(self.players) * max(len(self.hands), 1) > 1

    def command(self) -> str:
        """The ``agurk skill-report`` command that reproduces the files: the options, the tables spelled out."""
        given = dataclasses.replace(self.options, variants=",".join(self.variants), out=str(self.out))
        return command_line("skill-report", given, UNWRITTEN)


def plan_report(options: SkillReportOptions) -> ReportPlan:
    """Check every option (:class:`OptionError` naming it) and claim the output folder (``RunFolderError``)."""
    from agents.policy import CheckpointError
    from skill.cells import grid
    from training.config import ConfigError, config_to_dict, load_config

    options.tasks_backend()
    budget = BUDGETS[options.budget]
    variants, players, hands = _tables(options, budget.variants)
    policy = options.policy or budget.policy
    plan = dataclasses.replace(budget, policy=policy, deals=options.deals or budget.deals)
    atlas = len(players) * max(len(hands), 1) > 1
    cells, left_out = grid(variants, players, hands) if atlas else ([], [])
    if atlas and not cells:
        raise OptionError(f"no cell of the grid fits the deck: {left_out[0]['reason']}")
    for v in [] if atlas else variants:
        Rules.preset(v, players=players[0], **({"hand_size": hands[0]} if hands else {}))
    checkpoints, bare = _parse_checkpoints(options.checkpoint, variants)
    if policy == "zoo":
        _check_zoo(checkpoints, options.train_config)
    _check_networks(checkpoints, bare)
    convergence = _convergence(options.convergence, policy, checkpoints, bare, variants)
    try:
        settings = config_to_dict(load_config(options.train_config)) if options.train_config else None
    except (ConfigError, CheckpointError) as e:
        raise OptionError(str(e)) from None
    out = Path(options.out or f"runs/{'atlas' if atlas else 'skill-report'}-{options.budget}")
    names = [c.label for c in cells] if atlas else variants
    return ReportPlan(
        options,
        variants,
        players,
        hands,
        plan,
        names,
        left_out,
        checkpoints,
        convergence,
        settings,
        out,
        _claim(out, options.force),
    )


def _claim(out: Path, force: bool = False) -> Path | None:
    """Make ``out`` the new output folder: missing or empty, else (``force``) the old one moved aside; where it went."""
    from training.run_folder import claim_out

    moved = claim_out(out, force)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OptionError(f"cannot write --out {str(out)!r}: {e.strerror or e}") from None
    return moved


def run_planned(plan: ReportPlan, monitor: Monitor | None = None) -> Report | Atlas:
    """Play and write the planned report (``report.json``'s object) or atlas (``atlas.json``'s)."""
    from skill.atlas import atlas
    from skill.report import skill_report

    o = plan.options
    shared: dict[str, Any] = {  # by name: the two signatures order them differently
        "budget": plan.budget,
        "seed": o.seed,
        "out": plan.out,
        "checkpoints": plan.checkpoints,
        "train_settings": plan.settings,
        "workers": o.workers,
        "monitor": monitor,
        "command": plan.command(),
        "backend": o.tasks_backend(),
        "cache": o.cache,
        "convergence": plan.convergence,
    }
    if plan.is_atlas:
        return atlas(plan.variants, plan.players, plan.hands, **shared)
    return skill_report(plan.variants, plan.players[0], hand_size=plan.hands[0] if plan.hands else None, **shared)


def run_skill_report(options: SkillReportOptions, monitor: Monitor | None = None) -> Report | Atlas:
    """``agurk skill-report``: the report (or atlas) of ``options``, written into its folder; its JSON object."""
    return run_planned(plan_report(options), monitor)


def _distinct(option: str, values: list[int]) -> list[int]:
    """``values``, refused when one is named twice."""
    if len(set(values)) != len(values):
        raise OptionError(f"{option} names a value twice: {','.join(map(str, values))}")
    return values


def _tables(options: SkillReportOptions, default: Sequence[str]) -> tuple[list[str], list[int], list[int]]:
    """The variants (``default``: the budget's), player counts and hand sizes asked for, each checked."""
    variants = split_list(options.variants) if options.variants else list(default)
    for v in variants:
        if v not in PRESETS:
            raise OptionError(f"--variants: unknown preset {v!r}; presets are: {', '.join(PRESETS)}")
    if len(set(variants)) != len(variants):
        raise OptionError(f"--variants names a preset twice: {options.variants}")
    players = _distinct("--players", options.players)
    hands = _distinct("--hand-sizes", options.hand_sizes or [])
    for v in variants:  # a RulesError names the problem
        for n in players:
            Rules.preset(v, players=n, hand_size=1)
        for h in hands:
            Rules.preset(v, players=2, hand_size=h)
    return variants, players, hands


def _parse_checkpoints(items: Sequence[str] | None, variants: Sequence[str]) -> tuple[dict[str, str], str | None]:
    """``--checkpoint [PRESET=]PATH`` items as a dict by preset, each one of ``variants``, and the bare ``PATH``.

    A bare ``PATH`` (no ``PRESET=``) goes to every variant not named in a ``PRESET=PATH`` item.
    """
    out: dict[str, str] = {}
    bare: str | None = None
    for item in items or ():
        preset, sep, path = item.partition("=")
        preset, path = preset.strip(), path.strip()
        if not sep:
            if bare is not None:
                raise OptionError(f"--checkpoint PATH (every variant) is given twice: {bare!r} and {item!r}")
            bare = item.strip()
            if not bare:
                raise OptionError("--checkpoint needs PRESET=PATH or PATH, not ''")
            continue
        if not preset or not path:
            raise OptionError(f"--checkpoint needs PRESET=PATH or PATH, not {item!r}")
        if preset not in variants:
            raise OptionError(f"--checkpoint {item!r}: {preset!r} is not one of the variants ({', '.join(variants)})")
        out[preset] = path
    if bare is not None:
        out = {v: out.get(v, bare) for v in variants}
    return out, bare


def _check_zoo(checkpoints: dict[str, str], train_config: str | None) -> None:
    """Refuse what ``--policy zoo`` cannot use (checkpoints, a training config), or a zoo without its network."""
    from agents.policy import CheckpointError
    from agents.zoo import UNIVERSAL, path_of

    for flag, given in (("--checkpoint", checkpoints), ("--train-config", train_config)):
        if given:
            raise OptionError(f"{flag} needs --policy train: --policy zoo plays the shipped network")
    try:
        path_of(UNIVERSAL)
    except CheckpointError as e:
        raise OptionError(f"--policy zoo: {e}") from None


def _check_networks(checkpoints: dict[str, str], bare: str | None) -> None:
    """Refuse a ``--checkpoint`` that is not a policy, or whose network has too few actions for its preset."""
    from agents.registry import AgentSpecError

    nets: dict[str, PolicyNet | Ensemble] = {}
    for preset, path in checkpoints.items():
        given = path if path == bare else f"{preset}={path}"
        try:
            if path not in nets:
                nets[path] = _network(path)
        except AgentSpecError as e:
            raise OptionError(f"--checkpoint {given}: {e}") from None
        actions = Rules.preset(preset).num_actions
        if nets[path].actions < actions:
            raise OptionError(
                f"--checkpoint {given}: the network has {nets[path].actions} actions, {preset} needs {actions}"
            )


def _network(path: str) -> PolicyNet | Ensemble:
    """The network of the checkpoint (or run folder) at ``path``: ``ppo:PATH``'s."""
    from agents.registry import make_agent

    agent = make_agent(f"ppo:{path}", 0, 0)
    from agents.policy import PolicyAgent  # torch is there: make_agent made a PolicyAgent

    assert isinstance(agent, PolicyAgent)
    return agent.net


def _convergence(
    given: str | None, policy: str, checkpoints: dict[str, str], bare: str | None, variants: list[str]
) -> list[str]:
    """The ``--convergence`` checkpoints, checked: in training order before the one network every variant plays."""
    convergence = split_list(given) if given else []
    if not convergence:
        return []
    from agents.zoo import UNIVERSAL, path_of
    from skill.convergence import in_order

    if policy == "zoo":
        network = str(path_of(UNIVERSAL))
    elif bare is not None and set(checkpoints.values()) == {bare}:
        network = bare
    else:
        raise OptionError(
            "--convergence needs one network in every variant that the report does not train: --policy zoo, "
            "or --checkpoint PATH"
        )
    try:
        in_order([*convergence, network])
    except ValueError as e:  # CheckpointError too: a file that is not a checkpoint
        raise OptionError(f"--convergence: {e}") from None
    actions = max(Rules.preset(v).num_actions for v in variants)
    for path in convergence:
        net = _network(path)
        if net.actions < actions:
            raise OptionError(
                f"--convergence {path}: the network has {net.actions} actions, the variants need {actions}"
            )
    return convergence
