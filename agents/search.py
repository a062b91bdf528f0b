"""One search over sampled worlds: a world sampler, one evaluator call shape, one rollout loop; and its settings.

A decision draws worlds (deals of the hidden cards) from a **sampler**, values every
candidate card in every world by an **evaluator**, averages over each game's worlds and
adds a **prior** over the searcher's own cards; the card of best value is played. All
games, worlds and cards of a decision are one batch.

- Samplers: :class:`Uniform` (uniformly among the deals consistent with what is public,
  :func:`agents.pimc.sample_worlds`), :class:`Resampled` (``pool`` uniform worlds resampled by
  the heuristic player models, :mod:`agents.belief`), :class:`Truth` (the true deal: the
  oracle) and the policy belief of :mod:`agents.guided`.
- Evaluators, all called alike (:class:`Evaluator`, as OpenSpiel's MCTS evaluators are):
  :class:`Rollouts`, the one rollout loop (:func:`rollouts`) with a move function at every
  seat (:class:`EngineMoves`, the network-free rollout policy; :mod:`agents.guided`'s policy),
  and :class:`Exact`, the round solver, whose equal best cards another evaluator may settle.
  The search values the games with at most ``tricks`` tricks left by its ``late`` evaluator.
- Utility: :func:`agents.pimc.penalty_utility` (the round penalty / 15, or the life lost),
  with going out charged and others out credited at a rollout's end (:func:`agents.pimc.round_utility`).
- Prior: :mod:`agents.guided`'s ``prior * log pi`` of the own card and its ``top`` cards.

``pimc``, ``oracle`` and ``guided`` are settings of :class:`Search` (:class:`PIMC`,
:class:`Oracle`, :class:`agents.guided.Guided`), and so are the rollout operator of expert
iteration (:func:`agents.guided.improve`) and the web hint's values. Their options are declared
here, once (:mod:`agurk_env.options`): the registry parses specs with them and ``agurk agents``
lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from agents import belief as beliefs
from agents import pimc
from agurk_env import engine, solver
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
    """Draws the worlds of ``k`` games, the same number per game, game-major: ``(worlds, weights (k, W) or None)``."""

    def __call__(
        self, rules: Rules, public: engine.State, rng: np.random.Generator, truth: Callable[[], engine.State]
    ) -> tuple[engine.State, np.ndarray | None]:
        """The worlds of the games (``truth``: the true games, for the oracle)."""
        ...


@dataclass(frozen=True)
class Uniform:
    """``worlds`` deals per game, uniformly among those consistent with what is public; ``weighted``: 1/W weights."""

    worlds: int
    weighted: bool = False

    def __call__(
        self, rules: Rules, public: engine.State, rng: np.random.Generator, truth: Callable
    ) -> tuple[engine.State, np.ndarray | None]:
        """Sample the worlds (:func:`agents.pimc.sample_worlds`)."""
        weights = np.full((public.batch, self.worlds), 1.0 / self.worlds) if self.weighted else None
        return pimc.sample_worlds(rules, public, self.worlds, rng), weights


@dataclass(frozen=True)
class Resampled:
    """``worlds`` of ``pool`` uniform worlds, resampled by how well the heuristic types explain the plays."""

    worlds: int
    pool: int

    def __call__(
        self, rules: Rules, public: engine.State, rng: np.random.Generator, truth: Callable
    ) -> tuple[engine.State, np.ndarray | None]:
        """Sample ``pool`` worlds and keep ``worlds`` of them (:func:`agents.belief.resample`)."""
        pool = pimc.sample_worlds(rules, public, self.pool, rng)
        pick = beliefs.resample(beliefs.model_weights(rules, pool, self.pool), self.worlds, rng)
        return pool.take((np.arange(public.batch)[:, None] * self.pool + pick).ravel()), None


@dataclass(frozen=True)
class Truth:
    """The true deal, one world per game (a cheating reference; its rollouts repeat it)."""

    def __call__(
        self, rules: Rules, public: engine.State, rng: np.random.Generator, truth: Callable
    ) -> tuple[engine.State, np.ndarray | None]:
        """The true games."""
        return truth(), None


class MoveFunction(Protocol):
    """A rollout's card for the player to move in every line (lines not ``open``, already valued: any legal card)."""

    def __call__(self, rules: Rules, state: engine.State, open: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``(n,)`` a legal card per line."""
        ...


@dataclass(frozen=True)
class EngineMoves:
    """The network-free rollout policy (:func:`agents.pimc.rollout_action`), on every line: cheaper than taking rows."""

    policy: Rollout

    def __call__(self, rules: Rules, state: engine.State, open: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The rollout policy's card in every line."""
        return pimc.rollout_action(rules, engine.legal_bits(rules, state), self.policy, rng)


def rollouts(
    rules: Rules,
    worlds: engine.State,
    candidates: np.ndarray,
    move: MoveFunction,
    rng: np.random.Generator,
    leaf: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The one rollout loop: each candidate card in each world, ``move`` ending the round; ``(world, card, utility)``.

    ``candidates`` is ``(n, A)`` for the ``n`` worlds. A line's utility is the mover's
    :func:`agents.pimc.round_utility` when its round ends or, with ``leaf``, the mover's
    :func:`agents.pimc.penalty_utility` on the exact solver's line once at most ``leaf`` tricks
    are left. Valued lines play on harmlessly (into a new round) until every line is valued.
    """
    world, card = np.nonzero(candidates)
    st = engine.play(rules, worlds.take(world), card)
    mover = worlds.cur[world].astype(np.int64)
    utility = np.full(world.size, np.nan)
    while True:
        open_ = np.isnan(utility)
        over = st.round_over & open_
        if over.any():
            utility[over] = pimc.round_utility(rules, st, mover)[over]
        if leaf:
            at = np.flatnonzero(open_ & ~over & (rules.hand_size - st.trick_no <= leaf))
            if at.size:
                line = solver.solution(rules, st, at).penalties
                utility[at] = pimc.penalty_utility(rules, line[np.arange(at.size), mover[at]])
        open_ = np.isnan(utility)
        if not open_.any():
            return world, card, utility
        st = engine.advance(rules, st)
        st = engine.play(rules, st, move(rules, st, open_, rng))


class Evaluator(Protocol):
    """Values the candidate cards of ``k`` games in their worlds (``W = worlds.batch // k`` each, game-major)."""

    def __call__(
        self,
        rules: Rules,
        worlds: engine.State,
        candidates: np.ndarray,
        weights: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """``(k, A)`` each candidate's value (``weights`` ``(k, W)``: the worlds' shares, or None); -inf elsewhere."""
        ...


AUTO = "auto"
"""``Rollouts(leaf=AUTO)``, ``tricks=None``: the exact limit of :func:`agents.pimc.exact_tricks`."""


def exact_limit(rules: Rules, tricks: int | str | None) -> int:
    """The most tricks left solved exactly: ``tricks``, or (None, :data:`AUTO`) :func:`agents.pimc.exact_tricks`."""
    return pimc.exact_tricks(rules) if tricks in (None, AUTO) else int(tricks)


@dataclass(frozen=True)
class Rollouts:
    """The mean utility of :func:`rollouts` by ``move``, ``repeats`` per world (the last ``leaf`` tricks solved)."""

    move: MoveFunction
    repeats: int = 1
    leaf: int | str | None = None
    """Tricks left from which a line is solved exactly (:data:`AUTO`: :func:`exact_limit`; None: never)."""

    def __call__(
        self,
        rules: Rules,
        worlds: engine.State,
        candidates: np.ndarray,
        weights: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """``(k, A)`` mean (or weighted mean) rollout utility of the candidate cards; -inf elsewhere."""
        if self.repeats > 1:
            worlds = worlds.take(np.repeat(np.arange(worlds.batch), self.repeats))
            weights = None if weights is None else np.repeat(weights, self.repeats, axis=1) / self.repeats
        per_game = worlds.batch // candidates.shape[0]
        leaf = None if self.leaf is None else exact_limit(rules, self.leaf)
        world, card, value = rollouts(rules, worlds, np.repeat(candidates, per_game, axis=0), self.move, rng, leaf)
        return np.where(candidates, pimc.card_means(world, card, value, candidates.shape, per_game, weights), -np.inf)


@dataclass
class Exact:
    """The exact round solver's utility, meaned (or weighted) over the worlds; equal best cards settled by ``tie``.

    ``going_out``: charge going out where the solver's line puts the mover out (weighted worlds
    only). ``tie``: an evaluator of the equal best cards in the same worlds, whose values
    replace theirs (``tie_weight=None``) or are added with that weight. ``tied`` counts the
    games whose tie it settled.
    """

    going_out: bool = False
    tie: Evaluator | None = None
    tie_weight: float | None = None
    tied: int = field(default=0, init=False)

    def __call__(
        self,
        rules: Rules,
        worlds: engine.State,
        candidates: np.ndarray,
        weights: np.ndarray | None,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """``(k, A)`` exact utility of the candidate cards; -inf elsewhere."""
        if weights is None:
            utility = pimc.exact_utility(rules, worlds, candidates)
        else:
            mean = (weights[:, :, None] * pimc.exact_values(rules, worlds, candidates, self.going_out)).sum(1)
            utility = np.where(candidates, mean, -np.inf)
        if self.tie is None:
            return utility
        best = np.isclose(utility, utility.max(1, keepdims=True), rtol=0, atol=1e-12) & candidates
        tied = np.flatnonzero(best.sum(1) > 1)
        if tied.size:
            per_game = worlds.batch // candidates.shape[0]
            rows = (tied[:, None] * per_game + np.arange(per_game)).ravel()
            w = None if weights is None else weights[tied]
            rolled = self.tie(rules, worlds.take(rows), best[tied], w, rng)
            if self.tie_weight is None:
                utility[tied] = rolled
            else:
                utility[tied] = np.where(best[tied], utility[tied] + self.tie_weight * rolled, -np.inf)
            self.tied += tied.size
        return utility


class Prior(Protocol):
    """The searcher's own cards: the candidates to search and the term added to their values (or None)."""

    def __call__(self, d: Decision) -> tuple[np.ndarray, np.ndarray | None]:
        """``(k, A)`` candidate cards and the ``(k, A)`` term added to their values (``None``: nothing)."""
        ...


class Search:
    """A search: worlds from ``sampler``, cards valued by ``evaluator`` (by ``late`` late in the round), plus ``prior``.

    ``late`` values the games with at most ``tricks`` tricks left (``None``:
    :func:`agents.pimc.exact_tricks`). ``forced``: games with one candidate are answered
    without search. :attr:`counts` tallies the games valued each way (``rollout`` by
    ``evaluator``, ``exact`` by ``late``), the late games whose tie was settled (``tie``, an
    :class:`Exact`'s ``tied``) and those answered without search (``forced``).
    """

    sees_all = False

    def __init__(
        self,
        rng: np.random.Generator,
        sampler: Sampler,
        evaluator: Evaluator,
        late: Evaluator | None = None,
        tricks: int | None = None,
        prior: Prior | None = None,
        forced: bool = False,
        spec: str = "search",
    ) -> None:
        self.rng, self.sampler, self.evaluator, self.late, self.tricks = rng, sampler, evaluator, late, tricks
        self.prior, self.forced, self.spec = prior, forced, spec
        self._counts = {"exact": 0, "rollout": 0, "forced": 0}

    @property
    def counts(self) -> dict[str, int]:
        """The games valued by each evaluator, the late ones whose tie was settled, and those without search."""
        return {**self._counts, "tie": self.late.tied if isinstance(self.late, Exact) else 0}

    def act(self, d: Decision) -> np.ndarray:
        """The card of best value per game (the prior's term added)."""
        candidates, bonus = self.prior(d) if self.prior is not None else (d.legal, None)
        choice = candidates.argmax(1)
        if self.forced:
            search = np.flatnonzero(candidates.sum(1) > 1)
            self._counts["forced"] += len(d) - search.size
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
        worlds, weights = self.sampler(rules, public, self.rng, truth or _no_truth)
        per_game = worlds.batch // k
        late = np.zeros(k, bool)
        if self.late is not None:
            late = public.hands[np.arange(k), public.cur].sum(1) <= exact_limit(rules, self.tricks)
        utility = np.full((k, rules.num_actions), -np.inf)
        for name, evaluator, mask in (("rollout", self.evaluator, ~late), ("exact", self.late, late)):
            games = np.flatnonzero(mask)
            if evaluator is None or not games.size:
                continue
            if games.size < k:
                rows = (games[:, None] * per_game + np.arange(per_game)).ravel()
                sub, cand, w = worlds.take(rows), candidates[games], None if weights is None else weights[games]
            else:
                sub, cand, w = worlds, candidates, weights
            utility[games] = evaluator(rules, sub, cand, w, self.rng)
            self._counts[name] += games.size
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
        self, rng: np.random.Generator, options: PimcOptions | None = None, spec: str = "pimc", **changes: Any
    ) -> None:
        o = dataclasses.replace(options or PimcOptions(), **changes)
        sampler = Uniform(o.worlds) if o.belief == "off" else Resampled(o.worlds, o.pool)
        rolled = Rollouts(EngineMoves(o.rollout))
        super().__init__(rng, sampler, rolled, _exact(o, rolled), o.tricks, spec=spec)
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
        self, rng: np.random.Generator, options: OracleOptions | None = None, spec: str = "oracle", **changes: Any
    ) -> None:
        o = dataclasses.replace(options or OracleOptions(), **changes)
        rolled = Rollouts(EngineMoves(o.rollout), repeats=o.worlds)
        super().__init__(rng, Truth(), rolled, _exact(o, rolled), o.tricks, spec=spec)
        self.options = o


def _exact(o: EngineSearchOptions, rolled: Rollouts) -> Exact | None:
    """The late evaluator of pimc and the oracle: the solver (``eval=exact``), ties by ``rolled`` (``tie=rollout``)."""
    return Exact(tie=rolled if o.tie == "rollout" else None) if o.eval == "exact" else None
