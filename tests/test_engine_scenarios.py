"""The worked examples of RULES.md, and some rule edges, played on the vectorized engine.

Positions are put in with ``engine.set_hands`` and drawn as ASCII in the comments. Seats are named
as in RULES.md: A leads trick 1, then B, C, ... clockwise. In round 1 seat 0 deals, so with
``first_leader=left_of_dealer`` A is seat 1 and the dealer (seat 0) is the last letter. A worked
example "trick 5 of 7" has three cards left in hand, so it is trick 1 of a ``hand_size=3`` round
(any trick but the last plays alike); a "last trick" example is a ``hand_size=1`` round.
"""

from __future__ import annotations

import numpy as np

from agurk_env import engine
from agurk_env.rules import CARDS, Rules

IDX = {name: i for i, name in enumerate(CARDS)}


def counts(rules: Rules, by_seat: dict[int, str]) -> np.ndarray:
    """``(1, P, A)`` card counts from ``{seat: "K 8 3"}`` (seats left out get no cards)."""
    hands = np.zeros((1, rules.players, rules.num_actions), np.int8)
    for seat, text in by_seat.items():
        for name in text.split():
            hands[0, seat, IDX[name]] += 1
    return hands


class Table:
    """One game on the engine (batch of 1), with seats named by letter from the leader of trick 1."""

    def __init__(self, rules: Rules, **hands: str) -> None:
        self.rules = rules
        self.st = engine.init(rules, 1, seed=0)
        lead = int(self.st.cur[0])
        self.seat = {"ABCDEFGH"[i]: (lead + i) % rules.players for i in range(rules.players)}
        self.letter = {s: letter for letter, s in self.seat.items()}
        assert set(hands) == set(self.seat)
        self.st = engine.set_hands(rules, self.st, counts(rules, {self.seat[k]: v for k, v in hands.items()}))

    def legal(self) -> list[str]:
        return [CARDS[i] for i in np.flatnonzero(engine.legal_mask(self.rules, self.st)[0])]

    def play(self, letter: str, card: str, legal: str | None = None) -> None:
        """Play ``card`` for ``letter``: it must be its turn and, if given, ``legal`` the exact legal set."""
        assert self.letter[int(self.st.cur[0])] == letter, f"{self.letter[int(self.st.cur[0])]} is to move"
        if legal is not None:
            assert self.legal() == sorted(legal.split(), key=IDX.__getitem__)
        before = self.st
        self.st = engine.play(self.rules, self.st, np.array([IDX[card]]))
        assert before.hands[0, self.seat[letter], IDX[card]] == self.st.hands[0, self.seat[letter], IDX[card]] + 1

    def winner(self, trick: int) -> str:
        """Letter of the winner of trick ``trick`` (1-based) of this round."""
        return self.letter[int(self.st.trick_winner[0, trick - 1])]

    def to_move(self) -> str:
        return self.letter[int(self.st.cur[0])]

    def penalties(self) -> dict[str, int]:
        return {self.letter[s]: int(v) for s, v in enumerate(self.st.round_penalty[0]) if v}


# ----- the worked examples of RULES.md ---------------------------------------------------------


def test_example1_standard_must_beat_and_later_equal_takes() -> None:
    #               C: 9 7 5
    #   B: K 8 3                D: K 4 2  (dealer)
    #               A: 10 6 2  (leads)
    # standard, "trick 5 of 7": A leads 10.
    t = Table(Rules.preset("standard", hand_size=3), A="10 6 2", B="K 8 3", C="9 7 5", D="K 4 2")
    assert t.legal() == ["2", "6", "10"]  # the leader may play anything
    t.play("A", "10")
    t.play("B", "K", legal="K")
    t.play("C", "5", legal="5")  # nothing reaches K: lowest card
    t.play("D", "K", legal="K")  # an equal K beats too
    assert t.winner(1) == "D"  # the later king takes it
    assert t.to_move() == "D" and t.st.trick_no[0] == 1  # D leads trick 6
    assert not t.st.round_over[0] and not t.st.round_penalty[0].any()  # only the last trick scores
    t.play("D", "2", legal="2 4")
    assert t.st.trick_leader[0, :2].tolist() == [t.seat["A"], t.seat["D"]]


def test_example2_standard_last_trick_ties_score() -> None:
    #               C: 4
    #   B: 9                    D: 9  (dealer)
    #               A: 6  (leads)
    # standard, last trick: A 6, B 9, C 4, D 9.
    t = Table(Rules.preset("standard", hand_size=1), A="6", B="9", C="4", D="9")
    for letter, card in zip("ABCD", ("6", "9", "4", "9"), strict=True):
        t.play(letter, card, legal=card)
    assert t.winner(1) == "D"
    assert t.penalties() == {"B": 9, "D": 9}
    assert t.st.scores[0].tolist() == t.st.round_penalty[0].tolist()
    assert t.st.round_over[0] and not t.st.match_over[0] and not t.st.out_now[0].any()


def test_example3_danish21_both_queens_score() -> None:
    #   B: Q          C: 7  (dealer)
    #         A: Q  (leads)
    # danish21, last trick: Q, Q, 7.
    t = Table(Rules.preset("danish21", players=3, hand_size=1), A="Q", B="Q", C="7")
    t.play("A", "Q")
    t.play("B", "Q", legal="Q")
    t.play("C", "7", legal="7")
    assert t.winner(1) == "B"
    assert t.penalties() == {"A": 12, "B": 12}


def test_example4_danish21_equal_is_enough() -> None:
    #   B: Q 5 2          C: J 9 6  (dealer)
    #          A: Q 8 4  (leads)
    # danish21: A leads Q.
    t = Table(Rules.preset("danish21", players=3, hand_size=3), A="Q 8 4", B="Q 5 2", C="J 9 6")
    t.play("A", "Q")
    t.play("B", "Q", legal="Q")
    t.play("C", "6", legal="6")  # nothing reaches Q: lowest card
    assert t.winner(1) == "B"  # equal is enough, the later queen wins


def test_example5_danish21_led_ace_locks() -> None:
    #   B: A K 4          C: K 9 3  (dealer)
    #          A: A 8 4  (leads)
    # danish21 (ace_lock=any): A leads the ace.
    t = Table(Rules.preset("danish21", players=3, hand_size=3), A="A 8 4", B="A K 4", C="K 9 3")
    t.play("A", "A")
    assert t.st.locked[0]
    t.play("B", "4", legal="4")  # locked: lowest card, though B holds an ace
    t.play("C", "3", legal="3")
    assert t.winner(1) == "A"


def test_example5_standard_ace_must_be_matched() -> None:
    #   B: A K 4          C: K 9 3  (dealer)
    #          A: A 8 4  (leads)
    # standard (no lock): B must match the ace, and the later ace takes the trick.
    t = Table(Rules.preset("standard", players=3, hand_size=3), A="A 8 4", B="A K 4", C="K 9 3")
    t.play("A", "A")
    t.play("B", "A", legal="A")
    t.play("C", "3", legal="3")
    assert t.winner(1) == "B"


def test_example5_danish21_played_ace_locks() -> None:
    #   B: A 7 2          C: A 9 2  (dealer)
    #          A: 5 8 4  (leads)
    # danish21: A leads 5, B plays the ace, C must play its lowest.
    t = Table(Rules.preset("danish21", players=3, hand_size=3), A="5 8 4", B="A 7 2", C="A 9 2")
    t.play("A", "5")
    t.play("B", "A", legal="7 A")
    t.play("C", "2", legal="2")
    assert t.winner(1) == "B"


def test_example6_every_trick_optional_beat_and_trick_scores() -> None:
    #   B: 9 4 2          C: 4 3 2  (dealer)
    #          A: 5 K 3  (leads)
    # every_trick, three players: A leads 5.
    t = Table(Rules.preset("every_trick", players=3, hand_size=3), A="5 K 3", B="9 4 2", C="4 3 2")
    t.play("A", "5")
    t.play("B", "2", legal="9 2")  # optional: beat with the 9, or play the lowest
    t.play("C", "2", legal="2")
    assert t.winner(1) == "A"
    assert t.penalties() == {"A": 5}  # every trick scores the winning card


def test_example7_swedish_beat_the_previous_card() -> None:
    #                  D: K 7
    #      C: K 6              E: Q 3
    #      B: J 5              F: 9 2  (dealer)
    #                  A: 8 4  (leads)
    # swedish (beat_target=previous), six players: A 8, B J, C K, D K, E 3, F 9.
    rules = Rules.preset("swedish", players=6, hand_size=2)
    t = Table(rules, A="8 4", B="J 5", C="K 6", D="K 7", E="Q 3", F="9 2")
    t.play("A", "8")
    t.play("B", "J", legal="J")
    t.play("C", "K", legal="K")
    t.play("D", "K", legal="K")
    t.play("E", "3", legal="3")  # nothing reaches K: lowest card
    t.play("F", "9", legal="9")  # F only has to reach E's 3
    assert t.winner(1) == "D"


# ----- ace lock --------------------------------------------------------------------------------


def test_ace_lock_with_joker_before_the_ace() -> None:
    #   B: A A          C: X 3  (dealer)
    #         A: X 5  (leads)
    rules = Rules(players=3, hand_size=2, jokers=2, ace_lock="any")
    t = Table(rules, A="X 5", B="A A", C="X 3")
    t.play("A", "X")
    t.play("B", "A", legal="A")  # nothing reaches the joker: lowest card
    t.play("C", "3", legal="3")  # the ace locks: lowest card, not the equal joker
    assert t.winner(1) == "A"  # decided among X, A: the joker

    t = Table(rules.replace(ace_lock="none"), A="X 5", B="A A", C="X 3")
    t.play("A", "X")
    t.play("B", "A", legal="A")
    t.play("C", "X", legal="X")
    assert t.winner(1) == "C"


def test_ace_lock_later_ace_does_not_take() -> None:
    #   B: A 2          C: A A  (dealer)
    #         A: K 5  (leads)
    t = Table(Rules.preset("danish21", players=3, hand_size=2), A="K 5", B="A 2", C="A A")
    t.play("A", "K")
    t.play("B", "A", legal="A")
    t.play("C", "A", legal="A")
    assert t.winner(1) == "B"

    t = Table(Rules.preset("standard", players=3, hand_size=2), A="K 5", B="A 2", C="A A")
    t.play("A", "K")
    t.play("B", "A", legal="A")
    t.play("C", "A", legal="A")
    assert t.winner(1) == "C"


def test_ace_lock_led_only_when_led() -> None:
    #   B: A 7 2          C: A 9 2  (dealer)
    #          A: 5 8 4  (leads)
    t = Table(Rules.preset("unbeatable_aces", players=3, hand_size=3), A="5 8 4", B="A 7 2", C="A 9 2")
    t.play("A", "5")
    t.play("B", "A", legal="7 A")
    t.play("C", "A", legal="A")  # no lock: the ace must be matched, and the later one wins
    assert t.winner(1) == "C"


def test_locked_last_trick_ties_all_still_score() -> None:
    #   B: A          C: A  (dealer)
    #        A: K  (leads)
    # An ace played after the lock does not take the trick but still scores under ties=all.
    t = Table(Rules.preset("danish21", players=3, hand_size=1), A="K", B="A", C="A")
    for letter, card in zip("ABC", "KAA", strict=True):
        t.play(letter, card)
    assert t.winner(1) == "B"
    assert t.penalties() == {"B": 14, "C": 14}


# ----- small ace (low_in_last_trick) -----------------------------------------------------------


def test_small_ace_high_then_low_in_last_trick() -> None:
    #   B: A 5          C: 4 3  (dealer)
    #         A: K A  (leads)
    t = Table(Rules.preset("small_ace", players=3, hand_size=2), A="K A", B="A 5", C="4 3")
    t.play("A", "K")
    t.play("B", "A", legal="A")  # the ace is 14 before the last trick
    t.play("C", "3", legal="3")
    assert t.winner(1) == "B"
    t.play("B", "5")
    t.play("C", "4", legal="4")
    t.play("A", "A", legal="A")  # 1 in the last trick: the 5 takes it
    assert t.winner(2) == "B"
    assert t.penalties() == {"B": 5}


def test_small_ace_in_last_trick_scores_one_and_does_not_lock() -> None:
    rules = Rules(players=3, hand_size=1, ace="low_in_last_trick", ace_lock="any")
    t = Table(rules, A="A", B="2", C="A")
    t.play("A", "A")
    assert not t.st.locked[0]
    t.play("B", "2", legal="2")
    t.play("C", "A", legal="A")
    assert t.winner(1) == "B"  # no lock: the 2 beats two aces of strength 1
    assert t.penalties() == {"B": 2}

    t = Table(rules, A="A", B="A", C="A")
    for letter in "ABC":
        t.play(letter, "A")
    assert t.winner(1) == "C"
    assert t.penalties() == {"A": 1, "B": 1, "C": 1}


def test_small_ace_is_the_lowest_card_in_the_last_trick() -> None:
    #   B: A 9          C: 3 2  (dealer)
    #         A: K 4  (leads)
    t = Table(Rules.preset("small_ace", players=3, hand_size=2), A="K 4", B="A 9", C="3 2")
    t.play("A", "K")
    t.play("B", "A", legal="A")  # before the last trick the ace beats the king
    t.play("C", "2", legal="2")
    t.play("B", "9")
    t.play("C", "3", legal="3")
    t.play("A", "4", legal="4")
    assert t.winner(2) == "B"

    t = Table(Rules.preset("small_ace", players=3, hand_size=1), A="K", B="A", C="2")
    t.play("A", "K")
    t.play("B", "A", legal="A")
    t.play("C", "2", legal="2")
    assert t.winner(1) == "A" and t.penalties() == {"A": 13}


# ----- other legal-play options ------------------------------------------------------------------


def test_twos_rule() -> None:
    #   B: 2 K 5          C: J 9 6  (dealer)
    #          A: 2 8 4  (leads)
    t = Table(Rules.preset("twos", players=3, hand_size=3), A="2 8 4", B="2 K 5", C="J 9 6")
    t.play("A", "2")
    t.play("B", "2", legal="2")  # a 2 was led and B holds one
    t.play("C", "6", legal="6 9 J")  # no 2: beat the 2 with any card
    assert t.winner(1) == "C"


def test_nearest_must_beat_with_the_least_card() -> None:
    #   B: 9 7 2          C: 3 3 2  (dealer)
    #          A: 5 8 4  (leads)
    t = Table(Rules.preset("nearest", players=3, hand_size=3), A="5 8 4", B="9 7 2", C="3 3 2")
    t.play("A", "5")
    t.play("B", "7", legal="7")
    t.play("C", "2", legal="2")
    assert t.winner(1) == "B"


def test_free_choice_may_beat_or_play_lowest() -> None:
    #   B: K 9 3          C: 4 3 2  (dealer)
    #          A: 8 6 5  (leads)
    t = Table(Rules.preset("free_choice", players=3, hand_size=3), A="8 6 5", B="K 9 3", C="4 3 2")
    t.play("A", "8")
    t.play("B", "3", legal="3 9 K")
    t.play("C", "2", legal="2")
    assert t.winner(1) == "A"


def test_dealer_leads_equal_does_not_beat_in_last_trick() -> None:
    #   B: 9 9
    #   A: 9 9  (dealer, leads)
    t = Table(Rules.preset("dealer_leads", players=2, hand_size=2), A="9 9", B="9 9")
    assert t.seat["A"] == 0 == int(t.st.dealer[0])  # the dealer leads
    t.play("A", "9")
    t.play("B", "9", legal="9")
    assert t.winner(1) == "B"  # equal beats before the last trick
    t.play("B", "9")
    t.play("A", "9", legal="9")
    assert t.winner(2) == "B"  # in the last trick the first played wins
    assert t.penalties() == {"A": 9, "B": 9}  # both nines score (ties=all)


def test_every_trick_ace_is_low_and_worth_one() -> None:
    #   B: A 2          C: 3 2  (dealer)
    #         A: 4 K  (leads)
    t = Table(Rules.preset("every_trick", players=3, hand_size=2), A="4 K", B="A 2", C="3 2")
    t.play("A", "4")
    t.play("B", "A", legal="A")  # nothing beats the 4: the lowest card is the ace (strength 1)
    t.play("C", "2", legal="2")
    assert t.winner(1) == "A" and t.penalties() == {"A": 4}
    t.play("A", "K")
    t.play("B", "2", legal="2")
    t.play("C", "3", legal="3")
    assert t.winner(2) == "A" and t.penalties() == {"A": 17}


# ----- rounds, rebuys, lives and the end of the match ----------------------------------------------


def one_card_round(rules: Rules, st: engine.State, dealt: dict[int, str]) -> engine.State:
    """Deal (if the previous round ended) and play a whole ``hand_size=1`` round: ``{seat: card}``."""
    if st.round_over[0]:
        assert not st.match_over[0]
        st = engine.advance(rules, st, reset=False)
    assert set(np.flatnonzero(st.alive[0]).tolist()) == set(dealt)
    st = engine.set_hands(rules, st, counts(rules, dealt))
    while not st.round_over[0]:
        st = engine.play(rules, st, np.array([IDX[dealt[int(st.cur[0])]]]))
    return st


def seats(row: np.ndarray) -> list[int]:
    return np.flatnonzero(row).tolist()


def test_dealer_rotates_and_skips_seats_out() -> None:
    rules = Rules.preset("second_chance", players=3, hand_size=1)
    st = engine.init(rules, 1, seed=0)
    assert (st.dealer[0], st.cur[0]) == (0, 1)
    st = one_card_round(rules, st, {1: "9", 2: "3", 0: "4"})
    assert st.scores[0].tolist() == [0, 9, 0]
    st = one_card_round(rules, st, {2: "5", 0: "8", 1: "2"})
    assert st.dealer[0] == 1 and st.scores[0].tolist() == [8, 9, 0]
    # seat 1 reaches 22 >= 21 and rebuys at the highest score that stays in (8)
    st = one_card_round(rules, st, {0: "4", 1: "K", 2: "Q"})
    assert st.dealer[0] == 2
    assert (seats(st.rebought_now[0]), seats(st.out_now[0])) == ([1], [])
    assert st.scores[0].tolist() == [8, 8, 0] and st.rebuys[0].tolist() == [1, 0, 1]
    st = one_card_round(rules, st, {1: "K", 2: "2", 0: "3"})  # again 21, no rebuy left
    assert st.dealer[0] == 0
    assert (seats(st.rebought_now[0]), seats(st.out_now[0])) == ([], [1])
    assert st.alive[0].tolist() == [True, False, True] and not st.match_over[0]
    st = engine.advance(rules, st, reset=False)
    assert st.dealer[0] == 2 and st.cur[0] == 0  # left of seat 0 is 2; the dealer's left (0) leads
    st = one_card_round(rules, st, {0: "K", 2: "Q"})
    assert st.trick_winner[0, 0] == 0
    st = engine.advance(rules, st, reset=False)
    assert st.dealer[0] == 0 and st.cur[0] == 2  # seat 1 is skipped


def test_rebuy_stay_in_counts_only_seats_below_the_limit() -> None:
    rules = Rules.preset("buy_in", players=4, hand_size=1, limit=10)  # rebuy_min_others=3
    st = one_card_round(rules, engine.init(rules, 1, seed=0), {1: "K", 2: "K", 3: "2", 0: "3"})
    assert (seats(st.out_now[0]), seats(st.rebought_now[0])) == ([1, 2], [])  # only 2 others stay in
    assert st.alive[0].tolist() == [True, False, False, True]

    rules = rules.replace(players=5)
    st = one_card_round(rules, engine.init(rules, 1, seed=0), {1: "5", 2: "3", 3: "4", 4: "9", 0: "2"})
    assert st.scores[0].tolist() == [0, 0, 0, 0, 9]
    st = one_card_round(rules, st, {2: "K", 3: "2", 4: "3", 0: "4", 1: "K"})  # 3 stay in: both rebuy
    assert (seats(st.out_now[0]), seats(st.rebought_now[0])) == ([], [1, 2])
    assert st.scores[0].tolist() == [0, 9, 9, 0, 9]


def test_rebuy_needs_someone_to_stay_in_and_fewest_points_win() -> None:
    rules = Rules.preset("second_chance", players=2, hand_size=1, limit=5)
    st = one_card_round(rules, engine.init(rules, 1, seed=0), {1: "9", 0: "9"})
    assert (seats(st.out_now[0]), seats(st.rebought_now[0])) == ([0, 1], [])
    assert st.match_over[0] and seats(st.winners[0]) == [0, 1]  # equal fewest points win together


def test_lives_ties_lose_lives_and_scores_add_up() -> None:
    rules = Rules.preset("lives", players=3, hand_size=1)
    st = one_card_round(rules, engine.init(rules, 1, seed=0), {1: "Q", 2: "Q", 0: "5"})
    assert (st.lives[0].tolist(), st.scores[0].tolist()) == ([3, 2, 2], [0, 12, 12])
    st = one_card_round(rules, st, {2: "K", 0: "2", 1: "3"})
    assert st.lives[0].tolist() == [3, 2, 1]
    st = one_card_round(rules, st, {0: "4", 1: "J", 2: "J"})
    assert st.lives[0].tolist() == [3, 1, 0] and seats(st.out_now[0]) == [2] and not st.match_over[0]
    st = one_card_round(rules, st, {1: "9", 0: "10"})
    assert st.lives[0].tolist() == [2, 1, 0] and st.dealer[0] == 0
    st = one_card_round(rules, st, {0: "3", 1: "8"})
    assert st.lives[0].tolist() == [2, 0, 0] and st.scores[0].tolist() == [10, 31, 36]
    assert st.match_over[0] and seats(st.winners[0]) == [0]


def test_first_out_everyone_out_nobody_wins() -> None:
    #   B (seat 1): 9 3
    #   A (seat 0, dealer): 2 8      quick, limit 5; the dealer's left (seat 1) leads
    rules = Rules.preset("quick", players=2, hand_size=2, limit=5)
    st = engine.set_hands(rules, engine.init(rules, 1, seed=0), counts(rules, {0: "2 8", 1: "9 3"}))
    for card in ("9", "2", "3", "8"):
        st = engine.play(rules, st, np.array([IDX[card]]))
    assert st.round_penalty[0].tolist() == [8, 9]
    assert seats(st.out_now[0]) == [0, 1]
    assert st.match_over[0] and seats(st.winners[0]) == []


def test_first_out_others_win() -> None:
    rules = Rules.preset("quick", players=3, hand_size=1)
    st = one_card_round(rules, engine.init(rules, 1, seed=0), {1: "9", 2: "3", 0: "4"})
    st = one_card_round(rules, st, {2: "K", 0: "Q", 1: "3"})
    st = one_card_round(rules, st, {0: "10", 1: "2", 2: "3"})
    assert st.scores[0].tolist() == [10, 9, 13] and not st.match_over[0]
    st = one_card_round(rules, st, {1: "K", 2: "2", 0: "3"})  # seat 1 reaches 22 >= 21
    assert st.match_over[0] and seats(st.winners[0]) == [0, 2]


def test_last_standing_everyone_out_fewest_points_win() -> None:
    rules = Rules.preset("every_trick", players=2, hand_size=2, limit=5)
    st = engine.set_hands(rules, engine.init(rules, 1, seed=0), counts(rules, {0: "2 8", 1: "9 3"}))
    for card in ("9", "2", "3", "8"):
        st = engine.play(rules, st, np.array([IDX[card]]))
    assert st.scores[0].tolist() == [8, 9]
    assert st.match_over[0] and seats(st.winners[0]) == [0]


def test_limit_exceed_needs_more_than_the_limit() -> None:
    rules = Rules.preset("dealer_leads", players=2, hand_size=1, limit=9)  # limit_rule=exceed
    st = one_card_round(rules, engine.init(rules, 1, seed=0), {0: "9", 1: "2"})
    assert st.scores[0].tolist() == [9, 0] and not st.out_now[0].any()  # 9 does not exceed 9
    st = one_card_round(rules, st, {1: "2", 0: "3"})  # dealer 1 leads the 2, seat 0's 3 takes it
    assert st.scores[0].tolist() == [12, 0] and seats(st.out_now[0]) == [0]
    assert st.match_over[0] and seats(st.winners[0]) == [1]
    st = one_card_round(rules.replace(limit_rule="reach"), engine.init(rules, 1, seed=0), {0: "9", 1: "2"})
    assert seats(st.out_now[0]) == [0] and st.match_over[0] and seats(st.winners[0]) == [1]


def test_scenarios_in_one_batch() -> None:
    # The same position in three slots of a batch, with different plays, stays independent.
    rules = Rules.preset("free_choice", players=3, hand_size=3)
    st = engine.init(rules, 3, seed=0)
    one = counts(rules, {1: "8 6 5", 2: "K 9 3", 0: "4 3 2"})[0]
    st = engine.set_hands(rules, st, np.stack([one] * 3))
    #   B (seat 2): K 9 3        C (seat 0, dealer): 4 3 2
    #            A (seat 1, leads): 8 6 5
    st = engine.play(rules, st, np.array([IDX["8"], IDX["5"], IDX["6"]]))
    assert [[CARDS[i] for i in np.flatnonzero(row)] for row in engine.legal_mask(rules, st)] == [
        ["3", "9", "K"],
        ["3", "9", "K"],
        ["3", "9", "K"],
    ]
    st = engine.play(rules, st, np.array([IDX["K"], IDX["3"], IDX["9"]]))
    assert engine.legal_mask(rules, st)[:, IDX["2"]].all() and engine.legal_mask(rules, st).sum(1).tolist() == [1] * 3
    st = engine.play(rules, st, np.array([IDX["2"]] * 3))
    assert st.trick_winner[:, 0].tolist() == [2, 1, 2]
    assert st.cur.tolist() == [2, 1, 2] and st.trick_no.tolist() == [1, 1, 1]
