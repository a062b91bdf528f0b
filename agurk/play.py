"""``agurk play``: a person plays one seat of a whole match against agents, in a plain terminal.

A thin front end on the AEC environment (``episode="match"``): every rule comes from the
engine. Each turn shows the scores, the trick so far, the hand sorted by strength and the
legal cards with the reason they are legal; input is read with :func:`input`. A record
file gets the whole match, or the match so far when the person quits or presses Ctrl-C.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agents.fit import check_fit
from agents.registry import make_agent
from agurk_env import engine
from agurk_env.aec_env import raw_env
from agurk_env.agent import decide
from agurk_env.atomic import atomic_write_text
from agurk_env.options import split_list
from agurk_env.render import card_text
from agurk_env.rules import CARDS, Rules


class PlayError(ValueError):
    """A bad ``agurk play`` argument (one-line message)."""


def seat_specs(opponents: str, players: int, seat: int) -> list[str]:
    """One agent spec per seat, ``"human"`` at ``seat``: one spec for all, or one per other seat."""
    if not 0 <= seat < players:
        raise PlayError(f"--seat must be 0..{players - 1}, not {seat}")
    specs = split_list(opponents)
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise PlayError(f"{len(specs)} opponent specs given for {players - 1} opponents; give one or {players - 1}")
    return [*specs[:seat], "human", *specs[seat:]]


def _strengths(rules: Rules, state: engine.State) -> list[int]:
    """Per-card strength in game 0's current trick (the last trick may rank the ace low)."""
    return engine.card_values(rules, state.take(slice(0, 1)))[0][0].tolist()


def sorted_hand(rules: Rules, state: engine.State, seat: int) -> list[tuple[int, int]]:
    """``(card, count)`` of ``seat``'s hand in game 0, weakest first under the current rules."""
    strength = _strengths(rules, state)
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


class Game:
    """One interactive match: the env, the agents, and what has been shown."""

    def __init__(
        self,
        rules: Rules,
        opponents: str = "random",
        seat: int = 0,
        seed: int = 0,
        console: Console | None = None,
        read: Callable[[str], str] = input,
    ) -> None:
        self.rules, self.seat, self.seed = rules, seat, seed
        self.specs = seat_specs(opponents, rules.players, seat)
        self.agents = {s: make_agent(spec, seed, s) for s, spec in enumerate(self.specs) if s != seat}
        check_fit(self.agents.values(), rules)
        self.env = raw_env(rules, episode="match")
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.read = read
        self.names = [f"P{s} you" if s == seat else f"P{s} {spec}" for s, spec in enumerate(self.specs)]

    # ------------------------------------------------------------------ output

    def say(self, text: str = "", **kw: Any) -> None:
        """Print a line (rich markup) and flush, so a pseudo-terminal sees it at once."""
        self.console.print(text, **kw)
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
        strength = _strengths(self.rules, st)
        cards = card_text(self.env.legal_bits()).split()
        return " ".join(sorted(cards, key=lambda n: strength[CARDS.index(n)]))

    def _last_trick_text(self, end: engine.State, t: int) -> str:
        """Who took the last trick, and every seat it charges when several tie on its top rank."""
        text = f"trick {t + 1} taken by {self._name(int(end.trick_winner[0, t]))}"
        charged = np.flatnonzero(end.round_penalty[0] > 0).tolist()
        if self.rules.scoring != "last_trick" or len(charged) < 2:
            return text
        names = [self._name(s) for s in charged]
        return (
            f"{text}; {', '.join(names[:-1])} and {names[-1]} played its top rank and each scores it "
            "(last_trick_ties=all: every player holding the top rank in the last trick scores)"
        )

    def show_round_end(self, end: engine.State) -> None:
        """Penalties, scores, lives, who went out or rebought."""
        r = self.rules
        self.say(f"[bold]round {int(end.round_no[0]) + 1} over[/bold]")
        for s in range(r.players):
            if not (end.alive[0, s] or end.out_now[0, s]):
                continue
            parts = [f"penalty {int(end.round_penalty[0, s])}", f"score {int(end.scores[0, s])}"]
            if r.lives:
                parts.append(f"lives {int(end.lives[0, s])}")
            if end.out_now[0, s]:
                parts.append("OUT")
            if end.rebought_now[0, s]:
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
        bits = self.env.legal_bits()
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
            elif not (bits >> card) & 1:
                held = any(c == card for c, _ in hand)
                why = "you may not play" if held else "you do not hold"
                self.say(f"illegal: {why} {CARDS[card]}")
            else:
                return card
            self.show_legal(st)

    def run(self) -> tuple[bool, dict[str, Any]]:
        """Play the match; returns ``(finished, record)``: the record so far when the person quits."""
        env = self.env
        env.reset(seed=self.seed)
        self.say(
            f"Agurk · you are {self._name(self.seat)} · seed {self.seed} · "
            f"opponents: {escape(', '.join(self.names[s] for s in self.agents))}"
        )
        while env.agents:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            st = env.engine_state
            s, t, ends = int(st.cur[0]), int(st.trick_no[0]), len(env.round_ends)
            if s == self.seat:
                self.show_table(st)
                card = self.ask(st)
                if card is None:
                    return False, self.record()
            else:
                bits = np.full(1, env.legal_bits())
                card = int(decide(self.agents[s], self.rules, st, np.zeros(1, np.int64), bits)[0])
            self.say(f"{self._name(s)} plays {CARDS[card]}")
            env.step(card)
            if len(env.round_ends) > ends:
                end = env.round_ends[-1]
                self.say(self._last_trick_text(end, t))
                self.show_round_end(end)
                self.show_going_out(end)
                if end.match_over[0]:
                    self.show_match_end(end)
            elif int(env.engine_state.trick_no[0]) > t:
                self.say(f"trick {t + 1} taken by {self._name(int(env.engine_state.trick_winner[0, t]))}")
        return True, self.record()

    def record(self) -> dict[str, Any]:
        """The match record so far (the env's): finished rounds complete, the round in progress as far as played."""
        rec = self.env.record()
        rec["agents"] = list(self.specs)
        return rec


def play(
    rules: Rules,
    opponents: str = "random",
    seat: int = 0,
    seed: int = 0,
    record: str | None = None,
    console: Console | None = None,
) -> int:
    """Run ``agurk play``; returns the exit status (0, also on quitting, which writes ``record`` so far).

    Ctrl-C (or a stop signal raised as one) writes ``record`` so far too, then raises on.
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


def _write_record(game: Game, path: str, rec: dict[str, Any], finished: bool) -> None:
    """Write the match record (one JSON line) atomically and say so: the whole match, or the match so far."""
    atomic_write_text(path, json.dumps(rec) + "\n")
    if finished:
        game.say(f"record written to {escape(path)}")
    else:
        done = len(rec["rounds"]) - 1
        game.say(
            f"partial record written to {escape(path)}: the match so far ({done} finished "
            f"round{'s' * (done != 1)} and the round in progress; no winners)"
        )
