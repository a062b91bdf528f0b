"""``agurk skill-report``: measure which rule variants favour skill (agent ladder, relative skill, N*)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agurk.cli.common import (
    PROG,
    CliError,
    Formatter,
    positive,
    rl_extra_error,
    start_bar,
    stderr_console,
    stdout_console,
)
from agurk_env.rules import PRESETS, Rules


def add_parser(sub: Any) -> None:
    """Register ``agurk skill-report`` on the subcommands ``sub``."""
    from skill.budget import BUDGETS

    p = sub.add_parser(
        "skill-report",
        help="measure which rule variants favour skill: agent ladder, relative skill, N*, with 95%% CIs",
        formatter_class=Formatter,
        description=(
            "For each variant (a rule preset), an agent ladder (random, every heuristic, PIMC at two\n"
            "world counts, a PPO agent trained for the variant, and the oracle, which sees every card)\n"
            "plays focal-vs-field: each agent takes one seat against copies of the strongest heuristic\n"
            "(guard), on the same duplicate deals, rotated through every seat. Per variant, with 95%\n"
            "bootstrap intervals over deals: relative skill RS = (R_best - R_random) / (R_oracle -\n"
            "R_random) by win rate and by penalty, the skill share of outcome variance and N* (matches\n"
            "until skill outweighs luck), the ladder's Plackett-Luce rating spread and the upset rate.\n"
            "\n"
            "Writes report.md, report.json, report.csv, ladder.csv, rs.png, ladder.png and each\n"
            "variant's PPO checkpoint into --out. Variants run in parallel worker processes; the same\n"
            "seed gives the same report. docs/skill_report.md explains every statistic.\n"
            "\n"
            "budgets (deals per agent, PPO decisions per variant, default variants):\n"
            + "".join(
                f"  {b.name:<6} {b.deals:>4} deals, {b.train_steps / 1e6:g}M decisions, "
                f"{len(b.variants)} variants{' (every preset)' if len(b.variants) == len(PRESETS) else ''}\n"
                for b in BUDGETS.values()
            )
        ),
        epilog=(
            "examples:\n"
            "  agurk skill-report --budget smoke\n"
            "  agurk skill-report --variants standard,danish21,swedish --budget small --seed 1 --out runs/skill\n"
            "  agurk skill-report --variants standard --checkpoint standard=runs/quickstart --budget small"
        ),
    )
    p.add_argument(
        "--variants",
        metavar="PRESET,...",
        default=None,
        help="rule presets to compare ('agurk rules' lists them; default: the budget's)",
    )
    p.add_argument("--players", metavar="N", type=int, default=4, help="players at every table (default: 4)")
    p.add_argument(
        "--budget", choices=list(BUDGETS), default="smoke", help="how much to play and train (default: smoke)"
    )
    p.add_argument("--seed", metavar="S", type=int, default=0, help="seed of deals, agents and training (default: 0)")
    p.add_argument("--out", metavar="DIR", default=None, help="report folder (default: runs/skill-report-BUDGET)")
    p.add_argument(
        "--checkpoint",
        metavar="PRESET=PATH",
        action="append",
        default=None,
        help="put this trained checkpoint (file or run folder) on PRESET's ladder instead of training one (repeatable)",
    )
    p.add_argument(
        "--train-config",
        metavar="YAML",
        default=None,
        help="PPO settings for the trained agents (an 'agurk train' config; its preset, players, total_steps, "
        "seed and time_limit are replaced by the report's). Default: the quickstart's settings",
    )
    p.add_argument(
        "--workers",
        metavar="W",
        type=int,
        default=None,
        help="variants run side by side in worker processes (default: one per variant, at most the CPU count)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no table")
    p.set_defaults(func=run)


def _parse_checkpoints(items: Sequence[str] | None, variants: Sequence[str]) -> dict[str, str]:
    """``--checkpoint PRESET=PATH`` items as a dict, each preset one of ``variants``."""
    out: dict[str, str] = {}
    for item in items or ():
        preset, sep, path = item.partition("=")
        preset, path = preset.strip(), path.strip()
        if not sep or not preset or not path:
            raise CliError(f"--checkpoint needs PRESET=PATH, not {item!r}")
        if preset not in variants:
            raise CliError(f"--checkpoint {item!r}: {preset!r} is not one of the variants ({', '.join(variants)})")
        out[preset] = path
    return out


class _SkillMonitor:
    """A rich progress display for ``skill-report``: one bar over the whole run, one line per variant."""

    def __init__(self, console: Any, variants: Sequence[str], enabled: bool) -> None:
        self.console, self.variants, self.enabled = console, list(variants), enabled
        self._bar: Any = None
        self._tasks: list[Any] = []

    def __enter__(self) -> Callable[[list[float], list[float], list[str]], None] | None:
        if not self.enabled:
            return None
        from rich.progress import TaskProgressColumn

        self._bar = start_bar(self.console, TaskProgressColumn())
        self._overall = self._bar.add_task("all variants", total=1.0)
        self._tasks = [self._bar.add_task(f"  {v}: waiting", total=1.0) for v in self.variants]
        return self.update

    def update(self, done: list[float], totals: list[float], stages: list[str]) -> None:
        """Show each variant's share done and stage, and the whole run's."""
        for task, name, d, t, stage in zip(self._tasks, self.variants, done, totals, stages, strict=True):
            self._bar.update(task, completed=min(d / t, 1.0), description=f"  {name}: {stage}")
        self._bar.update(self._overall, completed=min(sum(done) / sum(totals), 1.0))

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def run(args: argparse.Namespace) -> int:
    """Measure which variants favour skill: ladder vs field per variant, RS / N* / spread / upsets, report files."""
    try:
        from agents.policy import CheckpointError
        from skill.budget import BUDGETS
        from skill.report import command_line, skill_report
        from training.config import ConfigError, config_to_dict, load_config
    except ImportError as e:  # torch and matplotlib are optional dependencies
        raise rl_extra_error("agurk skill-report", (e.name or "torch").split(".")[0]) from None
    budget = BUDGETS[args.budget]
    variants = [v.strip() for v in args.variants.split(",")] if args.variants else list(budget.variants)
    for v in variants:
        if v not in PRESETS:
            raise CliError(f"--variants: unknown preset {v!r}; presets are: {', '.join(PRESETS)}")
    if len(set(variants)) != len(variants):
        raise CliError(f"--variants names a preset twice: {args.variants}")
    positive("--players", args.players)
    positive("--workers", args.workers)
    if args.seed < 0:
        raise CliError(f"--seed must be >= 0, not {args.seed}")
    for v in variants:
        Rules.preset(v, players=args.players)  # a RulesError names the problem
    checkpoints = _parse_checkpoints(args.checkpoint, variants)
    from agents.registry import AgentSpecError, make_agent

    for preset, path in checkpoints.items():
        try:
            agent = make_agent(f"ppo:{path}", 0, 0)
        except AgentSpecError as e:
            raise CliError(f"--checkpoint {preset}={path}: {e}") from None
        actions = Rules.preset(preset, players=args.players).num_actions
        if agent.net.actions < actions:
            raise CliError(
                f"--checkpoint {preset}={path}: the network has {agent.net.actions} actions, {preset} needs {actions}"
            )
    settings = None
    if args.train_config:
        try:
            settings = config_to_dict(load_config(args.train_config))
        except (ConfigError, CheckpointError) as e:
            raise CliError(str(e)) from None
    out = Path(args.out or f"runs/skill-report-{args.budget}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"cannot write --out {str(out)!r}: {e.strerror or e}") from None
    command = command_line(variants, args.players, args.budget, args.seed, str(out), checkpoints, args.train_config)
    console = stderr_console()
    start = time.perf_counter()
    try:
        with _SkillMonitor(console, variants, not args.quiet and console.is_terminal) as monitor:
            report = skill_report(
                variants,
                args.players,
                args.budget,
                args.seed,
                out,
                checkpoints,
                settings,
                args.workers,
                monitor,
                command,
            )
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    seconds = time.perf_counter() - start
    if not args.quiet:
        _print_skill_report(report)
    print(f"{len(variants)} variants, {args.budget} budget, {seconds:.0f} s -> {out / 'report.md'}")
    return 0


def _print_skill_report(report: dict[str, Any]) -> None:
    """The ranked variants as a table on stdout."""
    from rich.table import Table

    from skill.report import STAT_KEYS, stat_text

    table = Table(
        title=f"variants ranked by relative skill ({report['budget']}, seed {report['seed']})", title_justify="left"
    )
    for name in ("rank", "variant", "RS win", "RS penalty", "skill share", "N* matches", "rating spread", "upsets"):
        table.add_column(name, justify="right" if name == "rank" else "left")
    for v in report["variants"]:
        table.add_row(str(v["rank"]), v["preset"], *(stat_text(v, k) for k in STAT_KEYS))
    stdout_console().print(table)
