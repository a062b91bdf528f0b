"""``agurk zoo``'s work: its options, and a training run exported into the zoo with the strength its run measured.

:func:`export_run` takes the options the command parses (:class:`ZooOptions`, action ``export``):
the weights-only copy of the run's checkpoint (or a blend or ensemble, :func:`agents.zoo.export`),
carrying the run's evaluation at the checkpoint's step; a policy with none is measured as its run
would have measured it. Listing the zoo is :func:`agents.zoo.describe`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agurk_env.options import OptionError, option
from agurk_env.rules import PRESETS

if TYPE_CHECKING:
    from agents.policy import Checkpoint, Strength
    from training.evaluation import Evaluation

ZooAction = Literal["list", "export"]
"""What ``agurk zoo`` does: list the shipped policies, or export a run into the zoo."""


@dataclass(frozen=True, kw_only=True)
class ZooOptions:
    """``agurk zoo``'s options (``list`` takes none of them but the action; :func:`export_run`)."""

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

    def export_only(self) -> bool:
        """Whether any option but the action is given (``list`` takes none)."""
        return bool(self.run or self.preset or self.name or self.out or self.force or self.blend or self.ensemble)


@dataclass(frozen=True)
class Exported:
    """A policy written into the zoo: where, its size in bytes and its name (``zoo:NAME``)."""

    path: Path
    size: int
    name: str


def export_run(options: ZooOptions, note: Callable[[str], object] = lambda text: None) -> Exported:
    """``agurk zoo export``: write the run's policy into the zoo, with its strength; ``note`` says when it measures it.

    Every option is checked first (:class:`OptionError`, one line naming the option).
    """
    from agents import zoo
    from agents.policy import CheckpointError, load_checkpoint

    if not options.run:
        raise OptionError("agurk zoo export needs a RUN (a run folder or checkpoint)")
    if options.preset and options.preset not in PRESETS:
        raise OptionError(f"no preset {options.preset!r}; presets: {', '.join(PRESETS)}")
    try:
        data = load_checkpoint(options.run)
    except CheckpointError as e:
        raise OptionError(str(e)) from None
    name, out = _destination(options, (data.get("config") or {}).get("preset"))
    blend = [_source("--blend", item) for item in options.blend]
    ensemble = [_source("--ensemble", item) for item in options.ensemble]
    combined = bool(blend or ensemble)
    step = int(data.get("global_step", -1))
    strength = None if combined else _run_strength(Path(options.run), step)
    try:
        size = zoo.export(options.run, out, strength=strength, blend=blend, ensemble=ensemble)
    except CheckpointError as e:
        raise OptionError(str(e)) from None
    if combined or not _carried_strength(out):
        size = _measure(out, data, step, note)
    return Exported(out, size, name)


def _destination(options: ZooOptions, trained: str | None) -> tuple[str, Path]:
    """The policy's name and file, checked against the run's preset ``trained`` and what is there already."""
    from agents import zoo

    if options.preset and trained != options.preset:
        raise OptionError(f"--preset {options.preset}: the run trained under {trained!r}, not {options.preset!r}")
    name = options.name or options.preset
    if not name:
        raise OptionError("agurk zoo export needs --name NAME (or --preset PRESET)")
    if not name.replace("-", "").replace("_", "").isalnum():
        raise OptionError(f"--name {name!r}: use letters, digits, '-' and '_' only")
    out = Path(options.out) if options.out else zoo.ZOO / f"{name}.pt"
    if out.exists() and not options.force:
        raise OptionError(f"{str(out)!r} exists; add --force to replace it")
    if options.blend and options.ensemble:
        raise OptionError("give --blend or --ensemble, not both")
    return name, out


def _source(option: str, item: str) -> tuple[str, float]:
    """``PATH:W`` of ``--blend`` or ``--ensemble``, checked: the path and its weight."""
    path, _, weight = item.rpartition(":")
    try:
        w = float(weight)
    except ValueError:
        w = -1.0
    if not path or not 0 < w < 1:
        raise OptionError(f"{option} {item!r}: give CHECKPOINT:W with 0 < W < 1 (e.g. runs/b.pt:0.25)")
    return path, w


def _strength(evaluation: Evaluation) -> Strength:
    """What a policy carries of its run's ``evaluation``: the first player count's win rate, its opponent and deals."""
    result = evaluation["results"][0]
    return {
        "win_rate": result["win_rate"],
        "win_rate_ci": result["win_rate_ci"],
        "players": result["players"],
        "opponent": evaluation["opponent"],
        "deals": evaluation["deals"],
    }


def _run_strength(run: Path, step: int) -> Strength | None:
    """The evaluation at ``step`` in the history of the run folder ``run`` (or of the one holding the checkpoint file).

    ``None`` where the run has none at that step; the checkpoint itself carries its training seconds.
    """
    from training.evaluation import history

    folder = run if run.is_dir() else run.parent.parent  # RUN/checkpoints/FILE.pt
    strength: Strength | None = None
    for ev in history(folder):
        if ev["step"] == step:
            strength = _strength(ev)
    return strength


def _carried_strength(path: Path) -> Strength | None:
    """The strength an exported policy carries, if any."""
    import torch

    return torch.load(path, weights_only=False).get("strength")


def _measure(out: Path, data: Checkpoint, step: int, note: Callable[[str], object]) -> int:
    """Measure an exported policy that carries no strength (a blend, an ensemble, a checkpoint away from its run).

    It is measured as its run measured its checkpoints at the end; the result is stored in the file; its size.
    """
    import torch

    from agurk_env.atomic import atomic_write
    from training.config import ConfigError, config_from_dict
    from training.evaluation import evaluate

    try:
        cfg = config_from_dict(data.get("config") or {})
    except ConfigError as e:
        raise OptionError(f"cannot measure {str(out)!r}: its training config does not load ({e})") from None
    note(f"measuring the policy: {cfg.eval.final_deals} deals against {cfg.eval.opponent} (seed {cfg.eval.seed})")
    strength = _strength(evaluate(cfg, out, step, cfg.eval.final_deals))
    kept = torch.load(out, weights_only=False)
    kept["strength"] = strength
    atomic_write(out, lambda f: torch.save(kept, f))
    return out.stat().st_size
