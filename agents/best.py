"""``best``: the strongest fair agent measured for the table in play, the search or the shipped policy.

Measured (README, "The zoo and best"; the full skill report): PIMC on the exact solver
(:data:`SEARCH`) is the strongest agent we have at 3 and 4 players under last-trick scoring,
PIMC with rollouts (:data:`EVERY_TRICK_SEARCH`) under every-trick scoring (where the solver
weighs the round's points only), and the shipped policy (``zoo``, :mod:`agents.zoo`) at
:data:`POLICY_FROM` players and more, where the exact search falls to the level of plain
``pimc``. So ``best`` asks the search for the scoring below that table size and the preset's
shipped policy from there on: when torch is installed and a policy was shipped for the rules
in play (their preset's); otherwise the search everywhere.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from agurk_env.agent import Agent, Decision

SEARCH = "pimc:eval=exact"
"""The search ``best`` plays at small tables under last-trick scoring (also on the skill report's ladder)."""
EVERY_TRICK_SEARCH = "pimc"
"""The search ``best`` plays at small tables under every-trick scoring (16 worlds, rollouts)."""
POLICY_FROM = 5
"""Table size from which ``best`` plays the shipped policy (where torch and a policy for the rules are there)."""


class Best:
    """The search for the scoring below :data:`POLICY_FROM` players, the preset's shipped policy from there."""

    sees_all = False

    def __init__(self, search: Agent, every_trick: Agent, rng: np.random.Generator, spec: str = "best") -> None:
        self.spec = spec
        self.search = search  # the agents of :data:`SEARCH` and :data:`EVERY_TRICK_SEARCH` (built by the registry)
        self.every_trick = every_trick
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
            every_trick = decision.rules.scoring == "every_trick"
            return (self.every_trick if every_trick else self.search).act(decision)
        if self._policy is None:
            from agents.zoo import ZooAgent

            self._policy = ZooAgent(self._rng, spec=self.spec)
        return self._policy.act(decision)
