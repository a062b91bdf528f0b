"""``agurk sweep``: evaluate (and optionally train) a grid of game variants as independent tasks, into one table.

A sweep config (YAML, :class:`SweepConfig`) names a grid: presets x player counts x hand
sizes x seeds x overrides. Each grid point (:class:`Point`) is one task of
:func:`agents.tasks.run_tasks`, on any backend: with ``train.steps > 0`` it first trains
a PPO agent for the point's game (:func:`training.run.train_to_file`, seeded by the point's
seed), then plays each of ``agents`` (and the trained one, as ``ppo``) as the focal entry
against ``opponent`` in every other seat: a duplicate-deal tournament of ``deals`` deals of
the point's seed (:func:`agents.tournament.tournament`). Everything a task draws comes from
its grid point, so the table is the same on every backend and with any number of workers.

The output folder ``OUT``::

    OUT/sweep.json           the resolved config: marks the folder as this sweep's
    OUT/tasks/KEY.json       each finished task's rows, written (atomically) as it finishes
    OUT/checkpoints/KEY.pt   each grid point's trained agent (``train.steps > 0``)
    OUT/results.json         {"format", "config", "columns", "rows"}: every row, in grid order
    OUT/results.csv          the same rows, one line each
    OUT/results.png          win rate of each agent at each grid point, 95% intervals

Run again with the same config and ``OUT``, an interrupted or failed sweep resumes: the
tasks with a ``tasks/KEY.json`` are read back, only the others run. A folder that holds
anything else (another sweep's config too) is refused unless ``force`` moves it aside.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

import numpy as np

from agents.command import Backends, Quiet, worker_count
from agents.registry import STRONGEST_HEURISTIC, AgentSpecError, make_agent
from agents.tasks import LOCAL, Backend, TaskError, TaskProgress, run_tasks
from agents.tournament import Unit, tournament
from agurk_env.atomic import atomic_write, atomic_write_text
from agurk_env.options import REQUIRED, option
from agurk_env.rules import OPTION_NAMES, PRESETS, Rules, RulesError
from skill.budget import TRAIN_COST, match_cost, quickstart_settings
from skill.plots import error_bars, pyplot, save
from training.config import Config, ConfigError, build_dataclass, config_from_dict, read_mapping
from training.run import train_to_file
from training.run_folder import RunFolderError, claim_out

if TYPE_CHECKING:
    from rich.table import Table

FORMAT = "agurk-sweep"
"""The ``format`` of ``sweep.json`` and ``results.json``."""
SWEEP_FILE, TASKS, CHECKPOINTS = "sweep.json", "tasks", "checkpoints"
GRID_KEYS = ("preset", "rules", "players", "seed", "total_steps", "time_limit")
"""Training config keys every grid point sets itself (not allowed in ``train.settings`` or ``overrides``)."""
TRAINED = "ppo"
"""The label of each grid point's trained agent in the table."""
STATS = ("win_rate", "mean_penalty", "last_trick_rate", "rating")
COLUMNS = (
    "key",
    "preset",
    "players",
    "hand_size",
    "seed",
    "override",
    "agent",
    "opponent",
    "deals",
    *(f"{k}{s}" for k in STATS for s in ("", "_low", "_high")),
)
"""The columns of the results table (``*_low`` / ``*_high``: the 95% bootstrap interval)."""


class SweepRow(TypedDict):
    """One row of the results table (:data:`COLUMNS`): one agent at one grid point, against the opponent."""

    key: str
    """The grid point's :attr:`Point.key`."""
    preset: str
    players: int
    hand_size: int
    seed: int
    override: str
    """The grid point's override as ``key=value`` items (:attr:`Point.override_text`)."""
    agent: str
    """The focal agent's spec, or :data:`TRAINED` for the grid point's trained agent."""
    opponent: str
    deals: int
    win_rate: float
    win_rate_low: float
    win_rate_high: float
    mean_penalty: float
    mean_penalty_low: float
    mean_penalty_high: float
    last_trick_rate: float
    last_trick_rate_low: float
    last_trick_rate_high: float
    rating: float
    rating_low: float
    rating_high: float


class StoredTask(TypedDict):
    """``tasks/KEY.json``: a finished task's rows."""

    key: str
    rows: list[SweepRow]


class PointResult(StoredTask):
    """What :func:`run_point` returns: its rows and the trained agent's checkpoint bytes (``None``: no training)."""

    checkpoint: bytes | None


class SweepFile(TypedDict):
    """``sweep.json``: the resolved config that marks the folder as this sweep's."""

    format: str
    config: dict[str, Any]
    """``dataclasses.asdict`` of the :class:`SweepConfig` (its YAML form)."""


class Results(SweepFile):
    """``results.json``: every row, in grid order."""

    columns: list[str]
    rows: list[SweepRow]


@dataclass
class TrainSettings:
    """``train``: a PPO agent trained for each grid point, which joins the table as ``ppo``."""

    steps: int = 0
    """Learner decisions per grid point (``0``: no training)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """``agurk train`` config keys over the packaged quickstart's (the grid point sets preset, rules, players, seed)."""


@dataclass
class SweepConfig:
    """One sweep (``agurk sweep CONFIG.yaml``): the grid, what each grid point plays, the optional training."""

    presets: list[str] = field(default_factory=lambda: ["standard"])
    """Rule presets (``agurk rules``)."""
    players: list[int] = field(default_factory=list)
    """Player counts (empty: each preset's own)."""
    hand_sizes: list[int] = field(default_factory=list)
    """Cards dealt to each player (empty: each preset's own)."""
    seeds: list[int] = field(default_factory=lambda: [0])
    """Seeds of the deals, the agents and the training; each one a grid point."""
    overrides: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    """Each one a grid point: rule options over the preset (``{limit: 21}``), and with ``train`` training keys."""
    agents: list[str] = field(default_factory=lambda: ["random", STRONGEST_HEURISTIC])
    """Agent specs, each played as the focal entry against the opponent (``agurk agents``)."""
    opponent: str = STRONGEST_HEURISTIC
    """The agent spec in every other seat."""
    deals: int = 100
    """Duplicate deals per agent and grid point (each played in every seat rotation)."""
    resamples: int = 200
    """Bootstrap resamples behind the 95% intervals."""
    unit: Unit = "match"
    """What the win rate and rating score: whole matches or single rounds (``agurk evaluate --unit``)."""
    train: TrainSettings = field(default_factory=TrainSettings)
    """The optional PPO agent of each grid point."""


@dataclass(frozen=True)
class Point:
    """One grid point of a sweep: one task."""

    key: str
    """``PRESET-<P>p-<H>c-s<SEED>-o<K>``: the name of its files, unique in the sweep."""
    preset: str
    players: int
    hand_size: int
    seed: int
    override: int
    """Index of its entry of ``overrides``."""
    rule_options: dict[str, Any]
    """The override's rule options."""
    train_options: dict[str, Any]
    """The override's training keys."""

    @property
    def rules(self) -> Rules:
        """The grid point's rules."""
        return Rules.preset(self.preset, players=self.players, hand_size=self.hand_size, **self.rule_options)

    @property
    def override_text(self) -> str:
        """The override as ``key=value`` items (empty for none), for the table."""
        return " ".join(f"{k}={v}" for k, v in {**self.rule_options, **self.train_options}.items())


def _unique(key: str, values: Sequence[Any], empty_ok: bool = False) -> None:
    """Refuse an empty list (unless ``empty_ok``) or one that repeats a value, naming ``key``."""
    if not values and not empty_ok:
        raise ConfigError(f"{key} must list at least one value")
    if len(set(map(repr, values))) != len(values):
        raise ConfigError(f"{key} must not repeat a value: {list(values)}")


def _check(cfg: SweepConfig) -> None:
    """Refuse what cannot run, naming the key (each grid point's rules and training config are built)."""
    _unique("presets", cfg.presets)
    for preset in cfg.presets:
        if preset not in PRESETS:
            raise ConfigError(f"presets: unknown preset {preset!r}; presets are: {', '.join(PRESETS)}")
    _unique("players", cfg.players, empty_ok=True)
    _unique("hand_sizes", cfg.hand_sizes, empty_ok=True)
    _unique("seeds", cfg.seeds)
    if any(s < 0 for s in cfg.seeds):
        raise ConfigError(f"seeds must be >= 0, not {cfg.seeds}")
    _unique("overrides", cfg.overrides)
    _unique("agents", cfg.agents)
    for key, value in (("deals", cfg.deals), ("resamples", cfg.resamples)):
        if value <= 0:
            raise ConfigError(f"{key} must be > 0, not {value}")
    if cfg.train.steps < 0:
        raise ConfigError(f"train.steps must be >= 0, not {cfg.train.steps}")
    if TRAINED in cfg.agents and cfg.train.steps:
        raise ConfigError(f"agents: {TRAINED!r} is the trained agent's label; name a checkpoint as ppo:PATH")
    for key, spec in [*((f"agents[{i}]", s) for i, s in enumerate(cfg.agents)), ("opponent", cfg.opponent)]:
        try:
            make_agent(spec, 0, 0)
        except AgentSpecError as e:
            raise ConfigError(f"{key}: {e}") from None
    train_keys = {f.name for f in dataclasses.fields(Config)} - set(GRID_KEYS)
    for name in cfg.train.settings:
        if name in GRID_KEYS:
            raise ConfigError(f"train.settings.{name} is set by each grid point; use the sweep's own keys")
    for i, override in enumerate(cfg.overrides):
        for name in override:
            if name in ("players", "hand_size", *GRID_KEYS):
                raise ConfigError(f"overrides[{i}].{name} is a grid axis or set by each grid point, not an override")
            if name in train_keys and not cfg.train.steps:
                raise ConfigError(f"overrides[{i}].{name} is a training key, but train.steps is 0 (no training)")
            if name not in OPTION_NAMES and name not in train_keys:
                raise ConfigError(
                    f"unknown override key 'overrides[{i}].{name}': a rule option "
                    f"({', '.join(n for n in OPTION_NAMES if n not in ('players', 'hand_size'))}) "
                    "or, with train.steps > 0, a training key"
                )
    for point in grid(cfg):
        try:
            point.rules  # noqa: B018 - builds and checks the rules
        except RulesError as e:
            raise ConfigError(f"grid point {point.key} (overrides[{point.override}]): {e}") from None
        if cfg.train.steps:
            try:
                train_config(cfg, point)
            except ConfigError as e:
                where = f"train.settings, overrides[{point.override}]"
                raise ConfigError(f"grid point {point.key} ({where}): {e}") from None


def sweep_from_dict(data: dict[str, Any]) -> SweepConfig:
    """Build and check a :class:`SweepConfig` from a raw mapping; :class:`ConfigError` (one line, naming the key)."""
    cfg = build_dataclass(SweepConfig, data)
    _check(cfg)
    return cfg


def load_sweep(path: str | Path) -> SweepConfig:
    """Read, build and check a sweep config file."""
    return sweep_from_dict(read_mapping(path))


def grid(cfg: SweepConfig) -> list[Point]:
    """Every grid point, in table order: presets, then player counts, hand sizes, seeds and overrides."""
    train_keys = {f.name for f in dataclasses.fields(Config)}
    points = []
    for preset in cfg.presets:
        base = Rules.preset(preset)
        for players in cfg.players or [base.players]:
            for hand in cfg.hand_sizes or [base.hand_size]:
                for seed in cfg.seeds:
                    for k, override in enumerate(cfg.overrides):
                        rule = {n: v for n, v in override.items() if n not in train_keys}
                        train = {n: v for n, v in override.items() if n in train_keys}
                        key = f"{preset}-{players}p-{hand}c-s{seed}-o{k}"
                        points.append(Point(key, preset, players, hand, seed, k, rule, train))
    return points


def train_config(cfg: SweepConfig, point: Point) -> Config:
    """The training config of a grid point: the quickstart's, ``train.settings``, the override, the point's game."""
    return config_from_dict(
        {
            **quickstart_settings(),
            **cfg.train.settings,
            **point.train_options,
            "preset": point.preset,
            "rules": {"hand_size": point.hand_size, **point.rule_options},
            "players": [point.players],
            "seed": point.seed,
            "total_steps": cfg.train.steps,
            "time_limit": 0,  # a fixed number of decisions: the same agent on any machine
        }
    )


# ----------------------------------------------------------------------------- the task


def run_point(progress: TaskProgress, point: Point, cfg: SweepConfig, train: Config | None) -> PointResult:
    """One grid point (a task): train its agent if asked, play every agent against the opponent; its rows.

    Returns ``{"key", "rows", "checkpoint"}``, ``checkpoint`` the trained agent's bytes (or
    None), so that nothing is written on the worker: the caller stores the result.
    """
    rules = point.rules
    matches = cfg.deals * rules.players
    specs = list(cfg.agents)
    total = sum(matches * match_cost(s) for s in specs) + (matches * match_cost(TRAINED) if train else 0.0)
    done = 0.0
    with tempfile.TemporaryDirectory(prefix="agurk-sweep-") as tmp:
        checkpoint = Path(tmp) / "ppo.pt"
        labels = list(specs)
        if train is not None:
            steps = train.total_steps * TRAIN_COST
            total += steps
            train_to_file(train, checkpoint, lambda step, logs: progress(step * TRAIN_COST / total))
            done = steps
            specs.append(f"ppo:{checkpoint}")
            labels.append(TRAINED)
        rows: list[SweepRow] = []
        for spec, label in zip(specs, labels, strict=True):
            cost = match_cost(spec)

            def advance(n: int, base: float = done, c: float = cost) -> None:
                progress((base + n * c) / total)

            result = tournament(
                rules,
                [spec] + [cfg.opponent] * (rules.players - 1),
                cfg.deals,
                point.seed,
                resamples=cfg.resamples,
                unit=cfg.unit,
                progress=advance,
            )
            done += matches * cost
            focal = result.entries[0]
            rows.append(
                {
                    "key": point.key,
                    "preset": point.preset,
                    "players": point.players,
                    "hand_size": point.hand_size,
                    "seed": point.seed,
                    "override": point.override_text,
                    "agent": label,
                    "opponent": cfg.opponent,
                    "deals": cfg.deals,
                    "win_rate": focal.win_rate,
                    "win_rate_low": focal.win_rate_ci[0],
                    "win_rate_high": focal.win_rate_ci[1],
                    "mean_penalty": focal.mean_penalty,
                    "mean_penalty_low": focal.mean_penalty_ci[0],
                    "mean_penalty_high": focal.mean_penalty_ci[1],
                    "last_trick_rate": focal.last_trick_rate,
                    "last_trick_rate_low": focal.last_trick_rate_ci[0],
                    "last_trick_rate_high": focal.last_trick_rate_ci[1],
                    "rating": focal.rating,
                    "rating_low": focal.rating_ci[0],
                    "rating_high": focal.rating_ci[1],
                }
            )
        return {"key": point.key, "rows": rows, "checkpoint": checkpoint.read_bytes() if train else None}


# ----------------------------------------------------------------------------- the sweep

Monitor = Callable[[int, int, float, str | None], None]
"""``monitor(done, total, completed, key)``: tasks done (resumed ones included) of ``total``, the same
with the running tasks' shares added, and the task that just finished (``None``: progress only)."""


@dataclass
class SweepResult:
    """A finished sweep: every row in grid order, and which tasks ran now or were read back."""

    rows: list[SweepRow]
    ran: list[str]
    resumed: list[str]
    moved: Path | None
    """Where ``force`` moved an old folder (None: nothing moved)."""


def claim_sweep(out: Path, config: dict[str, Any], force: bool = False) -> Path | None:
    """Make ``out`` this sweep's folder: new, empty, or holding the same sweep (resumed); ``force`` moves others aside.

    Returns where ``force`` moved the old folder (:func:`training.run_folder.claim_out`), else
    None; a folder that holds anything else raises :class:`training.run_folder.RunFolderError`.
    """
    marker = out / SWEEP_FILE
    if marker.is_file() and not force:
        try:
            saved = json.loads(marker.read_text(encoding="utf-8"))["config"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise RunFolderError(out, f"holds a {SWEEP_FILE} that cannot be read ({e})", "move_aside") from None
        if saved == config:
            return None
        changed = sorted(k for k in {*saved, *config} if saved.get(k) != config.get(k))
        raise RunFolderError(
            out, f"holds another sweep (its {', '.join(changed)} differ; its own config resumes it)", "move_aside"
        )
    if not force and out.is_dir() and any(out.iterdir()):
        raise RunFolderError(out, "is not empty and holds no sweep", "move_aside")
    moved = claim_out(out, force)
    marked: SweepFile = {"format": FORMAT, "config": config}
    atomic_write_text(marker, json.dumps(marked, indent=2) + "\n")
    return moved


def _read_task(path: Path) -> StoredTask | None:
    """A stored task's result, or None when there is none (or it cannot be read: the task runs again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(data, dict) and isinstance(data.get("rows"), list)):
        return None
    return cast("StoredTask", data)  # as run_sweep wrote it


def run_sweep(
    cfg: SweepConfig,
    out: str | Path,
    workers: int = 1,
    backend: Backend = LOCAL,
    force: bool = False,
    monitor: Monitor | None = None,
) -> SweepResult:
    """Run the sweep into ``out`` (resuming the tasks stored there), write the results table; return it.

    The tasks run on ``backend`` (``workers`` local processes, or the CPUs of a local Ray
    instance); each finished task is stored at once. A task that fails every retry raises
    :class:`agents.tasks.TaskError` after every other task has run and been stored.
    """
    out = Path(out)
    config = dataclasses.asdict(cfg)
    moved = claim_sweep(out, config, force)
    points = grid(cfg)
    stored: dict[str, StoredTask] = {}
    for point in points:
        data = _read_task(out / TASKS / f"{point.key}.json")
        if data is not None:
            stored[point.key] = data
    todo = [p for p in points if p.key not in stored]
    total = len(points)
    ran: list[str] = []

    def on_result(index: int, result: PointResult) -> None:
        key = todo[index].key
        checkpoint = result["checkpoint"]
        if checkpoint is not None:
            atomic_write(out / CHECKPOINTS / f"{key}.pt", lambda f: f.write(checkpoint))
        data: StoredTask = {"key": key, "rows": result["rows"]}
        atomic_write_text(out / TASKS / f"{key}.json", json.dumps(data, indent=2) + "\n")
        stored[key] = data
        ran.append(key)
        if monitor is not None:
            monitor(len(stored), total, float(len(stored)), key)

    def on_progress(units: list[float], stages: list[int]) -> None:
        if monitor is not None:
            running = sum(u for p, u in zip(todo, units, strict=True) if p.key not in stored)
            monitor(len(stored), total, len(stored) + running, None)

    if monitor is not None:
        monitor(len(stored), total, float(len(stored)), None)
    jobs = [(p, cfg, train_config(cfg, p) if cfg.train.steps else None) for p in todo]
    try:
        run_tasks(
            run_point,
            jobs,
            workers,
            backend,
            names=[f"sweep task {p.key}" for p in todo],
            on_progress=on_progress,
            on_result=on_result,
            keep_going=True,
            every=0.5,
        )
    except TaskError as e:
        raise TaskError(f"{e}; the {len(stored)} finished tasks are stored: run the sweep again to resume") from e
    rows = [row for p in points for row in stored[p.key]["rows"]]
    write_results(out, config, rows)
    return SweepResult(rows, ran, [p.key for p in points if p.key not in ran], moved)


@dataclass(frozen=True, kw_only=True)
class SweepOptions(Backends, Quiet):
    """``agurk sweep``'s options (:func:`sweep`)."""

    config: str = option(REQUIRED, metavar="CONFIG.yaml", positional=True)
    """the sweep config (see configs/sweep_tiny.yaml)"""
    out: str = option(REQUIRED, metavar="DIR")
    """results folder: new or empty, or this sweep's own folder to resume it"""
    workers: int | None = option(None, low=1, metavar="W")
    """tasks run side by side: local worker processes, or the CPUs of a local Ray instance (default: the CPU count)"""
    force: bool = False
    """move an --out folder that is not this sweep's aside and start afresh"""


def sweep(options: SweepOptions, monitor: Monitor | None = None) -> SweepResult:
    """``agurk sweep``: run (or resume) the sweep config of ``options`` into ``--out`` and write its results table."""
    backend = options.tasks_backend()
    cfg = load_sweep(options.config)
    return run_sweep(cfg, Path(options.out), worker_count(options.workers), backend, options.force, monitor)


def write_results(out: Path, config: dict[str, Any], rows: list[SweepRow]) -> None:
    """``results.json``, ``results.csv`` and ``results.png`` (:func:`plot_sweep`) of the rows."""
    data: Results = {"format": FORMAT, "config": config, "columns": list(COLUMNS), "rows": rows}
    atomic_write_text(out / "results.json", json.dumps(data, indent=2) + "\n")
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    by_column: Sequence[Mapping[str, object]] = rows
    writer.writerows([row[c] for c in COLUMNS] for row in by_column)
    atomic_write_text(out / "results.csv", text.getvalue())
    plot_sweep(rows, out / "results.png")


def plot_sweep(rows: list[SweepRow], path: Path) -> None:
    """``results.png`` of ``agurk sweep``: each agent's win rate at each grid point, 95% intervals, the fair share."""
    plt = pyplot()
    keys = list(dict.fromkeys(r["key"] for r in rows))
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    y = np.arange(len(keys))
    step = 0.8 / len(agents)
    fig, ax = plt.subplots(figsize=(8, 1.4 + 0.35 * len(keys)))
    for j, agent in enumerate(agents):
        mine = [r for r in rows if r["agent"] == agent]
        at = np.array([keys.index(r["key"]) for r in mine]) - 0.4 + (j + 0.5) * step
        cis = [[r["win_rate_low"], r["win_rate_high"]] for r in mine]
        values, err = error_bars([r["win_rate"] for r in mine], cis, cap=1.0)
        ax.errorbar(values, at, xerr=err, fmt="o", ms=3, capsize=2, label=agent)
    fair = {r["key"]: 1 / r["players"] for r in rows}
    names = {r["key"]: f"{r['key']} ({r['override']})" if r["override"] else r["key"] for r in rows}
    ax.scatter([fair[k] for k in keys], y, marker="|", s=150, color="black", label="fair share")
    ax.set_yticks(y, [names[k] for k in keys])
    ax.invert_yaxis()
    ax.set_xlabel(f"win rate against {rows[0]['opponent']} in every other seat")
    ax.set_title("Sweep: the focal agents' win rates per grid point")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def results_table(rows: list[SweepRow], title: str) -> Table:
    """A sweep's rows (:data:`COLUMNS`) as a rich table: each statistic with its 95% interval."""
    from rich.table import Table

    keys = ("preset", "players", "hand_size", "seed", "override", "agent", "opponent", "deals")
    stats = (
        ("win rate", "win_rate", 3),
        ("penalty", "mean_penalty", 2),
        ("last trick", "last_trick_rate", 3),
        ("rating", "rating", 0),
    )
    table = Table(title=title, title_justify="left")
    for key in keys:
        name = "hand" if key == "hand_size" else key
        table.add_column(name, justify="right" if key in ("players", "hand_size", "seed", "deals") else "left")
    for name, _, _ in stats:
        table.add_column(name)
    for row in rows:
        r: Mapping[str, object] = row
        cells = [str(r[k]) for k in keys]
        for _, key, digits in stats:
            cells.append(f"{r[key]:.{digits}f} [{r[f'{key}_low']:.{digits}f}, {r[f'{key}_high']:.{digits}f}]")
        table.add_row(*cells)
    return table
