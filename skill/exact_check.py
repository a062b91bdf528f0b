"""The sampled skill pipeline checked against exact values in tiny games (:func:`exact_check`).

The skill report measures relative skill ``RS = (R_best - R_random) / (R_fictive - R_random)``,
``R_x`` the focal result of agent ``x`` in one seat against a field of ``guard`` copies, every
deal played at every seating (:mod:`skill.variant`, :mod:`skill.stats`). In a tiny setting (2-3
seats, a small deck, short matches) every one of those numbers can be computed exactly:

- :func:`exact_table` enumerates every chance outcome of a whole **match** (every deal of every
  round, the same dealing as the engine's and as OpenSpiel's ``python_agurk``) and every card of
  ``random`` (each legal card with probability ``1 / n``), the other seats' agents asked on the
  engine states, batched, as the tournament asks them; round-start states with the same scores,
  seats in, lives, rebuys and dealer are merged (a match is a Markov chain over them, because every
  agent used here chooses its card from the current engine state: the heuristics, the fictive
  player, a greedy network). It gives every seat's expected win share (a win shared by ``k``
  counts ``1/k``), penalty points and rounds played per match.
- :func:`exact_results` averages them over the seatings of the pipeline's design
  (:func:`agents.seatings.seatings` of ``[spec, guard, ...]``, the agents built as
  :func:`agents.tournament.table_agents` builds them), so ``R_win`` is the expected focal win share
  and ``R_penalty`` minus the expected penalty over the expected rounds played: the limits of the
  pipeline's win rate and of its ratio of summed penalty to summed rounds.
- ``R_fictive`` is the fictive player's exact value by the same enumeration. It is **not** an
  OpenSpiel policy (it reads the hidden hands, which :func:`skill.agent_policy.check_policy_agent`
  refuses), but it is deterministic against deterministic opponents (``guard``), so its play on
  every deal is enumerated exactly all the same.
- :func:`fair_best_response` is the exact fair best response to the field: OpenSpiel's
  ``python_agurk`` with ``episode=match``, its tree walked (:func:`skill.game_tree.build_tree`),
  ``guard`` as a tabular policy (:func:`skill.agent_policy.agent_policy`), the returns replaced by
  each seat's win share, and :func:`skill.best_response.best_response` per focal seat. It is a fair
  agent (it sees only its information states). The same tree gives every fair agent's value with
  :func:`skill.best_response.policy_values`, a second exact computation that must agree with
  :func:`exact_table` (:func:`tree_values`).
- :func:`sampled_results` is the pipeline itself: :func:`agents.tournament.plan_tournament` and
  :func:`agents.tournament.play_planned` per table, dealt from the same small deck, then
  :func:`skill.stats.focal_data` and :func:`skill.stats.skill_stats` with ``random``, the best
  agent and ``fictive`` on the ladder (the best agent fixed to the exact one).

The measure is the match win rate (``R_win``, what ``rs_win`` of the report is): the OpenSpiel
game plays whole matches. ``rs_penalty`` (minus penalty points per round played) is computed
beside it, exactly and sampled, but no best response is computed for it (a ratio of two
expectations over the match is no return of the game).

Agents whose play is random beyond ``random`` itself (``pimc``, which samples worlds from a
generator, a ``;sample`` network, the oracle's rollouts) have no enumerable value here:
:func:`exact_table` refuses them.

``python -m skill.exact_check --out FILE.json`` runs :data:`SETTINGS` (:func:`main`).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.fictive import Fictive, simulable
from agents.heuristics import DESCRIPTIONS
from agents.registry import make_agent
from agents.seatings import seatings
from agents.tournament import TournamentResult, agent_seed, plan_tournament, play_planned, table_agents
from agurk_env import engine
from agurk_env.agent import Agent, RandomAgent, dispatch
from agurk_env.rules import Rules
from skill.agent_policy import Representatives, agent_policy
from skill.best_response import best_response, policy_values
from skill.budget import FICTIVE, FIELD, RANDOM
from skill.exploitability import Setting, estimate_histories
from skill.game_tree import GameTree, build_tree, load_game
from skill.stats import SkillStats, focal_data, skill_stats

CANDIDATES: tuple[str, ...] = (*DESCRIPTIONS, "zoo")
"""The fair agents measured by default, in ladder order (ties go to the first, as the pipeline's best): the
heuristics and the zoo's universal network (greedy). All are deterministic, so their play can be enumerated."""
_ONE_ROUND = (("limit", 1),)
"""A limit of 1: the first round's scorers go out (two seats: the match is that round)."""
_FIRST_OUT = (("limit", 1), ("match_end", "first_out"))
"""One round: the seats that score in it go out, the others win together."""
SETTINGS: tuple[Setting, ...] = (
    Setting("standard", 2, 3, "10,J,Q,K,A", 4, _ONE_ROUND),
    Setting("danish21", 2, 3, "10,J,Q,K,A", 4, _ONE_ROUND),
    Setting("free_choice", 2, 3, "10,J,Q,K,A", 4, _ONE_ROUND),
    Setting("standard", 2, 4, "J,Q,K,A", 3, _ONE_ROUND),
    Setting("standard", 2, 3, "Q,K,A", 2, (("limit", 25),)),
    Setting("every_trick", 2, 3, "Q,K,A", 2, (("limit", 30),)),
    Setting("every_trick", 2, 2, "10,J,Q,K,A", 2),
    Setting("swedish", 3, 3, "J,Q,K,A", 3, _FIRST_OUT),
    Setting("standard", 3, 3, "Q,K,A", 3, _FIRST_OUT),
)
"""The tiny settings of :func:`main`: presets with small decks, whole matches of one round (a limit of 1) or of
about two (``standard`` at limit 25 from Q K A, ``every_trick`` at 30 and at its own 21)."""
TREE_LIMIT = 1_500_000
"""Most histories (Knuth's estimate, which runs low) of a match tree :func:`match_tree` walks."""


# ----------------------------------------------------------------------------- dealing


@functools.lru_cache(maxsize=64)
def hand_rows(deck: tuple[int, ...], hand_size: int) -> np.ndarray:
    """``(M, A)`` every hand (multiset of ``hand_size`` cards, counted per card) that ``deck`` allows."""
    cards = [c for c, n in enumerate(deck) if n]
    rows = []
    for combo in itertools.combinations_with_replacement(cards, hand_size):
        counts = np.bincount(combo, minlength=len(deck))
        if (counts <= np.asarray(deck)).all():
            rows.append(counts)
    return np.asarray(rows, np.int8)


@functools.lru_cache(maxsize=256)
def joint_deals(deck: tuple[int, ...], hand_size: int, alive: tuple[bool, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(hands (D, P, A) int8, probabilities (D,))``: every deal of a round to the seats ``alive``, exactly.

    A deal gives each seat in a hand of ``hand_size`` cards from the shuffled ``deck`` (the rest
    set aside): the seats' hands are drawn one after another without replacement, each with the
    probability ``prod_c C(left_c, h_c) / C(left, hand_size)`` (the engine's and ``python_agurk``'s
    distribution; the order of the seats does not change it).
    """
    rows = hand_rows(deck, hand_size).astype(np.int64)
    p, a = len(alive), len(deck)
    deals = [(np.zeros((p, a), np.int64), 1.0)]
    for seat in (s for s in range(p) if alive[s]):
        nxt = []
        for hands, prob in deals:
            left = np.asarray(deck) - hands.sum(0)
            total = math.comb(int(left.sum()), hand_size)
            for row in rows:
                if (row <= left).all():
                    ways = math.prod(math.comb(int(n), int(k)) for n, k in zip(left, row, strict=True))
                    dealt = hands.copy()
                    dealt[seat] = row
                    nxt.append((dealt, prob * ways / total))
        deals = nxt
    return np.stack([h for h, _ in deals]).astype(np.int8), np.array([q for _, q in deals])


# ----------------------------------------------------------------------------- exact values by enumeration


def _concat(states: Sequence[engine.State]) -> engine.State:
    """Engine states as one batch, in order."""
    first = states[0]
    if len(states) == 1:
        return first
    arrays: dict[str, Any] = {  # the State's array fields
        k: np.concatenate([getattr(s, k) for s in states]) for k, v in first._asdict().items() if hasattr(v, "shape")
    }
    return first._replace(**arrays)


def _take(state: engine.State, rows: np.ndarray) -> engine.State:
    """The games ``rows`` (an index array, repeats allowed) of ``state``, copied."""
    return state.take(np.asarray(rows, np.int64))


def _deterministic(agent: Agent, agents: Sequence[Agent]) -> bool:
    """Whether ``agent``'s card is a function of the engine state it is shown (so one card per state)."""
    if isinstance(agent, Fictive):  # searches exactly when every other seat is simulable, else the oracle's rollouts
        return all(simulable(other) for other in agents if other is not agent)
    return simulable(agent)


_MERGE_FIELDS = ("scores", "alive", "lives", "rebuys", "dealer", "n_alive", "next_seat")
"""What a round-start state is (for merging): everything the next rounds depend on but the random deal."""


def _merge(states: engine.State, weights: np.ndarray) -> tuple[engine.State, np.ndarray]:
    """Round-start ``states`` with equal :data:`_MERGE_FIELDS` as one state each, their weights added."""
    if states.batch <= 1:
        return states, weights
    key = np.concatenate([getattr(states, f).reshape(states.batch, -1).astype(np.int64) for f in _MERGE_FIELDS], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    merged = np.zeros(first.size)
    np.add.at(merged, inverse.reshape(-1), weights)
    return _take(states, first), merged


def _deal(
    rules: Rules, deck: tuple[int, ...], starts: engine.State, weights: np.ndarray
) -> tuple[engine.State, np.ndarray]:
    """Every deal of the next round at each of ``starts`` (whose hands get replaced), with its probability."""
    parts, probs = [], []
    alive = starts.alive
    for pattern in np.unique(alive, axis=0):
        idx = np.flatnonzero((alive == pattern).all(1))
        hands, prob = joint_deals(deck, rules.hand_size, tuple(bool(x) for x in pattern))
        rows = np.repeat(idx, prob.size)
        sub = _take(starts, rows)
        parts.append(engine.set_hands(rules, sub, np.tile(hands, (idx.size, 1, 1))))
        probs.append((weights[idx, None] * prob[None, :]).reshape(-1))
    return _concat(parts), np.concatenate(probs)


def exact_table(
    rules: Rules, deck: np.ndarray, agents: Sequence[Agent], max_rounds: int = 200
) -> dict[str, np.ndarray]:
    """Every seat's exact expected ``win`` share, ``penalty`` points and ``rounds`` played per match, ``(P,)`` each.

    Seat ``s`` is played by ``agents[s]`` (seat 0 deals round 1, as in the tournament). Every deal
    of every round is enumerated with its probability (:func:`joint_deals`); a ``random`` seat
    branches on each legal card with probability ``1 / n``; every other agent must be
    deterministic (a heuristic, a greedy network, the fictive player against deterministic
    opponents) and is asked once per step for all the states where it is to move (a mover with one
    legal card plays it unasked). Also returns ``histories``: the decision states enumerated
    (round-start states merged, see the module docstring). ``ValueError`` for a stochastic agent,
    or when some probability is left after ``max_rounds`` rounds.
    """
    p, a = rules.players, rules.num_actions
    for agent in agents:
        if not isinstance(agent, RandomAgent) and not _deterministic(agent, agents):
            raise ValueError(f"agent {agent.spec!r} is stochastic: its exact value cannot be enumerated here")
    branch = np.array([isinstance(agent, RandomAgent) for agent in agents])
    deck_t = tuple(int(x) for x in deck)
    win, penalty, rounds = np.zeros(p), np.zeros(p), np.zeros(p)
    starts, weights = engine.init(rules, 1, seed=0, deck=np.asarray(deck)), np.ones(1)
    histories = 0
    for _ in range(max_rounds):
        pool, w = _deal(rules, deck_t, starts, weights)
        ended: list[engine.State] = []
        ended_w: list[np.ndarray] = []
        while pool.batch:
            histories += pool.batch
            bits = engine.legal_bits(rules, pool)
            mover = pool.cur.astype(np.int64)
            free = engine.SET_SIZE[bits] > 1
            rand = free & branch[mover]
            ask = free & ~branch[mover]
            cards = engine.KTH_MEMBER[bits, 0].astype(np.int64)
            if ask.any():
                cards[ask] = dispatch(rules, pool, bits, agents, np.where(ask, mover, -1))[ask]
            rows, card_parts, w_parts = [np.flatnonzero(~rand)], [cards[~rand]], [w[~rand]]
            if rand.any():
                games = np.flatnonzero(rand)
                game, card = np.nonzero(engine.unpack(bits[games], a))
                rows.append(games[game])
                card_parts.append(card.astype(np.int64))
                w_parts.append((w[games] / engine.SET_SIZE[bits[games]])[game])
            pool = engine.play(rules, _take(pool, np.concatenate(rows)), np.concatenate(card_parts), donate=True)
            w = np.concatenate(w_parts)
            over = pool.round_over
            if over.any():
                ended.append(_take(pool, np.flatnonzero(over)))
                ended_w.append(w[over])
                pool, w = _take(pool, np.flatnonzero(~over)), w[~over]
        done, dw = _concat(ended), np.concatenate(ended_w)
        penalty += dw @ done.round_penalty.astype(np.float64)
        rounds += dw @ (done.tricks[:, 0, :] >= 0).astype(np.float64)
        over = done.match_over
        winners = done.winners[over].astype(np.float64)
        win += dw[over] @ (winners / np.maximum(winners.sum(1, keepdims=True), 1.0))
        if over.all():
            return {"win": win, "penalty": penalty, "rounds": rounds, "histories": np.array(histories)}
        going = np.flatnonzero(~over)
        nxt = engine.advance(rules, _take(done, going), reset=False, deck=np.asarray(deck))
        starts, weights = _merge(nxt, dw[going])
    raise ValueError(f"matches still running after {max_rounds} rounds (probability {weights.sum():.3g})")


def _entries(spec: str, field: str, players: int) -> list[str]:
    """The pipeline's table entries: the focal ``spec``, then the field in every other seat."""
    return [spec] + [field] * (players - 1)


def exact_results(setting: Setting, spec: str, field: str = FIELD, seed: int = 0) -> dict[str, Any]:
    """``spec``'s exact focal results against ``field`` in ``setting``, averaged as the pipeline averages them.

    Every table of the seating design of ``[spec, field, ...]`` is enumerated
    (:func:`exact_table`, the agents built as the tournament builds them); ``win`` is the mean over
    the seatings counted of the focal entry's expected win share, ``penalty`` minus its expected
    penalty points over its expected rounds played (both summed over the seatings), the limits of
    :func:`skill.stats.focal_data`'s win rate and ``-penalty / rounds``. ``by_seat``: the focal
    win share with the focal entry in each seat.
    """
    rules = setting.rules()
    deck = engine.deck_counts(rules, setting.ranks, setting.copies)
    entries = _entries(spec, field, rules.players)
    design = seatings(entries)
    n = len(design.tables)
    tables, histories = [], 0
    for t, table in enumerate(design.tables):
        tables.append(exact_table(rules, deck, table_agents(entries, table, agent_seed(seed, n, t))))
        histories += int(tables[-1]["histories"])
    win, pen, rounds = [], 0.0, 0.0
    by_seat = np.zeros(rules.players)
    for t, seat in design.views:
        focal = int(seat[0])
        win.append(tables[t]["win"][focal])
        pen += tables[t]["penalty"][focal]
        rounds += tables[t]["rounds"][focal]
        by_seat[focal] = tables[t]["win"][focal]
    return {
        "win": float(np.mean(win)),
        "penalty": float(-pen / rounds),
        "by_seat": by_seat.tolist(),
        "histories": histories,
    }


# ----------------------------------------------------------------------------- exact values on the OpenSpiel tree


def match_params(setting: Setting) -> dict[str, Any]:
    """The ``python_agurk`` parameters of ``setting``'s whole matches (``episode=match``)."""
    return {**setting.params(), "episode": "match"}


def win_share_returns(returns: np.ndarray, terminal: np.ndarray, first_out: bool = False) -> np.ndarray:
    """``(N, P)`` each seat's win share at the ``terminal`` histories, from ``python_agurk``'s match returns.

    The returns are placement rewards (:func:`agurk_env.rewards.placement_rewards`): the winners
    take the best places, so they are the seats of the greatest return, ``k`` of them getting
    ``1/k`` each. A row of equal returns is a match every seat still in won together
    (``last_standing``: they went out in one round with equal points), or, under
    ``match_end=first_out``, one that every seat left at once: nobody won (the tournament's 0 each).
    """
    top = returns.max(1, keepdims=True)
    winners = (returns == top) & terminal[:, None]
    if first_out:
        winners &= ~(returns == returns.min(1, keepdims=True)).all(1, keepdims=True)
    return winners / np.maximum(winners.sum(1, keepdims=True), 1)


MatchTree = tuple[Any, GameTree, Representatives]
"""``(game, tree, representatives)`` of :func:`match_tree`."""


def match_tree(setting: Setting, limit: int = TREE_LIMIT) -> MatchTree:
    """``(game, tree, representatives)``: ``setting``'s match game walked, its returns replaced by win shares.

    ``ValueError`` when Knuth's estimate of its histories (:func:`skill.exploitability.estimate_histories`)
    is above ``limit``.
    """
    game = load_game(match_params(setting))
    size = estimate_histories(game, samples=100, stop_above=limit)
    if size > limit:
        raise ValueError(f"{setting.label}: about {size:.3g} histories, more than {limit} to walk")
    reps = Representatives()
    tree = build_tree(game, on_infoset=reps)
    first_out = game.rules.match_end == "first_out"
    tree = dataclasses.replace(tree, returns=win_share_returns(tree.returns, tree.player == -4, first_out))
    return game, tree, reps


def tree_values(
    setting: Setting, specs: Sequence[str], field: str = FIELD, seed: int = 0, tree: MatchTree | None = None
) -> dict[str, Any]:
    """Exact win rates on the OpenSpiel match tree: each fair spec's and the fair best response's, against ``field``.

    For each focal seat ``s``: the field's tabular policy (:func:`skill.agent_policy.agent_policy`)
    at every other seat; a spec's value is :func:`skill.best_response.policy_values` of seat ``s``
    with its policy there, the best response's :func:`skill.best_response.best_response` of seat
    ``s``; each averaged over the seats (as the seatings average). ``tree``: a
    :func:`match_tree` already built.
    """
    start = time.perf_counter()
    game, tr, reps = tree if tree is not None else match_tree(setting)
    rules = game.rules
    sigma_field = agent_policy(tr, reps, rules, make_agent(field, seed, 0), seed)
    owner = tr.infoset_player[tr.seq_infoset]
    p = rules.players
    values: dict[str, list[float]] = {}
    for spec in specs:
        sigma = agent_policy(tr, reps, rules, make_agent(spec, seed, 0), seed)
        values[spec] = [float(policy_values(tr, np.where(owner == s, sigma, sigma_field))[s]) for s in range(p)]
    br = [best_response(tr, sigma_field, s)[0] for s in range(p)]
    return {
        "win": {spec: float(np.mean(v)) for spec, v in values.items()},
        "by_seat": values,
        "best_response": float(np.mean(br)),
        "best_response_by_seat": br,
        "histories": tr.num_histories,
        "infosets": tr.num_infosets,
        "seconds": round(time.perf_counter() - start, 3),
    }


def fair_best_response(setting: Setting, field: str = FIELD, seed: int = 0, tree: MatchTree | None = None) -> float:
    """The exact fair best response's win rate against ``field``, mean over focal seats (:func:`tree_values`)."""
    return tree_values(setting, [], field, seed, tree)["best_response"]


# ----------------------------------------------------------------------------- the sampled pipeline


def sampled_tournament(setting: Setting, spec: str, deals: int, seed: int, field: str = FIELD) -> TournamentResult:
    """The pipeline's tournament of ``spec`` against ``field`` on ``deals`` deals of ``setting``'s small deck.

    :func:`agents.tournament.plan_tournament` as :func:`skill.variant.spec_plan` lays it out (with
    the setting's deck), each table played by :func:`agents.tournament.play_planned`.
    """
    rules = setting.rules()
    deck = engine.deck_counts(rules, setting.ranks, setting.copies)
    plan = plan_tournament(rules, _entries(spec, field, rules.players), deals, seed, resamples=1, deck=deck)
    return plan.result([play_planned(lambda n: None, *task) for task in plan.tasks])


def sampled_results(
    setting: Setting,
    best: str,
    deals: int,
    seed: int = 0,
    field: str = FIELD,
    resamples: int = 1000,
    best_penalty: str | None = None,
) -> dict[str, Any]:
    """The pipeline's estimates of ``R_random``, ``R_best``, ``R_fictive`` and RS, with 95% bootstrap intervals.

    The tournaments (:func:`sampled_tournament`, the same deals for every agent) go through
    :func:`skill.stats.focal_data` and :func:`skill.stats.skill_stats` with the ladder
    ``[random, best, fictive]`` (so the best agent is ``best``, fixed); ``rs_penalty`` with
    ``[random, best_penalty, fictive]`` (default: ``best``). ``R_se``: the standard error of each
    focal win rate (over deals).
    """
    start = time.perf_counter()
    best_penalty = best_penalty or best
    specs = list(dict.fromkeys([RANDOM, best, best_penalty, FICTIVE]))
    results = {spec: sampled_tournament(setting, spec, deals, seed, field) for spec in specs}
    played = time.perf_counter() - start

    def stats_of(top: str) -> SkillStats:
        ladder = [RANDOM, top, FICTIVE]
        data = focal_data(ladder, [results[spec].by_seating for spec in ladder])
        return skill_stats(data, RANDOM, FICTIVE, field, seed, resamples, cheating=(FICTIVE,))

    stats = stats_of(best)
    pen_stats = stats if best_penalty == best else stats_of(best_penalty)
    everything = focal_data(specs, [results[spec].by_seating for spec in specs])
    win = everything.win.mean(1)
    se = everything.win.std(1, ddof=1) / np.sqrt(deals)
    penalty = -everything.penalty.sum(1) / everything.rounds.sum(1)
    return {
        "rs_win": stats.rs_win,
        "rs_win_ci": list(stats.rs_win_ci),
        "rs_penalty": pen_stats.rs_penalty,
        "rs_penalty_ci": list(pen_stats.rs_penalty_ci),
        "R_random": float(win[0]),
        "R_best": float(win[specs.index(best)]),
        "R_fictive": float(win[-1]),
        "R_win": {spec: float(x) for spec, x in zip(specs, win, strict=True)},
        "R_se": {spec: float(x) for spec, x in zip(specs, se, strict=True)},
        "R_penalty": {spec: float(x) for spec, x in zip(specs, penalty, strict=True)},
        "play_seconds": round(played, 3),
        "seconds": round(time.perf_counter() - start, 3),
    }


# ----------------------------------------------------------------------------- the check


def relative_skill(best: float, random: float, fictive: float) -> float | None:
    """``(best - random) / (fictive - random)``; ``None`` unless ``fictive > random``."""
    return (best - random) / (fictive - random) if fictive > random else None


def exact_part(
    setting: Setting, candidates: Sequence[str] = CANDIDATES, field: str = FIELD, seed: int = 0
) -> dict[str, Any]:
    """Every exact number of ``setting`` by enumeration (:func:`exact_results`): each agent's results, the best, RS.

    ``best`` is the candidate of the greatest win rate (ties: the first, in ladder order, as the
    pipeline picks it), ``best_penalty`` the one of the greatest ``R_penalty``; ``rs_win`` and
    ``rs_penalty`` are their relative skills, ``random`` the floor and ``fictive`` the top.
    """
    start = time.perf_counter()
    specs = [RANDOM, *candidates, FICTIVE]
    res = {spec: exact_results(setting, spec, field, seed) for spec in specs}
    fair = list(candidates)
    best = max(fair, key=lambda s: res[s]["win"])
    best_pen = max(fair, key=lambda s: res[s]["penalty"])
    win = {s: r["win"] for s, r in res.items()}
    pen = {s: r["penalty"] for s, r in res.items()}
    return {
        "R_random": win[RANDOM],
        "R_best": win[best],
        "R_fictive": win[FICTIVE],
        "rs_win": relative_skill(win[best], win[RANDOM], win[FICTIVE]),
        "best": best,
        "R_win": win,
        "R_win_by_seat": {s: r["by_seat"] for s, r in res.items()},
        "R_penalty": pen,
        "best_penalty": best_pen,
        "rs_penalty": relative_skill(pen[best_pen], pen[RANDOM], pen[FICTIVE]),
        "histories": {s: r["histories"] for s, r in res.items()},
        "seconds": round(time.perf_counter() - start, 3),
    }


def check_setting(
    setting: Setting,
    deals: int = 10_000,
    seed: int = 0,
    candidates: Sequence[str] = CANDIDATES,
    field: str = FIELD,
    resamples: int = 1000,
    tree_limit: int = TREE_LIMIT,
    tolerance: float = 0.02,
) -> dict[str, Any]:
    """One setting: exact RS (enumeration), the fair best response (OpenSpiel), the pipeline's RS on ``deals`` deals.

    The exact values of the fair agents are computed twice, by :func:`exact_results` and on the
    OpenSpiel tree (:func:`tree_values`); ``exact.tree_check`` is the largest difference.
    """
    start = time.perf_counter()
    exact = exact_part(setting, candidates, field, seed)
    fair_br: float | None = None
    tree_info: dict[str, Any] = {}
    tick = time.perf_counter()
    try:
        tree = match_tree(setting, tree_limit)
    except ValueError as err:
        tree_info = {"skipped": str(err)}
    else:
        walked = time.perf_counter() - tick
        fair = [c for c in candidates if not make_agent(c, seed, 0).sees_all]
        tv = tree_values(setting, [RANDOM, *fair], field, seed, tree)
        fair_br = tv["best_response"]
        tree_info = {
            "histories": tv["histories"],
            "infosets": tv["infosets"],
            "walk_seconds": round(walked, 3),
            "values_seconds": tv["seconds"],
            "best_response_by_seat": tv["best_response_by_seat"],
            "R_win": tv["win"],
        }
        exact["tree_check"] = max(abs(tv["win"][s] - exact["R_win"][s]) for s in tv["win"])
    sampled = sampled_results(setting, exact["best"], deals, seed, field, resamples, exact["best_penalty"])
    sampled["z"] = {  # (sampled - exact) / standard error of each focal win rate (None: no sampling error)
        spec: (r - exact["R_win"][spec]) / sampled["R_se"][spec] if sampled["R_se"][spec] > 0 else None
        for spec, r in sampled["R_win"].items()
    }
    rs, lo_hi = sampled["rs_win"], sampled["rs_win_ci"]
    exact_rs = exact["rs_win"]
    ok = None if rs is None or exact_rs is None else abs(rs - exact_rs) <= tolerance
    inside = None if exact_rs is None or None in lo_hi else lo_hi[0] <= exact_rs <= lo_hi[1]
    return {
        "setting": setting.label,
        "measure": "match win share (a win shared by k counts 1/k), focal vs guard field, every seating",
        "exact_rs": exact_rs,
        "sampled_rs": rs,
        "sampled_rs_ci": lo_hi,
        "deals": deals,
        "exact": exact,
        "sampled": sampled,
        "fair_best_response": fair_br,
        "best_agent": exact["best"],
        "best_gap_to_fair_best_response": None if fair_br is None else fair_br - exact["R_best"],
        "exact_rs_to_fair_best_response": None
        if fair_br is None
        else relative_skill(exact["R_best"], exact["R_random"], fair_br),
        "fictive_minus_fair_best_response": None if fair_br is None else exact["R_fictive"] - fair_br,
        "tree": tree_info,
        "within_tolerance": ok,
        "tolerance": tolerance,
        "exact_in_interval": inside,
        "params": match_params(setting),
        "seconds": round(time.perf_counter() - start, 3),
    }


def exact_check(
    settings: Sequence[Setting] = SETTINGS,
    deals: int = 10_000,
    seed: int = 0,
    candidates: Sequence[str] = CANDIDATES,
    resamples: int = 1000,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """:func:`check_setting` of every setting: a list of dicts (``setting``, ``exact_rs``, ``sampled_rs`` ...)."""
    out = []
    for setting in settings:
        out.append(check_setting(setting, deals, seed, candidates, resamples=resamples))
        if progress:
            r = out[-1]
            print(
                f"{r['setting']}: exact RS {_num(r['exact_rs'])}, sampled {_num(r['sampled_rs'])} "
                f"[{_num(r['sampled_rs_ci'][0])}, {_num(r['sampled_rs_ci'][1])}] ({r['seconds']:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    return out


def _num(x: float | None) -> str:
    """``x`` to 4 decimals, ``-`` for None."""
    return "-" if x is None else f"{x:.4f}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m skill.exact_check --out FILE.json [--deals N] [--seed S]``: run :data:`SETTINGS`, write JSON."""
    parser = argparse.ArgumentParser(prog="python -m skill.exact_check", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the JSON file written")
    parser.add_argument("--deals", type=int, default=10_000, help="duplicate deals of the sampled pipeline")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the sampled intervals")
    parser.add_argument("--settings", default="", help="comma-separated indices into SETTINGS (default: all)")
    parser.add_argument("--agents", default="", help="comma-separated fair agents (default: CANDIDATES)")
    args = parser.parse_args(argv)
    chosen = [SETTINGS[int(i)] for i in args.settings.split(",")] if args.settings else list(SETTINGS)
    candidates = args.agents.split(",") if args.agents else list(CANDIDATES)
    start = time.perf_counter()
    results = exact_check(chosen, args.deals, args.seed, candidates, args.resamples, progress=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {args.out} ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
