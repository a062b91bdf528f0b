"""``agurk skill-study``: the variant ranking at research grade (replications, tiers, rank intervals, robustness)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agurk.cli.common import (
    Formatter,
    Subcommands,
    add_options,
    from_args,
    rl_extra_error,
    stderr_console,
    task_errors,
)
from agurk.monitors import StudyLines
from skill.study_config import SkillStudyOptions, checked_config
from training.stop_signals import stopped

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
    "  agurk skill-study --selection docs/results/skill-study/selection.json \\\n"
    "    --convergence docs/results/skill-full/convergence.json \\\n"
    "    --exact docs/results/skill-study/exact.json --out docs/results/skill-study"
)


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


def run(namespace: argparse.Namespace) -> int:
    """Run or resume the study and write its files."""
    args = from_args(SkillStudyOptions, namespace)
    args.tasks_backend()
    checked_config(args)  # before the imports: a bad option is named first
    try:
        from skill.study_report import skill_study
    except ImportError as e:  # torch and matplotlib are optional dependencies
        raise rl_extra_error("agurk skill-study", (e.name or "torch").split(".")[0]) from None
    console = stderr_console()
    start = time.perf_counter()
    try:
        with task_errors():
            study, data = skill_study(args, StudyLines(console, args.quiet).stage)
    except KeyboardInterrupt as e:
        cache = args.cache or str(Path(args.out) / "cache")
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
    report = Path(args.out) / "report.md"
    print(f"{len(study.config.variants)} variants, {study.played} pieces played, {seconds:.0f} s -> {report}")
    return 0
