"""Training configs: YAML files loaded into typed dataclasses, every value checked.

``load_config("configs/quickstart.yaml", sets=["pool.self_play=0.5"])`` reads the file,
applies ``--set key=value`` overrides (dotted keys reach nested sections, values are
YAML scalars or lists), and returns a :class:`Config`. An unknown key, a value of the
wrong type or out of range raises :class:`ConfigError` with a one-line message that
names the key. ``dump_config(config)`` writes the resolved config back as YAML (the
run folder's ``config.yaml``); loading it gives the same config.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import yaml

from agents.tasks.backend import BackendName
from agurk_env.options import OptionError, build, option, split_assignment
from agurk_env.rewards import Episode, round_rewards
from agurk_env.rules import CARDS, PRESETS, Rules, RulesError

if TYPE_CHECKING:
    from agurk_env.engine import State

_T = TypeVar("_T")

Algo = Literal["ppo", "sb3", "expert"]
"""The trainers: PPO on the batched engine, sb3-contrib's MaskablePPO, or expert iteration."""
Critic = Literal["shared", "full_info"]
TeacherName = Literal["rollout", "best"]
"""The PPO trainer's value function: a head on the policy's trunk, or a network of its own on the full state."""


class ConfigError(OptionError):
    """A bad config file, key or value (one-line message naming the key)."""


def packaged_config(name: str) -> Path:
    """The path of a config shipped with the package (``training/configs/``, also ``configs/`` in a checkout)."""
    path = Path(str(importlib.resources.files("training") / "configs" / name))
    if not path.is_file():
        raise ConfigError(f"no packaged config {name!r}")
    return path


@dataclass
class PoolConfig:
    """Who sits at the other seats of each new training match (shares of matches, each in 0..1, normalized)."""

    self_play: float = option(0.5, low=0, high=1)
    """Share of matches where the learner plays every seat (all seats' decisions are trained on)."""
    snapshots: float = option(0.2, low=0, high=1)
    """Share of matches against a past snapshot of the learner in every other seat (self-play if none yet)."""
    agents: dict[str, float] = option({"heuristic": 0.3}, low=0, high=1)
    """Agent specs (``agurk agents``: ``heuristic``, ``counter``, ``ppo:PATH``...) and their shares of matches."""
    snapshot_every: int = option(10, low=1)
    """Updates between two snapshots of the learner joining the pool."""
    max_snapshots: int = option(8, low=1)
    """Snapshots kept; the oldest is dropped beyond this."""
    pfsp_power: float = option(2.0, low=0)
    """A snapshot is drawn with weight ``(1 - w) ** pfsp_power``, ``w`` the learner's recent win rate against it."""
    win_rate_decay: float = option(0.9, low=0, below=1)
    """Per-update decay of the running win rates behind the snapshot weights (``0``: only the last update)."""


@dataclass
class EvalConfig:
    """Periodic evaluation: duplicate-deal tournaments against copies of one agent (``agurk evaluate``)."""

    every: int = option(2_000_000, low=0)
    """Learner decisions between evaluations (``0``: only at the end of training)."""
    deals: int = option(300, low=1)
    """Duplicate deals per periodic evaluation (each played in every seat rotation)."""
    final_deals: int = option(1000, low=1)
    """Duplicate deals of the evaluation at the end of training."""
    opponent: str = "heuristic"
    """Agent spec in every other seat (``heuristic`` is the strongest heuristic, ``guard``)."""
    sample: bool = False
    """Evaluate the sampled policy instead of the greedy one (most probable legal card)."""
    seed: int = option(20_240_601, low=0)
    """Seed of the evaluation deals (the same deals at every evaluation)."""
    resamples: int = option(400, low=1)
    """Bootstrap resamples behind the 95% intervals."""


@dataclass
class ExpertConfig:
    """``algo: expert``: expert iteration on the rollout operator (:func:`agents.guided.improve`)."""

    games: int = option(256, low=1)
    """Self-play games played side by side per player count in each shard of a generation."""
    decisions: int = option(32_768, low=1)
    """Improved decisions (positions with a choice) collected per generation; one training phase follows each."""
    shards: int = option(1, low=1)
    """Tasks a generation is split into (each plays its share of the decisions; the data depend on it)."""
    workers: int = option(1, low=1)
    """Local worker processes that play the shards side by side (1: in the training process; the data do not
    depend on it), or the CPUs of a local Ray instance."""
    backend: BackendName = "local"
    """Where the shards run: worker processes on this machine, or Ray (``ray_address``, or a local instance)."""
    ray_address: str = ""
    """``backend: ray`` only: the cluster to connect to (``auto``, ``HOST:PORT``; empty: start a local instance)."""
    worlds: int = option(8, low=1)
    """Sampled deals of the unseen cards per decision (the operator's ``worlds``)."""
    rollouts: int = option(1, low=1)
    """Rollouts per world and card (more than 1 helps with ``moves: sample`` only)."""
    moves: Literal["greedy", "sample"] = "greedy"
    """How every seat plays in the rollouts: the network's most probable card, or a card drawn from it."""
    leaf: int = option(0, low=0)
    """Solve the last ``leaf`` tricks of every rollout exactly (exact late, fusion-free early; ``0``: rollouts only)."""
    belief: bool = False
    """Weight the worlds by the likelihood of the opponents' plays this round under the network (self-play: right)."""
    teacher: TeacherName = "rollout"
    """Who improves the decisions: the network's rollout operator (the settings above), or ``best``: at each table
    the agent ``best`` plays there (a search's values, or a shipped network's probabilities; training/teacher.py)."""
    teacher_searches: list[str] = option([])
    """``teacher: best`` only: the searches of ``best`` that teach (e.g. ``[pimc]``; empty: every one); a table where
    ``best`` plays another search is taught by the universal file instead, as the tables where it plays a network."""
    temperature: float = option(0.05, above=0)
    """The improved policy is ``softmax(values / temperature)`` over the legal cards (values: utility, about -1..0)."""
    play: Literal["improved", "policy"] = "improved"
    """Who plays the self-play games: a card drawn from the improved policy, or from the network itself."""
    epochs: int = option(2, low=1)
    """Passes over the kept data after each generation."""
    window: int = option(4, low=1)
    """Generations of data kept for training (the newest ``window``)."""
    value_coef: float = option(0.5, low=0)
    """Weight of the value head's squared error (target: the mover's round reward, as PPO's) in the loss."""


@dataclass
class TableFamily:
    """One family of the training mixture (``mixture.families.NAME``): tables drawn from, with a weight."""

    weight: float = option(1.0, above=0)
    """Share of the mixture's table draws that come from this family (normalized over the families)."""
    presets: list[str] = option([])
    """Presets drawn from, uniformly (empty: every preset, ``agurk rules``)."""
    players: list[int] = option([], low=2, high=8)
    """Player counts drawn from, uniformly (empty: the preset's)."""
    hand_size: list[int] = option([], low=1)
    """Hand sizes drawn from, uniformly (empty: the preset's); a table that does not fit the deck is drawn again."""
    rules: dict[str, Any] = option({})
    """Rule options set over the drawn preset (``{limit: 21}``)."""
    random_options: int = option(0, low=0)
    """Other rule options set to a value drawn from their choices (rule combinations that match no preset)."""
    single_round: float = option(0.0, low=0, high=1)
    """Probability that a drawn table plays single rounds (``limit=1, match_end=first_out``)."""


@dataclass
class MixtureConfig:
    """A rules-conditioned network: training tables drawn from weighted families of rules (``ppo`` only)."""

    families: dict[str, TableFamily] = option({})
    """The families tables are drawn from, by name (empty: no mixture; the tables of ``preset`` and ``players``)."""
    slots: int = option(16, low=1)
    """Tables played side by side, each of ``num_envs`` games; each holds one drawn rule set at a time."""
    redraw_every: int = option(4, low=1)
    """Updates between two redraws of every slot's rules (the unfinished rounds there are not trained on)."""


@dataclass
class Config:
    """One training run (``agurk train CONFIG.yaml``): game, episodes, opponents, PPO and logging."""

    algo: Algo = option("ppo", renamed={"fast": "ppo"})
    """``ppo``: PPO on the batched engine (training/ppo.py); ``sb3``: MaskablePPO; ``expert``: expert iteration."""
    init: str = ""
    """Checkpoint or run folder whose network starts the run, e.g. a zoo policy or another run's (``ppo`` and
    ``expert``; a ``hidden`` wider or deeper than its widths widens it, Net2Net-style, without changing its play;
    empty: a fresh network). Read by a fresh run only: ``--resume``
    continues from the run's own checkpoint."""
    seed: int = option(1, low=0)
    """Seed of the deals, the pool draws and torch."""
    preset: str = "standard"
    """Rule preset (``agurk rules``)."""
    rules: dict[str, Any] = option({})
    """Rule options over the preset (``{limit: 21}``); ``players`` goes in ``players``."""
    players: list[int] = option([])
    """Player counts trained side by side, one batch of ``num_envs`` games each (empty: the preset's)."""
    ranks: str = ""
    """Deal from these card names only (``10,J,Q,K,A``; empty: every card, the rules' deck); play is unchanged.
    ``algo: ppo`` without a mixture; the evaluations deal from the same deck."""
    copies: int = option(4, low=1, high=4)
    """Copies of each card name in the deck (with ``ranks``; the joker always has ``jokers``)."""
    episode: Episode = "round"
    """``round``: an episode is one round; ``match``: one whole match (rounds chained, placement at the end)."""
    penalty_weight: float = 1.0
    """Each round gives every seat ``-penalty_weight * penalty / limit``."""
    penalty_scale: float = option(0.0, low=0)
    """Round penalties are divided by this instead of the table's limit (``0``: the limit; a mixture of limits and
    single rounds, ``limit: 1``, keeps one reward scale with e.g. ``30``)."""
    placement_weight: float = 1.0
    """``episode: match`` only: a seat leaving the match also gets ``placement_weight * placement`` (+1 .. -1)."""
    total_steps: int = option(5_000_000, low=1)
    """Learner decisions to collect and train on (one decision = one card the learner chose)."""
    time_limit: float = option(0.0, low=0)
    """Stop after this many minutes of training even before ``total_steps`` (``0``: no limit)."""
    num_envs: int = option(1024, low=1)
    """Games played side by side per player count."""
    num_steps: int = option(32, low=1)
    """Engine steps (one card in every game) per rollout."""
    learning_rate: float = option(1e-3, above=0)
    """Adam step size."""
    anneal_lr: bool = True
    """Decay the step size linearly to 0 over ``total_steps``."""
    gamma: float = option(1.0, low=0, high=1)
    """Discount per learner decision."""
    gae_lambda: float = option(0.95, low=0, high=1)
    """GAE lambda."""
    minibatch_size: int = option(4096, low=1)
    """Transitions per gradient step."""
    update_epochs: int = option(2, low=1)
    """Passes over each rollout."""
    norm_adv: bool = True
    """Normalize advantages per minibatch."""
    norm_adv_tables: bool = False
    """With a mixture, first normalize each table's advantages over the rollout (large returns drown none)."""
    clip_coef: float = option(0.2, above=0)
    """PPO ratio clip."""
    clip_vloss: bool = False
    """Clip the value loss too."""
    ent_coef: float = option(0.01, low=0)
    """Entropy bonus."""
    vf_coef: float = option(0.5, low=0)
    """Value loss weight."""
    max_grad_norm: float = option(0.5, low=0)
    """Gradient clipping norm."""
    target_kl: float = option(0.0, low=0)
    """Stop an update's epochs early once the approximate KL exceeds this (``0``: never)."""
    hidden: list[int] = option([128, 128], low=1)
    """Widths of the MLP trunk (ReLU; the ``full_info`` critic's too); the policy and value heads are linear on top."""
    critic: Critic = "shared"
    """Value function: ``shared`` (a head on the policy's trunk) or ``full_info`` (a network on the full state)."""
    oracle_steps: int = option(0, low=0)
    """Oracle guiding: the first this many learner decisions show the actor the other hands, fading out (``0``: off)."""
    oracle_lr_scale: float = option(1.0, low=0)
    """The oracle input's step size as a multiple of ``learning_rate`` (annealed with it); needs ``oracle_steps``."""
    threads: int = option(1, low=0)
    """Torch CPU threads (``0``: torch's default, every core); one is fastest on a busy 2-core machine."""
    device: str = "cpu"
    """Torch device of the learner (``cpu`` or ``cuda``); the engine always runs on the CPU."""
    checkpoint_every: int = option(0, low=0)
    """Learner decisions between ``latest`` checkpoints besides the evaluations (``0``: at evaluations only)."""
    checkpoint_minutes: float = option(0.0, low=0)
    """Minutes of wall time between ``latest`` checkpoints besides the others (``0``: none by time)."""
    keep_checkpoints: bool = False
    """Keep a copy of every ``latest`` save as ``checkpoints/step-STEP.pt``, listed in ``checkpoints/kept.csv``."""
    sb3_n_steps: int = option(28, low=1)
    """``algo: sb3`` only: MaskablePPO's ``n_steps`` per game."""
    pool: PoolConfig = dataclasses.field(default_factory=PoolConfig)
    """Opponents of the learner."""
    eval: EvalConfig = dataclasses.field(default_factory=EvalConfig)
    """Periodic evaluation."""
    expert: ExpertConfig = dataclasses.field(default_factory=ExpertConfig)
    """``algo: expert`` only: the rollout operator, the self-play generations and their training."""
    mixture: MixtureConfig = dataclasses.field(default_factory=MixtureConfig)
    """``algo: ppo`` and ``expert``: train on tables drawn from families of rules (expert: ``slots`` tables drawn
    afresh in each generation's shard, ``expert.games`` games each); ``preset`` and ``players`` are then the tables
    the run evaluates on."""

    def actions(self) -> int:
        """Card outputs of the network: every card and the joker with a mixture, else what the tables need."""
        return len(CARDS) if self.mixture.families else max(r.num_actions for r in self.rule_sets())

    def round_scale(self, rules: Rules) -> float:
        """What a round's penalty is divided by in the rewards of ``rules``: ``penalty_scale``, else the limit."""
        return self.penalty_scale or rules.limit

    def round_credit(self, rules: Rules, state: State, games: np.ndarray) -> np.ndarray:
        """``(k, P)``: each seat's credit for the round ended in ``games``: its round reward times ``penalty_weight``.

        The one round-end credit of the trainers (PPO's games, expert iteration's generations).
        """
        return round_rewards(rules, state, self.round_scale(rules))[games] * self.penalty_weight

    def rule_sets(self) -> list[Rules]:
        """The :class:`Rules` of every player count trained on."""
        base = Rules.preset(self.preset, **self.rules)
        return [base.replace(players=p) for p in (self.players or [base.players])]

    def deck(self, rules: Rules) -> np.ndarray:
        """Copies of each card dealt at ``rules``: ``ranks`` x ``copies`` (:func:`agurk_env.engine.deck_counts`)."""
        from agurk_env.engine import deck_counts

        return deck_counts(rules, self.ranks, self.copies)


def _check(cfg: Config) -> None:
    """Refuse the combinations a single key's declaration cannot, naming the key (each key alone: its declaration)."""
    if cfg.preset not in PRESETS:
        raise ConfigError(f"preset must be one of {', '.join(PRESETS)}, not {cfg.preset!r}")
    if "players" in cfg.rules:
        raise ConfigError("rules.players is not allowed: list the player counts in 'players'")
    try:
        cfg.rule_sets()
    except RulesError as e:
        raise ConfigError(f"rules: {e}") from None
    if len(set(cfg.players)) != len(cfg.players):
        raise ConfigError(f"players must not repeat a count: {cfg.players}")
    _check_deck(cfg)
    if cfg.algo == "sb3" and len(cfg.rule_sets()) != 1:
        raise ConfigError("players must name one player count with algo: sb3")
    if cfg.algo == "sb3" and cfg.critic != "shared":
        raise ConfigError(f"critic must be shared with algo: sb3, not {cfg.critic!r}")
    if cfg.algo != "ppo" and cfg.oracle_steps:
        raise ConfigError(f"oracle_steps needs algo: ppo, not {cfg.algo!r}")
    if cfg.oracle_lr_scale != 1.0 and not cfg.oracle_steps:
        raise ConfigError("oracle_lr_scale needs oracle_steps > 0")
    if not cfg.hidden:
        raise ConfigError("hidden must list one or more positive widths, not []")
    if cfg.device not in ("cpu", "cuda") and not cfg.device.startswith("cuda:"):
        raise ConfigError(f"device must be cpu or cuda, not {cfg.device!r}")
    pool = cfg.pool
    if pool.self_play + pool.snapshots + sum(pool.agents.values()) <= 0:
        raise ConfigError("pool: the shares of self_play, snapshots and agents must not all be 0")
    from agents.registry import AgentSpecError, parse_spec

    for key, spec in [*((f"pool.agents.{s}", s) for s in pool.agents), ("eval.opponent", cfg.eval.opponent)]:
        try:
            parse_spec(spec)
        except AgentSpecError as e:
            raise ConfigError(f"{key}: {e}") from None
    if cfg.mixture.families and cfg.algo not in ("ppo", "expert"):
        raise ConfigError(f"mixture.families needs algo: ppo or expert, not {cfg.algo!r}")
    for name, family in cfg.mixture.families.items():
        for preset in family.presets:
            if preset not in PRESETS:
                raise ConfigError(f"mixture.families.{name}.presets: {preset!r} is not a preset ({', '.join(PRESETS)})")
        if "players" in family.rules or "hand_size" in family.rules:
            raise ConfigError(f"mixture.families.{name}.rules: list players and hand sizes in players and hand_size")
        try:
            Rules.from_dict(family.rules)
        except RulesError as e:
            raise ConfigError(f"mixture.families.{name}.rules: {e}") from None
    ex = cfg.expert
    if ex.ray_address and ex.backend != "ray":
        raise ConfigError("expert.ray_address needs expert.backend: ray")
    if cfg.init and cfg.algo == "sb3":
        raise ConfigError("init: algo sb3 starts from a fresh network; algo ppo or expert start from a checkpoint")


def _check_deck(cfg: Config) -> None:
    """Refuse a deck (``ranks``, ``copies``) that cannot deal every table, or a trainer that cannot deal from it."""
    if (cfg.ranks or cfg.copies != 4) and (cfg.algo != "ppo" or cfg.mixture.families):
        raise ConfigError("ranks and copies need algo: ppo without mixture.families (the deals of the other trainers)")
    for rules in cfg.rule_sets():
        try:
            cfg.deck(rules)
        except ValueError as e:
            raise ConfigError(f"ranks, copies: {e}") from None


def build_dataclass(cls: type[_T], data: Mapping[str, object], prefix: str = "") -> _T:
    """An instance of the config section ``cls`` from ``data``, every value converted by its declaration."""
    try:
        return build(cls, data, noun="config key", prefix=prefix)
    except OptionError as e:
        raise ConfigError(str(e)) from None


def _set(data: dict[str, object], item: str) -> None:
    """Apply one ``key=value`` override (dotted key, YAML value) to the raw mapping ``data``."""
    try:
        key, text = split_assignment(item, "KEY=VALUE (e.g. --set total_steps=100000)")
    except OptionError as e:
        raise ConfigError(str(e)) from None
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        value = text
    *parents, last = key.split(".")
    node = data
    for i, part in enumerate(parents):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {'.'.join(parents[: i + 1])} is not a section")
        node = child
    node[last] = value


def config_from_dict(data: dict[str, object], sets: list[str] | tuple[str, ...] = ()) -> Config:
    """Build and check a :class:`Config` from a raw mapping plus ``key=value`` overrides."""
    data = yaml.safe_load(yaml.safe_dump(data or {}))  # a deep copy in YAML's own types
    for item in sets:
        _set(data, item)
    cfg = build_dataclass(Config, data)
    _check(cfg)
    return cfg


def load_config(path: str | Path, sets: list[str] | tuple[str, ...] = ()) -> Config:
    """Read a YAML config file, apply ``key=value`` overrides, build and check the :class:`Config`."""
    return config_from_dict(read_mapping(path), sets)


def read_mapping(path: str | Path) -> dict[str, object]:
    """The mapping of keys in a YAML config file (empty for an empty file); :class:`ConfigError` in one line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read config {str(path)!r}: {e.strerror or e}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        raise ConfigError(f"config {str(path)!r} is not valid YAML{at}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config {str(path)!r} must be a mapping of keys, not {type(data).__name__}")
    return data


def config_to_dict(cfg: Config) -> dict[str, object]:
    """The config as plain YAML-ready data (every key, resolved)."""
    return dataclasses.asdict(cfg)


def dump_config(cfg: Config) -> str:
    """The resolved config as YAML text."""
    return yaml.safe_dump(config_to_dict(cfg), sort_keys=False)
