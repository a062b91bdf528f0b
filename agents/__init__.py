"""Agent implementations (heuristics, PIMC and the oracle, checkpoint policies), their specs, and tournaments.

Every agent follows :class:`agurk_env.agent.Agent`: a :class:`agurk_env.agent.Decision`
for a batch of games in, a batch of cards out. Importing this package registers its specs
with :mod:`agurk_env.specs`, so the environments take ``opponents="guard,pimc,random"``.
"""

from agents.registry import AGENTS, AgentSpecError, describe, make_agent, make_agents, opponents, register
from agurk_env import specs

specs.register(__name__, opponents)

__all__ = ["AGENTS", "AgentSpecError", "describe", "make_agent", "make_agents", "opponents", "register"]
