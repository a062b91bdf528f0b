"""Whether built agents can play the rules in play: refused when they are built, not at a card mid-game.

A policy network has one output per card it was trained on: 13, or 14 with jokers. Under
rules with more cards than its outputs it fails at the first turn where a joker is legal, deep
in a match (or, in a tournament, in every retry of the task). :func:`check_fit` refuses it
before any card is played, in one line.
"""

from __future__ import annotations

from collections.abc import Iterable

from agents.registry import AgentSpecError
from agurk_env.agent import Agent
from agurk_env.rules import Rules


def card_outputs(agent: Agent, rules: Rules) -> int | None:
    """The card outputs of the network ``agent`` plays under ``rules`` (``None``: it plays no network of its own)."""
    policy = getattr(agent, "policy", agent)  # the zoo: the shipped policy it plays
    net = getattr(policy, "net", None)
    return getattr(net, "actions", None)


def check_fit(agents: Iterable[Agent], rules: Rules) -> None:
    """Raise :class:`AgentSpecError` (one line) for the first agent whose network has fewer cards than ``rules``."""
    for agent in {id(a): a for a in agents}.values():
        outputs = card_outputs(agent, rules)
        if outputs is not None and outputs < rules.num_actions:
            spec = getattr(agent, "spec", type(agent).__name__)
            raise AgentSpecError(
                f"agent {spec!r} cannot play these rules: its network has {outputs} card outputs but the rules"
                f" have {rules.num_actions} cards (jokers={rules.jokers}); give a policy trained with jokers"
            )
