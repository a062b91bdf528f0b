"""``best``: the strongest fair agent measured for the table in play, the universal network unless measured otherwise.

The rule, in order (docs/zoo.md, "`best` on every preset", has the measurements behind each name):

1. Under a preset of :data:`SEARCH_STRONGER`, below :data:`POLICY_FROM` players, and at the
   tables of :data:`SEARCH_TABLES`: the search (:data:`SEARCH`, or :data:`EVERY_TRICK_SEARCH`
   under every-trick scoring), measured stronger than the network there against guards (at a
   preset's 4-player table for the first; the smaller tables of those presets go with it).
2. A shipped per-table policy trained for exactly the rules in play, table included
   (:func:`agents.zoo.specialist_for`): the zoo keeps one only while it measures stronger than
   the network there.
3. Everywhere else, every rule combination included: the universal network (``zoo``).

Without torch, ``best`` is the search everywhere (and says so once).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Callable

import numpy as np

from agurk_env.agent import Agent, Decision
from agurk_env.install import install
from agurk_env.rules import Rules

SEARCH = "pimc:eval=exact"
"""The search ``best`` plays where the search is stronger, under last-trick scoring (also on the skill ladder)."""
EVERY_TRICK_SEARCH = "pimc"
"""The search ``best`` plays where the search is stronger, under every-trick scoring (16 worlds, rollouts)."""
SEARCH_STRONGER = ("last_trick_only", "quick")
"""The presets where the search won more than the universal network at 4 players, against three guards on the same
400 deals (seeds 0 and 7; docs/zoo.md, "`best` on every preset"; the search's seed-0 figures: the full skill report's
ladder)."""
SEARCH_TABLES = ("standard 7x7",)
"""Other tables where the search won more than the network against guards on the same deals (docs/zoo.md)."""
POLICY_FROM = 5
"""Table size from which the network plays even under :data:`SEARCH_STRONGER` (the search weakens with players)."""


def search_for(rules: Rules) -> str:
    """The search ``best`` plays under ``rules`` where it plays one: rollouts under every-trick scoring, else exact."""
    return EVERY_TRICK_SEARCH if rules.scoring == "every_trick" else SEARCH


def choice(rules: Rules) -> str:
    """The spec ``best`` plays under ``rules`` (needs torch): a search, or a ``zoo:NAME``."""
    from agents.zoo import UNIVERSAL, preset_of, specialist_for, table_text  # torch is an optional dependency

    searched = rules.players < POLICY_FROM and preset_of(rules) in SEARCH_STRONGER
    if searched or table_text(rules) in SEARCH_TABLES:
        return search_for(rules)
    specialist = specialist_for(rules)
    return f"zoo:{specialist or UNIVERSAL}"


def preset_rows() -> list[dict[str, object]]:
    """The shipped table of every preset (``agents.zoo.preset_table``), each row with the agent ``best`` plays there."""
    from agents.zoo import preset_table  # torch is an optional dependency

    table = preset_table()["presets"]
    return [{"preset": p, **row, "best": choice(Rules.preset(p))} for p, row in table.items()]


@functools.cache
def warn_without_torch() -> None:
    """Say once, in one line, that without torch ``best`` plays the search everywhere."""
    logging.getLogger(__name__).warning(
        "best: torch is not installed, so best plays the search everywhere, also where it would play the network"
        f" (slower, and weaker at most tables): run {install('rl')} in the root of the clone"
    )


class Best:
    """The agent of :func:`choice` for each game's rules (each agent built once, by the registry's ``make``)."""

    sees_all = False

    def __init__(self, make: Callable[[str], Agent], spec: str = "best") -> None:
        self.spec = spec
        self.make = make  # builds an agent from its spec (the registry's, seeded by it)
        self.has_torch = importlib.util.find_spec("torch") is not None
        self._specs: dict[Rules, str] = {}
        self._agents: dict[str, Agent] = {}

    def spec_for(self, rules: Rules) -> str:
        """The spec that plays ``rules`` (decided once per rules)."""
        if rules not in self._specs:
            self._specs[rules] = choice(rules) if self.has_torch else search_for(rules)
        return self._specs[rules]

    def act(self, decision: Decision) -> np.ndarray:
        """The card of the agent that plays this decision's table, in each game."""
        if not self.has_torch:
            warn_without_torch()
        spec = self.spec_for(decision.rules)
        if spec not in self._agents:
            self._agents[spec] = self.make(spec)
        return self._agents[spec].act(decision)
