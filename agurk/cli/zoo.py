"""``agurk zoo``: list the shipped policies, or export a training run into the zoo."""

from __future__ import annotations

import argparse

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
            "Without arguments: list the shipped policies (the agent spec zoo:NAME), each with the tables it was "
            "trained for, its decisions, training time, measured strength and why it ships, then the universal "
            "network at every preset beside the search 'best' plays where it measured stronger. Plain 'zoo' is the "
            "universal network, which plays every rule set and table; a per-table policy ships only while it "
            "measures stronger than that network at its table ('best' plays it there). 'agurk zoo export RUN' "
            "writes the weights-only copy of a run's best checkpoint into the zoo (package data next to agents/zoo/), "
            "with the run's training time and last evaluation; '--blend OTHER:W' writes the weighted mean of the "
            "networks' weights instead (OTHER gets weight W, RUN the rest), and '--ensemble OTHER:W' keeps both and "
            "plays the weighted mean of their logits. A policy with no evaluation of its run at that step (a blend, "
            "an ensemble, a lone checkpoint file) is measured at export as its run would have measured it. "
            "docs/zoo.md has the command that trains each one."
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
        from agents.best import preset_rows
        from agents.zoo.listing import policy_lines, preset_lines

        print("\n".join(policy_lines(zoo.describe()) + preset_lines(zoo.preset_table(), preset_rows())))
        return 0
    exported = export_run(args, note=print)
    print(f"wrote {exported.path} ({exported.size:,} bytes): zoo:{exported.name}")
    return 0
