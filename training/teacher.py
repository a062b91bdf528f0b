"""The teacher of expert iteration at each table: the network's rollout operator, or what ``best`` plays there.

``expert.teacher: rollout`` (the default) improves the network's own policy by rollouts
(:func:`agents.guided.improve`). ``expert.teacher: best`` learns, at each table, from the
agent :func:`agents.best.choice` picks for those rules, the strongest fair agent measured
there: a search's card values (``pimc`` under every-trick scoring, ``pimc:eval=exact``
elsewhere) turned into ``softmax(values / temperature)``, or a shipped network's own
probabilities (a per-table specialist; the universal file itself where ``best`` plays it,
which anchors the tables the search does not lead at what the network played before).
``expert.teacher_searches`` keeps only the searches named; the universal file teaches where ``best``
plays another.
Each teacher agent is built once per spec from the registry, seeded by the run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from torch import nn

from agents.best import choice, search_for
from agents.guided import improve, log_probs
from agents.registry import make_agent
from agents.search import Search
from agents.zoo import UNIVERSAL, ZooAgent
from agurk_env.agent import Agent, Decision
from agurk_env.rules import Rules
from training.config import ExpertConfig, TeacherName


def improved_policy(values: np.ndarray, temperature: float) -> np.ndarray:
    """``(k, A)`` ``softmax(values / temperature)`` over the finite values (the legal cards), 0 elsewhere."""
    finite = np.isfinite(values)
    scaled = np.where(finite, values / temperature, -np.inf)
    scaled = scaled - scaled.max(1, keepdims=True)
    p = np.where(finite, np.exp(scaled), 0.0)
    return p / p.sum(1, keepdims=True)


class Teachers:
    """The improved policy of every decision with a choice, by the run's teacher (see the module)."""

    def __init__(self, name: TeacherName, seed: int, searches: Sequence[str] = ()) -> None:
        self.name, self.seed, self.searches = name, seed, tuple(searches)
        self._agents: dict[str, Agent] = {}
        self._specs: dict[Rules, str] = {}

    def spec(self, rules: Rules) -> str:
        """What teaches at ``rules``: ``rollout`` or the spec ``best`` plays there (a search left out: universal)."""
        if self.name == "rollout":
            return "rollout"
        if rules not in self._specs:  # decided once per table: every engine step of a generation asks
            chosen = choice(rules)
            if self.searches and chosen == search_for(rules) and chosen not in self.searches:
                chosen = f"zoo:{UNIVERSAL}"
            self._specs[rules] = chosen
        return self._specs[rules]

    def target(
        self,
        net: nn.Module,
        d: Decision,
        rng: np.random.Generator,
        ex: ExpertConfig,
    ) -> np.ndarray:
        """``(k, A)`` the improved policy over ``d``'s legal cards (the rollout operator's settings from ``ex``)."""
        spec = self.spec(d.rules)
        if spec == "rollout":
            leaf = ex.leaf or None
            values = improve(d.rules, net, d.public, d.legal, ex.worlds, rng, ex.moves, ex.rollouts, leaf, ex.belief)
            return improved_policy(values, ex.temperature)
        agent = self._agent(spec)
        if isinstance(agent, Search):
            return improved_policy(agent.values(d.rules, d.public, d.legal), ex.temperature)
        if isinstance(agent, ZooAgent):
            return np.where(d.legal, np.exp(log_probs(agent.policy.net, d.obs, d.legal)), 0.0)
        raise TypeError(f"expert.teacher: best plays {spec!r} here, which is neither a search nor a shipped network")

    def _agent(self, spec: str) -> Agent:
        """The teacher agent of ``spec``, built once (seeded by the run)."""
        if spec not in self._agents:
            self._agents[spec] = make_agent(spec, self.seed, 0)
        return self._agents[spec]
