"""Differential tests of the engine's rule helpers against the scalar reference and against ``engine.play``.

Over random mid-round states of every preset (2..8 players): ``takes_trick`` agrees with the
reference's ``trick_winner`` for every card and with what ``engine.play`` does for every legal card;
``legal_bits`` equals the reference's legal set; ``legal_reason`` names the rule that gives exactly
that set; ``trick_target`` is the card the reference makes a follower reach; ``card_values`` are the
reference's strengths and points in the current trick; ``cards_left`` is the true hand sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import preset_rules, random_step, reference_at

from agurk_env import engine
from agurk_env.reference import ReferenceMatch
from agurk_env.rules import PRESETS, Rules

REASON = {name: i for i, name in enumerate(engine.REASONS)}
BATCH = 6


def _steps(rules: Rules) -> int:
    """Plays enough for two whole rounds of the first deal: every trick of a round, the last included."""
    return 2 * rules.players * rules.hand_size + 3


def _states(rules: Rules, seed: int):
    """Random mid-round states: ``_steps`` consecutive batches of ``BATCH`` games (rounds and matches roll on)."""
    rng = np.random.default_rng(seed)
    state = engine.init(rules, BATCH, seed)
    for _ in range(_steps(rules)):
        yield state
        state = random_step(rules, state, rng)


def _members(bits: int) -> list[int]:
    return [c for c in range(14) if bits >> c & 1]


def _beats(ref: ReferenceMatch, card: int) -> bool:
    """Whether ``card`` reaches the reference's target in its current trick (by RULES.md's beat_target)."""
    st = [ref.strength(c) for c in range(ref.rules.num_actions)]
    if ref.rules.beat_target == "highest":
        target = max(st[c] for _, c in ref.trick)
    else:
        target = st[ref.trick[-1][1]]
    return st[card] > target or (ref.equal_beats() and st[card] == target)


def _check_game(rules: Rules, state: engine.State, g: int, facts: dict[str, np.ndarray], seen: set[str]) -> None:
    ref = reference_at(rules, state, g)
    a = rules.num_actions
    mover = int(state.cur[g])
    held = sorted(set(ref.hands[mover]))
    legal = _members(int(facts["bits"][g]))
    where = f"rules={rules.to_dict()} match={int(state.match_id[g])} trick={ref.trick_no} trick so far={ref.trick}"

    # legal_bits: the reference's legal set
    assert legal == ref.legal(), where

    # card_values: the reference's strength and points of every card in this trick
    strength, points = facts["strength"][g].tolist(), facts["points"][g].tolist()
    assert strength == [ref.strength(c) for c in range(a)], where
    assert points == [ref.points(c) for c in range(a)], where

    # takes_trick: the reference's winner of the trick so far with the card added, for every card
    for c in range(a):
        ref.trick.append((mover, c))
        wins = ref.trick_winner() == mover
        ref.trick.pop()
        assert bool(facts["takes"][g, c]) == wins, f"{where} card={c}"

    # trick_target: the highest card so far or the previous one, and whether an equal card reaches it
    card, equal = int(facts["target"][g]), bool(facts["equal"][g])
    if not ref.trick:
        assert card == -1, where
    else:
        cards = [c for _, c in ref.trick]
        want = max(cards, key=ref.strength) if rules.beat_target == "highest" else cards[-1]
        assert card == want, where
        assert equal == ref.equal_beats(), where

    # legal_reason: the rule that gives exactly the legal set
    reason = engine.REASONS[int(facts["reason"][g])]
    seen.add(reason)
    if ref.is_last_trick():
        seen.add("in the last trick")
    lowest = min(held, key=ref.strength)
    beaters = [c for c in held if ref.trick and _beats(ref, c)]
    if reason == "lead":
        assert not ref.trick and legal == held, where
        return
    assert ref.trick, f"{where}: reason {reason} for a lead"
    if reason == "twos":
        assert rules.twos_rule and ref.trick[0][1] == engine.TWO and legal == [engine.TWO], where
    elif reason == "locked":
        assert rules.ace_lock != "none" and ref.lock_index() is not None and legal == [lowest], where
    elif reason == "cannot_beat":
        assert not beaters and legal == [lowest], where
    elif reason == "must_beat":
        assert rules.beat_choice == "forced" and beaters and legal == beaters, where
    elif reason == "nearest":
        assert rules.beat_choice == "nearest" and beaters and legal == [min(beaters, key=ref.strength)], where
    elif reason == "optional":
        assert rules.beat_choice == "optional" and beaters and legal == sorted({*beaters, lowest}), where
    else:
        raise AssertionError(f"unknown reason {reason}")
    if reason != "twos" and rules.twos_rule and ref.trick[0][1] == engine.TWO:
        assert engine.TWO not in held, f"{where}: a 2 was led and the mover holds one, reason {reason}"
    if reason not in ("twos", "locked"):
        assert ref.lock_index() is None, f"{where}: a locked trick, reason {reason}"


def _facts(rules: Rules, state: engine.State) -> dict[str, np.ndarray]:
    strength, points = engine.card_values(rules, state)
    target, equal = engine.trick_target(rules, state)
    return {
        "bits": engine.legal_bits(rules, state),
        "reason": engine.legal_reason(rules, state),
        "takes": engine.takes_trick(rules, state),
        "strength": strength,
        "points": points,
        "target": target,
        "equal": equal,
    }


@pytest.mark.parametrize("preset", list(PRESETS))
def test_rule_helpers_agree_with_the_reference(preset: str) -> None:
    seen: set[str] = set()
    checked = expected_count = 0
    for players in range(2, 9):
        rules = preset_rules(preset, players)
        expected_count += _steps(rules) * BATCH
        for state in _states(rules, seed=100 * players + len(preset)):
            facts = _facts(rules, state)
            for g in range(state.batch):
                _check_game(rules, state, g, facts, seen)
                checked += 1
    assert checked == expected_count
    assert "in the last trick" in seen
    seen.discard("in the last trick")
    # the rules of the preset make each of these reasons happen somewhere
    r = Rules.preset(preset)
    expected = {"lead", "cannot_beat"} | {{"forced": "must_beat"}.get(r.beat_choice, r.beat_choice)}
    expected |= {"twos"} if r.twos_rule else set()
    expected |= {"locked"} if r.ace_lock != "none" else set()
    assert expected <= seen, f"never met: {expected - seen}"
    assert seen <= expected, f"reasons these rules cannot give: {seen - expected}"


@pytest.mark.parametrize("preset", list(PRESETS))
def test_takes_trick_is_what_play_does(preset: str) -> None:
    """Play every legal card in turn: the mover holds the trick after ``play`` iff ``takes_trick`` said so."""
    counted = 0
    for players in (2, 3, 5, 8):
        rules = preset_rules(preset, players)
        for state in _states(rules, seed=7 * players + len(preset)):
            takes = engine.takes_trick(rules, state)
            legal = engine.legal_mask(rules, state)
            rows = np.arange(state.batch)
            fallback = legal.argmax(1)
            for c in range(rules.num_actions):
                games = np.flatnonzero(legal[:, c])
                if not games.size:
                    continue
                after = engine.play(rules, state, np.where(legal[:, c], c, fallback))
                holder = after.trick_winner[rows, state.trick_no][games]
                assert np.array_equal(holder == state.cur[games], takes[games, c]), (rules.to_dict(), c)
                assert np.array_equal(after.top_seat[games], holder)
                counted += games.size
    assert counted > 200 * BATCH


@pytest.mark.parametrize("preset", list(PRESETS))
def test_cards_left_is_the_true_hand_sizes(preset: str) -> None:
    for players in (2, 4, 7):
        rules = preset_rules(preset, players)
        for state in _states(rules, seed=players):
            left = engine.cards_left(rules, state)
            assert np.array_equal(left, state.hands.sum(2)), rules.to_dict()
            # and it is public: emptying every hand leaves it unchanged
            hidden = engine.set_hands(rules, state, np.zeros_like(state.hands))
            assert np.array_equal(engine.cards_left(rules, hidden), left)
