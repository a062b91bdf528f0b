"""``agurk play``: a person plays one seat of a whole match against agents, in a plain terminal.

A thin front end on :class:`agurk.match.Match` (the web's game is the other): every rule
comes from the engine. Each turn shows the scores, the trick so far, the hand sorted by strength and the
legal cards with the reason they are legal; input is read with :func:`input`. A record
file gets the whole match, or the match so far when the person quits or presses Ctrl-C.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table

from agurk.match import Match, Move, RoundSummary, legal_reason, round_summary, sorted_hand, strengths
from agurk_env import engine
from agurk_env.atomic import atomic_write_text
from agurk_env.records import MatchRecord
from agurk_env.render import card_text
from agurk_env.rules import CARDS, Rules


def parse_choice(text: str, hand: list[tuple[int, int]], actions: int) -> int | None:
    """The card meant by ``text``: a card name (``10``, ``k``, ``A``), or ``#N``/``N`` for entry N of the hand.

    ``Q``/``q`` name the queen here; the caller takes a lone lowercase ``q`` as quit first.

    A plain number that names a card in the hand means that card; otherwise it is an entry number.
    """
    word = text.strip().upper()
    if word in ("T",):
        word = "10"
    held = [c for c, _ in hand]
    if word in CARDS[:actions] and CARDS.index(word) in held:
        return CARDS.index(word)
    number = word[1:] if word.startswith("#") else word
    if number.isdigit() and 1 <= int(number) <= len(hand):
        return held[int(number) - 1]
    if word in CARDS[:actions]:
        return CARDS.index(word)  # a real card, not in the hand: illegal, explained by the caller
    return None


def choice_error(text: str, hand: list[tuple[int, int]]) -> str:
    """Why ``text`` names no card (:func:`parse_choice` gave ``None``): an entry out of range, or no card name."""
    word = text.strip()
    number = word[1:] if word.startswith("#") else word
    if number.isdigit():
        return f"there is no entry #{int(number)}: your hand has entries #1..#{len(hand)}"
    return f"unknown card {escape(word)!r}: type a card name (e.g. 10, K, a) or #number"


class Game(Match):
    """One interactive match in the terminal: the match, and how its turns and moves are shown."""

    seat: int
    """The person's seat (a game always has one)."""

    def __init__(
        self,
        rules: Rules,
        opponents: str = "random",
        seat: int = 0,
        seed: int = 0,
        console: Console | None = None,
        read: Callable[[str], str] = input,
    ) -> None:
        super().__init__(rules, opponents, seat, seed)
        self.console = console or Console(highlight=False)  # a line wider than the terminal wraps between words
        self.read = read
        self.played = 0
        """Cards the person has played."""

    # ------------------------------------------------------------------ output

    def say(self, text: RenderableType = "") -> None:
        """Print a line (rich markup) or a table and flush, so a pseudo-terminal sees it at once."""
        self.console.print(text)
        self.console.file.flush()

    def _name(self, s: int) -> str:
        return escape(self.names[s])

    def show_table(self, st: engine.State) -> None:
        """Scores, lives and who is out, then the trick so far."""
        r = self.rules
        self.say(
            f"[bold]match {int(st.match_id[0])} · round {int(st.round_no[0]) + 1} · "
            f"trick {int(st.trick_no[0]) + 1}/{r.hand_size} · dealer P{int(st.dealer[0])}[/bold]"
        )
        table = Table()
        table.add_column("seat")
        table.add_column("score", justify="right")
        if r.lives:
            table.add_column("lives", justify="right")
        if r.rebuys:
            table.add_column("rebuys", justify="right")
        table.add_column("cards", justify="right")
        table.add_column("status")
        for s in range(r.players):
            row = [self._name(s), str(int(st.scores[0, s]))]
            if r.lives:
                row.append(str(int(st.lives[0, s])))
            if r.rebuys:
                row.append(str(int(st.rebuys[0, s])))
            row.append(str(int(st.hands[0, s].sum())))
            row.append("out" if not st.alive[0, s] else ("to move" if s == int(st.cur[0]) else ""))
            table.add_row(*row)
        self.say(table)
        t = int(st.trick_no[0])
        if int(st.npos[0]) == 0:
            self.say("trick: (empty, you lead)")
        else:
            leader = int(st.leader[0])
            order = [(leader + k) % r.players for k in range(r.players)]
            plays = [f"{self._name(s)}: {CARDS[int(st.tricks[0, t, s])]}" for s in order if st.tricks[0, t, s] >= 0]
            self.say("trick: " + ", ".join(plays))

    def show_hand(self, st: engine.State) -> list[tuple[int, int]]:
        """The hand by strength (numbered), the legal cards and why; returns the hand."""
        hand = sorted_hand(self.rules, st, self.seat)
        self.say(
            "your hand: "
            + "  ".join(
                f"[bold]#{i}[/bold] {CARDS[c]}" + (f"x{n}" if n > 1 else "") for i, (c, n) in enumerate(hand, 1)
            )
        )
        self.show_legal(st)
        return hand

    def show_legal(self, st: engine.State) -> None:
        """The legal cards and the reason, one line each."""
        self.say(f"legal: {self._legal_names(st)}")
        self.say(f"why: {legal_reason(self.rules, st)}")

    def _legal_names(self, st: engine.State) -> str:
        strength = strengths(self.rules, st)
        cards = card_text(self.env.legal_bits()).split()
        return " ".join(sorted(cards, key=lambda n: strength[CARDS.index(n)]))

    def _ties_text(self, summary: RoundSummary) -> str:
        """Every seat the last trick charges when several tie on its top rank (``""`` when one or none)."""
        charged = [s for s, penalty in enumerate(summary["penalties"]) if penalty > 0]
        if self.rules.scoring != "last_trick" or len(charged) < 2:
            return ""
        names = [self._name(s) for s in charged]
        return (
            f"; {', '.join(names[:-1])} and {names[-1]} played its top rank and each scores it "
            "(last_trick_ties=all: every player holding the top rank in the last trick scores)"
        )

    def show_round_end(self, summary: RoundSummary) -> None:
        """Penalties, scores, lives, who went out or rebought (a :func:`agurk.match.round_summary`)."""
        self.say(f"[bold]round {summary['round']} over[/bold]")
        for s, played in enumerate(summary["played"]):
            if not played:
                continue
            parts = [f"penalty {summary['penalties'][s]}", f"score {summary['scores'][s]}"]
            if "lives" in summary:
                parts.append(f"lives {summary['lives'][s]}")
            if s in summary["out"]:
                parts.append("OUT")
            if s in summary["rebought"]:
                parts.append("rebought")
            self.say(f"  {self._name(s)}: " + ", ".join(parts))

    def show_going_out(self, end: engine.State) -> None:
        """Who went out in the round that just ended, and that the match plays on without them."""
        gone = np.flatnonzero(end.out_now[0] & ~end.alive[0]).tolist()
        if not gone or end.match_over[0]:
            return
        names = ", ".join(self._name(s) for s in gone)
        left = ", ".join(self._name(s) for s in np.flatnonzero(end.alive[0]).tolist())
        if self.seat in gone:
            self.say(f"[bold]you are out of the match[/bold]; it plays on without you to its end: {left}")
        else:
            self.say(f"{names} out of the match; it plays on: {left}")

    def show_match_end(self, end: engine.State) -> None:
        """The winners."""
        winners = np.flatnonzero(end.winners[0]).tolist()
        names = ", ".join(self._name(s) for s in winners) or "nobody"
        self.say(f"[bold]match over[/bold] · winners: {names}")
        self.say("you win!" if self.seat in winners else "you lose.")

    # ------------------------------------------------------------------ the loop

    def ask(self, st: engine.State) -> int | None:
        """Ask the person for a legal card; ``None`` to quit."""
        hand = self.show_hand(st)
        while True:
            try:
                text = self.read("your card (name or #number; Q is the queen, q quits)> ")
            except EOFError:
                self.say()
                return None
            if text.strip() == "q" or text.strip().lower() in ("quit", "exit"):  # Q (capital) is the queen
                return None
            card = parse_choice(text, hand, self.rules.num_actions)
            if card is None:
                self.say(choice_error(text, hand))
            elif (refusal := self.refusal(card)) is not None:
                self.say(f"illegal: {refusal}")
            else:
                return card
            self.show_legal(st)

    def run(self) -> tuple[bool, MatchRecord]:
        """Play the match; returns ``(finished, record)``: the record so far when the person quits."""
        self.say(
            f"Agurk · you are {self._name(self.seat)} · seed {self.seed} · "
            f"opponents: {escape(', '.join(self.names[s] for s in self.agents))}"
        )
        while not self.over:
            if self.to_move == self.seat:
                st = self.env.engine_state
                self.show_table(st)
                card = self.ask(st)
                if card is None:
                    return False, self.record()
                self.played += 1
            else:
                card = self.agent_card()
            self.show_move(self.apply(card))
        return True, self.record()

    def show_move(self, move: Move) -> None:
        """The card played, and the trick, round and match it ended."""
        self.say(f"{self._name(move.seat)} plays {CARDS[move.card]}")
        if move.winner is None:
            return
        taken = f"trick {move.trick} taken by {self._name(move.winner)}"
        if move.end is None:
            self.say(taken)
            return
        summary = round_summary(self.rules, move.end)
        self.say(taken + self._ties_text(summary))
        self.show_round_end(summary)
        self.show_going_out(move.end)
        if move.end.match_over[0]:
            self.show_match_end(move.end)


def play(
    rules: Rules,
    opponents: str = "random",
    seat: int = 0,
    seed: int = 0,
    record: str | None = None,
    console: Console | None = None,
) -> int:
    """Run ``agurk play``; returns the exit status (0, also on quitting, which writes ``record`` so far).

    Ctrl-C (or a stop signal raised as one) writes ``record`` so far too, then raises on. Before the
    person's first card there is nothing to keep: ``record`` is left as it was.
    """
    game = Game(rules, opponents, seat, seed, console)
    try:
        finished, rec = game.run()
    except KeyboardInterrupt:
        game.say()
        if record:
            _write_record(game, record, game.record(), finished=False)
        raise
    if record:
        _write_record(game, record, rec, finished)
    game.say("bye")
    return 0


def _write_record(game: Game, path: str, rec: MatchRecord, finished: bool) -> None:
    """Write the match record (one JSON line) atomically and say so: the whole match, or the match so far."""
    if not game.played:
        game.say(f"no record written to {escape(path)}: you played no card")
        return
    atomic_write_text(path, json.dumps(rec) + "\n")
    if finished:
        game.say(f"record written to {escape(path)}")
    else:
        done = len(rec["rounds"]) - 1
        game.say(
            f"partial record written to {escape(path)}: the match so far ({done} finished "
            f"round{'s' * (done != 1)} and the round in progress; no winners)"
        )
