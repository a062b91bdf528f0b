"""Search on a learned policy (``guided``): PIMC whose worlds, opponents and own candidates come from a network.

A decision samples ``worlds`` deals of the unseen cards consistent with everything public
(:func:`agents.pimc.sample_worlds`, as ``pimc`` does) and values every candidate card in
every world; the trained policy (:mod:`agents.policy`, by default the shipped policy of
the preset in play, :mod:`agents.zoo`) enters in four places:

- **Opponent model** (``eval=rollout``, and the rollouts of ``eval=exact``): the round is
  finished from each world and card by the policy playing *every* seat, one batched
  network call per rollout step over all the games, worlds and candidate cards
  (:class:`PolicyMoves` in the search's one rollout loop, :func:`agents.search.rollouts`); the
  utility is pimc's (round penalty, going out, others out).
- **Prior** over the searcher's own cards: ``prior * log pi(card)`` is added to the mean
  utility (``prior=0``: none), and ``top=K`` searches only the ``K`` most probable legal
  cards. With exact evaluation, cards of equal solver value are settled by the prior
  (``tie=prior``) or by policy rollouts among them in the same worlds (``tie=rollout``).
- **Belief** (``belief=on``): each sampled world is weighted by how likely the opponents'
  actual plays of this round were under the policy in that world (:func:`belief_weights`):
  the world's deal at the round start is rebuilt (its hands plus the cards each seat has
  played, the round's fields reset), the round's plays are replayed on the engine, and at
  every opponent play with a choice the policy's probability of the card actually played
  is multiplied in. **Approximations**: the opponents are assumed to play like the policy
  (they may not: each probability is mixed with :data:`BELIEF_FLOOR` of a uniform choice
  among the legal cards, so that one surprising play never rules a world out); the worlds
  are drawn uniformly (consistent with what is public) and only re-weighted, not
  re-sampled, so a sharply peaked belief rests on few worlds; plays that a sampled world
  makes illegal (it dropped a shown void it could not meet) count :data:`ILLEGAL`; the
  searcher's own plays are not weighed (their probability is the same in every world).
- **Exact solver** (``eval=exact``, the default): a decision with at most ``tricks`` tricks
  left (``auto``: pimc's :func:`agents.pimc.exact_tricks`) is valued in every world by one
  call of the exact round solver (:mod:`agurk_env.solver`); earlier decisions are rolled out
  by the policy until ``tricks`` tricks are left, and the rest of the round is solved exactly
  (every seat then minimising its own round penalty; the mover's penalty on that line is
  the utility). The exact utility is pimc's (minus the round penalty / 15, or the life
  lost) and, with ``out=on``, minus pimc's going-out cost where that penalty puts
  the mover out (:func:`agents.pimc.exact_values`); others going out are not credited.

Games with one legal card (or one candidate after ``top``) are answered without search.
``guided`` and the rollout operator :func:`improve` are settings of :class:`agents.search.Search`;
this module adds the policy's parts: its belief (:class:`PolicyBelief`), rollout moves
(:class:`PolicyMoves`) and prior (:class:`PolicyPrior`).
All games of a decision run as one batch: worlds, rollouts, replays and network calls.
Measured with the shipped standard policy (README, "Search on a learned policy"), no
ingredient beats ``pimc:eval=exact``, and the belief costs strength against ``guard``,
which the policy models poorly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents import pimc
from agents.belief import concat, judge_plays, normalised
from agents.policy import PolicyAgent, masked_log_softmax, pad_legal
from agents.search import AUTO, Exact, GuidedOptions, Moves, Rollouts, Search, Uniform
from agents.zoo import ZooAgent
from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.observation import observe
from agurk_env.rules import Rules

BELIEF_FLOOR = 0.1
"""Belief: the share of a uniform choice among the legal cards mixed into each policy probability."""


class PolicyNets:
    """The policy network for given rules: ``zoo`` (the universal network), ``zoo:NAME``, a path or a network.

    A checkpoint or preset is read now (a bad one raises
    :class:`agents.policy.CheckpointError`); the object pickles as its source and reads
    the weights again on first use, so an agent built on it can play in worker processes.
    """

    def __init__(self, policy: str | nn.Module) -> None:
        self.policy = policy
        self._load()

    def _load(self) -> None:
        """Read the policy: a network as it is, a shipped one (the universal network by default), or a checkpoint."""
        if isinstance(self.policy, nn.Module):
            net = self.policy.eval()
            self._get: Callable[[Rules], nn.Module] = lambda rules: net
        elif self.policy == "zoo" or self.policy.startswith("zoo:"):
            zoo = ZooAgent(np.random.default_rng(0), name=self.policy.partition(":")[2] or None)
            self._get = lambda rules: zoo.policy.net
        else:
            agent = PolicyAgent.from_path(Path(self.policy))
            self._get = lambda rules: agent.net

    def __call__(self, rules: Rules) -> nn.Module:
        """The network that plays under ``rules``."""
        return self._get(rules)

    def __getstate__(self) -> dict[str, str | nn.Module]:
        return {"policy": self.policy}

    def __setstate__(self, state: dict[str, str | nn.Module]) -> None:
        self.policy = state["policy"]
        self._load()


@torch.inference_mode()
def log_probs(net: nn.Module, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``(n, A)`` log-probabilities of the policy over the legal cards (one network call; very negative if illegal).

    A network with fewer card outputs than the rules have cards (a policy without jokers
    under ``jokers``) gives each missing card the mean of its logits.
    """
    n, a = legal.shape
    if not n:
        return np.zeros((0, a))
    logits, _ = net(torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)))
    if logits.shape[1] < a:
        logits = torch.cat([logits, logits.mean(1, keepdim=True).expand(n, a - logits.shape[1])], dim=1)
    else:
        legal = pad_legal(legal, logits.shape[1])
    return masked_log_softmax(logits, torch.from_numpy(legal)).numpy()[:, :a].astype(np.float64)


def policy_moves(
    rules: Rules, net: nn.Module, state: engine.State, moves: Moves, rng: np.random.Generator
) -> np.ndarray:
    """``(n,)`` the policy's card for the player to move in every game (forced cards without the network)."""
    bits = engine.legal_bits(rules, state)
    if moves == "mixed":
        return pimc.rollout_action(rules, bits, "mixed", rng)
    cards = engine.KTH_MEMBER[bits, 0].astype(np.int64)  # the only card where there is one
    free = np.flatnonzero(engine.SET_SIZE[bits] > 1)
    if free.size:
        sub = state.take(free)
        logp = log_probs(net, observe(rules, sub), engine.unpack(bits[free], rules.num_actions))
        if moves == "sample":
            logp = logp + rng.gumbel(size=logp.shape)
        cards[free] = logp.argmax(1)
    return cards


def belief_weights(
    rules: Rules, net: nn.Module, worlds: engine.State, per_game: int, floor: float = BELIEF_FLOOR
) -> np.ndarray:
    """``(n // per_game, per_game)`` weights of each game's worlds (game-major): the likelihood of the opponents' plays.

    Each weight is the product, over this round's plays by seats other than the searcher
    (the seat to move) that had a choice in that world, of ``(1 - BELIEF_FLOOR) * pi(card)
    + BELIEF_FLOOR / legal cards``, ``pi`` the policy on the player's observation in that
    world (one network call over all the plays of all the worlds); normalised per game.
    """
    seen: list[tuple[engine.State, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def judge(st: engine.State, choice: np.ndarray, rows: np.ndarray, cards: np.ndarray, bits: np.ndarray) -> None:
        seen.append((st, choice, rows[choice], cards[choice], bits[choice]))  # one network call for all, below

    loglik = judge_plays(rules, worlds, judge)
    if seen:
        rows, cards, bits = (np.concatenate([s[i] for s in seen]) for i in (2, 3, 4))
        offsets = np.cumsum([0] + [s[0].batch for s in seen[:-1]])
        at = np.concatenate([s[1] + offset for s, offset in zip(seen, offsets, strict=True)])
        states = concat([s[0] for s in seen]).take(at)  # one copy of the positions judged, not one per step
        logp = log_probs(net, observe(rules, states), engine.unpack(bits, rules.num_actions))
        p = np.exp(logp[np.arange(rows.size), cards])
        q = (1 - floor) * p + floor / engine.SET_SIZE[bits]
        loglik += np.bincount(rows, weights=np.log(q), minlength=worlds.batch)
    return normalised(loglik, per_game)


def improve(
    rules: Rules,
    net: nn.Module,
    public: engine.State,
    candidates: np.ndarray,
    worlds: int,
    rng: np.random.Generator,
    moves: Moves = "greedy",
    rollouts: int = 1,
    leaf: int | None = None,
    belief: bool = False,
    floor: float = BELIEF_FLOOR,
) -> np.ndarray:
    """``(k, A)`` the rollout policy-improvement operator: each candidate card's mean utility; -inf elsewhere.

    For each of the ``k`` decisions (``public``: the games as the mover sees them), ``worlds``
    deals of the unseen cards are sampled (:func:`agents.pimc.sample_worlds`), weighted by the
    belief (:func:`belief_weights`) or uniformly, and every candidate card is played in each
    and the round finished ``rollouts`` times by the policy at every seat, the mover's later
    turns included (:class:`PolicyMoves`): no rollout player sees a hidden card, so the
    values carry no strategy fusion, except in the last ``leaf`` tricks where the exact
    solver (every seat seeing all cards) takes over. The ``argmax`` is the improved policy
    (Tesauro & Galperin's rollout); ``agurk train``'s ``algo: expert`` learns from it. A
    :class:`agents.search.Search` without the exact solver or a prior.
    """
    sampler = PolicyBelief(worlds, lambda rules: net, floor) if belief else Uniform(worlds, weighted=True)
    search = Search(rng, sampler, Rollouts(PolicyMoves(lambda rules: net, moves), rollouts, leaf))
    return search.values(rules, public, candidates)


@dataclass(frozen=True)
class PolicyBelief:
    """``worlds`` uniform worlds per game, weighted by the likelihood of the opponents' plays under the policy."""

    worlds: int
    nets: Callable[[Rules], nn.Module]
    floor: float = BELIEF_FLOOR

    def __call__(
        self, rules: Rules, public: engine.State, rng: np.random.Generator, truth: Callable
    ) -> tuple[engine.State, np.ndarray | None]:
        """Sample the worlds (:func:`agents.pimc.sample_worlds`) and weigh them (:func:`belief_weights`)."""
        states = pimc.sample_worlds(rules, public, self.worlds, rng)
        return states, belief_weights(rules, self.nets(rules), states, self.worlds, self.floor)


@dataclass(frozen=True)
class PolicyMoves:
    """The policy at every seat of a rollout (:func:`policy_moves`), one network call over the open lines per step."""

    nets: Callable[[Rules], nn.Module]
    moves: Moves = "greedy"

    def __call__(self, rules: Rules, state: engine.State, open: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The policy's card in every open line; the first legal card in the others."""
        if open.all():
            return policy_moves(rules, self.nets(rules), state, self.moves, rng)
        cards = engine.KTH_MEMBER[engine.legal_bits(rules, state), 0].astype(np.int64)
        at = np.flatnonzero(open)
        cards[at] = policy_moves(rules, self.nets(rules), state.take(at), self.moves, rng)
        return cards


@dataclass(frozen=True)
class PolicyPrior:
    """The policy over the searcher's own cards: its ``top`` likeliest are searched, ``weight * log pi`` is added."""

    nets: Callable[[Rules], nn.Module]
    weight: float = 0.0
    top: int | None = None

    def __call__(self, d: Decision) -> tuple[np.ndarray, np.ndarray | None]:
        """The candidate cards and the prior's term (``None`` when its weight is 0)."""
        legal = d.legal
        if not (self.weight or self.top):
            return legal, None
        logp = log_probs(self.nets(d.rules), d.obs, legal)
        candidates = legal
        if self.top is not None:
            rank = np.argsort(np.argsort(-np.where(legal, logp, -np.inf), axis=1, kind="stable"), axis=1)
            candidates = legal & (rank < self.top)
        return candidates, (self.weight * np.where(candidates, logp, 0.0) if self.weight else None)


TIE_WEIGHT = 1e-3
"""Exact ties settled by policy rollouts: the weight of the rollout value added to the tied exact value."""


class Guided(Search):
    """Search on a trained policy (``guided``): a setting of :class:`agents.search.Search`.

    See the module docstring. ``options`` (:class:`agents.search.GuidedOptions`, changed by
    keyword: ``Guided(rng, worlds=3, prior=0.05)``; ``policy`` may also be a network): the
    policy belief or uniform worlds (weighted), policy rollouts (the last ``tricks`` tricks
    solved exactly with ``eval=exact``), the exact solver late, ties by the prior or by
    policy rollouts (:data:`TIE_WEIGHT`), and the policy as a prior; games with one
    candidate are answered without search. ``floor`` is the belief's :data:`BELIEF_FLOOR`.
    """

    def __init__(
        self,
        rng: np.random.Generator,
        options: GuidedOptions | None = None,
        spec: str = "guided",
        floor: float = BELIEF_FLOOR,
        **changes: Any,
    ) -> None:
        net: nn.Module | None = changes.pop("policy") if isinstance(changes.get("policy"), nn.Module) else None
        o = dataclasses.replace(options or GuidedOptions(), **changes)
        self.nets = PolicyNets(net if net is not None else o.policy)
        sampler = PolicyBelief(o.worlds, self.nets, floor) if o.belief else Uniform(o.worlds, weighted=True)
        exact = o.eval == "exact"
        rolled = Rollouts(PolicyMoves(self.nets, o.rollout), leaf=(o.tricks or AUTO) if exact else None)
        tie = Rollouts(PolicyMoves(self.nets, o.rollout)) if o.tie == "rollout" else None
        late = Exact(o.out, tie, TIE_WEIGHT) if exact else None
        prior = PolicyPrior(self.nets, o.prior, o.top)
        super().__init__(rng, sampler, rolled, late, o.tricks, prior, forced=True, spec=spec)
        self.options = o
