"""The ``agurk`` command: train, evaluate, simulate, show rule presets, list agents, and benchmark.

Every user error (unknown preset, option or value, an impossible combination of options,
a bad agent spec, a file that cannot be written, a count <= 0) is reported as one line
``agurk: error: ...`` on stderr with exit status 2, never a traceback.

``agurk bench`` pins NumPy's thread pools to one thread before NumPy is first loaded
(:func:`main` looks at the command before building the parser, which imports the agents).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from agurk_env.matches import DEFAULT_BATCH
from agurk_env.rules import OPTION_NAMES, PRESETS, Rules, RulesError, parse_option

PROG = "agurk"


class CliError(Exception):
    """A user error: reported as one ``agurk: error: ...`` line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``agurk: error: MESSAGE (see 'PROG --help')`` and exit 2."""
        one_line = " ".join(message.split())
        self.exit(2, f"{PROG}: error: {one_line} (see '{self.prog} --help')\n")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keep the hand-wrapped descriptions and examples; a little wider help column."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


# ----------------------------------------------------------------------------- helpers


def _positive(name: str, value: int | float | None) -> None:
    if value is not None and value <= 0:
        raise CliError(f"{name} must be > 0, not {value}")


def _resolve_rules(preset: str | None, sets: Sequence[str] | None) -> Rules:
    """Resolve the preset (``standard`` when None) with every ``--set OPTION=VALUE`` on top."""
    overrides: dict[str, Any] = {}
    for item in sets or ():
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise CliError(f"--set needs OPTION=VALUE, not {item!r}; options are: {', '.join(OPTION_NAMES)}")
        overrides[name] = parse_option(name, text.strip())
    return Rules.preset(preset or "standard", **overrides)


def _rules_label(preset: str | None, sets: Sequence[str] | None) -> str:
    """Label rules for summaries: ``standard`` or ``danish21 + players=6 + limit=31``."""
    return " + ".join([preset or "standard", *(s.strip() for s in sets or ())])


def _json_default(value: Any) -> Any:
    """Serialize NumPy scalars and arrays that may reach a record."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _open_out(path_text: str) -> tuple[IO[str], Path | None]:
    """Open ``--out`` for writing (creating its parent folders); ``-`` is stdout."""
    if path_text == "-":
        return sys.stdout, None
    path = Path(path_text)
    try:
        if path.parent != Path():
            path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("w", encoding="utf-8", newline="\n"), path
    except OSError as e:
        raise CliError(f"cannot write --out {path_text!r}: {e.strerror or e}") from None


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def _stdout_console() -> Any:
    from rich.console import Console

    return Console()


# ----------------------------------------------------------------------------- simulate


def _cmd_simulate(args: argparse.Namespace) -> int:
    """Play ``--matches`` matches and write their records, one JSON object per line."""
    _positive("--matches", args.matches)
    if args.batch is None:
        args.batch = min(args.matches, DEFAULT_BATCH)
    _positive("--batch", args.batch)
    if args.seed < 0:
        raise CliError(f"--seed must be >= 0, not {args.seed}")
    rules = _resolve_rules(args.rules, args.set)

    from agents.registry import AgentSpecError, make_agents

    try:
        agents = make_agents(args.agents, rules.players, args.seed)
    except AgentSpecError as e:
        raise CliError(str(e)) from None

    from agurk_env.simulate import simulate

    out, path = _open_out(args.out)
    where = str(path) if path is not None else "stdout"
    console = _stderr_console()
    show_progress = not args.quiet and console.is_terminal
    matches = rounds = plays = 0
    start = time.perf_counter()
    try:
        with _Progress(console, args.matches, show_progress) as progress:
            records: Iterator[dict[str, Any]] = simulate(
                rules, agents, args.matches, args.seed, batch=args.batch, with_legal=args.with_legal, progress=progress
            )
            for record in records:
                out.write(json.dumps(record, separators=(",", ":"), default=_json_default))
                out.write("\n")
                matches += 1
                rounds += len(record["rounds"])
                plays += sum(len(trick["plays"]) for rnd in record["rounds"] for trick in rnd["tricks"])
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted after {matches} matches written to {where}", file=sys.stderr)
        return 130
    finally:
        if path is not None:
            out.close()
        else:
            out.flush()
    seconds = time.perf_counter() - start
    if not args.quiet:
        summary = (
            f"{matches} matches, {rounds} rounds, {plays} card plays in {seconds:.2f} s "
            f"({matches / max(seconds, 1e-9):,.1f} matches/s; {_rules_label(args.rules, args.set)}, "
            f"{rules.players} players, seed {args.seed}) -> {where}"
        )
        print(summary, file=sys.stdout if path is not None else sys.stderr)
    return 0


def _start_bar(console: Any, *count: Any) -> Any:
    """A started, transient rich progress display: description, bar, the ``count`` columns, elapsed time, eta."""
    from rich.progress import BarColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        *count,
        TimeElapsedColumn(),
        "eta",
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    bar.start()
    return bar


class _Progress:
    """A transient rich progress bar over ``total`` matches; yields the ``progress(n_done)`` callback."""

    def __init__(self, console: Any, total: int, enabled: bool) -> None:
        self.console, self.total, self.enabled = console, total, enabled
        self._bar: Any = None

    def __enter__(self) -> Callable[[int], None] | None:
        if not self.enabled:
            return None
        from rich.progress import MofNCompleteColumn

        self._bar = _start_bar(self.console, MofNCompleteColumn(), "matches")
        task = self._bar.add_task("simulating", total=self.total)
        bar = self._bar
        return lambda n_done: bar.update(task, completed=n_done)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


# ----------------------------------------------------------------------------- evaluate

DEFAULT_EVAL_BATCH = 4096
"""``evaluate --batch`` default: matches played side by side in each rotation."""


def _cmd_evaluate(args: argparse.Namespace) -> int:
    """Play a duplicate-deal tournament and print (and with ``--json`` write) per-entry statistics."""
    _positive("--matches", args.matches)
    _positive("--batch", args.batch)
    _positive("--bootstrap", args.bootstrap)
    if args.workers is None:
        args.workers = max(1, min(os.cpu_count() or 1, 4))
    _positive("--workers", args.workers)
    if args.seed < 0:
        raise CliError(f"--seed must be >= 0, not {args.seed}")
    rules = _resolve_rules(args.rules, args.set)

    from agents.registry import AgentSpecError, make_agents
    from agents.tournament import parse_entries, tournament

    try:
        specs = parse_entries(args.agents, rules.players)
        make_agents(",".join(specs), rules.players, args.seed)  # check every spec before playing
    except (AgentSpecError, ValueError) as e:
        raise CliError(str(e)) from None
    out: IO[str] | None = None
    if args.json is not None and args.json != "-":
        path = Path(args.json)
        try:
            if path.parent != Path():
                path.parent.mkdir(parents=True, exist_ok=True)
            out = path.open("w", encoding="utf-8", newline="\n")
        except OSError as e:
            raise CliError(f"cannot write --json {args.json!r}: {e.strerror or e}") from None
    console = _stderr_console()
    start = time.perf_counter()
    try:
        with _Progress(console, args.matches * rules.players, not args.quiet and console.is_terminal) as progress:
            result = tournament(
                rules,
                specs,
                args.matches,
                args.seed,
                batch=args.batch,
                resamples=args.bootstrap,
                progress=progress,
                workers=args.workers,
            )
    except KeyboardInterrupt:
        if out is not None:
            out.close()
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    seconds = time.perf_counter() - start
    data = result.to_dict()
    data["seconds"] = round(seconds, 3)
    if out is not None:
        with out:
            json.dump(data, out, indent=2)
            out.write("\n")
    elif args.json == "-":
        print(json.dumps(data, indent=2))
    if not args.quiet or args.json is None:
        _print_evaluation(result, _rules_label(args.rules, args.set), seconds, args.json == "-")
    return 0


def _print_evaluation(result: Any, label: str, seconds: float, to_stderr: bool) -> None:
    """The per-entry table: win rate, penalty per round, last-trick rate and rating with their 95% CIs."""
    from rich.table import Table
    from rich.text import Text

    def num(value: float, fmt: str) -> str:
        text = format(value, fmt)
        return format(0.0, fmt) if float(text) == 0 else text  # no "-0"

    def ci(value: float, low_high: tuple[float, float], fmt: str) -> Text:
        interval = f"[{num(low_high[0], fmt)}, {num(low_high[1], fmt)}]"
        return Text.assemble(f"{num(value, fmt)} ", (interval, "dim"))

    p = result.rules.players
    table = Table(
        title=f"evaluate: {label}, {p} players, seed {result.seed}",
        title_justify="left",
        caption=Text(
            f"{result.deals} deals x {p} seatings = {result.deals * p} matches in {seconds:.1f} s; "
            f"[95% bootstrap CI over deals, {result.resamples} resamples]; rating: Plackett-Luce "
            "on finishing orders, Elo scale (400 * log10 strength), entries' mean 0"
        ),
        caption_justify="left",
    )
    table.add_column("#", justify="right")
    table.add_column("agent", style="bold")
    table.add_column("win rate", justify="right")
    table.add_column("penalty / round", justify="right")
    table.add_column("last trick", justify="right")
    table.add_column("rating", justify="right")
    for i, e in enumerate(result.entries):
        table.add_row(
            str(i),
            e.spec,
            ci(e.win_rate, e.win_rate_ci, ".3f"),
            ci(e.mean_penalty, e.mean_penalty_ci, ".2f"),
            ci(e.last_trick_rate, e.last_trick_rate_ci, ".3f"),
            ci(e.rating, e.rating_ci, "+.0f"),
        )
    console = _stderr_console() if to_stderr else _stdout_console()
    if not console.is_terminal:
        console.width = max(console.width, 132)  # a file or pipe: one line per entry
    console.print(table)


def _cmd_agents(args: argparse.Namespace) -> int:
    """List the agent specs, one line each."""
    from agents.registry import describe

    for line in describe():
        print(line)
    return 0


# ----------------------------------------------------------------------------- rules


def _fmt_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _cmd_rules(args: argparse.Namespace) -> int:
    """Show the presets, or one preset's resolved options."""
    if args.preset is None and not args.set:
        return _show_presets(args.json)
    rules = _resolve_rules(args.preset, args.set)
    defaults = Rules().to_dict()
    resolved = rules.to_dict()
    if args.json:
        print(json.dumps(resolved))
        return 0
    from rich.table import Table

    table = Table(title=f"rules: {_rules_label(args.preset, args.set)}", title_justify="left")
    table.add_column("option", style="bold")
    table.add_column("value")
    table.add_column("default", style="dim")
    for name, value in resolved.items():
        text = _fmt_value(value)
        if value != defaults[name]:
            text = f"[yellow]{text} *[/]"
        table.add_row(name, text, _fmt_value(defaults[name]))
    console = _stdout_console()
    console.print(table)
    console.print("* differs from the defaults; docs/RULES.md explains every option.", highlight=False)
    return 0


def _show_presets(as_json: bool) -> int:
    defaults = Rules().to_dict()
    if as_json:
        print(json.dumps({"defaults": defaults, "presets": PRESETS}))
        return 0
    from rich.table import Table

    table = Table(title="Agurk rule presets", title_justify="left")
    table.add_column("preset", style="bold", no_wrap=True)
    table.add_column("options that differ from the defaults")
    for name, diff in PRESETS.items():
        table.add_row(name, ", ".join(f"{k}={_fmt_value(v)}" for k, v in diff.items()) or "(none: the defaults)")
    console = _stdout_console()
    console.print(table)
    console.print(
        "defaults: " + ", ".join(f"{k}={_fmt_value(v)}" for k, v in defaults.items()),
        highlight=False,
    )
    console.print("Show one preset resolved: agurk rules PRESET [--set OPTION=VALUE ...]", highlight=False)
    return 0


# ----------------------------------------------------------------------------- skill-report


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

        self._bar = _start_bar(self.console, TaskProgressColumn())
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


def _cmd_skill_report(args: argparse.Namespace) -> int:
    """Measure which variants favour skill: ladder vs field per variant, RS / N* / spread / upsets, report files."""
    try:
        from agents.policy import CheckpointError
        from skill.budget import BUDGETS
        from skill.report import command_line, skill_report
        from training.config import ConfigError, config_to_dict, load_config
    except ImportError as e:  # torch and matplotlib are optional dependencies
        raise CliError(f"skill-report needs the rl extra: pip install 'agurk-rl[rl]' ({e.name} missing)") from None
    budget = BUDGETS[args.budget]
    variants = [v.strip() for v in args.variants.split(",")] if args.variants else list(budget.variants)
    for v in variants:
        if v not in PRESETS:
            raise CliError(f"--variants: unknown preset {v!r}; presets are: {', '.join(PRESETS)}")
    if len(set(variants)) != len(variants):
        raise CliError(f"--variants names a preset twice: {args.variants}")
    _positive("--players", args.players)
    _positive("--workers", args.workers)
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
    console = _stderr_console()
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
    _stdout_console().print(table)


# ----------------------------------------------------------------------------- bench


def _cmd_bench_engine(args: argparse.Namespace) -> int:
    """Measure card plays per second of the batched engine and of the scalar reference."""
    from agurk.bench import engine as bench

    _positive("--batch", args.batch)
    _positive("--seconds", args.seconds)
    _positive("--reference-seconds", args.reference_seconds)
    rules = _resolve_rules(args.rules, args.set)
    result = bench.engine_vs_reference(
        rules,
        batch=args.batch,
        seconds=args.seconds,
        reference_seconds=args.reference_seconds,
        seed=args.seed,
        preset=_rules_label(args.rules, args.set),
    )
    if args.json:
        print(json.dumps(result))
        return 0
    eng, ref = result["engine"], result["reference"]
    print(f"rules      {result['preset']}, {rules.players} players, hand size {rules.hand_size}")
    print(
        f"engine     {eng['plays_per_s']:>13,.0f} card plays/s  {eng['matches_per_s']:>10,.0f} matches/s"
        f"  (batch {eng['batch']}, {eng['seconds']:.1f} s, {eng['bytes_per_game']} bytes per game state)"
    )
    print(
        f"reference  {ref['plays_per_s']:>13,.0f} card plays/s  {ref['matches_per_s']:>10,.0f} matches/s"
        f"  (scalar Python, {ref['seconds']:.1f} s)"
    )
    print(f"ratio      {result['ratio']:>12,.1f}x  (engine / reference, one core each)")
    if not result["threads_pinned"]:
        print("note: NumPy was loaded before the thread pools could be pinned to one thread", file=sys.stderr)
    return 0


def _cmd_bench_search(args: argparse.Namespace) -> int:
    """Decisions per second of a search agent, one game at a time and in a batch."""
    from agents.registry import AgentSpecError, parse_spec
    from agurk.bench import engine as bench

    _positive("--seconds", args.seconds)
    _positive("--batch", args.batch)
    try:
        parse_spec(args.agent)
    except AgentSpecError as e:
        raise CliError(str(e)) from None
    result = bench.bench_search(args.agent, seconds=args.seconds, batch=args.batch, seed=args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"agent      {args.agent} (standard rules, 4 players, mid-round positions)")
    print(f"single     {result['single_decisions_per_s']:>10,.1f} decisions/s  (one game per call)")
    print(f"batched    {result['batched_decisions_per_s']:>10,.1f} decisions/s  ({args.batch} games per call)")
    return 0


def _cmd_bench_env(args: argparse.Namespace) -> int:
    """AEC turns per second beside PettingZoo's leduc_holdem_v4, and sb3_vec_env learner steps per second."""
    from agurk.bench.env import bench_env

    _positive("--seconds", args.seconds)
    _positive("--n-envs", args.n_envs)
    rules = _resolve_rules(args.rules, args.set)
    result = bench_env(seconds=args.seconds, rules=rules, n_envs=args.n_envs, seed=args.seed)
    if args.json:
        print(json.dumps(result, default=str))
        return 0

    def rate(key: str) -> str:
        value = result.get(key)
        if value is None:
            return f"{'n/a':>12} ({result.get(key.replace('_per_s', '_error'))})"
        return f"{value:>12,.0f}"

    print(f"rules          {_rules_label(args.rules, args.set)}, {rules.players} players")
    print(f"AEC env        {rate('turns_per_s')} turns/s (random legal play, one game)")
    print(f"leduc_holdem   {rate('leduc_turns_per_s')} turns/s (PettingZoo leduc_holdem_v4, same loop)")
    if result.get("ratio") is not None:
        print(f"ratio          {result['ratio']:>12.2f}x  (Agurk AEC / Leduc)")
    games = result.get("sb3_n_envs")
    print(f"sb3_vec_env    {rate('sb3_steps_per_s')} learner steps/s ({games} games, random opponents)")
    return 0


# ----------------------------------------------------------------------------- train


def _cmd_train(args: argparse.Namespace) -> int:
    """Train a policy from a YAML config into a run folder (or continue one with --resume)."""
    from agents.policy import CheckpointError
    from training.config import ConfigError
    from training.run import default_out, eval_text, execute, resolve_config, resume_checkpoint

    try:
        cfg = resolve_config(args.config, args.resume, args.set)
        resume = resume_checkpoint(args.resume, cfg) if args.resume else None
    except (ConfigError, CheckpointError) as e:
        raise CliError(str(e)) from None
    out = Path(args.out) if args.out else Path(args.resume) if args.resume else default_out(args.config)
    console = _stderr_console()
    try:
        summary = execute(cfg, out, resume, console, not args.quiet and console.is_terminal)
    except (ConfigError, CheckpointError) as e:
        raise CliError(str(e)) from None
    steps = summary["global_step"] - summary["start_step"]
    line = (
        f"{summary['global_step']:,} steps ({steps:,} in this run, {summary['decisions_per_s']:,.0f} steps/s, "
        f"{summary['seconds']:.0f} s); eval vs {cfg.eval.opponent}: {eval_text(summary['eval'])} -> {out}"
    )
    if summary["interrupted"]:
        print(f"{PROG}: interrupted; checkpoint saved: {out / 'checkpoints' / 'latest.pt'}", file=sys.stderr)
        print(f"{PROG}: continue with: agurk train --resume {out}", file=sys.stderr)
        print(line, file=sys.stderr)
        return 130
    print(line)
    return 0


def _cmd_bench_train(args: argparse.Namespace) -> int:
    """Learner decisions per second: the fast trainer beside the SB3 route, same network, same run."""
    from agurk.bench.train import bench_train

    _positive("--seconds", args.seconds)
    _positive("--threads", args.threads)
    result = bench_train(seconds=args.seconds, threads=args.threads, seed=args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"network    {result['network']}, {result['threads']} torch thread(s), standard rules, 4 players")
    for key, label in (
        ("decisions_per_s", "fast (self-play)"),
        ("fast_same_opponents_decisions_per_s", f"fast (vs {result['opponents']})"),
        ("sb3_decisions_per_s", f"SB3 (vs {result['opponents']})"),
    ):
        print(f"{label:<22} {result[key]:>12,.0f} decisions/s")
    print(f"{'ratio':<22} {result['ratio']:>12.1f}x  fast self-play / SB3")
    same = result["ratio_same_opponents"]
    print(f"{'ratio, same opponents':<22} {same:>12.1f}x  fast / SB3, both vs {result['opponents']}")
    return 0


# ----------------------------------------------------------------------------- parser


# ----------------------------------------------------------------------------- play / replay


def _cmd_play(args: argparse.Namespace) -> int:
    """Play one seat of a match against agents in the terminal."""
    if args.seed < 0:
        raise CliError(f"--seed must be >= 0, not {args.seed}")
    rules = _resolve_rules(args.rules, args.set)
    if args.record is not None:
        parent = Path(args.record).parent
        if not parent.is_dir():
            raise CliError(f"cannot write --record {args.record!r}: folder {str(parent)!r} does not exist")

    from agents.registry import AgentSpecError
    from agurk.play import PlayError, play

    try:
        return play(rules, args.opponents, args.seat, args.seed, args.record)
    except (AgentSpecError, PlayError) as e:
        raise CliError(str(e)) from None
    except OSError as e:
        raise CliError(f"cannot write --record {args.record!r}: {e.strerror or e}") from None


def _cmd_replay(args: argparse.Namespace) -> int:
    """Show a recorded match trick by trick."""
    from agurk.replay import ReplayError, load_record, replay

    try:
        return replay(load_record(args.file, args.match), show_all=args.all)
    except ReplayError as e:
        raise CliError(str(e)) from None


_RULES_HELP = "rule preset to start from (default: standard); 'agurk rules' lists them"
_SET_HELP = (
    "override one rule option on top of the preset; repeat for more "
    "(e.g. --set players=6 --set limit=21). Options: " + ", ".join(OPTION_NAMES)
)


def _add_rules_options(p: argparse.ArgumentParser, positional: bool = False) -> None:
    if not positional:
        p.add_argument("--rules", metavar="PRESET", default="standard", help=_RULES_HELP)
    p.add_argument("--set", metavar="OPTION=VALUE", action="append", default=[], help=_SET_HELP)


def build_parser() -> argparse.ArgumentParser:
    """Build the ``agurk`` argument parser with its subcommands."""
    parser = _Parser(
        prog=PROG,
        formatter_class=_Formatter,
        description=(
            "Agurk (Gurka), the Nordic last-trick card game: train agents from configs, evaluate\n"
            "them in duplicate-deal tournaments, simulate matches to JSON Lines game records,\n"
            "inspect the rule presets, and benchmark the engine, environments, search and trainer.\n"
            "The rules are specified in docs/RULES.md."
        ),
        epilog=(
            "examples:\n"
            "  agurk simulate --rules standard --agents random --matches 1000 --seed 0 --out runs/sim.jsonl\n"
            "  agurk evaluate --agents guard,random,random,random --matches 1000 --seed 0\n"
            "  agurk agents\n"
            "  agurk rules\n"
            "  agurk rules danish21 --set players=6\n"
            "  agurk train configs/quickstart.yaml --out runs/quickstart\n"
            "  agurk skill-report --budget smoke\n"
            "  agurk bench engine --seconds 5\n"
            "\n"
            "Run 'agurk COMMAND --help' for the options of a command."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=_Parser)

    # simulate
    from agents.registry import AGENTS

    p = sub.add_parser(
        "simulate",
        help="play matches and write their game records as JSON Lines",
        formatter_class=_Formatter,
        description=(
            "Play N whole matches with the batched engine and write one game record per line\n"
            "(the RULES.md 'Game records' format, plus the match number) to --out, in match order.\n"
            "\n"
            "Seeds: match m of seed S is dealt the same cards whatever --batch is; seat s's agent\n"
            "draws its randomness from numpy.random.default_rng([S, s]). The same command line\n"
            "always writes the same file."
        ),
        epilog=(
            "examples:\n"
            "  agurk simulate --rules standard --agents random --matches 1000 --seed 0 --out runs/sim.jsonl\n"
            "  agurk simulate --rules danish21 --set players=6 --agents random --matches 100 --seed 1 --out d6.jsonl\n"
            "  agurk simulate --rules lives --set players=3 --agents random,random,random --matches 10 --out -"
        ),
    )
    _add_rules_options(p)
    p.add_argument(
        "--agents",
        metavar="SPEC[,SPEC...]",
        default="random",
        help=(
            "who plays: one agent spec for every seat, or a comma-separated spec per seat "
            "(exactly 'players' of them; seat 0 deals the first round). Default: random. Known specs: "
            + "; ".join(f"{kind.usage} ({kind.help})" for kind in AGENTS.values())
        ),
    )
    p.add_argument("--matches", metavar="N", type=int, required=True, help="number of matches to play (> 0)")
    p.add_argument("--seed", metavar="S", type=int, default=0, help="seed of the deals and agents (>= 0; default: 0)")
    p.add_argument(
        "--out",
        metavar="FILE.jsonl",
        required=True,
        help="output file, overwritten; its folder is created if missing; '-' writes to stdout",
    )
    p.add_argument(
        "--batch",
        metavar="B",
        type=int,
        default=None,
        help=f"matches played side by side by the engine (> 0; default: min(N, {DEFAULT_BATCH})). The deals "
        "never depend on it, but random agents' choices do: keep it fixed to reproduce a file",
    )
    p.add_argument(
        "--with-legal",
        action="store_true",
        help="add to every trick a 'legal' list: the legal cards of each play (larger files, for replay checks)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary line")
    p.set_defaults(func=_cmd_simulate)

    # evaluate
    p = sub.add_parser(
        "evaluate",
        help="duplicate-deal tournament: win rates, penalties, last tricks and ratings with 95%% CIs",
        formatter_class=_Formatter,
        description=(
            "Play a tournament between the entries of --agents (one spec per seat; the same spec\n"
            "may appear several times, entries are told apart by position). Duplicate deals: each\n"
            "of the --matches deals (match m of --seed) is played once per rotation, rotation r\n"
            "putting entry i in seat (i + r) % players, so every entry gets every seat's cards;\n"
            "players x --matches matches are played in all.\n"
            "\n"
            "Per entry: match win rate (a win shared by k counts 1/k), mean penalty per round\n"
            "played, rate of taking the last trick, each with a 95% bootstrap CI over deals, and a\n"
            "Plackett-Luce rating from the finishing orders (Elo scale, entries' mean 0) with a\n"
            "bootstrap CI. The same command line always gives the same numbers. docs/evaluate.md\n"
            "explains the statistics."
        ),
        epilog=(
            "examples:\n"
            "  agurk evaluate --agents guard,random,random,random --matches 1000 --seed 0\n"
            "  agurk evaluate --agents shed,guard,counter,ducker --matches 10000 --seed 0 --json runs/h.json\n"
            "  agurk evaluate --rules every_trick --set players=3 --agents ducker,guard,random --matches 500"
        ),
    )
    _add_rules_options(p)
    p.add_argument(
        "--agents",
        metavar="SPEC,SPEC,...",
        required=True,
        help="the entries: exactly one agent spec per seat ('agurk agents' lists the specs)",
    )
    p.add_argument(
        "--matches", metavar="N", type=int, required=True, help="number of deals (> 0); each is played once per seat"
    )
    p.add_argument("--seed", metavar="S", type=int, default=0, help="seed of the deals and agents (>= 0; default: 0)")
    p.add_argument(
        "--json",
        metavar="FILE",
        default=None,
        help="also write the results as one JSON object (rules, seed, matches, entries, ...); '-' prints it to "
        "stdout and the table to stderr",
    )
    p.add_argument(
        "--batch",
        metavar="B",
        type=int,
        default=DEFAULT_EVAL_BATCH,
        help=f"matches played side by side (> 0; default: {DEFAULT_EVAL_BATCH}; lower it for search agents "
        "if memory is short). Random agents' choices depend on it: keep it fixed to reproduce a result",
    )
    p.add_argument(
        "--bootstrap", metavar="R", type=int, default=1000, help="bootstrap resamples for the CIs (> 0; default: 1000)"
    )
    p.add_argument(
        "--workers",
        metavar="W",
        type=int,
        default=None,
        help="processes that play the rotations side by side (> 0; default: the CPU count, at most 4); runs of "
        "fewer than 4000 matches use one. The numbers do not depend on it",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, and no table when --json is given")
    p.set_defaults(func=_cmd_evaluate)

    # skill-report
    from skill.budget import BUDGETS

    p = sub.add_parser(
        "skill-report",
        help="measure which rule variants favour skill: agent ladder, relative skill, N*, with 95%% CIs",
        formatter_class=_Formatter,
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
    p.set_defaults(func=_cmd_skill_report)

    # agents
    p = sub.add_parser(
        "agents",
        help="list the agent specs that --agents takes",
        formatter_class=_Formatter,
        description="List every agent spec, one line each: how it is written and what it does.",
    )
    p.set_defaults(func=_cmd_agents)

    # rules
    p = sub.add_parser(
        "rules",
        help="list the rule presets, or show one preset's resolved options",
        formatter_class=_Formatter,
        description=(
            "Without PRESET: a table of the presets and the options in which each differs from\n"
            "the defaults. With PRESET and/or --set: every option of the resolved rules, as\n"
            "'agurk simulate --rules PRESET --set ...' would play them."
        ),
        epilog="examples:\n  agurk rules\n  agurk rules every_trick\n  agurk rules danish21 --set players=6 --json",
    )
    p.add_argument("preset", metavar="PRESET", nargs="?", default=None, help="preset to resolve (default: none)")
    _add_rules_options(p, positional=True)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_cmd_rules)

    # train
    p = sub.add_parser(
        "train",
        help="train a policy with PPO from a YAML config (checkpoints, TensorBoard, evaluations)",
        formatter_class=_Formatter,
        description=(
            "Train a policy from CONFIG.yaml (configs/quickstart.yaml and one config per headline preset\n"
            "are in configs/; docs/training.md explains every key). Writes a run folder: config.yaml\n"
            "(resolved), TensorBoard logs, checkpoints/latest.pt and best.pt (best evaluation against\n"
            "the heuristics), and eval.json (the last evaluation). Ctrl-C saves latest.pt; --resume\n"
            "continues from it. A checkpoint plays as the agent 'ppo:RUN/checkpoints/best.pt'."
        ),
        epilog=(
            "examples:\n"
            "  agurk train configs/quickstart.yaml\n"
            "  agurk train configs/quickstart.yaml --out runs/qs --set total_steps=2000000\n"
            "  agurk train --resume runs/qs\n"
            "  agurk evaluate --agents ppo:runs/qs/checkpoints/best.pt,heuristic,heuristic,heuristic"
        ),
    )
    p.add_argument("config", metavar="CONFIG.yaml", nargs="?", default=None, help="the training config")
    p.add_argument("--out", metavar="DIR", default=None, help="run folder (default: runs/<config>-<date>-<time>)")
    p.add_argument(
        "--resume",
        metavar="DIR",
        default=None,
        help="continue the run in DIR from checkpoints/latest.pt (config: CONFIG.yaml if given, else DIR/config.yaml)",
    )
    p.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a config key (dotted for sections: --set pool.self_play=0.5); repeatable",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_train)

    # play
    p = sub.add_parser(
        "play",
        help="play one seat of a match against agents in the terminal",
        formatter_class=_Formatter,
        description=(
            "Play a whole match in one seat against agents. Each turn shows the scores, the trick\n"
            "so far, your hand by strength, and the legal cards with the reason. Type a card name\n"
            "(10, K, a) or #number from your hand; q quits."
        ),
        epilog="examples:\n  agurk play\n  agurk play --rules danish21 --set players=3 --opponents guard --seed 7",
    )
    _add_rules_options(p)
    p.add_argument(
        "--opponents",
        metavar="SPEC[,SPEC...]",
        default="random",
        help="the agents: one spec for every other seat, or one per other seat in seat order (default: random)",
    )
    p.add_argument("--seat", metavar="N", type=int, default=0, help="your seat (default: 0, the first dealer)")
    p.add_argument("--seed", metavar="S", type=int, default=0, help="seed of the deals and agents (>= 0; default: 0)")
    p.add_argument("--record", metavar="FILE", default=None, help="write the match record (one JSON line) at the end")
    p.set_defaults(func=_cmd_play)

    # replay
    p = sub.add_parser(
        "replay",
        help="step through a recorded match trick by trick, all hands shown",
        formatter_class=_Formatter,
        description="Show a match of a JSON Lines record file trick by trick: n/Enter next, p previous, q quit.",
        epilog="examples:\n  agurk replay runs/sim.jsonl --match 3\n  agurk replay runs/sim.jsonl --all",
    )
    p.add_argument("file", metavar="FILE.jsonl", help="a record file (agurk simulate --out, agurk play --record)")
    p.add_argument("--match", metavar="K", type=int, default=0, help="which record of the file, 0-based (default: 0)")
    p.add_argument("--all", action="store_true", help="print the whole match at once (non-interactive)")
    p.set_defaults(func=_cmd_replay)

    # bench
    p = sub.add_parser(
        "bench",
        help="measure speed beside a reference: engine, env, search, train",
        formatter_class=_Formatter,
        description=(
            "Benchmarks, each beside a reference measured in the same run: engine (vs the scalar\n"
            "reference), env (vs PettingZoo's leduc_holdem_v4), search (PIMC decisions/s), train\n"
            "(vs sb3-contrib's MaskablePPO). 'agurk bench BENCH --help' for each."
        ),
    )
    bench_sub = p.add_subparsers(dest="bench", metavar="BENCH", title="benchmarks", parser_class=_Parser)
    p.set_defaults(func=lambda a: _missing_subcommand(p))
    b = bench_sub.add_parser(
        "engine",
        help="card plays per second: batched engine vs scalar reference",
        formatter_class=_Formatter,
        description=(
            "Random legal play of whole matches (dealing, tricks, scoring, elimination, restarts)\n"
            "with the batched engine for about --seconds, then with the scalar Python reference\n"
            "(agurk_env.reference) for about --reference-seconds, in the same process on one core\n"
            "(OMP_NUM_THREADS and friends are set to 1 before NumPy is loaded). Prints card plays\n"
            "per second of both, their ratio, and the bytes of one game's state."
        ),
        epilog=(
            "examples:\n"
            "  agurk bench engine\n"
            "  agurk bench engine --batch 16384 --seconds 10\n"
            "  agurk bench engine --rules danish21 --set players=6 --json"
        ),
    )
    _add_rules_options(b)
    b.add_argument(
        "--batch", metavar="B", type=int, default=4096, help="games played side by side (> 0; default: 4096)"
    )
    b.add_argument(
        "--seconds", metavar="S", type=float, default=5.0, help="how long to run the engine (> 0; default: 5)"
    )
    b.add_argument(
        "--reference-seconds",
        metavar="S",
        type=float,
        default=None,
        help="how long to run the scalar reference (> 0; default: min(--seconds, 3))",
    )
    b.add_argument(
        "--seed", metavar="S", type=int, default=0, help="seed of the deals and the random play (default: 0)"
    )
    b.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (plays_per_s, reference_plays_per_s, ratio, batch, bytes_per_game, rules, ...)",
    )
    b.set_defaults(func=_cmd_bench_engine)
    b = bench_sub.add_parser(
        "env",
        help="environment speed: AEC turns/s beside PettingZoo's leduc_holdem_v4, and sb3_vec_env steps/s",
        formatter_class=_Formatter,
        description=(
            "Plays random legal turns through the PettingZoo AEC env (one game) and through PettingZoo's\n"
            "leduc_holdem_v4 with the same loop, in this process, for about --seconds each, then steps\n"
            "sb3_vec_env (--n-envs games on the batched engine) with random opponents."
        ),
        epilog="examples:\n  agurk bench env\n  agurk bench env --seconds 10 --json",
    )
    _add_rules_options(b)
    b.add_argument("--seconds", metavar="S", type=float, default=3.0, help="time per measurement (> 0; default: 3)")
    b.add_argument("--n-envs", metavar="N", type=int, default=1024, help="sb3_vec_env games (> 0; default: 1024)")
    b.add_argument("--seed", metavar="S", type=int, default=0, help="seed (default: 0)")
    b.add_argument("--json", action="store_true", help="print one JSON object with every figure")
    b.set_defaults(func=_cmd_bench_env)
    b = bench_sub.add_parser(
        "search",
        help="decisions per second of a search agent (pimc by default)",
        formatter_class=_Formatter,
        description=(
            "Asks the agent for decisions in mid-round standard positions for about --seconds,\n"
            "one game per call (as an environment does) and --batch games per call (as a\n"
            "tournament does), and prints both rates."
        ),
        epilog="examples:\n  agurk bench search\n  agurk bench search --agent pimc:worlds=64 --json",
    )
    b.add_argument("--agent", metavar="SPEC", default="pimc", help="agent spec (default: pimc, worlds=16)")
    b.add_argument("--seconds", metavar="S", type=float, default=3.0, help="time per measurement (> 0; default: 3)")
    b.add_argument("--batch", metavar="B", type=int, default=64, help="games per batched call (> 0; default: 64)")
    b.add_argument("--seed", metavar="S", type=int, default=0, help="seed (default: 0)")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.set_defaults(func=_cmd_bench_search)
    b = bench_sub.add_parser(
        "train",
        help="learner decisions per second: fast PPO trainer vs SB3 MaskablePPO, same network",
        formatter_class=_Formatter,
        description=(
            "Trains for about --seconds each, in this process: the fast trainer (training/ppo.py) in\n"
            "self-play and against random opponents, then sb3-contrib's MaskablePPO on sb3_vec_env\n"
            "against random opponents, all with the same network (MLP 362-128-128, linear heads) and\n"
            "PPO settings (the quickstart's). A decision is one card chosen by the learner, collected and trained on;\n"
            "the rate is decisions over wall time after one warm-up update."
        ),
        epilog="examples:\n  agurk bench train\n  agurk bench train --seconds 30 --json",
    )
    b.add_argument("--seconds", metavar="S", type=float, default=20.0, help="time per trainer (> 0; default: 20)")
    b.add_argument("--threads", metavar="N", type=int, default=1, help="torch threads (> 0; default: 1)")
    b.add_argument("--seed", metavar="S", type=int, default=0, help="seed (default: 0)")
    b.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (decisions_per_s, sb3_decisions_per_s, ratio, ...) as the last line",
    )
    b.set_defaults(func=_cmd_bench_train)
    return parser


def _missing_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``agurk`` command line; return the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    if next((w for w in words if not w.startswith("-")), None) == "bench":
        from agurk.bench import engine as bench

        bench.pin_threads()  # before anything imports NumPy
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) and argument errors (2)
        return e.code if isinstance(e.code, int) else 2
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.func(args)
    except (CliError, RulesError) as e:
        _report(str(e))
        return 2
    except BrokenPipeError:  # e.g. `agurk simulate --out - | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 1


def _report(message: str) -> None:
    """Print one ``agurk: error: ...`` line on stderr."""
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
