"""``agurk skill-report``: which rule variants favour skill (agent ladder, relative skill, N*); the variant atlas."""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agurk.cli.common import (
    Backends,
    CliError,
    Formatter,
    Quiet,
    Seeded,
    Subcommands,
    add_options,
    backend_of,
    from_args,
    rl_extra_error,
    start_bar,
    stderr_console,
    task_errors,
)
from agurk.cli.stop_signals import stopped
from agurk.cli.train_progress import LOG_SECONDS, clock
from agurk_env.options import option, split_list
from agurk_env.rules import PRESETS, Rules
from skill.budget import BUDGETS, BudgetName, Policy

DESCRIPTION = (
    "For each variant (a rule preset), an agent ladder (random, every heuristic, PIMC at two\n"
    "world counts, PIMC on the exact solver (best's search), a PPO agent trained for the variant\n"
    "or the zoo's universal network (the same network in every variant), and two that see every\n"
    "card: the maxN oracle and the fictive player,\n"
    "the exact best response to the field) plays focal-vs-field: each agent takes one seat\n"
    "against copies of the strongest heuristic (guard), on the same duplicate deals, rotated\n"
    "through every seat. Per variant, with 95% bootstrap intervals over deals: relative skill\n"
    "RS = (R_best - R_random) / (R_fictive - R_random) by win rate and by penalty, with its two\n"
    "parts, the learning effect R_best - R_random and the random effect R_fictive - R_best (the\n"
    "gap from the best real agent to the fictive player), the skill share of outcome variance\n"
    "and N* (matches until skill outweighs luck), the ladder's Plackett-Luce rating spread and\n"
    "the upset rate.\n"
    "\n"
    "Writes report.md, report.json, report.csv, ladder.csv, rs.png, ladder.png and each\n"
    "variant's PPO checkpoint into --out. Variants run in parallel worker processes (or as Ray\n"
    "tasks: --backend ray); the same seed gives the same report. docs/skill_report.md explains\n"
    "every statistic.\n"
    "\n"
    "The variant atlas: several --players and/or --hand-sizes run every preset at every\n"
    "combination (each cell a variant; those whose cards do not fit the deck are left out, and\n"
    "said so) and write atlas.md, atlas.json, atlas.csv, atlas-ladder.csv and per preset a\n"
    "heatmap of RS and N* with their intervals (heatmaps/PRESET.png). --policy zoo puts the\n"
    "zoo's universal network (zoo:universal) in every cell instead of training a PPO agent.\n"
    "\n"
    "--cache DIR keeps every ladder table played and reads it back in later runs, so a report\n"
    "re-run after one agent changed plays only that agent (the files are the same). --convergence\n"
    "plays earlier checkpoints of the network on the same deals and writes convergence.md, .json,\n"
    ".csv and .png: RS at each training budget and whether the variants' ranking is stable.\n"
    "\n"
    "budgets (deals per agent, PPO decisions per variant, default variants):\n"
    + "".join(
        f"  {b.name:<6} {b.deals:>4} deals, {b.train_steps / 1e6:g}M decisions, "
        f"{len(b.variants)} variants{' (every preset)' if len(b.variants) == len(PRESETS) else ''}\n"
        for b in BUDGETS.values()
    )
)
"""``agurk skill-report --help``: what the command does, and the budgets."""
EXAMPLES = (
    "examples:\n"
    "  agurk skill-report --budget smoke\n"
    "  agurk skill-report --variants standard,danish21,swedish --budget small --seed 1 --out runs/skill\n"
    "  agurk skill-report --variants standard --checkpoint standard=runs/quickstart --budget small"
    " --out runs/skill-mine\n"
    "  agurk skill-report --budget full --backend ray --ray-address auto --workers 17\n"
    "  agurk skill-report --variants standard,swedish --policy zoo --budget small --out runs/skill-zoo\n"
    "  agurk skill-report --budget full --policy zoo --cache runs/skill-cache \\\n"
    "    --convergence runs/net/step-8M.pt,runs/net/step-47M.pt     # RS at 3 training budgets\n"
    "  agurk skill-report --variants standard,free_choice --players 3,4 --hand-sizes 5,7 --policy zoo \\\n"
    "    --budget smoke --deals 20 --backend ray      # an atlas of 8 cells, minutes"
)
"""``agurk skill-report --help``: the examples."""


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


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk skill-report`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "skill-report",
        help="measure which rule variants favour skill: agent ladder, relative skill, N*, with 95%% CIs",
        formatter_class=Formatter,
        description=DESCRIPTION,
        epilog=EXAMPLES,
    )
    add_options(
        p,
        SkillReportOptions,
        docs={"seed": "seed of deals, agents and training", "quiet": "no progress bar, progress lines or table"},
    )
    p.set_defaults(func=run)


def _distinct(option: str, values: list[int]) -> list[int]:
    """``values``, refused when one is named twice."""
    if len(set(values)) != len(values):
        raise CliError(f"{option} names a value twice: {','.join(map(str, values))}")
    return values


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
                raise CliError(f"--checkpoint PATH (every variant) is given twice: {bare!r} and {item!r}")
            bare = item.strip()
            if not bare:
                raise CliError("--checkpoint needs PRESET=PATH or PATH, not ''")
            continue
        if not preset or not path:
            raise CliError(f"--checkpoint needs PRESET=PATH or PATH, not {item!r}")
        if preset not in variants:
            raise CliError(f"--checkpoint {item!r}: {preset!r} is not one of the variants ({', '.join(variants)})")
        out[preset] = path
    if bare is not None:
        out = {v: out.get(v, bare) for v in variants}
    return out, bare


class _SkillMonitor:
    """Progress of ``skill-report``: a bar per task (variant or atlas cell) and overall, or plain lines (``lines``).

    On a terminal (``enabled``) one bar over the whole run and one per task; otherwise, with
    ``lines``, one timestamped line per finished task and, every :data:`LOG_SECONDS`, one with
    the share of the whole run done and the time left (the tasks run largest first, so the
    variants tend to finish together, late).
    """

    def __init__(self, console: Any, variants: Sequence[str], enabled: bool, lines: bool = False) -> None:
        self.console, self.variants, self.enabled, self.lines = console, list(variants), enabled, lines
        self._bar: Any = None
        self._tasks: list[Any] = []
        self._finished: set[int] = set()
        self._started = self._logged = time.monotonic()

    def __enter__(self) -> Callable[[list[float], list[float], list[str]], None] | None:
        if self.enabled:
            from rich.progress import TaskProgressColumn

            self._bar = start_bar(self.console, TaskProgressColumn())
            self._overall = self._bar.add_task("all variants", total=1.0)
            self._tasks = [self._bar.add_task(f"  {v}: waiting", total=1.0) for v in self.variants]
            return self.update
        return self.print_finished if self.lines else None

    def update(self, done: list[float], totals: list[float], stages: list[str]) -> None:
        """Show each variant's share done and stage, and the whole run's."""
        for task, name, d, t, stage in zip(self._tasks, self.variants, done, totals, stages, strict=True):
            self._bar.update(task, completed=min(d / t, 1.0), description=f"  {name}: {stage}")
        self._bar.update(self._overall, completed=min(sum(done) / sum(totals), 1.0))

    def print_finished(self, done: list[float], totals: list[float], stages: list[str]) -> None:
        """One timestamped line for each task that has just finished, and one on the whole run now and then."""
        for i, stage in enumerate(stages):
            if stage == "done" and i not in self._finished:
                self._finished.add(i)
                self._say(f"{self.variants[i]}: done ({len(self._finished)}/{len(self.variants)})")
        now = time.monotonic()
        if now - self._logged >= LOG_SECONDS and len(self._finished) < len(self.variants):
            self._logged = now
            share = min(sum(done) / sum(totals), 1.0)
            left = (now - self._started) * (1 - share) / share if share > 0 else None
            eta = f", about {clock(left)} left" if left is not None else ""
            self._say(f"{share:.0%} of the work done, {len(self._finished)}/{len(self.variants)} finished{eta}")

    def _say(self, text: str) -> None:
        self.console.print(f"{time.strftime('%H:%M:%S')} {text}", markup=False, highlight=False)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def command_line(
    args: SkillReportOptions,
    variants: Sequence[str],
    players: list[int],
    hands: list[int],
    out: Path,
    checkpoints: dict[str, str],
    bare: str | None = None,
    convergence: Sequence[str] = (),
) -> str:
    """The ``agurk skill-report`` command that reproduces a report or atlas: the options given, spelled out.

    ``bare`` is the ``--checkpoint PATH`` of every variant not named otherwise. ``--cache``
    is left out: the report is the same with and without it.
    """
    words = ["agurk", "skill-report", "--variants", ",".join(variants), "--players", ",".join(map(str, players))]
    if hands:
        words += ["--hand-sizes", ",".join(map(str, hands))]
    words += ["--budget", args.budget]
    if args.policy is not None:
        words += ["--policy", args.policy]
    if args.deals is not None:
        words += ["--deals", str(args.deals)]
    words += ["--seed", str(args.seed), "--out", str(out)]
    if bare is not None:
        words += ["--checkpoint", bare]
    for preset, path in checkpoints.items():
        if path != bare:
            words += ["--checkpoint", f"{preset}={path}"]
    if args.train_config:
        words += ["--train-config", args.train_config]
    if convergence:
        words += ["--convergence", ",".join(convergence)]
    return " ".join(words)


def _claim(out: Path, force: bool) -> str | None:
    """Make ``out`` the new output folder: missing or empty, else (``force``) the old one moved aside."""
    from agurk.cli.run_folders import folder_error, moved_text
    from training.run_folder import RunFolderError, claim_out

    try:
        moved = claim_out(out, force)
        out.mkdir(parents=True, exist_ok=True)
    except RunFolderError as e:
        raise folder_error(e) from None
    except OSError as e:
        raise CliError(f"cannot write --out {str(out)!r}: {e.strerror or e}") from None
    return moved_text(out, moved, "the report") if moved else None


def run(namespace: argparse.Namespace) -> int:
    """Measure which variants favour skill: ladder vs field per variant (or atlas cell), RS / N* / spread / upsets."""
    args = from_args(SkillReportOptions, namespace)
    backend = backend_of(args)
    try:
        from agents.policy import CheckpointError
        from skill.atlas import atlas
        from skill.cells import grid
        from skill.report import skill_report
        from training.config import ConfigError, config_to_dict, load_config
    except ImportError as e:  # torch and matplotlib are optional dependencies
        raise rl_extra_error("agurk skill-report", (e.name or "torch").split(".")[0]) from None
    budget = BUDGETS[args.budget]
    variants, players, hands = _tables(args, budget.variants)
    policy = args.policy or budget.policy
    plan = dataclasses.replace(budget, policy=policy, deals=args.deals or budget.deals)
    is_atlas = len(players) * max(len(hands), 1) > 1
    if is_atlas:
        cells, left_out = grid(variants, players, hands)
        if not cells:
            raise CliError(f"no cell of the grid fits the deck: {left_out[0]['reason']}")
    else:
        left_out = []
        for v in variants:
            Rules.preset(v, players=players[0], **({"hand_size": hands[0]} if hands else {}))
    checkpoints, bare = _parse_checkpoints(args.checkpoint, variants)
    if policy == "zoo":
        _check_zoo(checkpoints, args.train_config)
    _check_networks(checkpoints, bare)
    convergence = _convergence(args.convergence, policy, checkpoints, bare, variants)
    settings = None
    if args.train_config:
        try:
            settings = config_to_dict(load_config(args.train_config))
        except (ConfigError, CheckpointError) as e:
            raise CliError(str(e)) from None
    out = Path(args.out or f"runs/{'atlas' if is_atlas else 'skill-report'}-{args.budget}")
    moved = _claim(out, args.force)
    command = command_line(args, variants, players, hands, out, checkpoints, bare, convergence)
    console = stderr_console()
    if not args.quiet:
        if moved:
            console.print(moved, markup=False, highlight=False)
        for c in left_out:
            where = f"{c['preset']} {c['players']}p x {c['hand_size']}c"
            console.print(f"left out {where}: {c['reason']}", markup=False, highlight=False)
    names = [c.label for c in cells] if is_atlas else variants
    bar = not args.quiet and console.is_terminal
    start = time.perf_counter()
    try:
        with task_errors(), _SkillMonitor(console, names, bar, lines=not args.quiet) as monitor:
            shared: dict[str, Any] = {  # by name: the two signatures order them differently
                "budget": plan,
                "seed": args.seed,
                "out": out,
                "checkpoints": checkpoints,
                "train_settings": settings,
                "workers": args.workers,
                "monitor": monitor,
                "command": command,
                "backend": backend,
                "cache": args.cache,
                "convergence": convergence,
            }
            if is_atlas:
                rows = atlas(variants, players, hands, **shared)["cells"]
            else:
                rows = skill_report(variants, players[0], hand_size=hands[0] if hands else None, **shared)["variants"]
    except KeyboardInterrupt as e:
        return stopped(e)
    seconds = time.perf_counter() - start
    what = "atlas cells" if is_atlas else "variants"
    if not args.quiet:
        _print_table(rows, f"{what} ranked by relative skill ({args.budget}, seed {args.seed})")
    if is_atlas:
        gone = f" ({len(left_out)} left out: they do not fit the deck)" if left_out else ""
        print(f"{len(cells)} cells{gone}, {args.budget} budget, {seconds:.0f} s -> {out / 'atlas.md'}")
    else:
        print(f"{len(variants)} variants, {args.budget} budget, {seconds:.0f} s -> {out / 'report.md'}")
    return 0


def _tables(args: SkillReportOptions, default: Sequence[str]) -> tuple[list[str], list[int], list[int]]:
    """The variants (``default``: the budget's), player counts and hand sizes asked for, each checked."""
    variants = split_list(args.variants) if args.variants else list(default)
    for v in variants:
        if v not in PRESETS:
            raise CliError(f"--variants: unknown preset {v!r}; presets are: {', '.join(PRESETS)}")
    if len(set(variants)) != len(variants):
        raise CliError(f"--variants names a preset twice: {args.variants}")
    players = _distinct("--players", args.players)
    hands = _distinct("--hand-sizes", args.hand_sizes or [])
    for v in variants:  # a RulesError names the problem
        for n in players:
            Rules.preset(v, players=n, hand_size=1)
        for h in hands:
            Rules.preset(v, players=2, hand_size=h)
    return variants, players, hands


def _check_zoo(checkpoints: dict[str, str], train_config: str | None) -> None:
    """Refuse what ``--policy zoo`` cannot use (checkpoints, a training config), or a zoo without its network."""
    from agents.policy import CheckpointError
    from agents.zoo import UNIVERSAL, path_of

    for flag, given in (("--checkpoint", checkpoints), ("--train-config", train_config)):
        if given:
            raise CliError(f"{flag} needs --policy train: --policy zoo plays the shipped network")
    try:
        path_of(UNIVERSAL)
    except CheckpointError as e:
        raise CliError(f"--policy zoo: {e}") from None


def _check_networks(checkpoints: dict[str, str], bare: str | None) -> None:
    """Refuse a ``--checkpoint`` that is not a policy, or whose network has too few actions for its preset."""
    from agents.registry import AgentSpecError, make_agent

    nets: dict[str, Any] = {}
    for preset, path in checkpoints.items():
        given = path if path == bare else f"{preset}={path}"
        try:
            if path not in nets:
                nets[path] = make_agent(f"ppo:{path}", 0, 0).net
        except AgentSpecError as e:
            raise CliError(f"--checkpoint {given}: {e}") from None
        actions = Rules.preset(preset).num_actions
        if nets[path].actions < actions:
            raise CliError(
                f"--checkpoint {given}: the network has {nets[path].actions} actions, {preset} needs {actions}"
            )


def _convergence(
    given: str | None, policy: str, checkpoints: dict[str, str], bare: str | None, variants: list[str]
) -> list[str]:
    """The ``--convergence`` checkpoints, checked: in training order before the one network every variant plays."""
    convergence = split_list(given) if given else []
    if not convergence:
        return []
    from agents.registry import make_agent
    from agents.zoo import UNIVERSAL, path_of
    from skill.convergence import in_order

    if policy == "zoo":
        network = str(path_of(UNIVERSAL))
    elif bare is not None and set(checkpoints.values()) == {bare}:
        network = bare
    else:
        raise CliError(
            "--convergence needs one network in every variant that the report does not train: --policy zoo, "
            "or --checkpoint PATH"
        )
    try:
        in_order([*convergence, network])
    except ValueError as e:  # CheckpointError too: a file that is not a checkpoint
        raise CliError(f"--convergence: {e}") from None
    actions = max(Rules.preset(v).num_actions for v in variants)
    for path in convergence:
        net = make_agent(f"ppo:{path}", 0, 0).net
        if net.actions < actions:
            raise CliError(f"--convergence {path}: the network has {net.actions} actions, the variants need {actions}")
    return convergence


def _print_table(rows: list[dict[str, Any]], title: str) -> None:
    """Ranked variants (or atlas cells) as a table on stdout."""
    from rich.table import Table

    from agurk.cli.rich_tables import print_table
    from skill.report_text import STAT_KEYS, stat_text

    table = Table(title=title, title_justify="left")
    names = ("rank", "variant", "RS win", "RS win plain", "RS penalty", "skill share", "N* matches", "spread", "upsets")
    for name in names:
        table.add_column(name, justify="right" if name == "rank" else "left")
    for v in rows:
        name = f"{v['preset']} {v['players']}p x {v['hand_size']}c" if "key" in v else v["preset"]
        table.add_row(str(v["rank"]), name, *(stat_text(v, k) for k in STAT_KEYS))
    print_table(table)
