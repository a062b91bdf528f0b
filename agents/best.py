"""``best``: the strongest fair agent measured for the table in play: a policy trained for it, the search, or the zoo.

Measured (docs/zoo.md, "best"; the full skill report):

- Where the zoo ships one of :data:`STRONGER_THAN_SEARCH` for exactly the rules in play, table
  included, that policy alone is stronger than the search (standard, 3 and 4 players: it beats
  ``pimc:eval=exact`` head to head at its own table, and is ahead of it against guards), and
  the rollout operator on top of it is weaker against the search, whose play its rollouts do
  not model. So ``best`` plays that policy there (:func:`trained_for`).
- Elsewhere PIMC on the exact solver (:data:`SEARCH`) is the strongest agent we have at 3 and
  4 players under last-trick scoring, PIMC with rollouts (:data:`EVERY_TRICK_SEARCH`) under
  every-trick scoring (where the solver weighs the round's points only), and the preset's
  shipped policy (``zoo``) at :data:`POLICY_FROM` players and more, where the exact search falls
  to the level of plain ``pimc``.

Without torch, ``best`` is the search everywhere.
"""

from __future__ import annotations

import functools
import importlib.util
import logging

import numpy as np

from agurk_env.agent import Agent, Decision
from agurk_env.rules import Rules

SEARCH = "pimc:eval=exact"
"""The search ``best`` plays at small tables under last-trick scoring (also on the skill report's ladder)."""
EVERY_TRICK_SEARCH = "pimc"
"""The search ``best`` plays at small tables under every-trick scoring (16 worlds, rollouts)."""
STRONGER_THAN_SEARCH = ("standard-4p", "standard-3p", "free_choice-3x5-anyace-single")
"""The shipped per-table policies measured stronger than :data:`SEARCH` at their tables (docs/zoo.md)."""
POLICY_FROM = 5
"""Table size from which ``best`` plays the shipped policy (where torch and a policy for the rules are there)."""


def trained_for(rules: Rules) -> bool:
    """Whether the zoo ships one of :data:`STRONGER_THAN_SEARCH` for exactly ``rules`` (needs torch)."""
    from agents.zoo import choose  # torch is an optional dependency

    name, why = choose(rules)
    return why is None and name in STRONGER_THAN_SEARCH


def _policy_plays(rules: Rules) -> bool:
    """A policy trained for ``rules``, or the preset's shipped policy from :data:`POLICY_FROM` players (torch)."""
    from agents.zoo import preset_of  # torch is an optional dependency

    return trained_for(rules) or (rules.players >= POLICY_FROM and preset_of(rules) is not None)


@functools.cache
def warn_without_torch() -> None:
    """Say once, in one line, that without torch ``best`` plays the search where it would play a shipped policy."""
    logging.getLogger(__name__).warning(
        "best: torch is not installed, so best plays the search everywhere, also where it would play a shipped"
        " policy (slower; weaker from %d players): run pip install -e \".[rl]\" in the root of the clone",
        POLICY_FROM,
    )


class Best:
    """A policy trained for the table in play, else the search below :data:`POLICY_FROM` players, else the zoo."""

    sees_all = False

    def __init__(self, search: Agent, every_trick: Agent, rng: np.random.Generator, spec: str = "best") -> None:
        self.spec = spec
        self.search = search  # the agents of :data:`SEARCH` and :data:`EVERY_TRICK_SEARCH` (built by the registry)
        self.every_trick = every_trick
        self.has_torch = importlib.util.find_spec("torch") is not None
        self._policy: Agent | None = None
        self._rng = rng
        self._uses: dict[Rules, bool] = {}

    def uses_policy(self, d: Decision) -> bool:
        """Whether a shipped policy plays this decision's table (see the module docstring; decided once per rules)."""
        if d.rules not in self._uses:
            self._uses[d.rules] = self.has_torch and _policy_plays(d.rules)
        return self._uses[d.rules]

    def act(self, decision: Decision) -> np.ndarray:
        """The search's or the shipped policy's card in each game."""
        if not self.has_torch:
            warn_without_torch()
        if not self.uses_policy(decision):
            every_trick = decision.rules.scoring == "every_trick"
            return (self.every_trick if every_trick else self.search).act(decision)
        if self._policy is None:
            from agents.zoo import ZooAgent

            self._policy = ZooAgent(self._rng, spec=self.spec)
        return self._policy.act(decision)
