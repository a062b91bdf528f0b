"""How a skill study spends its deals: the best fair agent chosen on separate deals, then deals where RS needs them.

Relative skill needs three agents per setting: random play, the best fair agent and the
fictive player. The best fair agent (by win rate, and by penalty) is chosen on the
**selection deals** (seed 0: the deals of a skill report, whose ``best_win`` and
``best_penalty`` a study can take, or a small selection run of the candidates), never on a
replication's deals, so the replications carry no selection bias. Each setting then gets the
deals its RS needs to reach the target half-width, from the half-width seen on the selection
deals (``hw`` at ``n`` deals needs ``n (hw / target)^2``), in whole chunks, between a floor
and a ceiling; an agent listed in ``caps`` (the exact-solver search, about 100 times the cost
of the network) plays at most its cap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from skill.study_play import PieceJob, Setting, jobs_for

RANDOM, FICTIVE = "random", "fictive"


@dataclass(frozen=True)
class Choice:
    """A setting's best fair agents, chosen on the selection deals, and the RS half-width seen there."""

    best_win: str
    best_penalty: str
    halfwidth: float
    """Half the 95% interval of RS (win rate) on the selection deals."""
    deals: int
    """Selection deals behind ``halfwidth``."""
    source: str
    """Where the choice was made (a report's path, or ``selection``)."""


@dataclass(frozen=True)
class Allocation:
    """Deals per replication: the target half-width, the chunk, the floor and ceiling, and caps per agent spec."""

    target: float = 0.009
    chunk: int = 400
    floor: int = 1600
    ceiling: int = 16000
    caps: tuple[tuple[str, int], ...] = (("pimc:eval=exact", 1200),)

    def deals(self, choice: Choice) -> int:
        """Deals per replication for a setting: ``n (hw / target)^2`` in whole chunks, within floor and ceiling."""
        need = choice.deals * (choice.halfwidth / self.target) ** 2
        chunks = max(1, math.ceil(need / self.chunk))
        return min(self.ceiling, max(self.floor, chunks * self.chunk))

    def agent_deals(self, spec: str, deals: int) -> int:
        """``deals`` for ``spec``, or its cap (in whole chunks) when it is capped lower."""
        cap = dict(self.caps).get(spec)
        return deals if cap is None else min(deals, max(self.chunk, cap // self.chunk * self.chunk))


def agents_of(choice: Choice) -> list[str]:
    """The agents RS needs in a setting: random, the best fair agents (by win rate, by penalty), the fictive player."""
    return list(dict.fromkeys([RANDOM, choice.best_win, choice.best_penalty, FICTIVE]))


def replication_jobs(choices: Mapping[Setting, Choice], seed: int, allocation: Allocation) -> list[PieceJob]:
    """Every piece of replication ``seed``: per setting, each agent RS needs on its allocated deals."""
    jobs: list[PieceJob] = []
    for setting, choice in choices.items():
        deals = allocation.deals(choice)
        for spec in agents_of(choice):
            jobs += jobs_for(setting, spec, seed, allocation.agent_deals(spec, deals), allocation.chunk)
    return jobs


def from_report(report: Mapping, field: str, path: str) -> dict[Setting, Choice]:
    """The choices a skill report made (``report.json``): its best agents and RS half-width per variant."""
    if report.get("field") != field:
        raise ValueError(f"{path} played against {report.get('field')!r}, not {field!r}")
    out = {}
    for v in report["variants"]:
        low, high = v["rs_win_ci"]
        if low is None or high is None:
            raise ValueError(f"{path}: variant {v['preset']} has no RS interval")
        setting = Setting(v["preset"], v["players"], field)
        out[setting] = Choice(v["best_win"], v["best_penalty"], (high - low) / 2, report["deals"], path)
    return out
