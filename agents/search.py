"""One search over sampled worlds: a world sampler, an evaluator of the candidate cards, a prior; and its settings.

A decision draws worlds (deals of the hidden cards) from a **sampler**, values every
candidate card in every world by an **evaluator**, averages over each game's worlds and
adds a **prior** over the searcher's own cards; the card of best value is played. All
games, worlds and cards of a decision are one batch.

- Samplers: :class:`Uniform` (uniformly among the deals consistent with what is public,
  :func:`agents.pimc.sample_worlds`), :class:`Resampled` (``pool`` uniform worlds resampled by
  the heuristic player models, :mod:`agents.belief`), :class:`Truth` (the true deal: the
  oracle) and the policy belief of :mod:`agents.guided`.
- Evaluators: rollouts (:class:`EngineRollouts`, the network-free rollout policy on the
  engine; :mod:`agents.guided`'s policy rollouts) and :class:`Exact`, the round solver, for
  games with at most ``tricks`` tricks left; equal best exact values may be settled by
  rollouts among them (``tie``).
- Prior: :mod:`agents.guided`'s ``prior * log pi`` of the own card and its ``top`` cards.

``pimc``, ``oracle`` and ``guided`` are settings of :class:`Search` (:class:`PIMC`,
:class:`Oracle`, :class:`agents.guided.Guided`), and so is the rollout operator
of expert iteration (:func:`agents.guided.improve`). Their options are declared here, once
(:mod:`agurk_env.options`): the registry parses specs with them and ``agurk agents`` lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from agents import belief as beliefs
from agents import pimc
from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.options import check, option
from agurk_env.rules import Rules

Rollout = Literal["shed", "random", "mixed"]
"""Rollout policies: the strongest legal card, a uniformly random one, or shed with 25% random moves."""
Evaluation = Literal["rollout", "exact"]
"""How a world is valued: rollouts, or the exact round solver (late in the round)."""
Belief = Literal["off", "models"]
"""How pimc draws its worlds: uniformly among the consistent deals, or resampled by heuristic player models."""
Tie = Literal["rollout", "lowest"]
"""How the exact values' equal best cards are settled: by rollouts among them, or the lowest card."""
GuidedTie = Literal["prior", "rollout"]
"""guided's exact ties: settled by the prior term (the lowest card when it is 0), or by policy rollouts among them."""
Moves = Literal["greedy", "sample", "mixed"]
"""How every seat plays in guided's rollouts: the policy's likeliest card, one drawn from it, or pimc's ``mixed``."""


@dataclass(frozen=True)
class SearchOptions:
    """What every search on sampled worlds takes."""

    worlds: int = option(16, low=1)
    """Worlds (deals of the hidden cards) sampled per decision."""
    tricks: int | None = option(None, low=1, none="auto")
    """eval=exact: the most tricks left solved exactly, rollouts before (auto: 8, 5 under every-trick scoring)."""

    def __post_init__(self) -> None:
        check(self)


@dataclass(frozen=True)
class EngineSearchOptions(SearchOptions):
    """A search valued by the network-free rollout policy or the exact solver (``pimc``, ``oracle``)."""

    eval: Evaluation = "rollout"
    """How a world is valued: rollouts to the round's end, or the exact round solver."""
    rollout: Rollout = "mixed"
    """The rollout policy: the strongest legal card (shed), a random one, or shed with 25% random moves."""
    tie: Tie = "rollout"
    """eval=exact: equal best cards settled by rollouts among them in the same worlds, or the lowest card."""


@dataclass(frozen=True)
class PimcOptions(EngineSearchOptions):
    """The options of ``pimc``."""

    belief: Belief = "off"
    """Worlds drawn uniformly, or (models) from pool=N by how well heuristic player types explain the plays."""
    pool: int = option(64, low=1)
    """belief=models: the uniform worlds the worlds are resampled from."""


@dataclass(frozen=True)
class OracleOptions(EngineSearchOptions):
    """The options of ``oracle`` (it searches the true deal: one world when exact, ``worlds`` copies otherwise)."""

    eval: Evaluation = "exact"
    """How the true deal is valued: the exact solver (rollouts above tricks=N), or pimc's rollouts on it."""


@dataclass(frozen=True)
class GuidedOptions(SearchOptions):
    """The options of ``guided`` (needs torch)."""

    eval: Evaluation = "exact"
    """Exact solver late in the round with policy rollouts before it, or policy rollouts only."""
    policy: str = "zoo"
    """The policy: zoo (the universal network, which plays every table), zoo:NAME, or a checkpoint path."""
    belief: bool = option(True, flag=("on", "off"))
    """Weight each world by how likely the opponents' plays were under the policy."""
    prior: float = option(0.0, low=0)
    """Weight of log pi of the own card added to its value (0: none)."""
    top: int | None = option(None, low=1, none="all")
    """Search only the K likeliest cards under the policy (all: every legal card)."""
    tie: GuidedTie = "prior"
    """eval=exact: equal best values settled by the prior term, or by policy rollouts among them."""
    rollout: Moves = "greedy"
    """How every seat plays in the rollouts: the policy's likeliest card, one drawn from it, or pimc's mixed."""
    out: bool = option(False, flag=("on", "off"))
    """eval=exact: charge going out (the round's penalty reaching the limit) in the exact values."""


class Sampler(Protocol):
    """Draws the worlds of ``k`` games: ``(worlds game-major, worlds per game (k,), weights (k, W) or None)``."""

    def __call__(
        self,
        rules: Rules,
        public: engine.State,
        exact: np.ndarray,
        rng: np.random.Generator,
        truth: Callable[[], engine.State],
    ) -> tuple[engine.State, np.ndarray, np.ndarray | None]:
        """The worlds of the games (``exact``: those valued exactly; ``truth``: the true games, for the oracle)."""
        ...

    def tie_worlds(self, worlds: engine.State) -> engine.State:
        """The worlds of a rollout tie-break, from a game's exact worlds."""
        ...


@dataclass(frozen=True)
class Uniform:
    """``worlds`` deals per game, uniformly among those consistent with what is public; ``weighted``: 1/W weights."""

    worlds: int
    weighted: bool = False

    def __call__(
        self, rules: Rules, public: engine.State, exact: np.ndarray, rng: np.random.Generator, truth: Callable
    ) -> tuple[engine.State, np.ndarray, np.ndarray | None]:
        """Sample the worlds (:func:`agents.pimc.sample_worlds`)."""
        k, w = public.batch, self.worlds
        weights = np.full((k, w), 1.0 / w) if self.weighted else None
        return pimc.sample_worlds(rules, public, w, rng), np.full(k, w), weights

    def tie_worlds(self, worlds: engine.State) -> engine.State:
        """The same worlds."""
        return worlds


@dataclass(frozen=True)
class Resampled:
    """``worlds`` of ``pool`` uniform worlds, resampled by how well the heuristic types explain the plays."""

    worlds: int
    pool: int

    def __call__(
        self, rules: Rules, public: engine.State, exact: np.ndarray, rng: np.random.Generator, truth: Callable
    ) -> tuple[engine.State, np.ndarray, np.ndarray | None]:
        """Sample ``pool`` worlds and keep ``worlds`` of them (:func:`agents.belief.resample`)."""
        k = public.batch
        pool = pimc.sample_worlds(rules, public, self.pool, rng)
        pick = beliefs.resample(beliefs.model_weights(rules, pool, self.pool), self.worlds, rng)
        return pool.take((np.arange(k)[:, None] * self.pool + pick).ravel()), np.full(k, self.worlds), None

    def tie_worlds(self, worlds: engine.State) -> engine.State:
        """The same worlds."""
        return worlds


@dataclass(frozen=True)
class Truth:
    """The true deal (a cheating reference): once for a game valued exactly, ``worlds`` copies for one rolled out."""

    worlds: int

    def __call__(
        self, rules: Rules, public: engine.State, exact: np.ndarray, rng: np.random.Generator, truth: Callable
    ) -> tuple[engine.State, np.ndarray, np.ndarray | None]:
        """Copies of the true games."""
        per_game = np.where(exact, 1, self.worlds)
        true = truth()
        return true.take(np.repeat(np.arange(true.batch), per_game)), per_game, None

    def tie_worlds(self, worlds: engine.State) -> engine.State:
        """``worlds`` copies of each true deal (the rollouts are random; the deal is not)."""
        return worlds.take(np.repeat(np.arange(worlds.batch), self.worlds))


class Rollouts(Protocol):
    """Plays every candidate card in every world and finishes the round: ``(world, card, utility)`` per line."""

    def __call__(
        self, rules: Rules, worlds: engine.State, candidates: np.ndarray, rng: np.random.Generator, leaf: int | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The lines of every world and candidate (``leaf``: the last tricks solved exactly, or None)."""
        ...


@dataclass(frozen=True)
class EngineRollouts:
    """The network-free rollout policy on the batched engine (:func:`agents.pimc.evaluate`)."""

    policy: Rollout

    def __call__(
        self, rules: Rules, worlds: engine.State, candidates: np.ndarray, rng: np.random.Generator, leaf: int | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Roll every line out to the round's end (``leaf`` is not used: these rollouts are cheap)."""
        return pimc.evaluate(rules, worlds, candidates, self.policy, rng)


@dataclass(frozen=True)
class Exact:
    """The exact round solver's utility of each candidate card, meaned (or weighted) over each game's worlds."""

    going_out: bool = False
    """Charge going out where the solver's line puts the mover out (weighted worlds only)."""

    def __call__(
        self, rules: Rules, worlds: engine.State, candidates: np.ndarray, weights: np.ndarray | None
    ) -> np.ndarray:
        """``(k, A)`` utility; -inf off the candidates."""
        if weights is None:
            return pimc.exact_utility(rules, worlds, candidates)
        mean = (weights[:, :, None] * pimc.exact_values(rules, worlds, candidates, self.going_out)).sum(1)
        return np.where(candidates, mean, -np.inf)


class Prior(Protocol):
    """The searcher's own cards: the candidates to search and the term added to their values (or None)."""

    def __call__(self, d: Decision) -> tuple[np.ndarray, np.ndarray | None]:
        """``(k, A)`` candidate cards and the ``(k, A)`` term added to their values (``None``: nothing)."""
        ...


LEAF_AT_LIMIT = "limit"
"""``Search(leaf=...)``: rollouts hand over to the exact solver at the exact limit (``tricks``)."""


class Search:
    """A search: worlds from ``sampler``, cards valued by ``rollouts`` (and ``exact`` late), plus ``prior``.

    ``exact``: the solver values the games with at most ``tricks`` tricks left (``None``:
    :func:`agents.pimc.exact_tricks`); ``tie``: equal best exact values are settled by
    rollouts among them in the same worlds (:meth:`Sampler.tie_worlds`), the rollouts alone
    (``tie_weight=None``) or added with that weight. ``leaf``: rollouts solve their last
    ``leaf`` tricks exactly (:data:`LEAF_AT_LIMIT`: ``tricks``). ``forced``: games with one
    candidate are answered without search. ``repeats``: rollouts per world and card.
    ``counts`` tallies the games valued each way (``exact``, ``rollout``), the exact games
    whose tie was rolled out (``tie``) and those answered without search (``forced``).
    """

    sees_all = False

    def __init__(
        self,
        rng: np.random.Generator,
        sampler: Sampler,
        rollouts: Rollouts,
        exact: Exact | None = None,
        tricks: int | None = None,
        tie: bool = False,
        tie_weight: float | None = None,
        leaf: int | str | None = None,
        prior: Prior | None = None,
        forced: bool = False,
        repeats: int = 1,
        spec: str = "search",
    ) -> None:
        self.rng, self.sampler, self.rollouts, self.exact, self.tricks = rng, sampler, rollouts, exact, tricks
        self.tie, self.tie_weight, self.leaf, self.prior, self.forced = tie, tie_weight, leaf, prior, forced
        self.repeats, self.spec = repeats, spec
        self.counts = {"exact": 0, "rollout": 0, "tie": 0, "forced": 0}

    def limit(self, rules: Rules) -> int | None:
        """The most tricks left solved exactly (``None``: no exact evaluation)."""
        if self.exact is None:
            return None
        return pimc.exact_tricks(rules) if self.tricks is None else self.tricks

    def act(self, d: Decision) -> np.ndarray:
        """The card of best value per game (the prior's term added)."""
        candidates, bonus = self.prior(d) if self.prior is not None else (d.legal, None)
        choice = candidates.argmax(1)
        if self.forced:
            search = np.flatnonzero(candidates.sum(1) > 1)
            self.counts["forced"] += len(d) - search.size
            if not search.size:
                return choice
            public = d.public.take(search)
        else:
            search, public = np.arange(len(d)), d.public
        utility = self.values(d.rules, public, candidates[search], lambda: d.truth.take(search))
        if bonus is not None:
            utility = utility + bonus[search]
        choice[search] = utility.argmax(1)
        return choice

    def values(
        self,
        rules: Rules,
        public: engine.State,
        candidates: np.ndarray,
        truth: Callable[[], engine.State] | None = None,
    ) -> np.ndarray:
        """``(k, A)`` each candidate card's value in the ``k`` games (``public``: as the mover sees them); else -inf."""
        k = public.batch
        limit = self.limit(rules)
        exact = public.hands[np.arange(k), public.cur].sum(1) <= limit if limit else np.zeros(k, bool)
        worlds, per_game, weights = self.sampler(rules, public, exact, self.rng, truth or _no_truth)
        if self.repeats > 1:
            worlds = worlds.take(np.repeat(np.arange(worlds.batch), self.repeats))
            per_game = per_game * self.repeats
            weights = None if weights is None else np.repeat(weights, self.repeats, axis=1) / self.repeats
        leaf = limit if self.leaf == LEAF_AT_LIMIT else self.leaf
        start = np.cumsum(per_game) - per_game
        utility = np.full((k, rules.num_actions), -np.inf)
        for use_exact in (False, True):
            games = np.flatnonzero(exact == use_exact)
            if not games.size:
                continue
            counts = per_game[games]
            rows = np.repeat(start[games] - (np.cumsum(counts) - counts), counts) + np.arange(counts.sum())
            sub, cand = worlds.take(rows), candidates[games]
            w = None if weights is None else weights[games]
            if use_exact:
                utility[games] = self._exact(rules, sub, cand, w)
            else:
                utility[games] = self._rolled(rules, sub, cand, w, leaf)
            self.counts["exact" if use_exact else "rollout"] += games.size
        return utility

    def _rolled(
        self, rules: Rules, worlds: engine.State, cand: np.ndarray, weights: np.ndarray | None, leaf: int | None
    ) -> np.ndarray:
        """``(k, A)`` mean (or weighted mean) rollout utility of the candidate cards; -inf elsewhere."""
        per_game = worlds.batch // cand.shape[0]
        world, card, value = self.rollouts(rules, worlds, np.repeat(cand, per_game, axis=0), self.rng, leaf)
        return np.where(cand, pimc.card_means(world, card, value, cand.shape, per_game, weights), -np.inf)

    def _exact(self, rules: Rules, worlds: engine.State, cand: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
        """``(k, A)`` exact utility of the candidate cards, equal best ones settled by rollouts when :attr:`tie`."""
        assert self.exact is not None
        utility = self.exact(rules, worlds, cand, weights)
        if not self.tie:
            return utility
        best = np.isclose(utility, utility.max(1, keepdims=True), rtol=0, atol=1e-12) & cand
        tied = np.flatnonzero(best.sum(1) > 1)
        if tied.size:
            per_game = worlds.batch // cand.shape[0]
            rows = (tied[:, None] * per_game + np.arange(per_game)).ravel()
            w = None if weights is None else weights[tied]
            rolled = self._rolled(rules, self.sampler.tie_worlds(worlds.take(rows)), best[tied], w, None)
            if self.tie_weight is None:
                utility[tied] = rolled
            else:
                utility[tied] = np.where(best[tied], utility[tied] + self.tie_weight * rolled, -np.inf)
            self.counts["tie"] += tied.size
        return utility

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={self.spec!r})"


def _no_truth() -> engine.State:
    raise PermissionError("this search was given no true deal to read")


class PIMC(Search):
    """Perfect-information Monte Carlo search (``pimc``, :mod:`agents.pimc`): a setting of :class:`Search`.

    ``options`` (:class:`PimcOptions`, changed by keyword: ``PIMC(rng, worlds=4, eval="exact")``):
    uniform or model-resampled worlds, the engine's rollout policy, the exact solver with
    ``eval=exact`` (ties by rollouts with ``tie=rollout``).
    """

    def __init__(
        self, rng: np.random.Generator, options: PimcOptions | None = None, spec: str = "pimc", **changes: object
    ) -> None:
        o = dataclasses.replace(options or PimcOptions(), **changes)
        sampler = Uniform(o.worlds) if o.belief == "off" else Resampled(o.worlds, o.pool)
        exact = Exact() if o.eval == "exact" else None
        super().__init__(rng, sampler, EngineRollouts(o.rollout), exact, o.tricks, tie=o.tie == "rollout", spec=spec)
        self.options = o


class Oracle(Search):
    """PIMC on the true deal (``oracle``): it reads every hidden hand (a cheating upper reference).

    Exact by default: a card of least own round penalty on the true deal by the solver (one
    world per game; the solver's objective in every mode: going out at the limit, lives
    and the other seats' scores are not weighed), ties among such cards settled by
    rollouts on ``worlds`` copies of the true deal (``tie=rollout``, default) or the
    lowest card (``tie=lowest``: the solver's own best card). Above the exact limit, and
    with ``eval=rollout``, rollouts on ``worlds`` copies of the true deal.
    """

    sees_all = True

    def __init__(
        self, rng: np.random.Generator, options: OracleOptions | None = None, spec: str = "oracle", **changes: object
    ) -> None:
        o = dataclasses.replace(options or OracleOptions(), **changes)
        exact = Exact() if o.eval == "exact" else None
        rollouts = EngineRollouts(o.rollout)
        super().__init__(rng, Truth(o.worlds), rollouts, exact, o.tricks, tie=o.tie == "rollout", spec=spec)
        self.options = o
