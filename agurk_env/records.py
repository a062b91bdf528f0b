"""Game records (RULES.md "Game records") built from the batched engine's states.

A :class:`Recorder` watches a batch as it is played: call :meth:`Recorder.before_play`
with each step's legal card sets (only needed for records with ``legal`` lists), and
:meth:`Recorder.after_play` after :func:`~agurk_env.engine.play` and before
:func:`~agurk_env.engine.advance`. Finished rounds and matches are found with one
array test per step; only a finished round is turned into Python dicts.

A record is the RULES.md object plus one key, ``"match"``: the match number of the
seed, so ``(seed, match)`` names the deals of a record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

import numpy as np

from agurk_env import engine
from agurk_env.rules import CARDS, Rules, RuleValue

_NAMES: tuple[str, ...] = (*CARDS, "")  # index -1 ("no card") never reaches a record


class TrickRecord(TypedDict):
    """One trick of a record: its leader, the plays ``[seat, card name]`` in playing order, its winner once taken."""

    leader: int
    plays: list[list[int | str]]
    winner: NotRequired[int]
    legal: NotRequired[list[list[str]]]
    """Only in records made ``with_legal``: the legal card names of each play."""


class RoundRecord(TypedDict):
    """One round of a record; a round in progress has ``dealer``, ``hands`` (as dealt) and ``tricks`` only."""

    dealer: int
    hands: list[list[str]]
    tricks: list[TrickRecord]
    penalties: NotRequired[list[int]]
    scores: NotRequired[list[int]]
    lives: NotRequired[list[int]]
    """Only in lives mode."""
    out: NotRequired[list[int]]
    rebought: NotRequired[list[int]]


class MatchRecord(TypedDict):
    """A match record (RULES.md "Game records"); ``winners`` is present once the match is over."""

    rules: dict[str, RuleValue]
    seed: int
    match: int
    agents: list[str]
    rounds: list[RoundRecord]
    winners: NotRequired[list[int]]


def card_names(bits: int) -> list[str]:
    """The card names of a card-set bitmask, in action order (a fresh list)."""
    return [CARDS[c] for c in engine.KTH_MEMBER[bits, : engine.SET_SIZE[bits]].tolist()]


class Recorder:
    """Turns the states of a batch of ``batch`` games into match records, one per finished match.

    ``agents`` holds one spec string per seat; ``with_legal`` adds to every trick a
    ``legal`` list: the legal card names of each play, in playing order.
    """

    def __init__(self, rules: Rules, batch: int, agents: list[str], with_legal: bool = False) -> None:
        if len(agents) != rules.players:
            raise ValueError(f"need one agent spec per seat ({rules.players}), got {len(agents)}")
        self.rules = rules
        self.batch = batch
        self.agents = [str(a) for a in agents]
        self.with_legal = with_legal
        self._rules_dict = rules.to_dict()
        self._rounds: list[list[RoundRecord]] = [[] for _ in range(batch)]
        h, p = rules.hand_size, rules.players
        self._legal = np.zeros((batch, h, p), np.int64) if with_legal else None
        self._legal_names: dict[int, list[str]] = {}

    def keep(self, slots: np.ndarray) -> None:
        """Follow a batch cut down to ``slots`` (old indices, in their new order)."""
        self._rounds = [self._rounds[i] for i in slots.tolist()]
        if self._legal is not None:
            self._legal = self._legal[slots]

    def before_play(self, state: engine.State, legal_bits: np.ndarray) -> None:
        """Remember the legal card set ``(B,)`` of every player to move (only when ``with_legal``)."""
        if self._legal is None:
            return
        _, h, p = self._legal.shape
        slot = (np.arange(state.batch) * h + state.trick_no) * p + state.cur
        self._legal.reshape(-1)[slot] = legal_bits

    def after_play(self, state: engine.State) -> list[MatchRecord]:
        """Record the rounds that just ended; return the records of the matches that just ended.

        Call after :func:`engine.play` and before :func:`engine.advance`; a finished
        match's slot starts afresh for the match that ``advance`` deals into it.
        """
        ended = np.flatnonzero(state.round_over)
        if not ended.size:
            return []
        for g, rnd in zip(ended.tolist(), self._rounds_of(state, ended), strict=True):
            self._rounds[g].append(rnd)
        over = np.flatnonzero(state.match_over)
        records: list[MatchRecord] = []
        for g in over.tolist():
            records.append(
                {
                    "rules": dict(self._rules_dict),
                    "seed": int(state.seed),
                    "match": int(state.match_id[g]),
                    "agents": list(self.agents),
                    "rounds": self._rounds[g],
                    "winners": np.flatnonzero(state.winners[g]).tolist(),
                }
            )
            self._rounds[g] = []
        return records

    def _rounds_of(self, state: engine.State, idx: np.ndarray) -> list[RoundRecord]:
        """The round dicts of games ``idx``, whose rounds just ended."""
        p = self.rules.players
        tricks = state.tricks[idx]  # (k, H, P) card of each seat; -1 for seats out
        leader = state.trick_leader[idx].astype(np.int64)  # (k, H)
        order = (leader[:, :, None] + np.arange(p)) % p  # seats clockwise from the leader
        cards = np.take_along_axis(tricks, order, axis=2)
        hands = np.sort(tricks, axis=1).transpose(0, 2, 1)  # (k, P, H) every card each seat played
        legal = np.take_along_axis(self._legal[idx], order, axis=2).tolist() if self._legal is not None else None
        winners = state.trick_winner[idx].tolist()
        penalties = state.round_penalty[idx].tolist()
        scores = state.scores[idx].tolist()
        lives = state.lives[idx].tolist() if self.rules.lives else None
        out = state.out_now[idx]
        rebought = state.rebought_now[idx]
        dealer = state.dealer[idx].tolist()
        order_l, cards_l, hands_l, leader_l = order.tolist(), cards.tolist(), hands.tolist(), leader.tolist()
        rounds: list[RoundRecord] = []
        for i in range(idx.size):
            trick_dicts = []
            for t, (seats, played) in enumerate(zip(order_l[i], cards_l[i], strict=True)):
                trick: TrickRecord = {
                    "leader": leader_l[i][t],
                    "plays": [[s, _NAMES[c]] for s, c in zip(seats, played, strict=True) if c >= 0],
                    "winner": winners[i][t],
                }
                if legal is not None:
                    trick["legal"] = [self._names(b) for b, c in zip(legal[i][t], played, strict=True) if c >= 0]
                trick_dicts.append(trick)
            rnd: RoundRecord = {
                "dealer": dealer[i],
                "hands": [[_NAMES[c] for c in hand if c >= 0] for hand in hands_l[i]],
                "tricks": trick_dicts,
                "penalties": penalties[i],
                "scores": scores[i],
            }
            if lives is not None:
                rnd["lives"] = lives[i]
            rnd["out"] = np.flatnonzero(out[i]).tolist()
            rnd["rebought"] = np.flatnonzero(rebought[i]).tolist()
            rounds.append(rnd)
        return rounds

    def _names(self, bits: int) -> list[str]:
        """Card names of a legal set, cached per bitmask (a fresh list each time)."""
        names = self._legal_names.get(bits)
        if names is None:
            names = self._legal_names[bits] = card_names(bits)
        return list(names)


def round_record(rules: Rules, state: engine.State) -> RoundRecord:
    """The RULES.md round dict of the round that just ended in game 0 (via :class:`Recorder`)."""
    one = state.take(slice(0, 1))
    one = one._replace(match_over=np.ones(1, bool))  # a one-round "match": the recorder hands it back now
    return Recorder(rules, 1, [""] * rules.players).after_play(one)[0]["rounds"][0]


def partial_round_record(rules: Rules, state: engine.State) -> RoundRecord:
    """A round in progress in game 0: ``dealer``, the dealt ``hands`` and the ``tricks`` so far.

    A trick in progress has ``leader`` and ``plays`` only (no ``winner`` yet).
    """
    p, h = rules.players, rules.hand_size
    tricks = state.tricks[0]
    dealt = state.hands[0] + engine.cards_played(rules, state.take(slice(0, 1)), by_seat=True)[0]
    hands = [[CARDS[c] for c, n in enumerate(row) for _ in range(n)] for row in dealt.tolist()]
    done, npos = int(state.trick_no[0]), int(state.npos[0])
    trick_dicts = []
    for t in range(min(done + (npos > 0), h)):
        leader = int(state.trick_leader[0, t])
        seats = [(leader + k) % p for k in range(p)]
        plays: list[list[int | str]] = [[s, CARDS[int(tricks[t, s])]] for s in seats if tricks[t, s] >= 0]
        trick: TrickRecord = {"leader": leader, "plays": plays}
        if t < done:
            trick["winner"] = int(state.trick_winner[0, t])
        trick_dicts.append(trick)
    return {"dealer": int(state.dealer[0]), "hands": hands, "tricks": trick_dicts}


def hand_counts(rules: Rules, state: engine.State, hands: np.ndarray | Sequence[Sequence[str]]) -> np.ndarray:
    """``(P, A)`` card counts from card-name lists or counts, checked against the deck and game 0's seats."""
    p, a = rules.players, rules.num_actions
    if isinstance(hands, np.ndarray) and hands.dtype != object:
        counts = np.asarray(hands, dtype=np.int64)
    else:
        if len(hands) != p:
            raise ValueError(f"hands needs one list of cards per seat ({p}), got {len(hands)}")
        counts = np.zeros((p, a), np.int64)
        for s, cards in enumerate(hands):
            for card in cards:
                if str(card) not in CARDS[:a]:
                    raise ValueError(f"unknown card {card!r} in the hand of seat {s}; cards are {' '.join(CARDS[:a])}")
                counts[s, CARDS.index(str(card))] += 1
    if counts.shape != (p, a) or (counts < 0).any():
        raise ValueError(f"hands must be {p} lists of card names or ({p}, {a}) counts >= 0")
    copies = np.append(np.full(13, 4), rules.jokers)[:a]
    if (counts.sum(0) > copies).any():
        extra = [CARDS[c] for c in np.flatnonzero(counts.sum(0) > copies).tolist()]
        raise ValueError(f"hands hold more copies than the deck of: {' '.join(extra)}")
    want = np.where(state.alive[0], rules.hand_size, 0)
    if (counts.sum(1) != want).any():
        raise ValueError(
            f"each seat in the match needs {rules.hand_size} cards and each seat out none; got {counts.sum(1).tolist()}"
        )
    return counts
