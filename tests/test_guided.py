"""The search on a learned policy, ``guided`` (agents/guided.py).

- It plays legally under several presets, in every mode (exact, rollouts, prior, top, ties).
- The replay of a round from its rebuilt start reaches the position it started from.
- With belief on, worlds where a deterministic policy would have made the opponents' actual
  plays weigh more than worlds where it would not.
- With every hidden card known (two players, the whole deck dealt) it plays the oracle's card.
- It reads public facts only: swapping two opponents' hidden hands changes nothing.
- The registry builds it from specs and refuses bad options in one line.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn

from agents import pimc
from agents.belief import replay, round_start
from agents.guided import BELIEF_FLOOR, Guided, belief_weights, policy_moves
from agents.pimc import exact_values, sample_worlds
from agents.registry import AgentSpecError, describe, make_agent
from agents.search import Oracle
from agurk_env import engine, solver
from agurk_env.agent import Decision, act_seats, decide
from agurk_env.rules import Rules


class Highest(nn.Module):
    """A deterministic policy: always the legal card of highest action index (the strongest, ace high)."""

    actions = 13

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = 50.0 * torch.arange(self.actions, dtype=x.dtype).expand(x.shape[0], -1)
        return logits, torch.zeros(x.shape[0])


def _positions(rules: Rules, batch: int, plies: int, seed: int = 0) -> engine.State:
    """``batch`` games of round 1 after ``plies`` random legal plays."""
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    for _ in range(plies):
        state = engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng))
    return state


def _decide(agent: Guided | Oracle, rules: Rules, state: engine.State) -> np.ndarray:
    games = np.arange(state.batch)
    return decide(agent, rules, state, games, engine.legal_bits(rules, state))


@pytest.mark.parametrize("preset", ["standard", "every_trick", "lives", "jokers", "twos", "danish21"])
def test_guided_plays_legally_under_several_presets(preset: str) -> None:
    rules = Rules.preset(preset, players=4, hand_size=4)
    rng = np.random.default_rng(1)
    seats = [
        Guided(rng, worlds=3, prior=0.05, tricks=2, tie="rollout"),
        Guided(rng, worlds=2, eval="rollout", rollout="sample", top=2),
        Guided(rng, worlds=2, belief=False, tricks=1),
        make_agent("guard", 0, 0),
    ]
    state = engine.init(rules, 6, seed=2)
    for _ in range(24):  # whole rounds and the start of the next; act_seats raises on an illegal card
        bits = engine.legal_bits(rules, state)
        state = engine.advance(rules, engine.play(rules, state, act_seats(rules, state, bits, seats)))
    assert seats[0].counts["exact"] > 0 and seats[0].counts["rollout"] > 0
    assert seats[1].counts["rollout"] > 0 and seats[1].counts["exact"] == 0


@pytest.mark.parametrize("preset", ["standard", "every_trick", "twos", "lives"])
def test_replay_from_the_round_start_reaches_the_position(preset: str) -> None:
    rules = Rules.preset(preset, players=5)
    state = _positions(rules, 24, 0)
    rng = np.random.default_rng(3)
    for plies in range(13):  # every game a different number of plays into the round
        go = rng.random(24) < 0.8
        cards = engine.random_legal(engine.legal_bits(rules, state), rng)
        if go.any():
            state = engine.play_in(rules, state, np.flatnonzero(go), cards[go])
        assert plies >= 0
    start = round_start(rules, state)
    assert (start.tricks < 0).all() and (start.hands.sum((1, 2)) == rules.players * rules.hand_size).all()
    again = replay(rules, state)
    for name in ("hands", "held", "void", "tricks", "trick_no", "cur", "npos", "leader", "top", "top_seat", "locked"):
        np.testing.assert_array_equal(getattr(again, name), getattr(state, name), err_msg=name)


def test_belief_favours_the_worlds_a_deterministic_policy_explains() -> None:
    rules = Rules.preset("standard")
    net = Highest()
    state = engine.init(rules, 8, seed=5)
    for _ in range(6):  # every seat plays the policy's card: the searcher's opponents are the policy
        state = engine.play(rules, state, policy_moves(rules, net, state, "greedy", np.random.default_rng(0)))
    d = Decision(rules, state, np.arange(8), engine.legal_bits(rules, state))
    w = 40
    worlds = sample_worlds(rules, d.public, w, np.random.default_rng(1))
    weights = belief_weights(rules, net, worlds, w)
    np.testing.assert_allclose(weights.sum(1), 1.0)

    explained = np.ones(worlds.batch, bool)  # the policy makes every opponent play of the round in the world

    def visit(st: engine.State, rows: np.ndarray, cards: np.ndarray) -> None:
        bits = engine.legal_bits(rules, st)
        highest = 12 - np.argmax(engine.unpack(bits, 13)[:, ::-1], axis=1)
        explained[rows] &= (cards == highest) | (st.cur == worlds.cur[rows])

    replay(rules, worlds, visit)
    explained = explained.reshape(-1, w)
    mixed = np.flatnonzero(explained.any(1) & ~explained.all(1))
    assert mixed.size >= 4  # the case is built: games with worlds of both kinds
    for g in mixed:
        assert weights[g][explained[g]].min() > 5 * weights[g][~explained[g]].max()
        assert weights[g][explained[g]].sum() > explained[g].mean()  # more than the uniform share
    off = Guided(np.random.default_rng(0), policy=net, belief=False, worlds=2)
    assert not off.options.belief and BELIEF_FLOOR > 0


@pytest.mark.parametrize("preset", ["standard", "every_trick", "lives"])
@pytest.mark.parametrize("tricks_left", [1, 2, 4])
def test_with_every_hidden_card_known_it_plays_the_oracles_card(preset: str, tricks_left: int) -> None:
    rules = Rules.preset(preset, players=2, hand_size=26)  # the whole deck is dealt: the unseen cards are the other's
    state = _positions(rules, 12, 2 * (26 - tricks_left) + tricks_left % 2, seed=tricks_left)
    oracle = _decide(Oracle(np.random.default_rng(0), worlds=2, tie="lowest", rollout="shed"), rules, state)
    guided = Guided(np.random.default_rng(1), worlds=3)  # belief on, no prior: ties go to the lowest card
    np.testing.assert_array_equal(_decide(guided, rules, state), oracle)
    values = solver.solution(rules, state).values
    prior = _decide(Guided(np.random.default_rng(1), worlds=3, prior=0.01, tie="rollout"), rules, state)
    if not rules.lives:  # a small prior only settles ties: a card of least solver value on the true deal
        np.testing.assert_array_equal(values[np.arange(12), prior], values.min(1))


@pytest.mark.parametrize("preset", ["standard", "lives", "buy_in"])
def test_exact_values_charge_going_out_on_the_solvers_line(preset: str) -> None:
    rules = Rules.preset(preset, players=2, hand_size=26)
    state = _positions(rules, 12, 2 * 23, seed=4)  # 3 tricks left
    rows = np.arange(12)
    near = np.where(rows % 2 == 0, rules.limit - 5, 0)  # half the movers 5 points from the limit, or on a last life
    state = state._replace(
        scores=state.scores.copy(), lives=np.where(rows[:, None] % 2 == 0, 1, state.lives).astype(state.lives.dtype)
    )
    state.scores[rows, state.cur] = near
    legal = engine.legal_mask(rules, state)
    pen = np.where(legal, solver.solution(rules, state).values, 0.0)
    charged = exact_values(rules, state, legal, going_out=True)[:, 0] - exact_values(rules, state, legal)[:, 0]
    if rules.lives:
        out = (state.lives[rows, state.cur] <= 1)[:, None] & (pen > 0)
    else:
        out = (near[:, None] + pen >= rules.limit) & (state.rebuys[rows, state.cur] <= 0)[:, None]
    np.testing.assert_allclose(charged, -pimc.OUT_COST * out, atol=1e-9)
    assert out.any() or rules.rebuys


def _swap_hidden(rules: Rules, state: engine.State) -> engine.State:
    """The same games with the two opponents after the mover swapping hands (hidden information only)."""
    hands = state.hands.copy()
    rows = np.arange(state.batch)
    a, b = (state.cur + 1) % rules.players, (state.cur + 2) % rules.players
    ha, hb = hands[rows, a].copy(), hands[rows, b].copy()
    same = ha.sum(1) == hb.sum(1)
    hands[rows[same], a[same]], hands[rows[same], b[same]] = hb[same], ha[same]
    return engine.set_hands(rules, state, hands)


@pytest.mark.parametrize("spec", ["guided:worlds=4", "guided:worlds=4;eval=rollout;rollout=sample;prior=0.1"])
def test_guided_does_not_depend_on_hidden_cards(spec: str) -> None:
    rules = Rules.preset("standard")
    state = _positions(rules, 32, 5)  # mid-trick: plays to weigh, hands of the same size behind the mover
    other = _swap_hidden(rules, state)
    assert not (other.hands == state.hands).all()
    legal = engine.legal_bits(rules, state)
    assert (legal == engine.legal_bits(rules, other)).all()
    games = np.arange(32)
    first = decide(make_agent(spec, 7, 0), rules, state, games, legal)
    np.testing.assert_array_equal(first, decide(make_agent(spec, 7, 0), rules, other, games, legal))


def test_registry_builds_guided_from_specs() -> None:
    agent = make_agent("guided", 0, 0)
    assert isinstance(agent, Guided) and not agent.sees_all
    o = agent.options
    assert (o.worlds, o.eval, o.belief, o.prior, o.top, o.tricks) == (
        16,
        "exact",
        True,
        0.0,
        None,
        None,
    )
    agent = make_agent("guided:worlds=8;eval=rollout;belief=off;prior=0.25;top=3;tricks=4;tie=rollout", 0, 0)
    o = agent.options
    assert (o.worlds, o.eval, o.belief, o.prior, o.top, o.tricks, o.tie) == (
        8,
        "rollout",
        False,
        0.25,
        3,
        4,
        "rollout",
    )
    assert make_agent("guided:policy=zoo;rollout=sample", 0, 0).options.rollout == "sample"
    text = "\n".join(describe())
    assert "guided[:KEY=VALUE;...]" in text and "belief=on|off (default on)" in text


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("guided:eval=solver", "eval must be one of rollout, exact"),
        ("guided:belief=maybe", "belief must be on or off"),
        ("guided:prior=-1", "prior"),
        ("guided:prior=lots", "prior"),
        ("guided:top=0", "top"),
        ("guided:tricks=0", "tricks"),
        ("guided:worlds=0", "worlds"),
        ("guided:tie=first", "tie must be one of prior, rollout"),
        ("guided:rollout=shed", "rollout must be one of greedy, sample, mixed"),
        ("guided:policy=zoo:nope", "no shipped policy 'nope'"),
        ("guided:policy=/no/such.pt", "no checkpoint"),
        ("guided:depth=3", "unknown option 'depth'"),
    ],
)
def test_registry_refuses_bad_guided_options_in_one_line(spec: str, words: str) -> None:
    with pytest.raises(AgentSpecError) as err:
        make_agent(spec, 0, 0)
    assert words in str(err.value) and spec in str(err.value)
    assert "\n" not in str(err.value)


def test_bench_search_measures_guided(capsys: pytest.CaptureFixture[str]) -> None:
    from agurk.cli import main

    args = ["bench", "search", "--agent", "guided:worlds=2", "--seconds", "0.2", "--batch", "4", "--json"]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["spec"] == "guided:worlds=2"
    assert result["single_decisions_per_s"] > 0 and result["batched_decisions_per_s"] > 0
