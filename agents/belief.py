"""Beliefs over sampled worlds: how likely this round's plays were in each world, by replaying them on the engine.

A sampled world (:func:`agents.pimc.sample_worlds`) is one guess at the hidden hands. Its
deal at the round start is rebuilt (:func:`round_start`: each hand plus the cards that seat
has played) and the round's recorded plays are replayed on the engine (:func:`replay`); at
every play of an opponent that had a choice, a model of how players play says how likely
the card actually played was, in that world. :func:`model_weights` uses the heuristics as
the models (a small library of player types, no torch): per opponent seat, the mixture
over the types, each type's likelihood the product over its plays of ``(1 - floor)``
when the type would have played that card, plus ``floor`` spread over the legal cards (so
one surprising play never rules a world out). ``agents.guided`` uses the trained policy
instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from agents.heuristics import STRATEGIES, table_of
from agurk_env import engine
from agurk_env.rules import Rules

ILLEGAL = 1e-4
"""Likelihood of a recorded play that a sampled world makes illegal (it dropped a shown void it could not meet)."""
MODELS: tuple[str, ...] = ("shed", "guard")
"""The player types of :func:`model_weights`: the heuristics that play to avoid the last trick."""
MODEL_FLOOR = 0.1
"""Share of a uniform choice among the legal cards mixed into every type's choice."""


def round_start(rules: Rules, state: engine.State) -> engine.State:
    """The games as they stood at their round's first lead: every seat's hand plus the cards it has played this round.

    The round's fields are reset as a deal leaves them (no tricks, no shown voids, no round
    penalty) and the first trick's recorded leader is to move; the match fields (scores,
    seats in, dealer) do not change within a round. Replaying the recorded plays on it with
    :func:`agurk_env.engine.play` gives the state back (:func:`replay`).
    """
    hands = state.hands + engine.cards_played(rules, state, by_seat=True)
    first = state.trick_leader[:, 0].astype(np.int64)
    start = engine.set_hands(rules, state, hands)
    return start._replace(
        void=np.zeros_like(state.void),
        tricks=np.full_like(state.tricks, -1),
        trick_leader=np.full_like(state.trick_leader, -1),
        trick_winner=np.full_like(state.trick_winner, -1),
        round_penalty=np.zeros_like(state.round_penalty),
        trick_no=np.zeros_like(state.trick_no),
        npos=np.zeros_like(state.npos),
        cur=np.where(first >= 0, first, state.cur),
        locked=np.zeros_like(state.locked),
    )


def replay(
    rules: Rules, state: engine.State, visit: Callable[[engine.State, np.ndarray, np.ndarray], None] | None = None
) -> engine.State:
    """Replay this round's recorded plays from :func:`round_start`; the state reached (the games' own positions).

    ``visit(before, rows, cards)`` is called before each step with the state of the games
    still replaying (``rows`` of ``state``) and the cards about to be played.
    """
    count = (state.tricks >= 0).sum((1, 2))
    st, rows = round_start(rules, state), np.arange(state.batch)
    done: list[tuple[np.ndarray, engine.State]] = []
    for t in range(int(count.max(initial=0))):
        live = count[rows] > t
        if not live.all():
            done.append((rows[~live], st.take(np.flatnonzero(~live))))
            st, rows = st.take(np.flatnonzero(live)), rows[live]
        cards = state.tricks[rows, st.trick_no, st.cur].astype(np.int64)
        if visit is not None:
            visit(st, rows, cards)
        st = engine.play(rules, st, cards)
    done.append((rows, st))
    order = np.argsort(np.concatenate([r for r, _ in done]), kind="stable")
    parts = [s for _, s in done]
    if len(parts) == 1:
        return parts[0].take(order)
    return concat(parts).take(order)


def concat(states: list[engine.State]) -> engine.State:
    """The games of several states (same rules) as one state, in order."""
    first = states[0]
    return engine.State._make(
        np.concatenate([getattr(s, k) for s in states]) if np.ndim(v) else v for k, v in first._asdict().items()
    )


def model_weights(
    rules: Rules,
    worlds: engine.State,
    per_game: int,
    models: Sequence[str] = MODELS,
    floor: float = MODEL_FLOOR,
) -> np.ndarray:
    """``(n // per_game, per_game)`` weights of each game's worlds (game-major): the likelihood of the opponents' plays.

    Per world, the product over the opponents (every seat but the one to move) of the mean
    over ``models`` of that type's likelihood of the seat's plays this round; a type's
    likelihood of one play with a choice is ``(1 - floor) [type's card == card] + floor /
    legal cards``. Normalised per game (uniform where every world is equally unlikely).
    """
    n, m, p = worlds.batch, len(models), rules.players
    loglik = np.zeros((n, p, m))  # per world, seat and type

    def judge(st: engine.State, choice: np.ndarray, rows: np.ndarray, cards: np.ndarray, bits: np.ndarray) -> None:
        seat = st.cur.astype(np.int64)
        t = table_of(rules, st, st.hands[np.arange(st.batch), seat])  # every row: cheaper than taking the choices
        mask = engine.unpack(bits, rules.num_actions)
        spread = floor / engine.SET_SIZE[bits[choice]]
        for j, name in enumerate(models):
            agrees = STRATEGIES[name](t, mask)[choice] == cards[choice]
            loglik[rows[choice], seat[choice], j] += np.log(np.where(agrees, 1 - floor, 0.0) + spread)

    illegal = judge_plays(rules, worlds, judge)
    top = loglik.max(2, keepdims=True)
    per_seat = top[..., 0] + np.log(np.exp(loglik - top).mean(2))  # log of the mean over types
    return normalised(per_seat.sum(1) + illegal, per_game)


def judge_plays(
    rules: Rules,
    worlds: engine.State,
    judge: Callable[[engine.State, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None],
) -> np.ndarray:
    """Replay this round in every world (:func:`replay`) and have ``judge`` weigh the opponents' plays.

    At each step ``judge(before, choice, rows, cards, bits)`` gets the state of the worlds
    still replaying, the indices (into that state) of the plays by a seat other than the
    one to move now that were legal and had a choice, the worlds (``rows``), the cards
    played and the legal card sets. Returns ``(n,)``: the log of :data:`ILLEGAL` per play a
    world makes illegal (it dropped a shown void it could not meet).
    """
    searcher = worlds.cur.astype(np.int64)
    illegal = np.zeros(worlds.batch)

    def visit(st: engine.State, rows: np.ndarray, cards: np.ndarray) -> None:
        bits = engine.legal_bits(rules, st)
        judged = st.cur != searcher[rows]
        legal = (bits >> cards) & 1 == 1
        illegal[rows[judged & ~legal]] += np.log(ILLEGAL)
        choice = np.flatnonzero(judged & legal & (engine.SET_SIZE[bits] > 1))
        if choice.size:
            judge(st, choice, rows, cards, bits)

    replay(rules, worlds, visit)
    return illegal


def normalised(loglik: np.ndarray, per_game: int) -> np.ndarray:
    """``(n // per_game, per_game)`` weights from per-world log-likelihoods (game-major), summing to 1 per game."""
    loglik = loglik.reshape(-1, per_game)
    w = np.exp(loglik - loglik.max(1, keepdims=True))
    return w / w.sum(1, keepdims=True)


def resample(weights: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``(k, count)`` indices into each game's worlds, drawn by systematic resampling with the ``(k, W)`` weights."""
    k = weights.shape[0]
    edges = np.cumsum(weights, axis=1)
    edges[:, -1] = 1.0
    points = (rng.random((k, 1)) + np.arange(count)) / count
    return np.minimum((points[:, :, None] > edges[:, None, :]).sum(2), weights.shape[1] - 1)
