"""How much a skill report plays and trains: the ``--budget`` levels, the agent ladder and the PPO settings.

Every variant of a report gets the same budget: the same number of duplicate deals per
ladder agent and the same number of PPO training decisions, so the variants are compared
on equal terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.heuristics import DESCRIPTIONS
from agents.registry import STRONGEST_HEURISTIC
from agurk_env.rules import PRESETS


@dataclass(frozen=True)
class Budget:
    """One ``--budget`` level."""

    name: str
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
RANDOM, ORACLE = "random", "oracle"
"""The ladder's floor and its fictive player (sees every card), the ends of relative skill."""

TRAIN_SETTINGS: dict[str, Any] = {
    "algo": "fast",
    "episode": "round",
    "num_envs": 1024,
    "num_steps": 32,
    "hidden": [128, 128],
    "threads": 1,
    "learning_rate": 0.001,
    "update_epochs": 1,
    "minibatch_size": 4096,
    "ent_coef": 0.01,
    "pool": {"self_play": 0.3, "snapshots": 0.1, "agents": {"heuristic": 0.6}, "snapshot_every": 10},
}
"""PPO settings of the ladder's trained agent when no ``--train-config`` is given (``configs/quickstart.yaml``'s)."""


def ladder(budget: Budget, ppo_spec: str) -> list[str]:
    """The agent ladder: random, every heuristic, PIMC at each world count, the PPO agent, the oracle."""
    return [RANDOM, *DESCRIPTIONS, *(f"pimc:worlds={w}" for w in budget.worlds), ppo_spec, ORACLE]


def match_cost(spec: str) -> float:
    """Rough relative cost of one focal match of ``spec`` (for the progress bar's estimate only)."""
    if spec.startswith(("pimc", ORACLE)):
        return 25.0
    return 2.0 if spec.startswith("ppo") else 1.0


TRAIN_COST = 1 / 250
"""Rough cost of one PPO training decision, in the units of :func:`match_cost`."""
