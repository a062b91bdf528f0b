"""One search (agents/search.py): pimc, oracle and guided are settings of Search; its parts plug in.

- A Search assembled by hand from a sampler, rollouts and the exact solver plays pimc's cards.
- The oracle is the same search on the true deal.
- A prior plugs in: one that offers only the lowest legal card is obeyed without a search.
"""

from __future__ import annotations

import numpy as np

from agents.search import PIMC, EngineRollouts, Exact, Oracle, Search, Truth, Uniform
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
        parts = Search(np.random.default_rng(3), Uniform(4), EngineRollouts("shed"), Exact(), tie=True)
        pimc = PIMC(np.random.default_rng(3), worlds=4, rollout="shed", eval="exact")
        np.testing.assert_array_equal(_cards(parts, plies), _cards(pimc, plies))
        assert parts.counts == pimc.counts


def test_the_oracle_is_the_search_on_the_true_deal() -> None:
    parts = Search(np.random.default_rng(5), Truth(3), EngineRollouts("mixed"), Exact(), tie=True)
    parts.sees_all = True
    oracle = Oracle(np.random.default_rng(5), worlds=3)
    np.testing.assert_array_equal(_cards(parts, 9), _cards(oracle, 9))


def test_a_prior_plugs_in() -> None:
    def lowest_only(d: Decision) -> tuple[np.ndarray, None]:
        only = np.zeros_like(d.legal)
        only[np.arange(len(d)), d.legal.argmax(1)] = True
        return only, None

    search = Search(np.random.default_rng(0), Uniform(2), EngineRollouts("shed"), prior=lowest_only, forced=True)
    lowest = engine.unpack(engine.legal_bits(RULES, _state(6)), RULES.num_actions).argmax(1)
    np.testing.assert_array_equal(_cards(search), lowest)
    assert search.counts["forced"] == 8 and search.counts["rollout"] == 0
