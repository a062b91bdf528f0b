"""``agurk skill-study``: the variant ranking at research grade (replications, tiers, rank intervals, robustness)."""

from __future__ import annotations

import argparse
import json
import shlex
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agurk.cli.common import (
    Backends,
    CliError,
    Formatter,
    Quiet,
    Subcommands,
    add_options,
    backend_of,
    from_args,
    rl_extra_error,
    stderr_console,
    task_errors,
)
from agurk.cli.stop_signals import stopped
from agurk_env.options import option
from agurk_env.rules import PRESETS, Rules
from skill.study_config import StudyConfig

DESCRIPTION = (
    "Which rule variant rewards skill, so that the answer reproduces. The best fair agent of every\n"
    "preset (by win rate and by penalty) is chosen on separate deals (seed 0: a skill report's, with\n"
    "--selection, or a selection run of --candidates); then random play, that agent and the fictive\n"
    "player play two independent replications (--seeds) on as many deals as each preset's RS needs\n"
    "for the --target half-width. Writes study.json, report.md, tiers.png and robustness.png\n"
    "(convergence.png with --convergence) into --out: RS by win rate and by penalty per replication\n"
    "and pooled with 95% bootstrap intervals, Spearman's correlation between the replications with\n"
    "its interval, a rank interval per preset, tiers from Holm-corrected pairwise tests, and the\n"
    "tiers again against other fields and at other table sizes with Kendall's W over the rankings.\n"
    "\n"
    "Every piece played (one agent on --chunk deals) is kept in --cache as it finishes: run the\n"
    "same command again after an interruption, here or on another machine with the cache, and it\n"
    "plays only what is missing. docs/skill_study.md explains every number."
)
EXAMPLES = (
    "examples:\n"
    "  agurk skill-study --variants standard,swedish,every_trick \\\n"
    "    --floor 400 --ceiling 800 --robust-deals 400 --out runs/study-small\n"
    "  agurk skill-study --selection docs/results/skill-full/report.json \\\n"
    "    --convergence docs/results/skill-full/convergence.json \\\n"
    "    --exact docs/results/skill-study/exact.json --out docs/results/skill-study"
)


@dataclass(frozen=True, kw_only=True)
class SkillStudyOptions(StudyConfig, Backends, Quiet):
    """``agurk skill-study``'s options: the study's (:class:`skill.study.StudyConfig`) and where it runs and writes."""

    out: str = option("runs/skill-study", metavar="DIR")
    """study folder: study.json, report.md and the plots (a folder holding another study's files is refused)"""
    cache: str | None = option(None, metavar="DIR")
    """piece cache: every piece played is kept here and read back on any later run (default: OUT/cache)"""
    workers: int | None = option(None, low=1, metavar="W")
    """pieces played side by side: local worker processes, or the CPUs of a local Ray instance (default: the CPU
    count)"""
    force: bool = False
    """write into an --out folder that holds a study with other options"""


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk skill-study`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "skill-study",
        help="rank the variants by skill at research grade: two replications, tiers, rank intervals, robustness",
        formatter_class=Formatter,
        description=DESCRIPTION,
        epilog=EXAMPLES,
    )
    add_options(p, SkillStudyOptions, docs={"quiet": "no progress lines or table"})
    p.set_defaults(func=run)


def study_config(args: SkillStudyOptions) -> StudyConfig:
    """The study's own options out of the command's, checked (one line naming the option on a bad value)."""
    fields = StudyConfig.__dataclass_fields__
    config = StudyConfig(**{k: v for k, v in asdict(args).items() if k in fields})
    for v in config.variants:
        if v not in PRESETS:
            raise CliError(f"--variants: unknown preset {v!r}; presets are: {', '.join(PRESETS)}")
    if len(set(config.variants)) != len(config.variants):
        raise CliError("--variants names a preset twice")
    if len(config.seeds) != 2 or len(set(config.seeds)) != 2 or min(config.seeds) < 1:
        raise CliError(f"--seeds needs two different seeds >= 1 (0 is the selection's), not {config.seeds}")
    for n in (config.players, *config.robust_players):
        for v in config.variants:
            try:
                Rules.preset(v, players=n)
            except ValueError as e:
                raise CliError(f"{v} at {n} players: {e}") from None
    for c in config.cap:
        spec, sep, deals = c.rpartition("=")
        if not sep or not spec or not deals.isdigit() or int(deals) < 1:
            raise CliError(f"--cap needs SPEC=DEALS (e.g. pimc:eval=exact=1200), not {c!r}")
    for flag, path in (
        ("--selection", config.selection),
        ("--convergence", config.convergence),
        ("--exact", config.exact),
    ):
        if path is not None:
            try:
                json.loads(Path(path).read_text())
            except (OSError, ValueError) as e:
                raise CliError(f"{flag} {path}: cannot read it as JSON ({e})") from None
    return config


def command_line(args: SkillStudyOptions) -> str:
    """The ``agurk skill-study`` command that reproduces the study: every option that differs from its default."""
    defaults = SkillStudyOptions()
    words = ["agurk", "skill-study"]
    for name in StudyConfig.__dataclass_fields__:
        value, default = getattr(args, name), getattr(defaults, name)
        if value == default:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, list) and name == "cap":
            for item in value:
                words += [flag, item]
        elif isinstance(value, list):
            words += [flag, ",".join(map(str, value))]
        else:
            words += [flag, str(value)]
    words += ["--out", args.out]
    return shlex.join(words)


def _claim(out: Path, config: StudyConfig, force: bool) -> None:
    """Refuse an --out that holds another study's files (other options) unless ``force``; the same study resumes."""
    found = out / "study.json"
    if not found.exists() or force:
        return
    try:
        old = json.loads(found.read_text()).get("config")
    except (OSError, ValueError):
        old = None
    if _played(old) != _played(json.loads(json.dumps(asdict(config)))):
        raise CliError(f"--out {out} holds a study with other options: pass --force to replace its files")


def _played(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """The options that decide what a study plays (not the files it only includes)."""
    return None if config is None else {k: v for k, v in config.items() if k not in INCLUDED}


INCLUDED = ("convergence", "exact")
"""Options that only include a file made elsewhere: a study resumed with other ones is the same study."""


class _Lines:
    """Progress as timestamped lines on stderr: every finished piece on a terminal, else every 30 s."""

    def __init__(self, console: Any, quiet: bool) -> None:
        self.console, self.quiet = console, quiet
        self.last = 0.0

    def stage(self, name: str) -> Any:
        """The monitor of one stage of the study."""

        def monitor(done: int, total: int, piece: str) -> None:
            now = time.monotonic()
            if self.quiet or not total:
                return
            if done in (0, total) or now - self.last >= 30 or self.console.is_terminal:
                self.last = now
                what = f" ({piece})" if piece else ""
                text = f"{time.strftime('%H:%M:%S')} {name}: {done}/{total} pieces{what}"
                self.console.print(text, markup=False, highlight=False)

        return monitor


def run(namespace: argparse.Namespace) -> int:
    """Run or resume the study and write its files."""
    args = from_args(SkillStudyOptions, namespace)
    backend = backend_of(args)
    config = study_config(args)
    try:
        from skill.study import run_study
        from skill.study_report import write_study
    except ImportError as e:  # torch and matplotlib are optional dependencies
        raise rl_extra_error("agurk skill-study", (e.name or "torch").split(".")[0]) from None
    out = Path(args.out)
    _claim(out, config, args.force)
    cache = Path(args.cache) if args.cache else out / "cache"
    console = stderr_console()
    start = time.perf_counter()
    try:
        with task_errors():
            study = run_study(config, cache, args.workers or _cpus(), backend, _Lines(console, args.quiet).stage)
            data = write_study(study, out, command_line(args))
    except KeyboardInterrupt as e:
        return stopped(e, f": the pieces finished so far are in {cache}; run the same command to go on")
    seconds = time.perf_counter() - start
    rep = data["replication"]
    if not args.quiet:
        tiers: dict[int, list[str]] = {}
        for v in data["variants"]:
            tiers.setdefault(v["tier"], []).append(v["preset"])
        for t, names in sorted(tiers.items()):
            print(f"tier {t}: {', '.join(names)}")
        low, high = rep["spearman_ci"]
        print(f"replications agree at Spearman {rep['spearman']:.3f} [{low:.3f}, {high:.3f}]")
    print(f"{len(config.variants)} variants, {study.played} pieces played, {seconds:.0f} s -> {out / 'report.md'}")
    return 0


def _cpus() -> int:
    """The CPU count (at least 1)."""
    import os

    return os.cpu_count() or 1
