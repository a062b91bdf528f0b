"""One search (agents/search.py): pimc, oracle and guided are settings of Search; its parts plug in.

- A Search assembled by hand from a sampler, rollouts and the exact solver plays pimc's cards.
- The oracle is the same search on the true deal.
- A prior plugs in: one that offers only the lowest legal card is obeyed without a search.
- Every evaluator has one call shape: an evaluator written here (the lowest card) plugs in.
- The one rollout loop takes any move function, and its utility is pimc's round utility.
"""

from __future__ import annotations

import numpy as np

from agents import pimc as parts
from agents.search import PIMC, EngineMoves, Exact, Oracle, Rollouts, Search, Truth, Uniform, rollouts
from agurk_env import engine
from agurk_env.agent import Decision, decide
from agurk_env.rules import Rules

RULES = Rules.preset("standard", players=4, hand_size=5)


def _state(plies: int) -> engine.State:
    rng = np.random.default_rng(2)
    state = engine.init(RULES, 8, seed=4)
    for _ in range(plies):
        state = engine.play(RULES, state, engine.random_legal(engine.legal_bits(RULES, state), rng))
    return state


def _cards(agent: Search, plies: int = 6) -> np.ndarray:
    state = _state(plies)
    return decide(agent, RULES, state, np.arange(8), engine.legal_bits(RULES, state))


def test_a_search_assembled_from_its_parts_plays_pimcs_cards() -> None:
    for plies in (0, 9):  # rollouts early, the exact solver late
        shed = Rollouts(EngineMoves("shed"))
        search = Search(np.random.default_rng(3), Uniform(4), shed, Exact(tie=shed))
        pimc = PIMC(np.random.default_rng(3), worlds=4, rollout="shed", eval="exact")
        np.testing.assert_array_equal(_cards(search, plies), _cards(pimc, plies))
        assert search.counts == pimc.counts


def test_the_oracle_is_the_search_on_the_true_deal() -> None:
    mixed = Rollouts(EngineMoves("mixed"), repeats=3)
    search = Search(np.random.default_rng(5), Truth(), mixed, Exact(tie=mixed))
    search.sees_all = True
    oracle = Oracle(np.random.default_rng(5), worlds=3)
    np.testing.assert_array_equal(_cards(search, 9), _cards(oracle, 9))


def test_a_prior_plugs_in() -> None:
    def lowest_only(d: Decision) -> tuple[np.ndarray, None]:
        only = np.zeros_like(d.legal)
        only[np.arange(len(d)), d.legal.argmax(1)] = True
        return only, None

    search = Search(np.random.default_rng(0), Uniform(2), Rollouts(EngineMoves("shed")), prior=lowest_only, forced=True)
    lowest = engine.unpack(engine.legal_bits(RULES, _state(6)), RULES.num_actions).argmax(1)
    np.testing.assert_array_equal(_cards(search), lowest)
    assert search.counts["forced"] == 8 and search.counts["rollout"] == 0


def test_any_evaluator_of_the_one_call_shape_plugs_in() -> None:
    def highest(rules: Rules, worlds: engine.State, candidates: np.ndarray, weights: None, rng) -> np.ndarray:
        assert worlds.batch == 3 * candidates.shape[0]  # the game's worlds, game-major
        return np.where(candidates, np.arange(RULES.num_actions, dtype=float), -np.inf)

    search = Search(np.random.default_rng(0), Uniform(3), highest)
    legal = engine.unpack(engine.legal_bits(RULES, _state(6)), RULES.num_actions)
    np.testing.assert_array_equal(_cards(search), RULES.num_actions - 1 - legal[:, ::-1].argmax(1))


def test_the_rollout_loop_takes_any_move_and_values_lines_by_the_round_utility() -> None:
    state = _state(6)
    legal = engine.unpack(engine.legal_bits(RULES, state), RULES.num_actions)
    calls: list[int] = []

    def lowest(rules: Rules, st: engine.State, open: np.ndarray, rng) -> np.ndarray:
        calls.append(int(open.sum()))
        return engine.unpack(engine.legal_bits(rules, st), rules.num_actions).argmax(1)

    world, card, utility = rollouts(RULES, state, legal, lowest, np.random.default_rng(0))
    st = engine.play(RULES, state.take(world), card)
    while not st.round_over.all():
        st = engine.play(RULES, st, engine.unpack(engine.legal_bits(RULES, st), RULES.num_actions).argmax(1))
    np.testing.assert_array_equal(utility, parts.round_utility(RULES, st, state.cur[world]))
    assert calls and calls[0] == world.size
