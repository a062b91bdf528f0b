"""The fictive player (agents/fictive.py): the exact best response, seeing every card, to the table's opponents.

- On random deals of several presets and table sizes, with deterministic opponents, no other agent
  in its seat does better for its objective: ``objective=round`` never takes more round penalty,
  ``match`` and ``knockout`` never end the round worse in their order (out, own cost, others out, ...).
- Brute force (a plain recursion over single engine states) gives every legal card the same value
  on small deals, mid-round included.
- It is deterministic, follows its kept best line exactly as a new search would, falls back to the
  oracle where an opponent is not deterministic, and the registry builds and refuses it in one line.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import fictive as F
from agents.heuristics import Heuristic
from agents.registry import AgentSpecError, describe, make_agent, make_agents
from agurk_env import engine, rules_kernel
from agurk_env.agent import Decision, act_seats, decide, dispatch
from agurk_env.rules import Rules

OTHERS = ["random", "shed", "guard", "counter", "ducker", "oracle"]
"""Agents whose line the best response must never lose to, in the same seat of the same deal."""


def _play_round(rules: Rules, specs: list[str], deals: int, seed: int) -> engine.State:
    """Round 1 of ``deals`` matches of ``seed`` with one agent per seat, to its end (all of it played)."""
    agents = make_agents(",".join(specs), rules.players, seed)
    state = engine.init(rules, deals, seed)
    while not state.round_over.all():
        state = engine.play(rules, state, act_seats(rules, state, engine.legal_bits(rules, state), agents))
    return state


def _field(players: int) -> list[str]:
    """Deterministic opponents of mixed kinds (seat order matters to them)."""
    return [["guard", "shed", "counter", "ducker"][s % 4] for s in range(players)]


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("standard", {}),
        ("every_trick", {}),
        ("free_choice", {"players": 3}),
        ("lives", {"players": 5, "hand_size": 5}),
        ("twos", {"players": 6, "hand_size": 5}),
        ("jokers", {"players": 3, "hand_size": 6}),
        ("quick", {"players": 2, "hand_size": 6}),
        ("nearest", {}),
    ],
)
def test_no_agent_in_its_seat_does_better_for_its_objective(preset: str, options: dict) -> None:
    rules = Rules.preset(preset, **options)
    low_limit = Rules.preset(preset, **options, limit=4) if not rules.lives else rules  # going out in round 1
    deals, p = 12, rules.players
    for objective, table_rules in (("round", rules), ("match", low_limit), ("knockout", low_limit)):
        for seat in range(p):
            field = _field(p)
            field[seat] = f"fictive:objective={objective}"
            best = _play_round(table_rules, field, deals, seed=seat)
            games = np.arange(deals)
            focal = np.full(deals, seat)
            mine = F.objective_values(table_rules, best, games, focal, objective)
            for other in OTHERS:
                field[seat] = other
                theirs = F.objective_values(
                    table_rules, _play_round(table_rules, field, deals, seat), games, focal, objective
                )
                assert (mine <= theirs).all(), (objective, seat, other)


def _order(rules: Rules, state: engine.State, focal: int, objective: str) -> tuple[int, ...]:
    """One ended round's objective for the focal seat as a tuple (less is better), from the module docstring."""
    pen, out = state.round_penalty[0].astype(int), state.out_now[0].astype(int)
    own, others, others_out = pen[focal], pen.sum() - pen[focal], out.sum() - out[focal]
    if objective == "round":
        return own, -others
    cost, others_cost = ((own > 0), (pen > 0).sum() - (own > 0)) if rules.lives else (own, others)
    middle = (cost, -others_out) if objective == "match" else (-others_out, cost)
    return (out[focal], *middle, -others_cost, *((own,) if rules.lives else ()))


def _brute(rules: Rules, state: engine.State, table: list, focal: int, objective: str) -> tuple[int, ...]:
    """The best objective over every line of the focal seat (one game), by plain recursion."""
    if state.round_over[0]:
        return _order(rules, state, focal, objective)
    bits = engine.legal_bits(rules, state)
    if state.cur[0] == focal:
        cards = np.flatnonzero(engine.legal_mask(rules, state)[0])
        return min(_brute(rules, engine.play(rules, state, np.array([c])), table, focal, objective) for c in cards)
    card = dispatch(rules, state, bits, table, state.cur)
    return _brute(rules, engine.play(rules, state, card), table, focal, objective)


@pytest.mark.parametrize(
    ("preset", "options", "plies"),
    [
        ("standard", {"players": 3, "hand_size": 4}, 0),
        ("every_trick", {"players": 3, "hand_size": 4}, 1),
        ("lives", {"players": 2, "hand_size": 5}, 0),
        ("lives", {"players": 3, "hand_size": 4, "lives": 1}, 1),
        ("danish21", {"players": 4, "hand_size": 3, "limit": 6}, 2),
        ("free_choice", {"players": 3, "hand_size": 4}, 3),
    ],
)
def test_brute_force_gives_every_card_the_same_value(preset: str, options: dict, plies: int) -> None:
    rules = Rules.preset(preset, **options)
    table = [Heuristic(["guard", "counter", "shed", "ducker"][s]) for s in range(rules.players)]
    state = engine.init(rules, 8, seed=5)
    for _ in range(plies):
        state = engine.play(rules, state, act_seats(rules, state, engine.legal_bits(rules, state), table))
    for objective in F.OBJECTIVES:
        values, _ = F.best_response(rules, state, table, objective)
        for g in range(state.batch):
            one, focal = state.take(np.array([g])), int(state.cur[g])
            legal = np.flatnonzero(engine.legal_mask(rules, one)[0])
            brute = {c: _brute(rules, engine.play(rules, one, np.array([c])), table, focal, objective) for c in legal}
            ranked = sorted(legal, key=lambda c: (brute[c], c))
            assert sorted(legal, key=lambda c: (values[g, c], c)) == ranked, (objective, g)
            assert len(set(values[g, legal])) == len(set(brute.values()))  # equal lines, equal values
            assert (values[g, np.setdiff1d(np.arange(rules.num_actions), legal)] == np.iinfo(np.int64).max).all()


def test_deterministic_and_the_kept_line_is_what_a_new_search_plays() -> None:
    rules = Rules.preset("standard")
    field = ["fictive", "guard", "counter", "shed"]
    runs = []
    for _ in range(2):
        agents = make_agents(",".join(field), 4, 3)
        state = engine.init(rules, 30, 3)
        cards, fresh = [], []
        while not state.round_over.all():
            bits = engine.legal_bits(rules, state)
            chosen = act_seats(rules, state, bits, agents)
            games = np.flatnonzero(state.cur == 0)
            if games.size:  # a new fictive player (nothing kept) searches the same decisions again
                new = make_agents(",".join(field), 4, 3)[0]
                fresh.append(dispatch(rules, state, bits, [new, *agents[1:]], np.where(state.cur == 0, 0, -1))[games])
                cards.append(chosen[games])
            state = engine.play(rules, state, chosen)
        np.testing.assert_array_equal(np.concatenate(cards), np.concatenate(fresh))
        assert agents[0].counts["planned"] > agents[0].counts["searched"] > 0 and agents[0].counts["fallback"] == 0
        assert agents[0]._keys.size == 0  # every kept decision of the round was used, and dropped
        runs.append(state.round_penalty)
    np.testing.assert_array_equal(runs[0], runs[1])


def test_a_random_opponent_or_no_table_means_the_oracle() -> None:
    rules = Rules.preset("standard")
    state = engine.init(rules, 20, 1)
    seat = int(state.cur[0])  # the first leader, in every game
    specs = ["guard"] * 4
    specs[seat], specs[(seat + 2) % 4] = "fictive", "random"
    fictive = make_agents(",".join(specs), 4, 1)[seat]
    games, bits = np.arange(20), engine.legal_bits(rules, state)
    np.testing.assert_array_equal(
        decide(fictive, rules, state, games, bits), decide(make_agent("oracle", 1, seat), rules, state, games, bits)
    )
    assert fictive.counts == {"searched": 0, "planned": 0, "fallback": 20}
    alone = make_agent("fictive", 1, 0)  # built alone: nobody told it the table
    decide(alone, rules, state, games, bits)
    assert alone.counts["fallback"] == 20


def test_the_registry_builds_and_refuses_it_in_one_line() -> None:
    assert make_agent("fictive:objective=round", 0, 0).objective == "round"
    assert make_agent("fictive", 0, 0).objective == "match" and make_agent("fictive", 0, 0).sees_all
    line = " ".join(describe())
    assert "fictive[:KEY=VALUE;...]     CHEATING" in line and "objective=match|knockout|round" in line
    assert "best response" in line and "sees every hidden hand" in line
    refused = (
        ("fictive:objective=nope", "must be one of match, knockout, round"),
        ("fictive:depth=2", "unknown option 'depth'"),
    )
    for spec, message in refused:
        with pytest.raises(AgentSpecError, match=message):
            make_agent(spec, 0, 0)


def test_best_response_refuses_an_opponent_it_cannot_simulate() -> None:
    rules = Rules.preset("standard")
    state = engine.init(rules, 2, 0)
    mover = int(state.cur[0])
    specs = ["guard"] * 4
    specs[(mover + 1) % 4] = "random"
    with pytest.raises(ValueError, match="cannot simulate agent 'random'"):
        F.best_response(rules, state, make_agents(",".join(specs), 4, 0))


class _Through:
    """A deterministic agent that is not a Heuristic: the search asks it through a Decision (the generic path)."""

    sees_all, deterministic = False, True

    def __init__(self, name: str) -> None:
        self.inner, self.spec = Heuristic(name), f"through:{name}"

    def act(self, decision: Decision) -> np.ndarray:
        """The heuristic's card."""
        return self.inner.act(decision)


CASES = [
    ("standard", {}),
    ("every_trick", {}),
    ("free_choice", {"players": 3}),
    ("lives", {"players": 5, "hand_size": 5}),
    ("twos", {"players": 6, "hand_size": 5}),
    ("jokers", {"players": 3, "hand_size": 6}),
    ("unbeatable_aces", {}),
    ("small_ace", {}),
    ("nearest", {}),
    ("danish21", {"players": 3}),
]


@pytest.mark.parametrize(("preset", "options"), CASES)
def test_compiled_guard_plays_the_heuristics_card(preset: str, options: dict) -> None:
    if not rules_kernel.HAS_NUMBA:
        pytest.skip("numba is not installed: no compiled guard")
    rules = Rules.preset(preset, **options)
    table = make_agents(",".join(["random"] * rules.players), rules.players, 7)
    guard = Heuristic("guard")
    state, checked = engine.init(rules, 64, seed=7), 0
    while not state.round_over.all():  # every position of round 1 under random play
        bits = engine.legal_bits(rules, state)
        games = np.arange(state.batch)
        out = guard.cards(rules, state, bits, games, lambda: pytest.fail("the compiled loop reads no table"))
        np.testing.assert_array_equal(out, guard.act(Decision(rules, state, games, bits)))
        checked += games.size
        state = engine.play(rules, state, act_seats(rules, state, bits, table))
    assert checked == 64 * rules.players * rules.hand_size


@pytest.mark.parametrize(("preset", "options"), CASES[:6])
def test_the_fast_paths_search_exactly_as_the_agents_act(preset: str, options: dict) -> None:
    rules = Rules.preset(preset, **options)
    names = [["guard", "guard", "shed", "counter", "ducker", "guard"][s] for s in range(rules.players)]
    fast, slow = [Heuristic(n) for n in names], [_Through(n) for n in names]
    state = engine.init(rules, 10, seed=4)
    for _ in range(rules.players + 1):
        for objective in F.OBJECTIVES:
            (v1, (k1, c1)), (v2, (k2, c2)) = (F.best_response(rules, state, t, objective) for t in (fast, slow))
            np.testing.assert_array_equal(v1, v2)
            np.testing.assert_array_equal(k1, k2)
            np.testing.assert_array_equal(c1, c2)
        state = engine.play(rules, state, act_seats(rules, state, engine.legal_bits(rules, state), fast))
