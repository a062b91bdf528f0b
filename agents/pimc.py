"""Perfect-information Monte Carlo search (PIMC) and its cheating twin, the oracle.

For each decision PIMC samples ``worlds`` deals of the unseen cards to the opponents,
consistent with everything public (cards played, cards left per seat, and the cards
each opponent has shown it does not hold), plays every legal card in every world,
finishes the round with a fast rollout policy on the batched engine, and picks the
card with the best mean outcome. All games of a decision, all worlds and all
candidate cards run as one engine batch.

The oracle runs the same search on the true deal (it reads the hidden hands): a
cheating upper reference for measuring skill, never a fair opponent.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.rules import Rules

OUT_COST = 2.0
"""Utility lost when the searching seat goes out this round (one round penalty is at most 1)."""
OTHERS_OUT_GAIN = 0.5
"""Utility gained per other seat that goes out this round."""


def _strongest_table(rules: Rules) -> np.ndarray:
    """For every card set, its strongest card in the tricks before the last (the ``shed`` rollout)."""
    sp = engine.tables(rules)
    members = engine.MEMBERS[:, : sp.actions]
    score = np.where(members, sp.strength[: sp.actions], -1)
    return score.argmax(1)


_STRONGEST: dict[Rules, np.ndarray] = {}


Rollout = Literal["shed", "random", "mixed"]
ROLLOUTS: tuple[str, ...] = get_args(Rollout)
"""Rollout policies: the strongest legal card, a uniformly random one, or shed with 25% random moves."""


def rollout_action(rules: Rules, bits: np.ndarray, policy: Rollout, rng: np.random.Generator) -> np.ndarray:
    """The rollout policy's card from each legal card set (see :data:`ROLLOUTS`)."""
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
    cards = np.where(np.arange(d)[None, :] < ends[:, -1:], cards, -1)

    n = k * worlds
    game = np.repeat(rows_k, worlds)
    cards, need, void = cards[game], need[game], public.void[game]
    order = np.argsort(-engine.SET_SIZE[void & ((1 << a) - 1)], axis=1, kind="stable")  # most constrained first
    keys = rng.random((n, d))
    taken = cards < 0
    hands = np.zeros((n, p, a), np.int64)
    rows = np.arange(n)
    for j in range(p):
        seat = order[:, j]
        want = need[rows, seat]
        free = ~taken
        allowed = free & ((void[rows, seat][:, None] >> np.maximum(cards, 0)) & 1 == 0)
        short = allowed.sum(1) < want
        allowed[short] = free[short]
        key = np.where(allowed, keys, np.inf)
        cut = np.sort(key, axis=1)[rows, np.maximum(want - 1, 0)]
        chosen = allowed & (key <= cut[:, None]) & (want > 0)[:, None]
        taken |= chosen
        got = np.bincount((rows[:, None] * a + np.maximum(cards, 0))[chosen], minlength=n * a).reshape(n, a)
        hands[rows, seat] += got
    base = public.take(game)
    hands[rows, mover[game]] = own[game]
    return engine.set_hands(rules, base, hands)


def evaluate(
    rules: Rules, worlds: engine.State, legal: np.ndarray, policy: Rollout, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play every legal card in every world and finish the round; ``(world, card, utility)`` per line.

    ``legal`` is ``(n, A)`` for the ``n`` worlds. Utility for the mover: minus its round
    penalty (scaled to at most 1; in lives mode, 1 for losing a life), minus
    :data:`OUT_COST` if it goes out, plus :data:`OTHERS_OUT_GAIN` per other seat out.
    """
    world, card = np.nonzero(legal)
    st = engine.play(rules, worlds.take(world), card)
    mover = worlds.cur[world]
    utility = np.full(world.size, np.nan)
    rows = np.arange(world.size)
    scale = 1.0 if rules.lives else 15.0
    while True:
        over = st.round_over & np.isnan(utility)
        if over.any():
            pen = st.round_penalty[rows, mover]
            pen = (pen > 0).astype(float) if rules.lives else pen
            out = st.out_now[rows, mover]
            others = st.out_now.sum(1) - out
            value = -pen / scale - OUT_COST * out + OTHERS_OUT_GAIN * others
            utility[over] = value[over]
        if not np.isnan(utility).any():
            return world, card, utility
        st = engine.advance(rules, st)  # finished rows play on harmlessly in a new round
        st = engine.play(rules, st, rollout_action(rules, engine.legal_bits(rules, st), policy, rng))


class PIMC:
    """Perfect-information Monte Carlo search over ``worlds`` sampled deals per decision."""

    sees_all = False

    def __init__(
        self, rng: np.random.Generator, worlds: int = 16, rollout: Rollout = "shed", spec: str = "pimc"
    ) -> None:
        if worlds < 1:
            raise ValueError(f"worlds must be >= 1, not {worlds}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {rollout!r}")
        self.rng, self.worlds, self.rollout, self.spec = rng, worlds, rollout, spec

    def _worlds(self, d: Decision) -> tuple[engine.State, int]:
        return sample_worlds(d.rules, d.public, self.worlds, self.rng), self.worlds

    def act(self, d: Decision) -> np.ndarray:
        """The card with the best mean utility over the sampled worlds, per game."""
        worlds, per_game = self._worlds(d)
        legal = np.repeat(d.legal, per_game, axis=0)
        world, card, utility = evaluate(d.rules, worlds, legal, self.rollout, self.rng)
        a = d.legal.shape[1]
        slot = (world // per_game) * a + card
        total = np.bincount(slot, weights=utility, minlength=len(d) * a).reshape(len(d), a)
        count = np.bincount(slot, minlength=len(d) * a).reshape(len(d), a)
        mean = np.where(d.legal, total / np.maximum(count, 1), -np.inf)
        return mean.argmax(1)


class Oracle(PIMC):
    """PIMC on the true deal: it reads every hidden hand (a cheating upper reference)."""

    sees_all = True

    def __init__(
        self, rng: np.random.Generator, worlds: int = 1, rollout: Rollout = "shed", spec: str = "oracle"
    ) -> None:
        super().__init__(rng, worlds, rollout, spec)

    def _worlds(self, d: Decision) -> tuple[engine.State, int]:
        truth = d.truth
        return truth.take(np.repeat(np.arange(truth.batch), self.worlds)), self.worlds
