"""Perfect-information Monte Carlo search (PIMC): its worlds, rollouts and exact values (the search: agents.search).

For each decision PIMC samples ``worlds`` deals of the unseen cards to the opponents,
consistent with everything public (cards played, cards left per seat, and the cards
each opponent has shown it does not hold, :func:`sample_worlds`), values every legal card
in every world and picks the card with the best mean utility. All games of a decision,
all worlds and all candidate cards run as one batch. A world is valued one of two ways:

- ``rollout``: every legal card is played in every world and the round is finished by a
  fast rollout policy on the batched engine (:func:`rollout_action` in the search's one rollout
  loop, :func:`agents.search.rollouts`); the utility charges the round penalty, going out and
  the other seats going out (:func:`round_utility`).
- ``exact``: one call of the exact round solver (:func:`agurk_env.solver.solution`) on
  all the worlds gives the mover's round penalty after each legal card, every player then
  playing the solver's line (each minimising its own round penalty). The utility is the
  round penalty alone (:func:`exact_utility`): going out is **not** charged and others
  going out not credited, a simplification (see :func:`exact_utility`). Cards of equal
  best utility (common: the solver calls many cards worth 0) are settled by ``tie``: the
  lowest card (the solver's own rule) or rollouts among the tied cards in the same worlds,
  which play better against opponents that are not perfect. The solver is exact but its
  cost grows steeply with the tricks left, fastest under every-trick scoring, so
  positions with more than :data:`EXACT_TRICKS` tricks left (the ``tricks`` option
  overrides it) fall back to the rollouts, game by game.

The worlds are drawn uniformly among the deals consistent with what is public
(``belief=off``), or (``belief=models``) ``worlds`` of them are resampled from ``pool``
uniform ones in proportion to how likely the opponents' plays of this round were in each,
under a mixture of heuristic player types (:func:`agents.belief.model_weights`).

The oracle reads the hidden hands: it values the true deal instead of sampled ones, a
cheating upper reference for measuring skill, never a fair opponent. By default it is
exact (a card of least solver value on the true deal, one world per game, ties by
rollouts on ``worlds`` copies of it); with ``eval=rollout`` it is the rollout search on
``worlds`` copies of the true deal, which is also its fallback above :data:`EXACT_TRICKS`.

``pimc`` and ``oracle`` are settings of :class:`agents.search.Search` (:class:`agents.search.PIMC`,
:class:`agents.search.Oracle`); this module holds the parts they plug in, and the one utility of
a round penalty (:func:`penalty_utility`) that every search values with.
"""

from __future__ import annotations

import numpy as np

from agurk_env import engine, solver
from agurk_env.rules import Rules

OUT_COST = 2.0
"""Utility lost when the searching seat goes out this round (one round penalty is at most 1)."""
OTHERS_OUT_GAIN = 0.5
"""Utility gained per other seat that goes out this round."""
PENALTY_SCALE = 15.0
"""Round penalties are divided by this in the utility (a round costs at most about 1); lives mode counts a life as 1."""
LIVES_TIE = 1e-6
"""Exact evaluation in lives mode: weight of the mean round penalty that breaks ties between equal mean lives lost."""

EXACT_TRICKS: dict[str, int] = {"last_trick": 8, "every_trick": 5}
"""Most tricks left (the current one included) that exact evaluation solves, by ``scoring``; more are rolled out.

Measured per solve with numba (median / max ms): last-trick scoring 4 x 7 from the first lead
1.3 / 12, 4 x 10 at 8 tricks left 3 / 15 (at 10: 106 / 397); every-trick scoring 4 x 7 at
5 tricks left 0.6 / 2.4 (at 6: 10 / 84, at 7: 180 / 6,500), 6 x 7 at 5 1.4 / 10 (at 6:
36 / 250), 8 x 6 at 5 2.2 / 9 (at 6: 123 / 1,200).
"""
PYTHON_TRICKS = 2
"""Without numba (the solver's pure-Python path, about 40x slower) exact evaluation solves this many tricks fewer."""


def _strongest_table(rules: Rules) -> np.ndarray:
    """For every card set, its strongest card in the tricks before the last (the ``shed`` rollout)."""
    sp = engine.tables(rules)
    members = engine.MEMBERS[:, : sp.actions]
    score = np.where(members, sp.strength[: sp.actions], -1)
    return score.argmax(1)


_STRONGEST: dict[Rules, np.ndarray] = {}


def rollout_action(rules: Rules, bits: np.ndarray, policy: str, rng: np.random.Generator) -> np.ndarray:
    """The rollout policy's card from each legal card set (:data:`agents.search.Rollout`)."""
    if policy == "random":
        return engine.random_legal(bits, rng)
    if rules not in _STRONGEST:
        _STRONGEST[rules] = _strongest_table(rules)
    strongest = _STRONGEST[rules][bits]
    if policy == "mixed":
        return np.where(rng.random(bits.shape) < 0.25, engine.random_legal(bits, rng), strongest)
    return strongest


def sample_worlds(rules: Rules, public: engine.State, worlds: int, rng: np.random.Generator) -> engine.State:
    """``worlds`` copies of each game (game-major) with the hidden hands dealt at random, consistently.

    Every opponent gets as many cards as it holds, drawn from the unseen cards (deck
    minus the mover's hand minus this round's plays) and never one it has shown it does
    not hold. Opponents with the most such constraints draw first; if the constraints
    cannot be met in a sampled world, that opponent's constraints are dropped there.
    """
    sp = engine.tables(rules)
    k, p, a = public.batch, sp.players, sp.actions
    rows_k = np.arange(k)
    mover = public.cur
    own = public.hands[rows_k, mover].astype(np.int64)
    unseen = sp.in_deck - own - engine.cards_played(rules, public)
    need = engine.cards_left(rules, public)
    need[rows_k, mover] = 0

    # the unseen physical cards of each game, padded with -1
    d = sp.deck.size
    ends = np.cumsum(unseen, axis=1)  # (k, A)
    cards = (np.arange(d)[None, None, :] >= ends[:, :, None]).sum(1)  # (k, D): card of each unseen slot
    cards = np.where(np.arange(d)[None, :] < ends[:, -1:], cards, -1).astype(np.int8)  # small types: faster below

    n = k * worlds
    game = np.repeat(rows_k, worlds)
    cards, need, void = cards[game], need[game], public.void[game]
    order = np.argsort(-engine.SET_SIZE[void & ((1 << a) - 1)], axis=1, kind="stable")  # most constrained first
    cards = np.take_along_axis(cards, np.argsort(rng.random((n, d)), axis=1), axis=1)  # each world's random order
    taken = cards < 0
    safe = np.maximum(cards, 0)
    hands = np.zeros((n, p, a), np.int64)
    rows = np.arange(n)
    slot = rows[:, None] * a + safe  # (world, card) of each slot, for the counts
    for j in range(p):  # each seat takes the first cards it may hold, in the world's order
        seat = order[:, j]
        want = need[rows, seat]
        free = ~taken
        allowed = free & ((void[rows, seat][:, None] >> safe) & 1 == 0)
        short = allowed.sum(1) < want
        allowed[short] = free[short]
        chosen = allowed & (np.cumsum(allowed, axis=1, dtype=np.int8) <= want[:, None])
        taken |= chosen
        got = np.bincount(slot[chosen], minlength=n * a).reshape(n, a)
        hands[rows, seat] += got
    base = public.take(game)
    hands[rows, mover[game]] = own[game]
    return engine.set_hands(rules, base, hands)


def penalty_utility(rules: Rules, pen: np.ndarray, lost: np.ndarray | None = None, tie: float = 0.0) -> np.ndarray:
    """The one utility of a round penalty: minus it / :data:`PENALTY_SCALE`, or in lives mode minus the life lost.

    ``lost`` is a mean of lives lost over worlds (``pen``: their mean penalty), else ``pen > 0``;
    in lives mode ``tie`` times the penalty is also taken off (:data:`LIVES_TIE`, the exact values').
    """
    if not rules.lives:
        return -pen / PENALTY_SCALE
    return -((pen > 0).astype(float) if lost is None else lost) - tie * pen


def round_utility(rules: Rules, st: engine.State, mover: np.ndarray) -> np.ndarray:
    """The rollouts' utility of every game's ended round for its ``mover``: penalty, going out, others out."""
    rows = np.arange(st.batch)
    out = st.out_now[rows, mover]
    others = st.out_now.sum(1) - out
    return penalty_utility(rules, st.round_penalty[rows, mover]) - OUT_COST * out + OTHERS_OUT_GAIN * others


def card_means(
    world: np.ndarray,
    card: np.ndarray,
    value: np.ndarray,
    shape: tuple[int, int],
    per_game: int,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """``(k, A)`` mean ``value`` of each card over each game's ``per_game`` worlds (game-major), per line.

    Lines are ``(world, card, value)``; ``weights`` ``(k, per_game)`` (each game's summing to
    1) weighs the worlds, ``None`` counts each line once. 0 for a card with no line.
    """
    k, a = shape
    slot = (world // per_game) * a + card
    if weights is not None:
        return np.bincount(slot, weights=value * weights.ravel()[world], minlength=k * a).reshape(k, a)
    total = np.bincount(slot, weights=value, minlength=k * a).reshape(k, a)
    count = np.bincount(slot, minlength=k * a).reshape(k, a)
    return total / np.maximum(count, 1)


def exact_utility(rules: Rules, worlds: engine.State, legal: np.ndarray) -> np.ndarray:
    """``(k, A)`` mean exact utility of each legal card over ``n // k`` worlds per game (game-major); -inf if illegal.

    One solver call values every legal card in every world: the mover's round penalty when
    it plays the card and everyone then plays the solver's line. The utility has the sign
    of the rollouts' (:func:`round_utility`): minus the mean penalty / :data:`PENALTY_SCALE`, or
    in lives mode minus the mean lives lost (the mean penalty times :data:`LIVES_TIE`
    breaking ties), but **without** their going-out terms: the solver values every card
    by the mover's penalty only, and the other seats' penalties (which decide who else
    goes out) only along its chosen line. A larger own penalty never keeps the mover in
    (rebuys aside), so what is lost is the extra weight of going out at the limit and the
    credit for pushing others out. On equal worlds the means are exact (integer sums), so
    ``argmax`` (the lowest card among equals) on a known deal is the solver's best card.
    """
    values = solver_values(rules, worlds, legal)
    return np.where(legal, penalty_utility(rules, values.mean(1), (values > 0).mean(1), LIVES_TIE), -np.inf)


def solver_values(rules: Rules, worlds: engine.State, legal: np.ndarray) -> np.ndarray:
    """``(k, W, A)`` the mover's round penalty after each legal card in each world (one solver call); 0 if illegal."""
    k, a = legal.shape
    values = solver.solution(rules, worlds).values.reshape(k, -1, a)
    return np.where(legal[:, None, :], values, 0.0)  # the solver's legal cards are the decision's


def exact_values(rules: Rules, worlds: engine.State, legal: np.ndarray, going_out: bool = False) -> np.ndarray:
    """``(k, W, A)`` exact utility of each legal card in each world (one solver call); 0 where not legal.

    The utility of :func:`exact_utility` per world (minus the round penalty / :data:`PENALTY_SCALE`;
    in lives mode minus the life lost), and with ``going_out`` minus :data:`OUT_COST` where the
    mover's penalty on the solver's line puts it out: its score plus the penalty reaches the
    engine's limit (:func:`agurk_env.engine.tables`: ``limit``, ``exceed``), or its last life is
    lost; a seat with rebuys left is taken to rebuy (not out).
    """
    k, a = legal.shape
    values = solver_values(rules, worlds, legal)
    utility = penalty_utility(rules, values, tie=LIVES_TIE)
    if going_out:
        sp, rows = engine.tables(rules), np.arange(worlds.batch)
        mover = worlds.cur.astype(np.int64)
        if rules.lives:
            out = (worlds.lives[rows, mover] <= 1)[:, None] & (values.reshape(worlds.batch, a) > 0)
        else:
            total = worlds.scores[rows, mover][:, None] + values.reshape(worlds.batch, a)
            out = (total > sp.limit) if sp.exceed else (total >= sp.limit)
            out &= (worlds.rebuys[rows, mover] <= 0)[:, None]
        utility = utility - OUT_COST * out.reshape(k, -1, a)
    return utility


def exact_tricks(rules: Rules) -> int:
    """The most tricks left that exact evaluation solves by default (:data:`EXACT_TRICKS`, fewer without numba)."""
    return EXACT_TRICKS[rules.scoring] - (0 if solver.HAS_NUMBA else PYTHON_TRICKS)
