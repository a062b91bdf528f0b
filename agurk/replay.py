"""``agurk replay``: step through a recorded match trick by trick, every hand shown.

A record (RULES.md "Game records") is complete information: the dealt hands and every
play. The match is cut into frames, one per trick, then one per round end; ``--all``
prints them all, otherwise ``n``/Enter, ``p`` and ``q`` move through them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal, NotRequired, TypedDict, cast

from rich.console import Console
from rich.markup import escape

from agurk_env import engine
from agurk_env.records import MatchRecord, RoundRecord
from agurk_env.rules import CARDS, Rules, RulesError


class ReplayError(ValueError):
    """A file or match that cannot be replayed (one-line message)."""


class TrickFrame(TypedDict):
    """A trick of the replay: every hand before it (weakest card first), its plays and its winner."""

    kind: Literal["trick"]
    round: int
    trick: int
    tricks: int
    """Tricks in a round (the hand size)."""
    dealer: int
    hands: list[list[str] | None]
    """Per seat, its cards before the trick; ``None`` for a seat out."""
    plays: list[list[int | str]]
    """``[seat, card name]`` in playing order."""
    winner: int | None
    """``None`` while a recorded trick is unfinished."""


class RoundRow(TypedDict):
    """One seat at a round's end."""

    penalty: int
    score: int
    lives: NotRequired[int]
    """Only in lives mode."""
    out: bool
    rebought: bool


class RoundFrame(TypedDict):
    """A round's end: one row per seat."""

    kind: Literal["round"]
    round: int
    rows: list[RoundRow]


class MatchFrame(TypedDict):
    """The last frame of a finished match."""

    kind: Literal["match"]
    winners: list[int]


Frame = TrickFrame | RoundFrame | MatchFrame
"""One frame of :func:`steps` (``agurk serve``'s replay shows them; :func:`frames` renders them as text)."""


def load_record(path: str, match: int = 0) -> MatchRecord:
    """Record number ``match`` (0-based line, blank lines skipped) of the JSON Lines file ``path``."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ReplayError(f"cannot read {path!r}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ReplayError(f"{path!r} is not a text file of game records") from None
    return parse_record(text, match, repr(path))


def parse_record(text: str, match: int = 0, name: str = "the file") -> MatchRecord:
    """Record number ``match`` (0-based line, blank lines skipped) of JSON Lines ``text`` (``name`` in errors)."""
    if match < 0:
        raise ReplayError(f"--match must be >= 0, not {match}")
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise ReplayError(f"{name} holds no game record")
    if match >= len(lines):
        raise ReplayError(f"--match {match}: {name} holds {len(lines)} records (0..{len(lines) - 1})")
    n, line = lines[match]
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        raise ReplayError(f"{name} line {n} is not JSON: {e.msg}") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("rules"), dict) or not isinstance(rec.get("rounds"), list):
        raise ReplayError(f"{name} line {n} is not a game record (needs 'rules' and 'rounds')")
    try:
        Rules.from_dict(rec["rules"])
    except (RulesError, TypeError) as e:
        raise ReplayError(f"{name} line {n} has bad rules: {e}") from None
    record = cast(MatchRecord, rec)  # a JSON object with the record's rules and rounds, checked below trick by trick
    try:
        steps(record)  # every trick readable: a damaged record is named by its file and line now
    except ReplayError as e:
        raise ReplayError(f"{name} line {n}: {e}") from None
    return record


def steps(rec: MatchRecord) -> list[Frame]:
    """The match as data frames: one per trick (every hand before it, weakest first), then one per round end.

    A trick frame has ``kind="trick"``, ``round``, ``trick``, ``dealer``, ``hands`` (``None`` for a
    seat out), ``plays`` and ``winner`` (``None`` while a recorded trick is unfinished); a round
    frame ``kind="round"``, ``round`` and one ``rows`` dict per seat; the last frame of a finished
    match ``kind="match"`` and ``winners``. :func:`frames` renders them as text; ``agurk serve`` as a table.
    """
    try:
        return _steps(rec)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise ReplayError(f"malformed game record: {type(e).__name__} {e}") from None


def _steps(rec: MatchRecord) -> list[Frame]:
    rules = Rules.from_dict(rec["rules"])
    sp = engine.tables(rules)
    p, h = rules.players, rules.hand_size
    out: list[Frame] = []
    for r, rnd in enumerate(rec["rounds"], 1):
        hands = [list(hand) for hand in rnd["hands"]]
        if len(hands) != p:
            raise ValueError(f"round {r} has {len(hands)} hands for {p} seats")
        for t, trick in enumerate(rnd["tricks"], 1):
            strength = (sp.strength_last if sp.low_last and t == h else sp.strength).tolist()
            played = {int(seat) for seat, _ in trick["plays"]}
            shown = [
                sorted(hands[s], key=lambda c: strength[CARDS.index(c)]) if hands[s] or s in played else None
                for s in range(p)
            ]
            moves = [(int(seat), str(card)) for seat, card in trick["plays"]]
            winner = trick.get("winner")
            plays: list[list[int | str]] = [[seat, card] for seat, card in moves]
            out.append(
                {
                    "kind": "trick",
                    "round": r,
                    "trick": t,
                    "tricks": h,
                    "dealer": rnd["dealer"],
                    "hands": shown,
                    "plays": plays,
                    "winner": None if winner is None else _seat(winner, p),
                }
            )
            for seat, card in moves:
                hands[seat].remove(card)
        if "penalties" in rnd:
            out.append({"kind": "round", "round": r, "rows": [_round_row(rnd, s) for s in range(p)]})
    if "winners" in rec:
        out.append({"kind": "match", "winners": [_seat(s, p) for s in rec["winners"]]})
    return out


def _seat(value: int, players: int) -> int:
    """``value`` as a seat of ``players`` (``ValueError`` if it is none)."""
    seat = int(value)
    if not 0 <= seat < players:
        raise ValueError(f"seat {seat} at a table of {players}")
    return seat


def _round_row(rnd: RoundRecord, s: int) -> RoundRow:
    """Seat ``s`` at the end of the finished round ``rnd`` (``lives`` after ``score``, in lives mode)."""
    penalty, score = rnd["penalties"][s], rnd["scores"][s]
    out, rebought = s in rnd.get("out", []), s in rnd.get("rebought", [])
    if "lives" in rnd:
        return {"penalty": penalty, "score": score, "lives": rnd["lives"][s], "out": out, "rebought": rebought}
    return {"penalty": penalty, "score": score, "out": out, "rebought": rebought}


def seat_names(rec: MatchRecord) -> list[str]:
    """``P0 SPEC`` per seat, from the record's ``agents`` (``player_S`` when it has none)."""
    p = Rules.from_dict(rec["rules"]).players
    specs = rec.get("agents") or [f"player_{s}" for s in range(p)]
    return [f"P{s} {specs[s]}" for s in range(p)]


def frames(rec: MatchRecord) -> list[str]:
    """The match as text frames (rich markup): one per trick, then a round summary per round."""
    data = steps(rec)
    try:
        names = [escape(name) for name in seat_names(rec)]
    except (IndexError, TypeError) as e:
        raise ReplayError(f"malformed game record: {type(e).__name__} {e}") from None
    head = f"seed {rec.get('seed', '?')} · match {rec.get('match', '?')}"
    out: list[str] = []
    for frame in data:
        if frame["kind"] == "trick":
            lines = [
                f"[bold]{head} · round {frame['round']} · trick {frame['trick']}/{frame['tricks']} · "
                f"dealer P{frame['dealer']}[/bold]"
            ]
            for s, hand in enumerate(frame["hands"]):
                held = "out" if hand is None else f"holds {' '.join(hand) or '-'}"
                lines.append(f"  {names[s]:<16} {held}")
            lines.append(f"  plays: {' '.join(f'P{seat}:{card}' for seat, card in frame['plays'])}")
            if frame["winner"] is not None:
                lines.append(f"  taken by {names[frame['winner']]}")
        elif frame["kind"] == "round":
            lines = [f"[bold]{head} · round {frame['round']} over[/bold]"]
            for s, row in enumerate(frame["rows"]):
                parts = [f"penalty {row['penalty']}", f"score {row['score']}"]
                if "lives" in row:
                    parts.append(f"lives {row['lives']}")
                if row["out"]:
                    parts.append("OUT")
                if row["rebought"]:
                    parts.append("rebought")
                lines.append(f"  {names[s]:<16} " + ", ".join(parts))
        else:
            winners = ", ".join(names[s] for s in frame["winners"]) or "nobody"
            lines = [f"[bold]match over · winners: {winners}[/bold]"]
        out.append("\n".join(lines))
    return out


def replay(
    rec: MatchRecord,
    show_all: bool = False,
    console: Console | None = None,
    read: Callable[[str], str] = input,
) -> int:
    """Show ``rec`` (all frames, or interactively); returns the exit status 0."""
    console = console or Console(highlight=False, soft_wrap=True)
    pages = frames(rec)

    def say(text: str) -> None:
        console.print(text)
        console.file.flush()

    if show_all:
        for page in pages:
            say(page)
        return 0
    i = 0
    say(pages[i])
    while True:
        try:
            key = read(f"[{i + 1}/{len(pages)}] n/Enter next, p previous, q quit> ").strip().lower()
        except EOFError:
            say("")
            break
        except KeyboardInterrupt:
            say("")  # end the prompt's line; the command line says it was interrupted
            raise
        if key in ("q", "quit"):
            break
        if key in ("", "n"):
            if i == len(pages) - 1:
                say("end of the match (p goes back, q quits)")
                continue
            i += 1
        elif key == "p":
            if i == 0:
                say("start of the match (n goes on, q quits)")
                continue
            i -= 1
        else:
            say(f"unknown key {escape(key)!r}: n or Enter next, p previous, q quit")
            continue
        say(pages[i])
    say("bye")
    return 0
