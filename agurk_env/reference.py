"""A small scalar reference implementation of RULES.md: one match, plain Python.

It favours clarity over speed and is the oracle that the vectorized engine is
differential-tested against. Cards are action indices: card ``i`` is ``CARDS[i]``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agurk_env.rules import CARDS, Rules

TWO, ACE, JOKER = 0, 12, 13


@dataclass
class RoundResult:
    """What one finished round did, in the terms of a game record."""

    round_no: int
    dealer: int
    penalties: list[int]
    scores: list[int]
    lives: list[int]
    out: list[int]
    rebought: list[int]
    trick_winners: list[int]


class ReferenceMatch:
    """One match of Agurk under ``rules``; deal with ``start_round``/``deal_random``, then ``play``."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        n = rules.players
        self.alive: list[bool] = [True] * n
        self.scores: list[int] = [0] * n
        self.lives: list[int] = [rules.lives] * n
        self.rebuys_left: list[int] = [rules.rebuys] * n
        self.dealer: int = 0
        self.round_no: int = 0
        """Rounds started so far (1 during the first round)."""
        self.in_round: bool = False
        self.hands: list[list[int]] = [[] for _ in range(n)]
        self.trick: list[tuple[int, int]] = []
        self.leader: int | None = None
        self.to_move: int | None = None
        self.trick_no: int = 0
        """0-based index of the current trick in the round."""
        self.round_penalties: list[int] = [0] * n
        self.trick_winners: list[int] = []
        self.match_over: bool = False
        self.winners: list[int] = []
        self.last_round: RoundResult | None = None

        # Strength and points per card: in an ordinary trick, and in the last trick.
        ace_strength = 1 if rules.ace == "low" else 14
        face = [*range(2, 15), 15]  # 2..10, J=11, Q=12, K=13, A=14, X=15
        self._strength = [*face[:ACE], ace_strength, 15]
        self._points = [*face[:ACE], rules.ace_points, 15]
        self._last_strength = list(self._strength)
        self._last_points = list(self._points)
        if rules.ace == "low_in_last_trick":
            self._last_strength[ACE] = 1
            self._last_points[ACE] = 1

    # ----- seats -------------------------------------------------------------

    def left_of(self, seat: int) -> int:
        """Return the next seat clockwise from ``seat`` that is still in."""
        n = self.rules.players
        for step in range(1, n + 1):
            s = (seat + step) % n
            if self.alive[s]:
                return s
        raise RuntimeError("no seat is still in")

    # ----- dealing -----------------------------------------------------------

    def start_round(self, hands: list[list[int]]) -> None:
        """Start the next round with the given hands (``[]`` for seats that are out)."""
        if self.match_over:
            raise ValueError("the match is over")
        if self.in_round:
            raise ValueError("a round is already in progress")
        r = self.rules
        if len(hands) != r.players:
            raise ValueError(f"need {r.players} hands, got {len(hands)}")
        for s, hand in enumerate(hands):
            want = r.hand_size if self.alive[s] else 0
            if len(hand) != want:
                raise ValueError(f"seat {s} must get {want} cards, got {len(hand)}")
            if any(not 0 <= c < r.num_actions for c in hand):
                raise ValueError(f"seat {s} got a card outside 0..{r.num_actions - 1}: {hand}")
        dealt = [c for hand in hands for c in hand]
        for c in set(dealt):
            copies = r.jokers if c == JOKER else 4
            if dealt.count(c) > copies:
                raise ValueError(f"{dealt.count(c)} cards {CARDS[c]} dealt, the deck has {copies}")
        self.hands = [list(h) for h in hands]
        self.round_no += 1
        self.in_round = True
        self.trick = []
        self.trick_no = 0
        self.round_penalties = [0] * r.players
        self.trick_winners = []
        self.leader = self.dealer if r.first_leader == "dealer" else self.left_of(self.dealer)
        self.to_move = self.leader

    def deal_random(self, rng: random.Random) -> None:
        """Shuffle the deck, deal ``hand_size`` cards to each seat still in, and start the round."""
        r = self.rules
        deck = [c for c in range(ACE + 1) for _ in range(4)] + [JOKER] * r.jokers
        rng.shuffle(deck)
        hands: list[list[int]] = []
        for s in range(r.players):
            if self.alive[s]:
                hands.append(deck[: r.hand_size])
                del deck[: r.hand_size]
            else:
                hands.append([])
        self.start_round(hands)

    # ----- the current trick -------------------------------------------------

    def is_last_trick(self) -> bool:
        """Whether the current trick is the last of the round."""
        return self.trick_no == self.rules.hand_size - 1

    def strength(self, card: int) -> int:
        """Return the strength of ``card`` in the current trick."""
        return (self._last_strength if self.is_last_trick() else self._strength)[card]

    def points(self, card: int) -> int:
        """Return the penalty points of ``card`` in the current trick."""
        return (self._last_points if self.is_last_trick() else self._points)[card]

    def equal_beats(self) -> bool:
        """Whether an equal card beats in the current trick."""
        eb = self.rules.equal_beats
        return eb == "always" or (eb == "not_last_trick" and not self.is_last_trick())

    def lock_index(self) -> int | None:
        """Position in the trick of the ace that locks it, or None when the trick is not locked."""
        lock = self.rules.ace_lock
        if lock == "none" or self.strength(ACE) != 14:  # the lock needs a high ace
            return None
        if lock == "led":
            return 0 if self.trick and self.trick[0][1] == ACE else None
        for i, (_, card) in enumerate(self.trick):
            if card == ACE:
                return i
        return None

    def legal(self) -> list[int]:
        """Return the sorted cards that ``to_move`` may play now."""
        if not self.in_round or self.to_move is None:
            return []
        held = sorted(set(self.hands[self.to_move]))
        if not self.trick:
            return held
        r = self.rules
        st = self._last_strength if self.is_last_trick() else self._strength
        lowest = [min(held, key=st.__getitem__)]
        if r.twos_rule and self.trick[0][1] == TWO and TWO in held:
            return [TWO]
        if self.lock_index() is not None:
            return lowest
        if r.beat_target == "highest":
            target = max(st[c] for _, c in self.trick)
        else:
            target = st[self.trick[-1][1]]
        equal = self.equal_beats()
        beating = [c for c in held if st[c] > target or (equal and st[c] == target)]
        if not beating:
            return lowest
        if r.beat_choice == "forced":
            return beating
        if r.beat_choice == "nearest":
            return [min(beating, key=st.__getitem__)]
        return sorted(set(beating + lowest))

    def trick_winner(self) -> int:
        """Return the seat that takes the current (complete) trick."""
        lock = self.lock_index()
        cards = self.trick if lock is None else self.trick[: lock + 1]
        best = max(self.strength(c) for _, c in cards)
        tied = [seat for seat, c in cards if self.strength(c) == best]
        return tied[-1] if self.equal_beats() else tied[0]

    # ----- playing -----------------------------------------------------------

    def play(self, card: int) -> None:
        """Play ``card`` for ``to_move``; resolves the trick, and the round, when complete."""
        if not self.in_round or self.to_move is None:
            raise ValueError("no round in progress" if not self.match_over else "the match is over")
        legal = self.legal()
        if card not in legal:
            names = [CARDS[c] for c in legal]
            raise ValueError(f"seat {self.to_move} may not play {CARDS[card]!r}; legal: {names}")
        seat = self.to_move
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        if len(self.trick) < sum(self.alive):
            self.to_move = self.left_of(seat)
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        winner = self.trick_winner()
        self.trick_winners.append(winner)
        last = self.is_last_trick()
        if last or self.rules.scoring == "every_trick":
            if last and self.rules.last_trick_ties == "all":
                best = self.strength(dict(self.trick)[winner])
                for seat, c in self.trick:
                    if self.strength(c) == best:
                        self.round_penalties[seat] += self.points(c)
            else:
                self.round_penalties[winner] += self.points(dict(self.trick)[winner])
        self.trick = []
        self.leader = self.to_move = winner
        if last:
            self._finish_round()
        else:
            self.trick_no += 1

    def _finish_round(self) -> None:
        r = self.rules
        self.in_round = False
        self.leader = self.to_move = None
        still_in = [s for s in range(r.players) if self.alive[s]]
        for s in still_in:
            self.scores[s] += self.round_penalties[s]
        out: list[int] = []
        rebought: list[int] = []
        if r.lives:
            for s in still_in:
                if self.round_penalties[s] > 0:
                    self.lives[s] -= 1
                    if self.lives[s] == 0:
                        out.append(s)
        else:
            reached = [s for s in still_in if self._over_limit(self.scores[s])]
            stay = [s for s in still_in if s not in reached]  # a rebuy does not count for another
            for s in reached:
                if self.rebuys_left[s] > 0 and stay and len(stay) >= r.rebuy_min_others:
                    self.rebuys_left[s] -= 1
                    rebought.append(s)
                else:
                    out.append(s)
            for s in rebought:
                self.scores[s] = max(self.scores[t] for t in stay)
        for s in out:
            self.alive[s] = False
        self.last_round = RoundResult(
            round_no=self.round_no,
            dealer=self.dealer,
            penalties=list(self.round_penalties),
            scores=list(self.scores),
            lives=list(self.lives),
            out=out,
            rebought=rebought,
            trick_winners=list(self.trick_winners),
        )
        remaining = [s for s in range(r.players) if self.alive[s]]
        if r.match_end == "first_out":
            if out:
                self._end_match(remaining)
        elif len(remaining) == 1:
            self._end_match(remaining)
        elif not remaining:
            fewest = min(self.scores[s] for s in out)
            self._end_match([s for s in out if self.scores[s] == fewest])
        if not self.match_over:
            self.dealer = self.left_of(self.dealer)

    def _over_limit(self, score: int) -> bool:
        return score >= self.rules.limit if self.rules.limit_rule == "reach" else score > self.rules.limit

    def _end_match(self, winners: list[int]) -> None:
        self.match_over = True
        self.winners = winners


def play_random_match(rules: Rules, rng: random.Random) -> int:
    """Play one whole match with uniformly random deals and legal cards; return the number of card plays."""
    match = ReferenceMatch(rules)
    plays = 0
    while not match.match_over:
        match.deal_random(rng)
        while match.in_round:
            match.play(rng.choice(match.legal()))
            plays += 1
    return plays
