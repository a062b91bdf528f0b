"""Agents that play Agurk: a :class:`Decision` for a batch of games in, a batch of actions out."""

from agents.base import Agent, Decision, act_seats, decide
from agents.random_agent import RandomAgent, random_legal
from agents.registry import AGENTS, AgentSpecError, describe, make_agents, register

__all__ = [
    "AGENTS",
    "Agent",
    "AgentSpecError",
    "Decision",
    "RandomAgent",
    "act_seats",
    "decide",
    "describe",
    "make_agents",
    "random_legal",
    "register",
]
