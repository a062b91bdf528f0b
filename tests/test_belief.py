"""Beliefs from player models: worlds weighted by how well the heuristics explain the opponents' plays."""

from __future__ import annotations

import numpy as np
import pytest

from agents.belief import MODEL_FLOOR, MODELS, model_weights, replay, resample
from agents.heuristics import STRATEGIES, table
from agents.pimc import sample_worlds
from agents.registry import AgentSpecError, make_agent, make_agents
from agents.search import PIMC
from agurk_env import engine
from agurk_env.agent import Decision, act_seats
from agurk_env.rules import Rules


def _guard_positions(rules: Rules, games: int, plays: int, seed: int) -> engine.State:
    """``games`` games after ``plays`` cards, every seat playing ``guard``."""
    guard = make_agent("guard", seed, 0)
    state = engine.init(rules, games, seed=seed)
    for _ in range(plays):
        bits = engine.legal_bits(rules, state)
        state = engine.play(rules, state, act_seats(rules, state, bits, [guard] * rules.players))
    return state


def test_resample_draws_by_weight() -> None:
    rng = np.random.default_rng(0)
    onehot = np.zeros((3, 8))
    onehot[np.arange(3), [0, 5, 7]] = 1.0
    assert (resample(onehot, 6, rng) == np.array([[0], [5], [7]])).all()
    uniform = np.full((4, 8), 1 / 8)
    for row in resample(uniform, 8, rng):  # systematic: every world once
        assert sorted(row.tolist()) == list(range(8))
    skewed = np.array([[0.75, 0.25, 0.0, 0.0]])
    assert np.bincount(resample(skewed, 100, rng)[0], minlength=4).tolist() == [75, 25, 0, 0]


def test_weights_are_the_mean_type_likelihood_per_opponent_multiplied() -> None:
    rules = Rules.preset("standard")
    state = _guard_positions(rules, 6, 10, seed=3)
    d = Decision(rules, state, np.arange(6), engine.legal_bits(rules, state))
    w = 12
    worlds = sample_worlds(rules, d.public, w, np.random.default_rng(1))
    weights = model_weights(rules, worlds, w)
    np.testing.assert_allclose(weights.sum(1), 1.0)

    # the same likelihood written out play by play: per world, seat and type
    lik = np.ones((worlds.batch, rules.players, len(MODELS)))

    def visit(st: engine.State, rows: np.ndarray, cards: np.ndarray) -> None:
        bits = engine.legal_bits(rules, st)
        for i, world in enumerate(rows):
            seat, options = int(st.cur[i]), int(engine.SET_SIZE[bits[i]])
            if seat == worlds.cur[world] or options < 2:
                continue
            one = Decision(rules, st, np.array([i]), bits[i : i + 1])
            for j, name in enumerate(MODELS):
                agrees = STRATEGIES[name](table(rules, one), one.legal)[0] == cards[i]
                lik[world, seat, j] *= (1 - MODEL_FLOOR) * agrees + MODEL_FLOOR / options

    replay(rules, worlds, visit)
    expected = lik.mean(2).prod(1).reshape(-1, w)
    np.testing.assert_allclose(weights, expected / expected.sum(1, keepdims=True), rtol=1e-9)
    assert (weights.max(1) > 2 * weights.min(1)).all()  # the plays tell the worlds apart
    assert "guard" in MODELS and 0 < MODEL_FLOOR < 1


def test_belief_worlds_place_more_hidden_cards_right_against_guards() -> None:
    rules = Rules.preset("standard")
    state = _guard_positions(rules, 48, 14, seed=4)
    d = Decision(rules, state, np.arange(48), engine.legal_bits(rules, state))
    hidden = np.ones((48, rules.players), bool)
    hidden[np.arange(48), d.seat] = False

    def right(agent: PIMC) -> float:
        worlds, _ = agent.sampler(rules, d.public, agent.rng, lambda: d.truth)
        truth = np.repeat(state.hands, agent.options.worlds, axis=0)
        agree = np.minimum(worlds.hands, truth).sum(2)  # cards placed in the right hand, per seat
        return float(agree[np.repeat(hidden, agent.options.worlds, axis=0)].mean())

    uniform = right(PIMC(np.random.default_rng(0), worlds=16, eval="exact", rollout="shed"))
    believed = right(PIMC(np.random.default_rng(0), worlds=16, eval="exact", belief="models", pool=128, rollout="shed"))
    assert believed > uniform + 0.05


def test_belief_search_plays_legal_cards_and_is_seeded() -> None:
    rules = Rules.preset("standard", players=3)
    runs = []
    for _ in range(2):
        seats = make_agents("pimc:eval=exact;belief=models;pool=8;worlds=4,guard,shed", 3, 7)
        state = engine.init(rules, 4, seed=1)
        plays = []
        for _ in range(30):  # whole rounds; act_seats raises on an illegal card
            bits = engine.legal_bits(rules, state)
            cards = act_seats(rules, state, bits, seats)
            plays.append(cards)
            state = engine.advance(rules, engine.play(rules, state, cards))
        runs.append(np.stack(plays))
    np.testing.assert_array_equal(runs[0], runs[1])
    with pytest.raises(AgentSpecError, match="belief"):
        make_agent("pimc:belief=maybe", 0, 0)
    with pytest.raises(AgentSpecError, match="pool"):
        make_agent("pimc:pool=0", 0, 0)
