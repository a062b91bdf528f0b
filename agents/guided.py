"""Search on a learned policy (``guided``): PIMC whose worlds, opponents and own candidates come from a network.

A decision samples ``worlds`` deals of the unseen cards consistent with everything public
(:func:`agents.pimc.sample_worlds`, as ``pimc`` does) and values every candidate card in
every world; the trained policy (:mod:`agents.policy`, by default the shipped policy of
the preset in play, :mod:`agents.zoo`) enters in four places:

- **Opponent model** (``eval=rollout``, and the rollouts of ``eval=exact``): the round is
  finished from each world and card by the policy playing *every* seat, one batched
  network call per rollout step over all the games, worlds and candidate cards
  (:func:`policy_rollouts`); the utility is pimc's (round penalty, going out, others out).
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
  the mover out (:func:`exact_values`); others going out are not credited.

Games with one legal card (or one candidate after ``top``) are answered without search.
All games of a decision run as one batch: worlds, rollouts, replays and network calls.
Measured with the shipped standard policy (README, "Search on a learned policy"), no
ingredient beats ``pimc:eval=exact``, and the belief costs strength against ``guard``,
which the policy models poorly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import torch
from torch import nn

from agents import pimc
from agents.belief import concat, judge_plays, normalised
from agents.policy import PolicyAgent, masked_log_softmax, pad_legal
from agents.zoo import ZooAgent
from agurk_env import engine, solver
from agurk_env.agent import Decision
from agurk_env.observation import observe
from agurk_env.rules import Rules

BELIEF_FLOOR = 0.1
"""Belief: the share of a uniform choice among the legal cards mixed into each policy probability."""

Evaluation = Literal["exact", "rollout"]
EVALUATIONS: tuple[str, ...] = get_args(Evaluation)
"""How a world is valued: the exact solver (late in the round; policy rollouts before), or policy rollouts only."""
Moves = Literal["greedy", "sample", "mixed"]
MOVES: tuple[str, ...] = get_args(Moves)
"""How every seat plays in the rollouts: the policy's most probable card, a card drawn from it, or (``mixed``,
for comparison) pimc's network-free rollout policy (:func:`agents.pimc.rollout_action`)."""
Tie = Literal["prior", "rollout"]
TIES: tuple[str, ...] = get_args(Tie)
"""Exact evaluation, cards of equal best value: settled by the prior term (the lowest card if 0), or policy rollouts."""


class PolicyNets:
    """The policy network for given rules: ``zoo`` (the preset in play's), ``zoo:PRESET``, a path or a network.

    A checkpoint or preset is read now (a bad one raises
    :class:`agents.policy.CheckpointError`); the object pickles as its source and reads
    the weights again on first use, so an agent built on it can play in worker processes.
    """

    def __init__(self, policy: str | nn.Module) -> None:
        self.policy = policy
        self._load()

    def _load(self) -> None:
        """Read the policy: a network as it is, the zoo (one network per preset, on demand), or a checkpoint."""
        if isinstance(self.policy, nn.Module):
            net = self.policy.eval()
            self._get: Callable[[Rules], nn.Module] = lambda rules: net
        elif self.policy == "zoo" or self.policy.startswith("zoo:"):
            zoo = ZooAgent(np.random.default_rng(0), preset=self.policy.partition(":")[2] or None)
            self._get = lambda rules: zoo.policy(rules).net
        else:
            agent = PolicyAgent.from_path(Path(self.policy))
            self._get = lambda rules: agent.net

    def __call__(self, rules: Rules) -> nn.Module:
        """The network that plays under ``rules``."""
        return self._get(rules)

    def __getstate__(self) -> dict[str, object]:
        return {"policy": self.policy}

    def __setstate__(self, state: dict[str, object]) -> None:
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


def _round_utility(rules: Rules, st: engine.State, mover: np.ndarray) -> np.ndarray:
    """The rollout utility of pimc at a round's end (:func:`agents.pimc.evaluate`): penalty, going out, others out."""
    rows = np.arange(st.batch)
    out = st.out_now[rows, mover]
    others = st.out_now.sum(1) - out
    penalty = pimc._penalty_utility(rules, st.round_penalty[rows, mover])
    return penalty - pimc.OUT_COST * out + pimc.OTHERS_OUT_GAIN * others


def policy_rollouts(
    rules: Rules,
    net: nn.Module,
    worlds: engine.State,
    candidates: np.ndarray,
    moves: Moves,
    rng: np.random.Generator,
    leaf: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play every candidate card in every world and let the policy finish the round; ``(world, card, utility)``.

    ``candidates`` is ``(n, A)`` for the ``n`` worlds. Every seat's move after the card is
    the policy's (:func:`policy_moves`: one network call per step over every line still in
    the round). With ``leaf``, a line with at most ``leaf`` tricks left is solved exactly
    instead (the mover's round penalty on the solver's line).
    """
    world, card = np.nonzero(candidates)
    st = engine.play(rules, worlds.take(world), card)
    mover = worlds.cur[world].astype(np.int64)
    utility = np.zeros(world.size)
    rows = np.arange(world.size)
    while rows.size:
        done = st.round_over.copy()
        if done.any():
            utility[rows[done]] = _round_utility(rules, st.take(np.flatnonzero(done)), mover[rows[done]])
        solve = ~done & (rules.hand_size - st.trick_no <= leaf) if leaf else np.zeros_like(done)
        if solve.any():
            at = np.flatnonzero(solve)
            line = solver.solution(rules, st, at).penalties
            utility[rows[at]] = pimc._penalty_utility(rules, line[np.arange(at.size), mover[rows[at]]])
        keep = ~(done | solve)
        if not keep.all():
            st, rows = st.take(np.flatnonzero(keep)), rows[keep]
            if not rows.size:
                break
        st = engine.play(rules, st, policy_moves(rules, net, st, moves, rng))
    return world, card, utility


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
    turns included (:func:`policy_rollouts`): no rollout player sees a hidden card, so the
    values carry no strategy fusion, except in the last ``leaf`` tricks where the exact
    solver (every seat seeing all cards) takes over. The ``argmax`` is the improved policy
    (Tesauro & Galperin's rollout); ``agurk train``'s ``algo: expert`` learns from it.
    """
    k = public.batch
    per_game = worlds * rollouts
    states = pimc.sample_worlds(rules, public, worlds, rng)
    weights = belief_weights(rules, net, states, worlds, floor) if belief else np.full((k, worlds), 1.0 / worlds)
    if rollouts > 1:
        states = states.take(np.repeat(np.arange(states.batch), rollouts))
        weights = np.repeat(weights, rollouts, axis=1) / rollouts
    lines = np.repeat(candidates, per_game, axis=0)
    world, card, value = policy_rollouts(rules, net, states, lines, moves, rng, leaf)
    return np.where(candidates, pimc.card_means(world, card, value, candidates.shape, per_game, weights), -np.inf)


def exact_values(rules: Rules, worlds: engine.State, legal: np.ndarray, going_out: bool = False) -> np.ndarray:
    """``(k, W, A)`` exact utility of each legal card in each world (one solver call); 0 where not legal.

    pimc's exact utility (minus the round penalty / :data:`agents.pimc.PENALTY_SCALE`; in
    lives mode minus the life lost), and with ``going_out`` minus :data:`agents.pimc.OUT_COST`
    where the mover's penalty on the solver's line puts it out: its score plus the penalty
    reaches the engine's limit (:func:`agurk_env.engine.tables`: ``limit``, ``exceed``), or its
    last life is lost; a seat with rebuys left is taken to rebuy (not out).
    """
    k, a = legal.shape
    values = solver.solution(rules, worlds).values.reshape(k, -1, a)
    values = np.where(legal[:, None, :], values, 0.0)
    if rules.lives:
        utility = -(values > 0).astype(float) - pimc.LIVES_TIE * values
    else:
        utility = -values / pimc.PENALTY_SCALE
    if going_out:
        sp, rows = engine.tables(rules), np.arange(worlds.batch)
        mover = worlds.cur.astype(np.int64)
        if rules.lives:
            out = (worlds.lives[rows, mover] <= 1)[:, None] & (values.reshape(worlds.batch, a) > 0)
        else:
            total = worlds.scores[rows, mover][:, None] + values.reshape(worlds.batch, a)
            out = (total > sp.limit) if sp.exceed else (total >= sp.limit)
            out &= (worlds.rebuys[rows, mover] <= 0)[:, None]
        utility = utility - pimc.OUT_COST * out.reshape(k, -1, a)
    return utility


class Guided:
    """PIMC on a trained policy: belief-weighted worlds, the policy as every seat's rollout move and as a prior.

    See the module docstring. ``policy``: ``"zoo"``, ``"zoo:PRESET"``, a checkpoint path or
    a network; ``worlds`` per decision; ``evaluation`` ``"exact"`` or ``"rollout"``;
    ``belief`` weights the worlds; ``prior`` weighs ``log pi`` of the own card; ``top``
    (``None``: all) the cards searched; ``tricks`` (``None``: auto) the most tricks left
    solved exactly; ``tie`` how exact ties are settled; ``moves`` how the rollouts play;
    ``going_out`` charges going out in the exact values; ``floor`` is the belief's
    :data:`BELIEF_FLOOR`.
    ``counts`` tallies the games decided each way (``exact``, ``rollout``, ``forced``) and
    the exact games whose tie was rolled out (``tie``).
    """

    sees_all = False

    def __init__(
        self,
        rng: np.random.Generator,
        policy: str | nn.Module = "zoo",
        worlds: int = 16,
        evaluation: Evaluation = "exact",
        belief: bool = True,
        prior: float = 0.0,
        top: int | None = None,
        tricks: int | None = None,
        tie: Tie = "prior",
        moves: Moves = "greedy",
        spec: str = "guided",
        going_out: bool = False,
        floor: float = BELIEF_FLOOR,
    ) -> None:
        if worlds < 1:
            raise ValueError(f"worlds must be >= 1, not {worlds}")
        if evaluation not in EVALUATIONS:
            raise ValueError(f"eval must be one of {', '.join(EVALUATIONS)}, not {evaluation!r}")
        if not prior >= 0:
            raise ValueError(f"prior must be >= 0, not {prior}")
        if top is not None and top < 1:
            raise ValueError(f"top must be >= 1, not {top}")
        if tricks is not None and tricks < 1:
            raise ValueError(f"tricks must be >= 1, not {tricks}")
        if tie not in TIES:
            raise ValueError(f"tie must be one of {', '.join(TIES)}, not {tie!r}")
        if moves not in MOVES:
            raise ValueError(f"rollout must be one of {', '.join(MOVES)}, not {moves!r}")
        self.rng, self.worlds, self.evaluation, self.belief = rng, worlds, evaluation, belief
        self.prior, self.top, self.tricks, self.tie, self.moves, self.spec = prior, top, tricks, tie, moves, spec
        self.nets, self.going_out, self.floor = PolicyNets(policy), going_out, floor
        self.counts = {"exact": 0, "rollout": 0, "forced": 0, "tie": 0}

    def _limit(self, rules: Rules) -> int | None:
        """The most tricks left solved exactly (``None``: rollouts only)."""
        if self.evaluation != "exact":
            return None
        return pimc.exact_tricks(rules) if self.tricks is None else self.tricks

    def act(self, d: Decision) -> np.ndarray:
        """The card of best weighted mean utility plus ``prior * log pi``, per game."""
        rules, net = d.rules, self.nets(d.rules)
        legal = d.legal
        logp = log_probs(net, d.obs, legal) if (self.prior or self.top) else None
        candidates = legal
        if self.top is not None:
            rank = np.argsort(np.argsort(-np.where(legal, logp, -np.inf), axis=1, kind="stable"), axis=1)
            candidates = legal & (rank < self.top)
        choice = candidates.argmax(1)
        search = np.flatnonzero(candidates.sum(1) > 1)
        self.counts["forced"] += len(d) - search.size
        if not search.size:
            return choice
        cand, k, w = candidates[search], search.size, self.worlds
        worlds = pimc.sample_worlds(rules, d.public.take(search), w, self.rng)
        weights = belief_weights(rules, net, worlds, w, self.floor) if self.belief else np.full((k, w), 1.0 / w)
        limit = self._limit(rules)
        exact = d.hand[search].sum(1) <= limit if limit else np.zeros(k, bool)
        utility = np.full((k, rules.num_actions), -np.inf)
        for use_exact in (False, True):
            games = np.flatnonzero(exact == use_exact)
            if not games.size:
                continue
            rows = (games[:, None] * w + np.arange(w)).ravel()
            value = self._exact if use_exact else self._rolled
            utility[games] = value(rules, net, worlds.take(rows), cand[games], weights[games], limit)
            self.counts["exact" if use_exact else "rollout"] += games.size
        if self.prior:
            utility = utility + self.prior * np.where(cand, logp[search], 0.0)
        choice[search] = utility.argmax(1)
        return choice

    def _rolled(
        self,
        rules: Rules,
        net: nn.Module,
        worlds: engine.State,
        cand: np.ndarray,
        weights: np.ndarray,
        leaf: int | None,
    ) -> np.ndarray:
        """``(k, A)`` weighted mean policy-rollout utility of the candidate cards; -inf elsewhere."""
        w = weights.shape[1]
        world, card, value = policy_rollouts(rules, net, worlds, np.repeat(cand, w, axis=0), self.moves, self.rng, leaf)
        return np.where(cand, pimc.card_means(world, card, value, cand.shape, w, weights), -np.inf)

    def _exact(
        self,
        rules: Rules,
        net: nn.Module,
        worlds: engine.State,
        cand: np.ndarray,
        weights: np.ndarray,
        leaf: int | None,
    ) -> np.ndarray:
        """``(k, A)`` weighted mean exact utility of the candidate cards, equal best ones settled by :attr:`tie`."""
        mean = (weights[:, :, None] * exact_values(rules, worlds, cand, self.going_out)).sum(1)
        utility = np.where(cand, mean, -np.inf)
        if self.tie != "rollout":
            return utility
        best = np.isclose(utility, utility.max(1, keepdims=True), rtol=0, atol=1e-12) & cand
        tied = np.flatnonzero(best.sum(1) > 1)
        if tied.size:
            w = weights.shape[1]
            rows = (tied[:, None] * w + np.arange(w)).ravel()
            rolled = self._rolled(rules, net, worlds.take(rows), best[tied], weights[tied], None)
            utility[tied] = np.where(best[tied], utility[tied] + 1e-3 * rolled, -np.inf)
            self.counts["tie"] += tied.size
        return utility

    def __repr__(self) -> str:
        return f"Guided(spec={self.spec!r})"
