"""The options of a skill study (``agurk skill-study``), apart from the study so a command line can be built light.

The study itself (:mod:`skill.study`) needs SciPy for its statistics; these options need only
the rules and the deal allocation. :func:`checked_config` and :func:`claim_study` are the
command's checks, :func:`study_command` the command that reproduces a study.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.command import Backends, Quiet, command_line
from agurk_env.options import OptionError, option
from agurk_env.rules import PRESETS, Rules
from skill.study_plan import Allocation
from skill.study_play import Setting


@dataclass(frozen=True, kw_only=True)
class StudyConfig:
    """What a skill study plays and how (the options of ``agurk skill-study``)."""

    variants: list[str] = option(list(PRESETS), metavar="PRESET,...", joined=True)
    """rule presets to rank (default: all 17)"""
    players: int = option(4, low=2, high=8, metavar="N")
    """players at every table of the main study"""
    field: str = option("guard", metavar="SPEC")
    """the agent in every seat but the focal one"""
    seeds: list[int] = option([1, 2], metavar="A,B", joined=True)
    """deal seeds of the two replications (seed 0 is the selection's)"""
    selection: str | None = option(None, metavar="REPORT")
    """a skill report's report.json whose best agents (chosen on its seed-0 deals) the main study takes; default: a
    selection run of the candidates on seed 0"""
    candidates: list[str] = option(["zoo", "pimc:worlds=16"], metavar="SPEC,...", joined=True)
    """fair agents a selection run chooses the best from"""
    target: float = option(0.009, above=0, metavar="H")
    """RS (win rate) half-width each setting's deals are sized for, from the half-width on the selection deals"""
    chunk: int = option(400, low=1, metavar="D")
    """deals per piece (the unit that is played, cached and resumed)"""
    floor: int = option(1600, low=1, metavar="D")
    """fewest deals per replication of a setting"""
    ceiling: int = option(16000, low=1, metavar="D")
    """most deals per replication of a setting"""
    cap: list[str] = option(["pimc:eval=exact=1200"], metavar="SPEC=D")
    """deals at most for an expensive agent (repeatable)"""
    robust_players: list[int] = option([3, 5], metavar="N,...", joined=True)
    """other table sizes the tiers are checked at (one replication each)"""
    robust_fields: list[str] = option(["zoo"], metavar="SPEC,...", joined=True)
    """other fields the tiers are checked against (one replication each)"""
    robust_deals: int = option(800, low=1, metavar="D")
    """deals per robustness setting"""
    cv_deals: int = option(800, low=0, metavar="D")
    """deals of the first replication on which the variance-reduced estimator (chance control variates) is measured
    against the plain one, per preset whose best agent is not capped (0: none)"""
    cv_fit_deals: int = option(800, low=1, metavar="D")
    """selection-seed deals the control variates' coefficients are fitted on"""
    cv_check: int = option(10000, low=0, metavar="D")
    """deals of the unbiasedness check of the control variates in a tiny game with a known exact value (0: none)"""
    resamples: int = option(1000, low=10, metavar="B")
    """bootstrap resamples behind every interval"""
    convergence: str | None = option(None, metavar="JSON")
    """a skill report's convergence.json (RS per training budget of its network) to include"""
    exact: str | None = option(None, metavar="JSON")
    """the exact check of tiny games (python -m skill.exact_check --out FILE) to include"""

    def allocation(self) -> Allocation:
        """The deal allocation these options set."""
        caps = tuple((spec, int(deals)) for spec, _, deals in (c.rpartition("=") for c in self.cap))
        return Allocation(self.target, self.chunk, self.floor, self.ceiling, caps)

    def main_settings(self) -> list[Setting]:
        """The main study's settings: every variant at ``players`` against ``field``."""
        return [Setting(v, self.players, self.field) for v in self.variants]

    def robust_settings(self) -> dict[str, list[Setting]]:
        """The robustness settings by label (``field=SPEC``, ``players=N``)."""
        out = {f"field={f}": [Setting(v, self.players, f) for v in self.variants] for f in self.robust_fields}
        out |= {f"players={p}": [Setting(v, p, self.field) for v in self.variants] for p in self.robust_players}
        return out


@dataclass(frozen=True, kw_only=True)
class SkillStudyOptions(StudyConfig, Backends, Quiet):
    """``agurk skill-study``'s options: the study's (:class:`StudyConfig`) and where it runs and writes."""

    out: str = option("runs/skill-study", metavar="DIR")
    """study folder: study.json, report.md and the plots (a folder holding another study's files is refused)"""
    cache: str | None = option(None, metavar="DIR")
    """piece cache: every piece played is kept here and read back on any later run (default: OUT/cache)"""
    workers: int | None = option(None, low=1, metavar="W")
    """pieces played side by side: local worker processes, or the CPUs of a local Ray instance (default: the CPU
    count)"""
    force: bool = False
    """write into an --out folder that holds a study with other options"""


INCLUDED = ("convergence", "exact")
"""Options that only include a file made elsewhere: a study resumed with other ones is the same study."""


def checked_config(options: SkillStudyOptions) -> StudyConfig:
    """The study's own options out of the command's, checked (:class:`OptionError` naming the option on a bad value)."""
    config = StudyConfig(**{k: v for k, v in asdict(options).items() if k in StudyConfig.__dataclass_fields__})
    for v in config.variants:
        if v not in PRESETS:
            raise OptionError(f"--variants: unknown preset {v!r}; presets are: {', '.join(PRESETS)}")
    if len(set(config.variants)) != len(config.variants):
        raise OptionError("--variants names a preset twice")
    if len(config.seeds) != 2 or len(set(config.seeds)) != 2 or min(config.seeds) < 1:
        raise OptionError(f"--seeds needs two different seeds >= 1 (0 is the selection's), not {config.seeds}")
    for n in (config.players, *config.robust_players):
        for v in config.variants:
            try:
                Rules.preset(v, players=n)
            except ValueError as e:
                raise OptionError(f"{v} at {n} players: {e}") from None
    for c in config.cap:
        spec, sep, deals = c.rpartition("=")
        if not sep or not spec or not deals.isdigit() or int(deals) < 1:
            raise OptionError(f"--cap needs SPEC=DEALS (e.g. pimc:eval=exact=1200), not {c!r}")
    for flag, path in (
        ("--selection", config.selection),
        ("--convergence", config.convergence),
        ("--exact", config.exact),
    ):
        if path is not None:
            try:
                json.loads(Path(path).read_text())
            except (OSError, ValueError) as e:
                raise OptionError(f"{flag} {path}: cannot read it as JSON ({e})") from None
    return config


def study_command(config: StudyConfig, out: str) -> str:
    """The ``agurk skill-study`` command that reproduces the study: every option off its default, then ``--out``."""
    return f"{command_line('skill-study', config)} {shlex.join(['--out', out])}"


def claim_study(out: Path, config: StudyConfig, force: bool) -> None:
    """Refuse an --out that holds another study's files (other options) unless ``force``; the same study resumes."""
    found = out / "study.json"
    if not found.exists() or force:
        return
    try:
        old = json.loads(found.read_text()).get("config")
    except (OSError, ValueError):
        old = None
    if _played(old) != _played(json.loads(json.dumps(asdict(config)))):
        raise OptionError(f"--out {out} holds a study with other options: pass --force to replace its files")


def _played(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """The options that decide what a study plays (not the files it only includes)."""
    return None if config is None else {k: v for k, v in config.items() if k not in INCLUDED}
