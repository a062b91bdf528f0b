"""Property tests of the vectorized engine over random rules, player counts, seeds and play.

Hypothesis draws a preset or a random option combination, a batch and seeds; random legal cards
are played until every match of the batch ends (``advance(reset=False)``), checking at every step:
cards are conserved, the player to move has a non-empty legal set within its hand, a round has
exactly ``hand_size`` tricks, scores only fall by a rebuy, the match ends within a bound, and
``play`` / ``advance`` never change their input state.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agurk_env import engine
from agurk_env.rules import CHOICES, PRESETS, Rules, RulesError


@st.composite
def any_rules(draw: st.DrawFn) -> Rules:
    """A preset or a random option combination, with 2..8 players and a small limit (short matches)."""
    players = draw(st.integers(2, 8))
    preset = draw(st.sampled_from([None, *PRESETS]))
    if preset is None:
        options = {name: draw(st.sampled_from(values)) for name, values in CHOICES.items()}
        options["jokers"] = draw(st.integers(0, 2))
        options["twos_rule"] = draw(st.booleans())
        if draw(st.booleans()):
            options["ace_points"] = draw(st.integers(1, 20))  # >= 1: every round scores (bounded matches)
        mode = draw(st.sampled_from(["points", "lives", "rebuys"]))
        if mode == "lives":
            options |= {"lives": draw(st.integers(1, 3)), "scoring": "last_trick"}
        elif mode == "rebuys":
            options |= {"rebuys": draw(st.integers(1, 2)), "rebuy_min_others": draw(st.integers(0, 4))}
            options["match_end"] = "last_standing"
        if options["ace"] == "low":
            options["ace_lock"] = "none"
    else:
        options = dict(PRESETS[preset])
    deck = 52 + options.get("jokers", 0)
    options["players"] = players
    options["hand_size"] = draw(st.integers(1, min(8, deck // players)))
    options["limit"] = draw(st.integers(1, 30))
    try:
        return Rules.from_dict(options)
    except RulesError:
        assume(False)
        raise


def _copy(state: engine.State) -> dict[str, object]:
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in state._asdict().items()}


def _assert_unchanged(state: engine.State, snapshot: dict[str, object], what: str) -> None:
    for key, value in state._asdict().items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, snapshot[key]), f"{what} changed its input field {key}"
        else:
            assert value == snapshot[key], f"{what} changed its input field {key}"


def _max_rounds(rules: Rules) -> int:
    """A sound bound on the rounds of a match when every card is worth >= 1 point.

    Lives mode: each round someone scores and loses a life. Points mode: each round adds >= 1 to
    the scores of the seats still in, all below the limit, until a seat goes out or rebuys.
    """
    p = rules.players
    if rules.lives:
        return p * rules.lives
    return (p + p * rules.rebuys + 1) * (p * (rules.limit + 1) + 1)


def _deck_counts(rules: Rules) -> np.ndarray:
    counts = np.full(rules.num_actions, 4)
    if rules.jokers:
        counts[13] = rules.jokers
    return counts


def run_checked(rules: Rules, batch: int, seed: int, policy_seed: int, check_purity: bool = True) -> int:
    """Play every match of a batch to its end with random legal cards, checking the invariants; return steps.

    A finished match may not be played on, so finished games are dropped from the batch (``State.take``).
    """
    rng = np.random.default_rng(policy_seed)
    dealer_leads = rules.first_leader == "dealer"
    p, h, a = rules.players, rules.hand_size, rules.num_actions
    deck = _deck_counts(rules)
    state = engine.init(rules, batch, seed)
    assert state.match_id.tolist() == list(range(batch)) and state.next_match == batch
    assert not state.round_over.any() and not state.match_over.any()
    assert np.array_equal(state.cur, np.zeros(batch) if dealer_leads else np.ones(batch))
    dealt = state.hands.astype(np.int64)  # (B, P, A) what each seat was dealt this round
    n_in_round = state.n_alive.copy()
    plays = np.zeros(batch, np.int64)  # cards played this round
    max_steps = _max_rounds(rules) * p * h
    steps = 0
    while state.batch:
        b = state.batch
        ar = np.arange(b)
        assert not state.round_over.any() and not state.match_over.any()
        # Cards: what is held plus what was played this round is what was dealt.
        played = np.zeros((b, p, a), np.int64)
        g, t, s = np.nonzero(state.tricks >= 0)
        np.add.at(played, (g, s, state.tricks[g, t, s]), 1)
        assert np.array_equal(state.hands.astype(np.int64) + played, dealt), "cards were lost or made"
        assert (state.hands >= 0).all()
        assert (dealt.sum(1) <= deck).all(), "more copies of a card than the deck holds"
        assert np.array_equal(dealt.sum(2), np.where(state.alive, h, 0))
        assert np.array_equal(plays, state.trick_no * n_in_round + state.npos)
        # The player to move: a non-empty legal set, all of it in its hand.
        bits = engine.legal_bits(rules, state)
        mask = engine.legal_mask(rules, state)
        assert np.array_equal(state.held, engine.pack(state.hands > 0)), "held is out of step with the hands"
        assert not (bits & ~state.held[ar, state.cur]).any(), "a legal card that is not held"
        assert state.alive[ar, state.cur].all(), "a seat that is out is to move"
        assert mask.any(1).all(), "no legal card"
        assert not (mask & ~(state.hands[ar, state.cur] > 0)).any(), "a legal card that is not in the hand"

        steps += 1
        assert steps <= max_steps, "a match did not end within the bound"
        actions = np.where(mask, rng.random(mask.shape), -1.0).argmax(1)
        snapshot = _copy(state) if check_purity else None
        new = engine.play(rules, state, actions)
        if snapshot is not None:
            _assert_unchanged(state, snapshot, "play")
        plays += 1
        ended = new.round_over
        assert not (new.match_over & ~ended).any()
        # Scores fall only by a rebuy, which only happens at the end of a round.
        fell = new.scores < state.scores
        assert not (fell & ~(ended[:, None] & new.rebought_now)).any(), "a score fell without a rebuy"
        if ended.any():
            e = np.flatnonzero(ended)
            assert (new.trick_no[e] == h).all(), "a round did not have hand_size tricks"
            assert (plays[e] == h * n_in_round[e]).all()
            winners = new.trick_winner[e]
            assert state.alive[e[:, None], winners].all(), "a seat that is out took a trick"
            assert state.alive[e[:, None], new.trick_leader[e]].all(), "a seat that is out led a trick"
            assert not (new.out_now[e] & new.rebought_now[e]).any()
            assert not (new.out_now[e] & ~state.alive[e]).any()
            assert np.array_equal(new.alive[e], state.alive[e] & ~new.out_now[e])
            assert (new.round_penalty[e] >= 0).all() and (new.round_penalty[e] > 0).any(1).all()
            assert not new.round_penalty[e][~state.alive[e]].any()
            if rules.lives:
                assert (new.lives[e] >= 0).all()
            over = e[new.match_over[e]]
            if rules.match_end == "last_standing":
                assert (new.winners[over].sum(1) >= 1).all() and (new.alive[over].sum(1) <= 1).all()
            else:
                assert new.out_now[over].any(1).all()
                assert np.array_equal(new.winners[over], new.alive[over])
            assert not new.winners[e[~new.match_over[e]]].any()
        not_ended = ~ended
        assert (new.trick_no[not_ended] < h).all()
        assert np.array_equal(new.scores[not_ended], state.scores[not_ended])
        snapshot = _copy(new) if check_purity else None
        state = engine.advance(rules, new, reset=False)
        if snapshot is not None:
            _assert_unchanged(new, snapshot, "advance")
        assert np.array_equal(state.match_id, new.match_id), "advance(reset=False) restarted a match"
        assert np.array_equal(state.scores, new.scores) and np.array_equal(state.alive, new.alive)
        if ended.any():
            d = np.flatnonzero(ended & ~state.match_over)
            dealt[d] = state.hands[d]
            n_in_round[d] = state.n_alive[d]
            plays[d] = 0
            assert (state.trick_no[d] == 0).all() and (state.npos[d] == 0).all()
            assert np.array_equal(state.dealer[d], _next_in(new.alive[d], new.dealer[d])), "wrong next dealer"
            lead = state.dealer[d] if dealer_leads else _next_in(state.alive[d], state.dealer[d])
            assert np.array_equal(state.cur[d], lead), "wrong first leader"
            keep = np.flatnonzero(~state.match_over)
            if keep.size < state.batch:
                state = state.take(keep)
                dealt, n_in_round, plays = dealt[keep], n_in_round[keep], plays[keep]
    return steps


def _next_in(alive: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """The next seat clockwise after ``seat`` that is still in (plain loop, for checking)."""
    out = []
    for row, s in zip(alive, seat.tolist(), strict=True):
        n = row.size
        out.append(next((s + k) % n for k in range(1, n + 1) if row[(s + k) % n]))
    return np.array(out, dtype=np.int64)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rules=any_rules(), batch=st.integers(1, 6), seed=st.integers(0, 2**63), policy_seed=st.integers(0, 2**32))
def test_invariants_hold_through_whole_matches(rules: Rules, batch: int, seed: int, policy_seed: int) -> None:
    assert run_checked(rules, batch, seed, policy_seed) > 0


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rules=any_rules(), batch=st.integers(1, 16), seed=st.integers(0, 2**63), policy_seed=st.integers(0, 2**32))
def test_invariants_hold_through_whole_matches_slow(rules: Rules, batch: int, seed: int, policy_seed: int) -> None:
    assert run_checked(rules, batch, seed, policy_seed) > 0


def _fields(state: engine.State) -> dict[str, np.ndarray]:
    return {k: v for k, v in state._asdict().items() if isinstance(v, np.ndarray)}


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rules=any_rules(), batch=st.integers(2, 6), seed=st.integers(0, 2**32), data=st.data())
def test_a_game_plays_the_same_alone_and_in_a_batch(rules: Rules, batch: int, seed: int, data: st.DataObject) -> None:
    """Slot independence: game ``g`` of a batch, replayed alone as match ``g``, goes through the same states."""
    g = data.draw(st.integers(0, batch - 1))
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    alone = engine.init(rules, 1, seed, first_match=g)
    steps = 0
    while True:
        mine = _fields(state.take(np.array([g])))
        for key, value in _fields(alone).items():
            assert np.array_equal(mine[key], value), f"step {steps}: field {key} differs from the lone game"
        if alone.match_over[0]:
            break
        steps += 1
        assert steps <= _max_rounds(rules) * rules.players * rules.hand_size
        mask = engine.legal_mask(rules, state)
        actions = np.where(mask, rng.random(mask.shape), -1.0).argmax(1)
        state = engine.play(rules, state, actions)
        alone = engine.play(rules, alone, actions[g : g + 1])
        if alone.match_over[0]:
            continue  # compare the final state before the batch restarts the slot
        state = engine.advance(rules, state)
        alone = engine.advance(rules, alone, reset=False)
