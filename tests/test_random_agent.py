"""The uniform random agent, ``random_legal`` and the agent registry."""

from __future__ import annotations

import numpy as np
import pytest

from agents import AGENTS, AgentSpecError, describe, make_agents, opponents, register
from agents.tournament import parse_entries
from agurk_env import engine
from agurk_env.agent import Agent, Decision, RandomAgent, act_seats
from agurk_env.engine import random_legal
from agurk_env.rules import Rules


def test_random_legal_picks_a_member_of_every_set() -> None:
    rng = np.random.default_rng(0)
    bits = np.arange(1, 1 << 14)
    for _ in range(5):
        actions = random_legal(bits, rng)
        assert actions.shape == bits.shape
        assert ((bits >> actions) & 1).all()


def test_random_legal_single_card_sets_and_shape() -> None:
    rng = np.random.default_rng(1)
    bits = engine.BIT[:14].reshape(2, 7)
    assert random_legal(bits, rng).tolist() == [list(range(7)), list(range(7, 14))]
    assert random_legal(np.zeros(0, np.int64), rng).shape == (0,)


def test_random_legal_is_uniform() -> None:
    rng = np.random.default_rng(2)
    cards = [0, 4, 9, 12, 13]
    bits = np.full(100_000, sum(1 << c for c in cards))
    counts = np.bincount(random_legal(bits, rng), minlength=14)
    assert counts[cards].sum() == bits.size
    expected = bits.size / len(cards)
    chi2 = ((counts[cards] - expected) ** 2 / expected).sum()
    assert chi2 < 20  # 4 degrees of freedom: p < 0.001


def _decision(legal: np.ndarray) -> Decision:
    """A decision over ``len(legal)`` games of a standard batch (the random agent reads only ``legal``)."""
    rules = Rules(jokers=1) if legal.shape[1] == 14 else Rules()
    state = engine.init(rules, max(len(legal), 1), seed=0)
    return Decision(rules, state, np.arange(len(legal)), engine.pack(legal))


def test_random_legal_refuses_an_empty_set() -> None:
    with pytest.raises(ValueError, match="empty"):
        random_legal(np.array([3, 0]), np.random.default_rng(0))


@pytest.mark.parametrize("actions", [13, 14])
def test_random_agent_acts_legally(actions: int) -> None:
    rng = np.random.default_rng(3)
    legal = rng.random((500, actions)) < 0.3
    legal[np.arange(500), rng.integers(0, actions, 500)] = True
    agent = RandomAgent(np.random.default_rng(4))
    chosen = agent.act(_decision(legal))
    assert chosen.shape == (500,)
    assert legal[np.arange(500), chosen].all()
    assert agent.spec == "random"
    assert isinstance(agent, Agent)
    assert agent.act(_decision(np.zeros((0, actions), bool))).shape == (0,)


def test_random_agent_is_reproducible() -> None:
    legal = np.ones((64, 13), bool)
    a = RandomAgent(np.random.default_rng(5)).act(_decision(legal))
    b = RandomAgent(np.random.default_rng(5)).act(_decision(legal))
    assert (a == b).all()


def test_random_agent_plays_whole_matches_on_the_engine() -> None:
    rules = Rules.preset("danish21", players=5)
    agent = RandomAgent(np.random.default_rng(6))
    state = engine.init(rules, 64, seed=0)
    for _ in range(300):
        actions = act_seats(rules, state, engine.legal_bits(rules, state), [agent] * rules.players)
        state = engine.advance(rules, engine.play(rules, state, actions))
    assert state.next_match > 64


def test_make_agents_one_spec_for_every_seat() -> None:
    agents = make_agents("random", 4, seed=7)
    assert [a.spec for a in agents] == ["random"] * 4
    assert len({id(a) for a in agents}) == 4
    for seat, agent in enumerate(agents):
        assert agent.rng.random() == np.random.default_rng([7, seat]).random()


def test_make_agents_one_spec_per_seat() -> None:
    agents = make_agents(" random , random,random ", 3, seed=0)
    assert [a.spec for a in agents] == ["random"] * 3


@pytest.mark.parametrize(
    ("spec", "players", "message"),
    [
        ("nope", 4, "unknown agent 'nope'; known agents: random"),
        ("random,random", 4, "2 agent specs given for 4 players"),
        ("random,,random", 3, "empty agent spec"),
        ("", 2, "empty agent spec"),
        ("random:x", 2, "takes no argument"),
    ],
)
def test_make_agents_errors(spec: str, players: int, message: str) -> None:
    with pytest.raises(AgentSpecError, match=message) as info:
        make_agents(spec, players, seed=0)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "split",
    [lambda s: make_agents(s, 3, seed=0), lambda s: opponents(s, 4), lambda s: parse_entries(s, 3)],
    ids=["make_agents", "opponents", "parse_entries"],
)
def test_every_spec_list_refuses_an_empty_spec_alike(split) -> None:
    with pytest.raises(AgentSpecError, match=r"^empty agent spec in 'random,,random'; known agents: random"):
        split("random,,random")


def test_registry_takes_new_kinds() -> None:
    def factory(spec: str, arg: str | None, rng: np.random.Generator) -> RandomAgent:
        return RandomAgent(rng, spec=f"{spec}!{arg}")

    register("test_kind", factory, "a test agent", arg="PATH")
    try:
        assert [a.spec for a in make_agents("random,test_kind:a/b.pt", 2, 0)] == ["random", "test_kind:a/b.pt!a/b.pt"]
        with pytest.raises(AgentSpecError, match="needs an argument"):
            make_agents("test_kind", 2, 0)
        assert any(line.startswith("test_kind:PATH") for line in describe())
    finally:
        del AGENTS["test_kind"]
    assert not any(line.startswith("test_kind") for line in describe())
    assert describe()[:2] == ["random", "    plays a uniformly random legal card"]
    assert max(map(len, describe())) <= 80
