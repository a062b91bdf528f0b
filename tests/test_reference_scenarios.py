"""The worked examples of RULES.md and some rule edges, played on the scalar reference.

Seats are named as in RULES.md: A leads trick 1, then B, C, ... clockwise. In round 1 seat 0
deals and seat 1 leads, so A is seat 1 and the dealer (seat 0) is the last letter. A worked
example "trick 5 of 7" has three cards left in hand, so it is trick 1 of a ``hand_size=3`` round
(any trick but the last plays alike); a "last trick" example is a ``hand_size=1`` round.
"""

from __future__ import annotations

import random

import pytest

from agurk_env.reference import ReferenceMatch, play_random_match
from agurk_env.rules import CARDS, Rules


def cards(text: str) -> list[int]:
    return [CARDS.index(name) for name in text.split()]


def names(actions: list[int]) -> list[str]:
    return [CARDS[a] for a in actions]


def deal(rules: Rules, **hands: str) -> tuple[ReferenceMatch, dict[str, int]]:
    """Start round 1 with hands given per letter (A leads trick 1)."""
    n = rules.players
    seat = {"ABCDEFGH"[i]: (1 + i) % n for i in range(n)}
    assert set(hands) == set(seat)
    match = ReferenceMatch(rules)
    by_seat = [[] for _ in range(n)]
    for letter, text in hands.items():
        by_seat[seat[letter]] = cards(text)
    match.start_round(by_seat)
    assert match.leader == seat["A"]
    return match, seat


def play(match: ReferenceMatch, seat: int, card: str, legal: str | None = None) -> None:
    """Play ``card`` for ``seat``, checking that it is its turn and, if given, the exact legal set."""
    assert match.to_move == seat
    if legal is not None:
        assert sorted(names(match.legal()), key=CARDS.index) == sorted(legal.split(), key=CARDS.index)
    match.play(CARDS.index(card))


def one_card_round(match: ReferenceMatch, dealt: dict[int, str]) -> None:
    """Play a whole ``hand_size=1`` round: ``dealt`` maps each seat still in to its one card."""
    match.start_round([cards(dealt[s]) if s in dealt else [] for s in range(match.rules.players)])
    while match.in_round:
        match.play(match.hands[match.to_move][0])


# ----- the worked examples of RULES.md -------------------------------------------------------


def test_example1_standard_must_beat_and_later_equal_takes() -> None:
    m, s = deal(Rules.preset("standard", hand_size=3), A="10 6 2", B="K 8 3", C="9 7 5", D="K 4 2")
    play(m, s["A"], "10")
    play(m, s["B"], "K", legal="K")
    play(m, s["C"], "5", legal="5")
    play(m, s["D"], "K", legal="K")
    assert m.trick_winners == [s["D"]]
    assert m.leader == m.to_move == s["D"]
    assert m.trick_no == 1


def test_example2_standard_last_trick_ties_score() -> None:
    m, s = deal(Rules.preset("standard", hand_size=1), A="6", B="9", C="4", D="9")
    for letter, card in zip("ABCD", ("6", "9", "4", "9"), strict=True):
        play(m, s[letter], card)
    assert m.last_round is not None
    assert m.last_round.trick_winners == [s["D"]]
    expected = [0] * 4
    expected[s["B"]] = expected[s["D"]] = 9
    assert m.last_round.penalties == expected
    assert m.scores == expected


def test_example3_danish21_both_queens_score() -> None:
    m, s = deal(Rules.preset("danish21", players=3, hand_size=1), A="Q", B="Q", C="7")
    play(m, s["A"], "Q")
    play(m, s["B"], "Q")
    play(m, s["C"], "7")
    expected = [0] * 3
    expected[s["A"]] = expected[s["B"]] = 12
    assert m.round_penalties == expected


def test_example4_danish21_equal_is_enough() -> None:
    m, s = deal(Rules.preset("danish21", players=3, hand_size=3), A="Q 8 4", B="Q 5 2", C="J 9 6")
    play(m, s["A"], "Q")
    play(m, s["B"], "Q", legal="Q")
    play(m, s["C"], "6", legal="6")
    assert m.trick_winners == [s["B"]]


def test_example5_danish21_led_ace_locks() -> None:
    m, s = deal(Rules.preset("danish21", players=3, hand_size=3), A="A 8 4", B="A K 4", C="K 9 3")
    play(m, s["A"], "A")
    play(m, s["B"], "4", legal="4")
    play(m, s["C"], "3", legal="3")
    assert m.trick_winners == [s["A"]]


def test_example5_standard_ace_must_be_matched() -> None:
    m, s = deal(Rules.preset("standard", players=3, hand_size=3), A="A 8 4", B="A K 4", C="K 9 3")
    play(m, s["A"], "A")
    play(m, s["B"], "A", legal="A")
    play(m, s["C"], "3", legal="3")
    assert m.trick_winners == [s["B"]]


def test_example5_danish21_played_ace_locks() -> None:
    m, s = deal(Rules.preset("danish21", players=3, hand_size=3), A="5 8 4", B="A 7 2", C="A 9 2")
    play(m, s["A"], "5")
    play(m, s["B"], "A", legal="7 A")
    play(m, s["C"], "2", legal="2")
    assert m.trick_winners == [s["B"]]


def test_example6_every_trick_optional_beat_and_trick_scores() -> None:
    m, s = deal(Rules.preset("every_trick", players=3, hand_size=3), A="5 K 3", B="9 4 2", C="4 3 2")
    play(m, s["A"], "5")
    play(m, s["B"], "2", legal="9 2")
    play(m, s["C"], "2", legal="2")
    assert m.trick_winners == [s["A"]]
    assert m.round_penalties[s["A"]] == 5
    assert sum(m.round_penalties) == 5


def test_example7_swedish_beat_the_previous_card() -> None:
    rules = Rules.preset("swedish", players=6, hand_size=2)
    m, s = deal(rules, A="8 4", B="J 5", C="K 6", D="K 7", E="Q 3", F="9 2")
    play(m, s["A"], "8")
    play(m, s["B"], "J", legal="J")
    play(m, s["C"], "K", legal="K")
    play(m, s["D"], "K", legal="K")
    play(m, s["E"], "3", legal="3")
    play(m, s["F"], "9", legal="9")
    assert m.trick_winners == [s["D"]]


# ----- ace lock ------------------------------------------------------------------------------


def test_ace_lock_with_joker_before_the_ace() -> None:
    rules = Rules(players=3, hand_size=2, jokers=2, ace_lock="any")
    m, s = deal(rules, A="X 5", B="A A", C="X 3")
    play(m, s["A"], "X")
    play(m, s["B"], "A", legal="A")  # nothing reaches the joker: lowest card
    play(m, s["C"], "3", legal="3")  # the ace locks: lowest card, not the equal joker
    assert m.trick_winners == [s["A"]]  # decided among X, A: the joker

    m, s = deal(rules.replace(ace_lock="none"), A="X 5", B="A A", C="X 3")
    play(m, s["A"], "X")
    play(m, s["B"], "A", legal="A")
    play(m, s["C"], "X", legal="X")
    assert m.trick_winners == [s["C"]]


def test_ace_lock_later_ace_does_not_take() -> None:
    m, s = deal(Rules.preset("danish21", players=3, hand_size=2), A="K 5", B="A 2", C="A A")
    play(m, s["A"], "K")
    play(m, s["B"], "A", legal="A")
    play(m, s["C"], "A", legal="A")
    assert m.trick_winners == [s["B"]]

    m, s = deal(Rules.preset("standard", players=3, hand_size=2), A="K 5", B="A 2", C="A A")
    play(m, s["A"], "K")
    play(m, s["B"], "A", legal="A")
    play(m, s["C"], "A", legal="A")
    assert m.trick_winners == [s["C"]]


def test_ace_lock_led_only_when_led() -> None:
    m, s = deal(Rules.preset("unbeatable_aces", players=3, hand_size=3), A="5 8 4", B="A 7 2", C="A 9 2")
    play(m, s["A"], "5")
    play(m, s["B"], "A", legal="7 A")
    play(m, s["C"], "A", legal="A")  # no lock: the ace must be matched, and the later one wins
    assert m.trick_winners == [s["C"]]


def test_locked_last_trick_ties_all_still_score() -> None:
    # Golden unbeatable_aces seed 15841 and nearest seed 15842: an ace played after the lock
    # does not take the trick but, under last_trick_ties=all, still scores its 14 points.
    m, s = deal(Rules.preset("danish21", players=3, hand_size=1), A="K", B="A", C="A")
    for letter, card in zip("ABC", "KAA", strict=True):
        play(m, s[letter], card)
    assert m.last_round is not None and m.last_round.trick_winners == [s["B"]]
    expected = [0] * 3
    expected[s["B"]] = expected[s["C"]] = 14
    assert m.last_round.penalties == expected


# ----- small ace (low_in_last_trick) ----------------------------------------------------------


def test_small_ace_high_then_low_in_last_trick() -> None:
    m, s = deal(Rules.preset("small_ace", players=3, hand_size=2), A="K A", B="A 5", C="4 3")
    play(m, s["A"], "K")
    play(m, s["B"], "A", legal="A")  # the ace is 14 before the last trick
    play(m, s["C"], "3", legal="3")
    assert m.trick_winners == [s["B"]]
    play(m, s["B"], "5")
    play(m, s["C"], "4")
    play(m, s["A"], "A")  # 1 in the last trick: the 5 takes it
    assert m.last_round is not None and m.last_round.trick_winners == [s["B"], s["B"]]
    assert m.last_round.penalties[s["B"]] == 5 and sum(m.last_round.penalties) == 5


def test_small_ace_in_last_trick_scores_one_and_does_not_lock() -> None:
    rules = Rules(players=3, hand_size=1, ace="low_in_last_trick", ace_lock="any")
    m, s = deal(rules, A="A", B="2", C="A")
    for letter, card in zip("ABC", "A2A", strict=True):
        play(m, s[letter], card)
    assert m.last_round is not None
    assert m.last_round.trick_winners == [s["B"]]  # no lock: the 2 beats two aces of strength 1
    assert m.last_round.penalties == [2 if seat == s["B"] else 0 for seat in range(3)]

    m, s = deal(rules, A="A", B="A", C="A")
    for letter in "ABC":
        play(m, s[letter], "A")
    assert m.last_round is not None and m.last_round.trick_winners == [s["C"]]
    assert m.last_round.penalties == [1, 1, 1]


# ----- other legal-play options ----------------------------------------------------------------


def test_twos_rule_and_nearest() -> None:
    m, s = deal(Rules.preset("twos", players=3, hand_size=3), A="2 8 4", B="2 K 5", C="J 9 6")
    play(m, s["A"], "2")
    play(m, s["B"], "2", legal="2")
    play(m, s["C"], "6", legal="6 9 J")
    m, s = deal(Rules.preset("nearest", players=3, hand_size=3), A="5 8 4", B="9 7 2", C="3 3 2")
    play(m, s["A"], "5")
    play(m, s["B"], "7", legal="7")
    play(m, s["C"], "2", legal="2")


def test_dealer_leads_equal_does_not_beat_in_last_trick() -> None:
    rules = Rules.preset("dealer_leads", players=2, hand_size=2)
    m = ReferenceMatch(rules)
    m.start_round([cards("9 9"), cards("9 9")])
    assert m.leader == 0  # the dealer leads
    m.play(CARDS.index("9"))
    m.play(CARDS.index("9"))
    assert m.trick_winners == [1]  # equal beats before the last trick
    m.play(CARDS.index("9"))
    m.play(CARDS.index("9"))
    assert m.last_round is not None and m.last_round.trick_winners == [1, 1]  # first played wins
    assert m.last_round.penalties == [9, 9]


def test_illegal_play_and_bad_deal_are_refused() -> None:
    m, s = deal(Rules.preset("standard", players=3, hand_size=3), A="10 6 2", B="K 8 3", C="9 7 5")
    play(m, s["A"], "10")
    with pytest.raises(ValueError, match="may not play"):
        m.play(CARDS.index("8"))
    with pytest.raises(ValueError, match="deck has 4"):
        ReferenceMatch(Rules(players=2, hand_size=3)).start_round([cards("K K K"), cards("K K 2")])
    with pytest.raises(ValueError, match="must get 3 cards"):
        ReferenceMatch(Rules(players=2, hand_size=3)).start_round([cards("K K"), cards("K 3 2")])


# ----- rebuys, lives and the end of the match -------------------------------------------------


def test_rebuy_takes_highest_staying_score_then_out() -> None:
    m = ReferenceMatch(Rules.preset("second_chance", players=3, hand_size=1))
    one_card_round(m, {1: "9", 2: "3", 0: "4"})
    assert m.scores == [0, 9, 0]
    assert m.dealer == 1
    one_card_round(m, {2: "5", 0: "8", 1: "2"})
    assert m.scores == [8, 9, 0]
    one_card_round(m, {0: "4", 1: "K", 2: "Q"})  # seat 1 reaches 22 >= 21
    assert m.last_round is not None
    assert (m.last_round.rebought, m.last_round.out) == ([1], [])
    assert m.scores == [8, 8, 0]  # the highest score among the seats that stay in
    assert m.rebuys_left == [1, 0, 1]
    assert m.dealer == 0
    one_card_round(m, {1: "K", 2: "2", 0: "3"})  # seat 1 reaches 21 again, no rebuy left
    assert (m.last_round.rebought, m.last_round.out) == ([], [1])
    assert m.alive == [True, False, True] and not m.match_over
    assert m.dealer == 2  # left of seat 0, skipping nobody
    assert m.leader is None
    one_card_round(m, {0: "K", 2: "Q"})  # dealer 2: seat 0 leads
    assert m.last_round.trick_winners == [0]
    assert m.dealer == 0


def test_rebuy_stay_in_counts_only_seats_below_the_limit() -> None:
    rules = Rules.preset("buy_in", players=4, hand_size=1, limit=10)  # rebuy_min_others=3
    m = ReferenceMatch(rules)
    one_card_round(m, {1: "K", 2: "K", 3: "2", 0: "3"})  # seats 1 and 2 both reach: only 2 stay in
    assert m.last_round is not None
    assert (m.last_round.out, m.last_round.rebought) == ([1, 2], [])
    assert m.alive == [True, False, False, True]

    m = ReferenceMatch(rules.replace(players=5))
    one_card_round(m, {1: "5", 2: "3", 3: "4", 4: "9", 0: "2"})
    assert m.scores == [0, 0, 0, 0, 9]
    one_card_round(m, {2: "K", 3: "2", 4: "3", 0: "4", 1: "K"})  # 3 seats stay in: both rebuy
    assert m.last_round is not None
    assert (m.last_round.out, m.last_round.rebought) == ([], [1, 2])
    assert m.scores == [0, 9, 9, 0, 9]


def test_rebuy_needs_someone_to_stay_in() -> None:
    m = ReferenceMatch(Rules.preset("second_chance", players=2, hand_size=1, limit=5))
    one_card_round(m, {1: "9", 0: "9"})  # both reach: nobody stays in, no rebuy
    assert m.last_round is not None
    assert (m.last_round.out, m.last_round.rebought) == ([0, 1], [])
    assert m.match_over and m.winners == [0, 1]  # equal fewest points win together


def test_lives_ties_lose_lives_and_scores_add_up() -> None:
    m = ReferenceMatch(Rules.preset("lives", players=3, hand_size=1))
    one_card_round(m, {1: "Q", 2: "Q", 0: "5"})
    assert (m.lives, m.scores) == ([3, 2, 2], [0, 12, 12])
    one_card_round(m, {2: "K", 0: "2", 1: "3"})
    assert m.lives == [3, 2, 1]
    one_card_round(m, {0: "4", 1: "J", 2: "J"})
    assert m.lives == [3, 1, 0]
    assert m.last_round is not None and m.last_round.out == [2]
    assert m.dealer == 0 and not m.match_over
    one_card_round(m, {1: "9", 0: "10"})
    assert m.lives == [2, 1, 0]
    assert m.dealer == 1
    one_card_round(m, {0: "3", 1: "8"})
    assert m.lives == [2, 0, 0] and m.scores == [10, 31, 36]
    assert m.match_over and m.winners == [0]


def test_first_out_everyone_out_nobody_wins() -> None:
    m = ReferenceMatch(Rules.preset("quick", players=2, hand_size=2, limit=5))
    m.start_round([cards("2 8"), cards("9 3")])
    m.play(CARDS.index("9"))
    m.play(CARDS.index("2"))  # nothing beats the 9: lowest card
    m.play(CARDS.index("3"))
    m.play(CARDS.index("8"))
    assert m.last_round is not None and m.last_round.penalties == [8, 9]
    assert m.last_round.out == [0, 1]
    assert m.match_over and m.winners == []


def test_first_out_others_win() -> None:
    m = ReferenceMatch(Rules.preset("quick", players=3, hand_size=1))
    one_card_round(m, {1: "9", 2: "3", 0: "4"})
    assert not m.match_over
    one_card_round(m, {2: "K", 0: "Q", 1: "3"})  # seat 2: 13 points
    one_card_round(m, {0: "10", 1: "2", 2: "3"})
    assert m.scores == [10, 9, 13] and not m.match_over
    one_card_round(m, {1: "K", 2: "2", 0: "3"})  # seat 1 reaches 22 >= 21
    assert m.match_over and m.winners == [0, 2]


def test_last_standing_everyone_out_fewest_points_win() -> None:
    m = ReferenceMatch(Rules.preset("every_trick", players=2, hand_size=2, limit=5))
    m.start_round([cards("2 8"), cards("9 3")])
    for card in ("9", "2", "3", "8"):
        m.play(CARDS.index(card))
    assert m.scores == [8, 9]
    assert m.match_over and m.winners == [0]


# ----- random play ----------------------------------------------------------------------------


def test_random_match_is_reproducible() -> None:
    rules = Rules.preset("standard")
    assert play_random_match(rules, random.Random(3)) == play_random_match(rules, random.Random(3))
