"""``agurk zoo``: list the shipped policies, or export a training run into the zoo."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agurk.cli.common import CliError, Formatter, Subcommands, add_options, from_args
from agurk_env.atomic import atomic_write
from agurk_env.options import option
from agurk_env.rules import PRESETS

if TYPE_CHECKING:
    from agents.policy import Checkpoint, Strength


ZooAction = Literal["list", "export"]
"""What ``agurk zoo`` does: list the shipped policies, or export a run into the zoo."""


@dataclass(frozen=True, kw_only=True)
class ZooOptions:
    """``agurk zoo``'s options (``list`` takes none of them but the action)."""

    action: ZooAction = option("list", positional=True)
    """what to do"""
    run: str | None = option(None, positional=True, metavar="run")
    """export: the run folder (its best checkpoint) or a checkpoint file"""
    preset: str | None = None
    """export: the preset the run must have trained under (names the policy PRESET)"""
    name: str | None = None
    """export: the policy's name (zoo:NAME; default: the preset, with --preset)"""
    out: str | None = None
    """export: write here instead of the zoo folder"""
    force: bool = False
    """export: replace an existing policy"""
    blend: list[str] = option([], metavar="CHECKPOINT:W")
    """export: average in this checkpoint's weights with weight W (0 < W < 1; repeatable; RUN keeps the rest); the
    networks must have the same shape and preset"""
    ensemble: list[str] = option([], metavar="CHECKPOINT:W")
    """export: play this checkpoint's network beside RUN's, the weighted mean of their logits with weight W (0 < W <
    1; repeatable; RUN keeps the rest; twice the cost per decision for two networks); the networks must have the same
    preset"""


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


def _run_strength(run: Path, step: int) -> Strength | None:
    """The evaluation at ``step`` in the history of the run folder ``run`` (or of the one holding the checkpoint file).

    ``None`` where the run has none at that step; the checkpoint itself carries its training seconds.
    """
    from training.evaluation import history

    folder = run if run.is_dir() else run.parent.parent  # RUN/checkpoints/FILE.pt
    strength: Strength | None = None
    for ev in history(folder):
        if ev["step"] != step:
            continue
        result = ev["results"][0]
        strength = {
            "win_rate": result["win_rate"],
            "win_rate_ci": result["win_rate_ci"],
            "players": result["players"],
            "opponent": ev["opponent"],
            "deals": ev["deals"],
        }
    return strength


def run(namespace: argparse.Namespace) -> int:
    """List the zoo, or export a run into it."""
    args = from_args(ZooOptions, namespace)
    try:
        from agents import zoo
        from agents.policy import CheckpointError, load_checkpoint
    except ImportError as e:
        raise CliError(f'the zoo needs torch: pip install -e ".[rl]" ({e.name} missing)') from None
    if args.action == "list":
        if args.run or args.preset or args.name or args.out or args.force or args.blend or args.ensemble:
            raise CliError("agurk zoo (list) takes no other arguments")
        _listing(zoo.describe())
        return 0
    if not args.run:
        raise CliError("agurk zoo export needs a RUN (a run folder or checkpoint)")
    if args.preset and args.preset not in PRESETS:
        raise CliError(f"no preset {args.preset!r}; presets: {', '.join(PRESETS)}")
    try:
        data = load_checkpoint(args.run)
    except CheckpointError as e:
        raise CliError(str(e)) from None
    trained = (data.get("config") or {}).get("preset")
    if args.preset and trained != args.preset:
        raise CliError(f"--preset {args.preset}: the run trained under {trained!r}, not {args.preset!r}")
    name = args.name or args.preset
    if not name:
        raise CliError("agurk zoo export needs --name NAME (or --preset PRESET)")
    if not name.replace("-", "").replace("_", "").isalnum():
        raise CliError(f"--name {name!r}: use letters, digits, '-' and '_' only")
    out = Path(args.out) if args.out else zoo.ZOO / f"{name}.pt"
    if out.exists() and not args.force:
        raise CliError(f"{str(out)!r} exists; add --force to replace it")
    if args.blend and args.ensemble:
        raise CliError("give --blend or --ensemble, not both")
    blend = [_source("--blend", item) for item in args.blend]
    ensemble = [_source("--ensemble", item) for item in args.ensemble]
    combined = bool(blend or ensemble)
    step = int(data.get("global_step", -1))
    strength = None if combined else _run_strength(Path(args.run), step)
    try:
        size = zoo.export(args.run, out, strength=strength, blend=blend, ensemble=ensemble)
    except CheckpointError as e:
        raise CliError(str(e)) from None
    if combined or not _carried_strength(out):
        size = _measure(out, data, step)
    print(f"wrote {out} ({size:,} bytes): zoo:{name}")
    return 0


def _source(option: str, item: str) -> tuple[str, float]:
    """``PATH:W`` of ``--blend`` or ``--ensemble``, checked: the path and its weight."""
    path, _, weight = item.rpartition(":")
    try:
        w = float(weight)
    except ValueError:
        w = -1.0
    if not path or not 0 < w < 1:
        raise CliError(f"{option} {item!r}: give CHECKPOINT:W with 0 < W < 1 (e.g. runs/b.pt:0.25)")
    return path, w


def _carried_strength(path: Path) -> Strength | None:
    """The strength an exported policy carries, if any."""
    import torch

    return torch.load(path, weights_only=False).get("strength")


def _measure(out: Path, data: Checkpoint, step: int) -> int:
    """Measure an exported policy that carries no strength (a blend, an ensemble, a checkpoint away from its run).

    It is measured as its run measured its checkpoints at the end; the result is stored in the file; its size.
    """
    import torch

    from training.config import ConfigError, config_from_dict
    from training.evaluation import evaluate

    try:
        cfg = config_from_dict(data.get("config") or {})
    except ConfigError as e:
        raise CliError(f"cannot measure {str(out)!r}: its training config does not load ({e})") from None
    print(f"measuring the policy: {cfg.eval.final_deals} deals against {cfg.eval.opponent} (seed {cfg.eval.seed})")
    result = evaluate(cfg, out, step, cfg.eval.final_deals)
    first = result["results"][0]
    kept = torch.load(out, weights_only=False)
    kept["strength"] = {
        "win_rate": first["win_rate"],
        "win_rate_ci": first["win_rate_ci"],
        "players": first["players"],
        "opponent": result["opponent"],
        "deals": result["deals"],
    }
    atomic_write(out, lambda f: torch.save(kept, f))
    return out.stat().st_size
