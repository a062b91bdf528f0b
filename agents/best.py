"""``best``: the strongest fair agent measured for the table in play, the search or the shipped policy.

Measured on standard rules (README, "The zoo and best"): PIMC on the exact solver
(:data:`SEARCH`) is the strongest agent we have at 3 and 4 players, and the shipped policy
(``zoo``, :mod:`agents.zoo`) at :data:`POLICY_FROM` players and more, where the search
falls to the level of plain ``pimc``. So ``best`` asks the search below that table size and
the preset's shipped policy from there on: when torch is installed and a policy was shipped
for the rules in play (their preset's); otherwise the search everywhere.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from agurk_env.agent import Agent, Decision

SEARCH = "pimc:eval=exact"
"""The search ``best`` plays at small tables (also the skill report's strongest search agent)."""
POLICY_FROM = 5
"""Table size from which ``best`` plays the shipped policy (where torch and a policy for the rules are there)."""


class Best:
    """:data:`SEARCH` below :data:`POLICY_FROM` players, the shipped policy of the preset in play from there."""

    sees_all = False

    def __init__(self, search: Agent, rng: np.random.Generator, spec: str = "best") -> None:
        self.spec = spec
        self.search = search  # the agent of :data:`SEARCH` (built by the registry)
        self.has_torch = importlib.util.find_spec("torch") is not None
        self._policy: Agent | None = None
        self._rng = rng

    def uses_policy(self, d: Decision) -> bool:
        """Whether the shipped policy plays this decision's table (see the module docstring)."""
        if d.rules.players < POLICY_FROM or not self.has_torch:
            return False
        from agents.zoo import preset_of  # torch is an optional dependency

        return preset_of(d.rules) is not None

    def act(self, decision: Decision) -> np.ndarray:
        """The search's or the shipped policy's card in each game."""
        if not self.uses_policy(decision):
            return self.search.act(decision)
        if self._policy is None:
            from agents.zoo import ZooAgent

            self._policy = ZooAgent(self._rng, spec=self.spec)
        return self._policy.act(decision)
