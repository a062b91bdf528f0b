"""One game of ``agurk serve``: a front end on :class:`agurk.match.Match` (``agurk play`` is the other).

A game is played (one seat a person's, the others agents) or watched (every seat an agent).
The view of a played game holds the person's hand only: the other hands are sent as card
counts until the match is over, when the record (every dealt hand) may be downloaded. Every
legal set, reason, trick winner and score is the engine's (through the match).
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

import numpy as np

from agents.heuristics import Heuristic
from agents.registry import AgentSpecError, make_agent
from agurk.match import Match, MatchError, Move, RoundSummary, legal_reason, round_summary, sorted_hand
from agurk_env import engine
from agurk_env.agent import Agent, decide
from agurk_env.records import MatchRecord, card_names
from agurk_env.rules import CARDS, Rules

if TYPE_CHECKING:
    from agurk.web.duplicate import Duplicate

LOG_LINES = 60
"""Lines of the play log a view carries (the newest)."""
HINT_AGENT = "best"
"""The agent whose card the hint names."""


SPECTATOR = [
    (re.compile(r"\byou (lead|hold)\b"), r"{seat} \1s"),
    (re.compile(r"\bof yours\b"), "of {seat}'s"),
    (re.compile(r"\byour\b"), "their"),
    (re.compile(r"\byou\b"), "{seat}"),
]
"""How a reason said to the player to move (:func:`agurk.match.legal_reason`) reads to a spectator."""


def spectator_reason(reason: str, seat: int) -> str:
    """``reason`` (addressed to the player to move) about seat ``seat``, for a spectator: ``P1 leads: any card``."""
    for pattern, repl in SPECTATOR:
        reason = pattern.sub(repl.replace("{seat}", f"P{seat}"), reason)
    return reason


class TrickTaken(TypedDict):
    """The last trick taken: its plays ``[seat, card name]`` in playing order, and its winner."""

    round: int
    trick: int
    plays: list[list[int | str]]
    winner: int


class SeatView(TypedDict):
    """One seat of a view: its hand only where the view's owner may see it."""

    name: str
    score: int
    cards: int
    """Cards left in its hand."""
    out: bool
    lives: NotRequired[int]
    """Only in lives mode."""
    rebuys: NotRequired[int]
    """Only with rebuys."""
    hand: NotRequired[list[str]]
    """The person's seat's, every seat's when watching or over; weakest first, one name per card."""


class View(TypedDict):
    """The table as the page shows it (:meth:`Session.view`)."""

    mode: Literal["play", "watch"]
    seat: int | None
    """The person's seat; ``None`` when watching."""
    players: int
    hand_size: int
    lives: bool
    rebuys: bool
    seed: int
    round: int
    trick: int
    dealer: int
    to_move: int | None
    """``None`` once the match is over."""
    over: bool
    seats: list[SeatView]
    current_trick: list[list[int | str]]
    """The current trick's ``[seat, card name]`` in playing order."""
    top_seat: int | None
    """The seat whose card tops the current trick (``None`` before its lead)."""
    last_trick: TrickTaken | None
    rounds: list[RoundSummary]
    log: list[str]
    """The newest lines of the play log (:data:`LOG_LINES`)."""
    moves: int
    stepped: bool
    """The agents move one step request at a time."""
    legal: NotRequired[list[str]]
    """The legal cards, on the person's turn (every turn when watching)."""
    reason: NotRequired[str]
    """Why those are legal."""
    winners: NotRequired[list[int]]
    """Once the match is over."""
    duplicate: NotRequired[dict[str, Any]]
    """A duplicate game's person, agent and deal; once over and written, both results (:meth:`Duplicate.view`)."""


class Hint(TypedDict):
    """What :data:`HINT_AGENT` would play for the person now (:meth:`Session.hint`)."""

    card: str
    agent: str
    method: str
    """How the values were found (the exact solver or rollouts, and the sampled deals)."""
    values: dict[str, float]
    """The search's value of each legal card (higher is better)."""
    moves: int


class WebError(Exception):
    """A refused request: its HTTP status and a one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Session(Match):
    """One match in the browser: played from ``seat`` against ``opponents``, or watched (``seat=None``).

    The match's arguments are :class:`agurk.match.Match`'s; a bad one is a 400. Not thread-safe:
    the store hands a game to one request at a time (:attr:`lock`).
    """

    def __init__(self, rules: Rules, opponents: str, seat: int | None, seed: int) -> None:
        try:
            super().__init__(rules, opponents, seat, seed)
        except (AgentSpecError, MatchError) as e:
            raise WebError(400, str(e).replace("--seat", "seat")) from None
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self.last_trick: TrickTaken | None = None
        self.trick_plays: list[list[int | str]] = []  # the current trick's [seat, card] in playing order
        self._rounds: list[RoundSummary] = []
        self._hinter: Agent | None = None
        self.duplicate: Duplicate | None = None
        """A duplicate game's comparison (:mod:`agurk.web.duplicate`); set by the app when it makes one."""

    # ------------------------------------------------------------------ state

    @property
    def stepped(self) -> bool:
        """The agents move one :meth:`step` request at a time: a watched game, or a played one whose person is out."""
        return self.seat is None or self.person_out

    def _humans_turn(self) -> bool:
        return self.seat is not None and not self.over and self.to_move == self.seat

    # ------------------------------------------------------------------ moves

    @property
    def batched(self) -> bool:
        """A played game whose agents are all heuristics: their moves may be decided with other games' at once."""
        return self.seat is not None and all(isinstance(agent, Heuristic) for agent in self.agents.values())

    @property
    def agent_to_move(self) -> Agent | None:
        """The agent to move now in a played game (``None`` on the person's turn, once they are out, or at the end)."""
        if self.seat is None or self.over or self.to_move == self.seat or self.person_out:
            return None
        return self.agents[self.to_move]

    def play(self, card: str) -> None:
        """The person plays ``card`` (a card name), then the agents play until the person's turn or the end."""
        self.person_plays(card)
        self.start()

    def person_plays(self, card: str) -> None:
        """The person plays ``card`` (a card name), refused (4xx) unless it is their turn and the card is legal."""
        if self.seat is None:
            raise WebError(409, "this game is watched: every seat is an agent (use step)")
        if self.over:
            raise WebError(409, "the match is over")
        if self.to_move != self.seat:
            raise WebError(409, f"not your turn: {self.names[self.to_move]} is to move")
        names = CARDS[: self.rules.num_actions]
        if card not in names:
            raise WebError(400, f"unknown card {card!r}; cards are {' '.join(names)}")
        a = names.index(card)
        if (refusal := self.refusal(a)) is not None:
            raise WebError(422, f"illegal: {refusal}: {legal_reason(self.rules, self.env.engine_state)}")
        self.apply(a)

    def step(self) -> None:
        """One agent move of a watched game, or of a played game once its person is out (one at a time)."""
        if not self.over and not self.stepped:
            raise WebError(409, "this game is played: the agents move after your card (use play)")
        if self.over:
            raise WebError(409, "the match is over")
        self.apply(self.agent_card())

    def start(self) -> None:
        """Let the agents play up to the person's turn, the person's going out, or the match's end (a played game).

        Once the person is out, the rest of the match is theirs to step through (:meth:`step`), not played at once.
        """
        while self.agent_to_move is not None:
            self.apply(self.agent_card())

    def apply(self, card: int) -> Move:
        """Play ``card`` for the seat to move; log it, and the trick and round it ends."""
        move = super().apply(card)
        self.trick_plays.append([move.seat, CARDS[card]])
        self.log.append(f"{self.names[move.seat]} plays {CARDS[card]}")
        if move.winner is not None:
            plays, self.trick_plays = self.trick_plays, []
            self.last_trick = {"round": move.round, "trick": move.trick, "plays": plays, "winner": move.winner}
            self.log.append(f"trick {move.trick} taken by {self.names[move.winner]}")
        if move.end is not None:
            self._rounds.append(round_summary(self.rules, move.end))
            self.log.append(f"round {move.round} over")
            if move.end.match_over[0]:
                winners = ", ".join(self.names[w] for w in np.flatnonzero(move.end.winners[0]).tolist()) or "nobody"
                self.log.append(f"match over: winners {winners}")
        return move

    # ------------------------------------------------------------------ hint

    def hint(self) -> Hint:
        """What :data:`HINT_AGENT` would play for the person now, and the search's value of each legal card."""
        from agurk.web.hint import search_values

        if not self._humans_turn():
            raise WebError(409, "a hint is for your turn in a played game")
        if self._hinter is None:
            try:
                self._hinter = make_agent(HINT_AGENT, self.seed + 1, self.seat or 0)
            except AgentSpecError as e:  # a one-line answer, not a 500
                raise WebError(503, f"no hint on this server: {e}") from None
        st = self.env.engine_state
        bits = np.full(1, self.env.legal_bits())
        card = int(decide(self._hinter, self.rules, st, np.zeros(1, np.int64), bits)[0])
        method, values = search_values(self.rules, st, bits, np.random.default_rng([self.seed, self.moves]))
        return {"card": CARDS[card], "agent": HINT_AGENT, "method": method, "values": values, "moves": self.moves}

    # ------------------------------------------------------------------ what is sent

    def record(self) -> MatchRecord:
        """The match record (the env's, as ``agurk play --record`` writes it): only once the match is over."""
        if self.seat is not None and not self.over:
            raise WebError(409, "the record holds every hand: it can be downloaded once the match is over")
        return super().record()

    def view(self) -> View:
        """The table as its owner may see it: the person's hand only (every hand when watching or over)."""
        r, st = self.rules, self.env.engine_state
        over, cur = self.over, self.to_move
        show_all = self.seat is None or over
        left = engine.cards_left(r, st)[0].tolist()
        seats = []
        for s in range(r.players):
            row: SeatView = {
                "name": self.names[s],
                "score": int(st.scores[0, s]),
                "cards": left[s],
                "out": not bool(st.alive[0, s]),
            }
            if r.lives:
                row["lives"] = int(st.lives[0, s])
            if r.rebuys:
                row["rebuys"] = int(st.rebuys[0, s])
            if (show_all or s == self.seat) and st.alive[0, s] and not st.round_over[0]:
                row["hand"] = [CARDS[c] for c, n in sorted_hand(r, st, s) for _ in range(n)]
            seats.append(row)
        trick = self.trick_plays
        view: View = {
            "mode": "watch" if self.seat is None else "play",
            "seat": self.seat,
            "players": r.players,
            "hand_size": r.hand_size,
            "lives": bool(r.lives),
            "rebuys": bool(r.rebuys),
            "seed": self.seed,
            "round": int(st.round_no[0]) + 1,
            "trick": min(int(st.trick_no[0]) + 1, r.hand_size),
            "dealer": int(st.dealer[0]),
            "to_move": None if over else cur,
            "over": over,
            "seats": seats,
            "current_trick": trick,
            "top_seat": int(st.top_seat[0]) if trick else None,
            "last_trick": self.last_trick,
            "rounds": self._rounds,
            "log": list(self.log),
            "moves": self.moves,
            "stepped": self.stepped and not over,
        }
        if not over and (self.seat is None or cur == self.seat):
            view["legal"] = card_names(self.env.legal_bits())
            reason = legal_reason(r, st)
            view["reason"] = reason if self.seat is not None else spectator_reason(reason, cur)
        if over:
            view["winners"] = np.flatnonzero(st.winners[0]).tolist()
        if self.duplicate is not None:
            view["duplicate"] = self.duplicate.view()
        return view
