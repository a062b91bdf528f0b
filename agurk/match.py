"""One match of a person against agents, or of agents alone: the core of ``agurk play`` and ``agurk serve``.

:class:`Match` deals the match (the AEC env, ``episode="match"``), builds the agents, asks the agent
to move for its card, takes the person's card, plays it (the env ends tricks and rounds and deals
the next), keeps the record, and reports every card played as a :class:`Move`. The terminal
(:mod:`agurk.play`) and the browser (:mod:`agurk.web.session`) are front ends over it: they decide
when the person and the agents move, and how a move reads. Every rule comes from the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypedDict

import numpy as np

from agents.fit import check_fit
from agents.registry import make_agent, make_agents
from agurk_env import engine
from agurk_env.aec_env import raw_env
from agurk_env.agent import Agent, decide
from agurk_env.options import split_list
from agurk_env.records import MatchRecord
from agurk_env.rules import CARDS, Rules


class MatchError(ValueError):
    """A bad seat or opponents for a match (one-line message)."""


def seat_specs(opponents: str, players: int, seat: int) -> list[str]:
    """One agent spec per seat, ``"human"`` at ``seat``: one spec for all, or one per other seat."""
    if not 0 <= seat < players:
        raise MatchError(f"--seat must be 0..{players - 1}, not {seat}")
    specs = split_list(opponents)
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise MatchError(f"{len(specs)} opponent specs given for {players - 1} opponents; give one or {players - 1}")
    return [*specs[:seat], "human", *specs[seat:]]


def strengths(rules: Rules, state: engine.State) -> list[int]:
    """Per-card strength in game 0's current trick (the last trick may rank the ace low)."""
    return engine.card_values(rules, state.take(slice(0, 1)))[0][0].tolist()


def sorted_hand(rules: Rules, state: engine.State, seat: int) -> list[tuple[int, int]]:
    """``(card, count)`` of ``seat``'s hand in game 0, weakest first under the current rules."""
    strength = strengths(rules, state)
    counts = state.hands[0, seat].tolist()
    return sorted(((c, n) for c, n in enumerate(counts) if n), key=lambda cn: strength[cn[0]])


def legal_reason(rules: Rules, state: engine.State) -> str:
    """One line: why the player to move in game 0 may play exactly its legal cards (the engine's reason)."""
    game = state.take(slice(0, 1))
    reason = engine.REASONS[int(engine.legal_reason(rules, game)[0])]
    if reason == "lead":
        return "you lead: any card"
    if reason == "twos":
        return "a 2 was led and you hold a 2: the twos rule forces it"
    if reason == "locked":
        how = "led" if rules.ace_lock == "led" else "played"
        return f"an ace was {how}: it locks the trick, so you must play your lowest card"
    card, equal_beats = engine.trick_target(rules, game)
    name = CARDS[int(card[0])] if card[0] >= 0 else "?"
    what = f"the previous card ({name})" if rules.beat_target == "previous" else f"the highest card so far ({name})"
    equal = "an equal or higher card" if equal_beats[0] else "a higher card"
    if reason == "cannot_beat":
        return f"no card of yours beats {what}: you must play your lowest card"
    if reason == "nearest":
        return f"you can beat {what}: you must beat it with the least card that does ({equal} beats)"
    if reason == "optional":
        return f"you may beat {what} ({equal} beats) or play your lowest card"
    return f"you can beat {what}: you must beat it ({equal} beats)"


class RoundSummary(TypedDict):
    """A round that just ended, as the front ends show it (:func:`round_summary`); per seat lists."""

    round: int
    """The round, from 1."""
    penalties: list[int]
    scores: list[int]
    out: list[int]
    """The seats that went out in the round."""
    rebought: list[int]
    played: list[bool]
    """Which seats played the round (in the match before it, or out in it)."""
    lives: NotRequired[list[int]]
    """Only in lives mode."""


def round_summary(rules: Rules, end: engine.State) -> RoundSummary:
    """Penalties, scores, lives, who played, went out and rebought, of the round that ended in ``end``."""
    summary: RoundSummary = {
        "round": int(end.round_no[0]) + 1,
        "penalties": end.round_penalty[0].tolist(),
        "scores": end.scores[0].tolist(),
        "out": np.flatnonzero(end.out_now[0]).tolist(),
        "rebought": np.flatnonzero(end.rebought_now[0]).tolist(),
        "played": (end.alive[0] | end.out_now[0]).tolist(),
    }
    if rules.lives:
        summary["lives"] = end.lives[0].tolist()
    return summary


@dataclass(frozen=True)
class Move:
    """One card played and what it ended: the event a front end shows."""

    seat: int
    card: int
    round: int
    """The card's round, from 1."""
    trick: int
    """The card's trick in its round, from 1."""
    winner: int | None
    """The seat that took the trick, when this card ended it."""
    end: engine.State | None
    """The end state of the round, when this card ended it (``match_over`` when it ended the match)."""


class Match:
    """One match: played from ``seat`` against ``opponents``, or watched (``seat=None``: every seat an agent).

    ``opponents`` is one agent spec for every agent seat or one per agent seat in seat order
    (as ``agurk play --opponents`` and ``agurk simulate --agents`` take them). The match is
    dealt from ``seed``; the agents draw from it too, so a seed gives the same match to every
    front end that plays the same cards.
    """

    def __init__(self, rules: Rules, opponents: str, seat: int | None, seed: int) -> None:
        self.rules, self.seat, self.seed = rules, seat, seed
        if seat is None:
            built = make_agents(opponents, rules.players, seed)
            self.specs = [agent.spec for agent in built]
            self.agents: dict[int, Agent] = dict(enumerate(built))
        else:
            self.specs = seat_specs(opponents, rules.players, seat)
            self.agents = {s: make_agent(spec, seed, s) for s, spec in enumerate(self.specs) if s != seat}
        check_fit(self.agents.values(), rules)  # a policy without the rules' cards is refused now, not mid-game
        self.names = [f"P{s} you" if s == seat else f"P{s} {spec}" for s, spec in enumerate(self.specs)]
        self.env = raw_env(rules, episode="match")
        self.env.reset(seed=seed)
        self.moves = 0
        """Cards played so far in the match."""

    @property
    def over(self) -> bool:
        """The match has ended."""
        return bool(self.env.engine_state.match_over[0])

    @property
    def to_move(self) -> int:
        """The seat to play."""
        return int(self.env.engine_state.cur[0])

    @property
    def person_out(self) -> bool:
        """A played match whose person is out while the agents play on to its end."""
        return self.seat is not None and not self.over and not bool(self.env.engine_state.alive[0, self.seat])

    def refusal(self, card: int) -> str | None:
        """Why the seat to move may not play ``card`` (``you do not hold K``, ...); ``None`` when it may."""
        if (self.env.legal_bits() >> card) & 1:
            return None
        held = self.env.engine_state.hands[0, self.to_move, card] > 0
        return f"{'you may not play' if held else 'you do not hold'} {CARDS[card]}"

    def agent_card(self) -> int:
        """The card the agent of the seat to move chooses."""
        bits = np.full(1, self.env.legal_bits())
        return int(decide(self.agents[self.to_move], self.rules, self.env.engine_state, np.zeros(1, np.int64), bits)[0])

    def apply(self, card: int) -> Move:
        """Play ``card`` (legal) for the seat to move; the move, with the trick and the round it ended."""
        env = self.env
        st = env.engine_state
        s, t, r, ends = int(st.cur[0]), int(st.trick_no[0]), int(st.round_no[0]), len(env.round_ends)
        env.step(card)
        self.moves += 1
        end = env.round_ends[-1] if len(env.round_ends) > ends else None
        after = end if end is not None else env.engine_state
        winner = int(after.trick_winner[0, t]) if end is not None or int(after.trick_no[0]) > t else None
        return Move(s, card, r + 1, t + 1, winner, end)

    def record(self) -> MatchRecord:
        """The match record so far (the env's, with the seats' agent specs): a finished match's is whole."""
        rec = self.env.record()
        rec["agents"] = list(self.specs)
        return rec
