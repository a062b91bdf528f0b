"""Heuristics, PIMC and the oracle: legal play under every preset, no peeking, consistent worlds."""

from __future__ import annotations

import numpy as np
import pytest

from agents.heuristics import STRATEGIES, Heuristic
from agents.pimc import sample_worlds
from agents.search import PIMC, Oracle
from agurk_env import engine
from agurk_env.agent import Decision, act_seats, decide
from agurk_env.rules import PRESETS, Rules


def _midround_states(rules: Rules, batch: int, steps: int, seed: int = 0) -> engine.State:
    """A batch advanced ``steps`` random plays into its matches."""
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    for _ in range(steps):
        bits = engine.legal_bits(rules, state)
        k = (rng.random(batch) * engine.SET_SIZE[bits]).astype(np.int64)
        state = engine.advance(rules, engine.play(rules, state, engine.KTH_MEMBER[bits, k]))
    return state


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_agent_plays_legally_under_every_preset(preset: str) -> None:
    rules = Rules.preset(preset, players=5)
    rng = np.random.default_rng(1)
    seats = [Heuristic(name) for name in STRATEGIES] + [PIMC(rng, worlds=2, rollout="shed")]
    state = engine.init(rules, 32, seed=3)
    for _ in range(60):  # act_seats raises on any illegal card
        legal = engine.legal_bits(rules, state)
        state = engine.advance(rules, engine.play(rules, state, act_seats(rules, state, legal, seats)))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_counter_counts_unlike_shed_and_guard(preset: str) -> None:
    # counter's choice depends on the cards seen: it differs from shed and from guard wherever the rules leave a
    # follower a choice (under beat_choice=nearest a follower never has one, and all three lead their strongest card)
    rules = Rules.preset(preset)
    differs = {"shed": 0, "guard": 0, "shed_guard": 0}
    state = engine.init(rules, 64, seed=5)
    for _ in range(300):  # whole matches: seats go out, later rounds have fewer players
        legal = engine.legal_bits(rules, state)
        d = Decision(rules, state, np.arange(state.batch), legal)
        picks = {name: Heuristic(name).act(d) for name in ("counter", "shed", "guard")}
        assert d.legal[np.arange(state.batch), picks["counter"]].all()
        for name in ("shed", "guard"):
            differs[name] += int((picks["counter"] != picks[name]).sum())
        differs["shed_guard"] += int((picks["shed"] != picks["guard"]).sum())
        state = engine.advance(rules, engine.play(rules, state, picks["counter"]))
    if rules.beat_choice == "nearest":
        assert differs == {"shed": 0, "guard": 0, "shed_guard": 0}
    else:
        assert differs["shed"] > 0 and differs["guard"] > 0, differs


def test_counter_sheds_a_likely_winner_in_time() -> None:
    # 2 tricks left, holding A and 3 with every other ace and king gone: the ace is a sure winner, so it goes now
    rules = Rules.preset("standard", players=2, hand_size=2)
    hands = np.zeros((1, 2, 13), np.int64)
    hands[0, 0, [12, 1]] = 1  # seat 0: A, 3
    hands[0, 1, [0, 3]] = 1  # seat 1: 2, 5
    state = engine.set_hands(rules, engine.init(rules, 1, 0), hands)
    state = state._replace(cur=np.zeros(1, np.int64), leader=np.zeros(1, np.int64))
    d = Decision(rules, state, np.arange(1), engine.legal_bits(rules, state))
    assert Heuristic("counter").act(d).tolist() == [12]


def test_public_view_hides_every_hand_but_the_movers() -> None:
    rules = Rules.preset("standard")
    state = _midround_states(rules, 16, 9)
    d = Decision(rules, state, np.arange(16), engine.legal_bits(rules, state))
    rows = np.arange(16)
    assert (d.public.hands[rows, state.cur] == state.hands[rows, state.cur]).all()
    others = np.ones((16, rules.players), bool)
    others[rows, state.cur] = False
    assert (d.public.hands[others] == 0).all()
    assert (d.public.held[others] == 0).all()
    assert (d.public.held[rows, state.cur] == state.held[rows, state.cur]).all()
    with pytest.raises(PermissionError):
        _ = d.truth


def _swap_hidden(rules: Rules, state: engine.State) -> engine.State:
    """The same games with the two opponents after the mover swapping hands (hidden information only)."""
    hands = state.hands.copy()
    rows = np.arange(state.batch)
    a = (state.cur + 1) % rules.players
    b = (state.cur + 2) % rules.players
    ha, hb = hands[rows, a].copy(), hands[rows, b].copy()
    same_size = ha.sum(1) == hb.sum(1)
    hands[rows[same_size], a[same_size]] = hb[same_size]
    hands[rows[same_size], b[same_size]] = ha[same_size]
    return state._replace(hands=hands, void=np.zeros_like(state.void))


@pytest.mark.parametrize("name", ["guard", "counter", "pimc"])
def test_fair_agents_do_not_depend_on_hidden_cards(name: str) -> None:
    rules = Rules.preset("standard")
    state = _midround_states(rules, 64, 1)  # one card into the round: hands still the same size
    state = state._replace(void=np.zeros_like(state.void))
    other = _swap_hidden(rules, state)
    assert not (other.hands == state.hands).all()
    legal = engine.legal_bits(rules, state)
    assert (legal == engine.legal_bits(rules, other)).all()
    games = np.arange(64)

    def agent():
        return Heuristic(name) if name != "pimc" else PIMC(np.random.default_rng(7), worlds=4, rollout="shed")

    assert (decide(agent(), rules, state, games, legal) == decide(agent(), rules, other, games, legal)).all()


@pytest.mark.parametrize("preset", ["standard", "jokers", "twos", "lives"])
@pytest.mark.parametrize("players", [3, 8])
def test_sampled_worlds_are_consistent_with_what_is_public(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players=players, hand_size=min(7, 52 // players))
    state = _midround_states(rules, 48, 11, seed=players)
    state = state.take(np.flatnonzero(~state.round_over))
    d = Decision(rules, state, np.arange(state.batch), engine.legal_bits(rules, state))
    worlds = sample_worlds(rules, d.public, 5, np.random.default_rng(0))
    game = np.repeat(np.arange(state.batch), 5)
    rows = np.arange(game.size)
    assert (worlds.hands[rows, state.cur[game]] == state.hands[game, state.cur[game]]).all()  # own hand kept
    assert (worlds.hands.sum(2) == engine.cards_left(rules, state)[game]).all()  # hand sizes are public
    assert (worlds.hands.sum(2) == state.hands.sum(2)[game]).all()
    played = np.stack([(state.tricks == c).sum((1, 2)) for c in range(rules.num_actions)], 1)
    assert (worlds.hands.sum(1) + played[game] <= engine.tables(rules).in_deck).all()  # never more copies than a deck
    held = engine.pack(worlds.hands > 0)
    respected = (held & worlds.void) == 0
    assert respected.mean() > 0.99  # voids are only dropped when a world cannot meet them


def test_cards_played_counts_the_rounds_plays() -> None:
    rules = Rules.preset("jokers", players=5)
    state = _midround_states(rules, 16, 23)
    by_seat = engine.cards_played(rules, state, by_seat=True)
    for g in range(16):
        for s in range(rules.players):
            played = state.tricks[g, :, s]
            assert by_seat[g, s].tolist() == np.bincount(played[played >= 0], minlength=14).tolist()
    assert (engine.cards_played(rules, state) == by_seat.sum(1)).all()


def test_a_selected_part_of_a_decision_sees_what_the_whole_saw_for_those_games() -> None:
    rules = Rules()
    state = engine.init(rules, 32, seed=5)

    def everyone(state: engine.State) -> Decision:
        return Decision(rules, state, np.arange(state.batch), engine.legal_bits(rules, state))

    for _ in range(9):  # into the round: tricks under way
        state = engine.advance(rules, engine.play(rules, state, Heuristic("guard").act(everyone(state))))
    whole = everyone(state)
    which = np.arange(len(whole)) % 3 == 1
    part = whole.select(which)
    assert len(part) == which.sum()
    for field in ("legal", "seat", "hand", "trick_seats", "trick_cards", "obs"):
        np.testing.assert_array_equal(getattr(part, field), getattr(whole, field)[which], err_msg=field)
    with pytest.raises(PermissionError):
        _ = part.truth


def test_oracle_reads_the_truth() -> None:
    """Same public facts, other hidden hands: the oracle (deterministic with the shed rollout) changes its cards."""
    rules = Rules.preset("standard")
    state = _midround_states(rules, 64, 1)  # one card into the round: hands still the same size
    state = state._replace(void=np.zeros_like(state.void))
    other = _swap_hidden(rules, state)
    legal = engine.legal_bits(rules, state)
    assert (legal == engine.legal_bits(rules, other)).all()
    games = np.arange(64)

    def oracle_cards(st: engine.State) -> np.ndarray:  # decide() raises on an illegal card
        return decide(Oracle(np.random.default_rng(0), worlds=2, rollout="shed"), rules, st, games, legal)

    truth = oracle_cards(state)
    assert (oracle_cards(state) == truth).all()
    assert (oracle_cards(other) != truth).any()


def test_bench_search_reports_both_rates(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from agurk.cli import main

    assert main(["bench", "search", "--agent", "pimc:worlds=2", "--seconds", "0.2", "--batch", "8", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["single_decisions_per_s"] > 0 and result["batched_decisions_per_s"] > 0
    assert main(["bench", "search", "--agent", "nope"]) == 2
