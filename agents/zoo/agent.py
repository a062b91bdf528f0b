"""``zoo`` and ``zoo:NAME``: the universal network at any rules, or one shipped policy by name."""

from __future__ import annotations

import numpy as np

from agents.policy import PolicyAgent
from agents.zoo.shipped import UNIVERSAL, path_of
from agurk_env.agent import Decision


class ZooAgent:
    """A shipped policy: ``name`` (``zoo:NAME``), by default the universal network, which plays every table."""

    sees_all = False

    def __init__(self, rng: np.random.Generator, name: str | None = None, greedy: bool = True, spec: str = "zoo"):
        self.name = name or UNIVERSAL
        self.policy = PolicyAgent.from_path(path_of(self.name), rng, greedy)  # an unknown name is refused now
        self.policy.spec = self.spec = spec
        self.deterministic = greedy  # greedy: the fictive player may simulate it as an opponent

    def act(self, decision: Decision) -> np.ndarray:
        """The shipped policy's card in each game."""
        return self.policy.act(decision)
