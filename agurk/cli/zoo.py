"""``agurk zoo``: list the shipped policies, or export a training run into the zoo."""

from __future__ import annotations

import argparse
from typing import Any

from agurk.cli.common import CliError, Formatter, Subcommands, add_options, from_args
from agurk_env.install import install
from training.zoo_export import ZooOptions, export_run


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk zoo`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "zoo",
        help="list the shipped policies (zoo:NAME), or export a run into the zoo",
        formatter_class=Formatter,
        description=(
            "Without arguments: list the shipped policies (the agent spec zoo:NAME), each with the tables it\n"
            "was trained for, its decisions, training time, measured strength and why it ships: plain 'zoo' is\n"
            "the universal network, which plays every rule set and table; a per-table policy ships only while\n"
            "it measures stronger than that network at its table ('best' plays it there). 'agurk zoo export RUN'\n"
            "writes the weights-only copy of a run's best checkpoint into the zoo (package data next to\n"
            "agents/zoo/), with the run's training time and last evaluation; 'agurk zoo export RUN --blend\n"
            "OTHER:W' writes the weighted mean of the networks' weights instead (OTHER gets weight W, RUN the\n"
            "rest), and '--ensemble OTHER:W' keeps both networks and plays the weighted mean of their logits.\n"
            "A policy with no evaluation of its run at that step (a blend, an ensemble, a lone checkpoint\n"
            "file) is measured at export as its run would have measured it. docs/zoo.md has the command that\n"
            "trains each one."
        ),
        epilog=(
            "examples:\n  agurk zoo\n  agurk zoo export runs/zoo-swedish --preset swedish\n"
            "  agurk zoo export runs/std3 --name standard-3p\n"
            "  agurk zoo export runs/a.pt --blend runs/b.pt:0.25 --name my-blend\n"
            "  agurk zoo export runs/a.pt --ensemble runs/b.pt:0.5 --name my-ensemble"
        ),
    )
    add_options(p, ZooOptions)
    p.set_defaults(func=run)


def _minutes(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:.0f} min"


def _strength(row: dict[str, Any]) -> str:
    s = row.get("strength")
    if not s:
        return "-"
    low, high = s["win_rate_ci"]
    return f"{s['win_rate']:.3f} [{low:.3f}, {high:.3f}] vs {s['opponent']} ({s['deals']} deals)"


def _listing(rows: list[dict[str, Any]]) -> None:
    if not rows:
        print("the zoo is empty")
    for row in rows:
        name, decisions, minutes = f"zoo:{row['name']}", row["decisions"], _minutes(row["train_seconds"])
        blend = f"  (weights: the mean of {len(row['blend'])} checkpoints)" if row.get("blend") else ""
        if row.get("ensemble"):
            blend = f"  (an ensemble of {len(row['ensemble'])} networks)"
        print(f"{name:<24} {row['table']:<30} {decisions:>11,} decisions  {minutes:>7}  {_strength(row)}{blend}")
        if row["why"]:
            print(f"{'':<24} {row['why']}")


def run(namespace: argparse.Namespace) -> int:
    """List the zoo, or export a run into it."""
    args = from_args(ZooOptions, namespace)
    try:
        from agents import zoo
    except ImportError as e:
        raise CliError(f"the zoo needs torch: {install('rl')} ({e.name} missing)") from None
    if args.action == "list":
        if args.export_only():
            raise CliError("agurk zoo (list) takes no other arguments")
        _listing(zoo.describe())
        return 0
    exported = export_run(args, note=print)
    print(f"wrote {exported.path} ({exported.size:,} bytes): zoo:{exported.name}")
    return 0
