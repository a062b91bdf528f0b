"""How much a skill report plays and trains: the ``--budget`` levels, the agent ladder and the PPO settings.

Every variant of a report gets the same budget: the same number of duplicate deals per
ladder agent and the same number of PPO training decisions, so the variants are compared
on equal terms. A budget's ``policy`` says where the ladder's learned agent comes from:
``train`` (a PPO agent trained for each variant) or ``zoo`` (the zoo's universal network,
:mod:`agents.zoo`, the same network in every variant: nothing is trained). What a report and
an atlas say of their ladder is :class:`LadderFields`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict, get_args

from agents.best import SEARCH
from agents.heuristics import DESCRIPTIONS
from agents.registry import STRONGEST_HEURISTIC
from agurk_env.rules import PRESETS
from training.config import config_to_dict, load_config, packaged_config

BudgetName = Literal["smoke", "small", "full"]
"""The ``--budget`` levels, the keys of :data:`BUDGETS`."""
Policy = Literal["train", "zoo"]
POLICIES: tuple[str, ...] = get_args(Policy)
"""Where the ladder's learned agent comes from: trained per variant, or the zoo's universal network in every one."""
POLICY_LABEL: dict[str, str] = {"train": "ppo", "zoo": "zoo"}
"""The learned agent's name on the ladder, by policy."""


@dataclass(frozen=True)
class Budget:
    """One ``--budget`` level."""

    name: BudgetName
    variants: tuple[str, ...]
    """The presets a report covers when ``--variants`` is not given."""
    deals: int
    """Duplicate deals per ladder agent (each played in every seat rotation: ``deals * players`` matches)."""
    train_steps: int
    """PPO learner decisions per variant (the same for every variant)."""
    worlds: tuple[int, ...]
    """World counts of the PIMC agents on the ladder (two or more search strengths)."""
    resamples: int
    """Bootstrap resamples over deals behind every 95% interval."""
    policy: Policy = "train"
    """The ladder's learned agent: ``train`` one PPO agent per variant (``train_steps`` decisions), or ``zoo``."""


BUDGETS: dict[str, Budget] = {
    b.name: b
    for b in (
        Budget("smoke", ("standard", "every_trick", "swedish"), 60, 400_000, (4, 16), 300),
        Budget(
            "small",
            ("standard", "danish21", "every_trick", "swedish", "free_choice", "lives"),
            200,
            2_000_000,
            (4, 16),
            1000,
        ),
        Budget("full", tuple(PRESETS), 400, 4_000_000, (4, 16), 1000),
    )
}
"""``smoke`` (CI, a few minutes), ``small`` (about 10 minutes), ``full`` (every preset; see the README)."""

FIELD = STRONGEST_HEURISTIC
"""The field every ladder agent plays against: the strongest heuristic (``guard``), named as on the ladder."""
RANDOM, FICTIVE = "random", "fictive"
"""The ladder's floor and its fictive player (the exact best response to the field, seeing every card): the ends
of relative skill."""
ORACLE = "oracle"
"""The maxN oracle (the exact solver's card on the true deal): on the ladder as a cheating agent, not a real one."""
CHEATING = (ORACLE, FICTIVE)
"""The ladder agents that see hidden cards (not real agents: never the best one, left out of the skill share)."""


def quickstart_settings() -> dict[str, Any]:
    """PPO settings of the ladder's trained agent without ``--train-config``: the packaged quickstart config.

    ``configs/quickstart.yaml``; its preset, players, steps, seed and time limit are
    replaced by the variant's.
    """
    return config_to_dict(load_config(packaged_config("quickstart.yaml")))


def ladder(budget: Budget, policy_spec: str | None = None) -> list[str]:
    """The ladder: random, every heuristic, PIMC at two world counts, ``best``'s search, the learned agent, the cheats.

    The cheating agents last: the maxN oracle, then the fictive player.

    ``policy_spec`` is the learned agent's spec; ``None`` names it by its label (``ppo`` or ``zoo``).
    """
    learned = POLICY_LABEL[budget.policy] if policy_spec is None else policy_spec
    return [RANDOM, *DESCRIPTIONS, *(f"pimc:worlds={w}" for w in budget.worlds), SEARCH, learned, *CHEATING]


class ZooPolicy(TypedDict):
    """A shipped policy a ``zoo`` ladder plays: its table, decisions trained and its file's SHA-256 (16 digits)."""

    table: str
    decisions: int
    sha256: str


class LadderFields(TypedDict):
    """What a report and an atlas say of their ladder."""

    policy: str
    train_steps: int
    zoo: dict[str, ZooPolicy] | None
    bootstrap_resamples: int
    field: str
    ladder: list[str]


def match_cost(spec: str) -> float:
    """Rough relative cost of one focal match of ``spec`` (for the progress bar's estimate only)."""
    if spec.startswith(("pimc", ORACLE)):
        return 25.0
    return 2.0 if spec.startswith(("ppo", "zoo", FICTIVE)) else 1.0


TRAIN_COST = 1 / 250
"""Rough cost of one PPO training decision, in the units of :func:`match_cost`."""
