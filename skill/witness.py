"""A search-based best response to an agent: the second witness of its headroom, beside the learned exploiter.

:func:`witness_spec` is the search that knows AGENT's policy: ``guided`` (:mod:`agents.guided`)
on the network AGENT plays at the table, its worlds weighted by the likelihood of the
opponents' plays under that network (``belief=on``) and its rollouts playing it at every seat
the way AGENT does (``rollout=greedy`` for a network that plays its likeliest card).
:func:`search_witness` puts a search in the exploiter's seat of
:func:`skill.exploit.measure_gain`, against copies of AGENT on duplicate deals: its gain over
AGENT in the same seats on the same deals, with 95% paired bootstrap intervals, is a lower bound
on AGENT's exploitability, as the learned exploiter's is, found by another method.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from agents.fit import check_fit
from agents.registry import AgentSpecError, make_agent, parse_spec
from agents.search import Evaluation, Moves
from agents.tasks import LOCAL, Backend
from agurk_env.options import OptionError
from agurk_env.rules import Rules, RuleValue
from skill.exploit import Gains, measure_gain

WITNESS_IS = (
    "a lower bound on AGENT's exploitability: one fair response to copies of AGENT, found by search instead of "
    "training; a stronger search may find more"
)
"""What the search's gain is, as the result says it."""


class Witness(Gains):
    """What :func:`search_witness` returns: the settings and the wall time, then the gains (the search's first)."""

    agent: str
    search: str
    """The agent spec in the exploiter's seat."""
    rules: dict[str, RuleValue]
    seed: int
    deals: int
    bootstrap_resamples: int
    workers: int
    eval_seconds: float
    gain_is: str


def policy_of(agent: str, rules: Rules) -> tuple[str, Moves]:
    """The network ``agent`` plays at ``rules`` as guided's ``policy`` option, and how it picks its card.

    ``zoo``, ``zoo:NAME`` and ``ppo:PATH[;sample]``, and ``best`` where it plays one of them at
    ``rules`` (:func:`agents.best.choice`); shipped networks play their likeliest card (greedy).
    Any other agent has no network: :class:`OptionError`.
    """
    kind, arg = parse_spec(agent)
    if kind.name == "best":
        from agents.best import choice

        kind, arg = parse_spec(choice(rules))
    if kind.name == "zoo":
        return f"zoo:{arg}" if arg else "zoo", "greedy"
    if kind.name == "ppo":
        path, _, mode = (arg or "").partition(";")
        return path, "sample" if mode == "sample" else "greedy"
    raise OptionError(f"{agent!r} plays no network at this table: give the search that models it yourself")


def witness_spec(agent: str, rules: Rules, worlds: int = 16, evaluation: Evaluation = "rollout") -> str:
    """The guided search on ``agent``'s own network at ``rules``: belief and rollouts by its likelihoods and picks."""
    policy, rollout = policy_of(agent, rules)
    return f"guided:eval={evaluation};belief=on;rollout={rollout};worlds={worlds};policy={policy}"


def search_witness(
    rules: Rules,
    agent: str,
    search: str,
    deals: int,
    seed: int,
    resamples: int = 1000,
    workers: int = 1,
    backend: Backend = LOCAL,
    progress: Callable[[int], object] | None = None,
    deck: np.ndarray | None = None,
) -> Witness:
    """Measure the fair agent ``search`` in the exploiter's seat against copies of ``agent`` (no training).

    The arguments are :func:`skill.exploit.measure_gain`'s. Refused (:class:`OptionError`): an
    agent or search that cannot be built or cannot play ``rules``, or a search that sees every card.
    """
    for role, spec in (("agent", agent), ("search", search)):
        try:
            built = make_agent(spec, seed, 0)
            check_fit([built], rules)
        except AgentSpecError as e:
            raise OptionError(f"{role}: {e}") from None
        if getattr(built, "sees_all", False):
            raise OptionError(f"{role} {spec!r} sees every card: a witness of exploitability plays fair")
    started = time.perf_counter()
    gains = measure_gain(rules, agent, search, deals, seed, resamples, workers, backend, progress, deck)
    return {
        "agent": agent,
        "search": search,
        "rules": rules.to_dict(),
        "seed": seed,
        "deals": deals,
        "bootstrap_resamples": resamples,
        "workers": workers,
        "eval_seconds": round(time.perf_counter() - started, 3),
        "gain_is": WITNESS_IS,
        **gains,
    }
