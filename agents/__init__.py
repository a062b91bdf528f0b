"""Agents that play Agurk through the batched ``act(legal) -> actions`` interface."""

from agents.random_agent import RandomAgent, random_legal
from agents.registry import AGENTS, Agent, AgentSpecError, describe, make_agents, register

__all__ = ["AGENTS", "Agent", "AgentSpecError", "RandomAgent", "describe", "make_agents", "random_legal", "register"]
