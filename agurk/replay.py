"""``agurk replay``: step through a recorded match trick by trick, every hand shown.

A record (RULES.md "Game records") is complete information: the dealt hands and every
play. The match is cut into frames, one per trick, then one per round end; ``--all``
prints them all, otherwise ``n``/Enter, ``p`` and ``q`` move through them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from agurk_env import engine
from agurk_env.rules import CARDS, Rules, RulesError


class ReplayError(ValueError):
    """A file or match that cannot be replayed (one-line message)."""


def load_record(path: str, match: int = 0) -> dict[str, Any]:
    """Record number ``match`` (0-based line, blank lines skipped) of the JSON Lines file ``path``."""
    if match < 0:
        raise ReplayError(f"--match must be >= 0, not {match}")
    try:
        with open(path, encoding="utf-8") as f:
            lines = [(n, line) for n, line in enumerate(f, 1) if line.strip()]
    except OSError as e:
        raise ReplayError(f"cannot read {path!r}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ReplayError(f"{path!r} is not a text file of game records") from None
    if not lines:
        raise ReplayError(f"{path!r} holds no game record")
    if match >= len(lines):
        raise ReplayError(f"--match {match}: {path!r} holds {len(lines)} records (0..{len(lines) - 1})")
    n, line = lines[match]
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        raise ReplayError(f"{path!r} line {n} is not JSON: {e.msg}") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("rules"), dict) or not isinstance(rec.get("rounds"), list):
        raise ReplayError(f"{path!r} line {n} is not a game record (needs 'rules' and 'rounds')")
    try:
        Rules.from_dict(rec["rules"])
    except (RulesError, TypeError) as e:
        raise ReplayError(f"{path!r} line {n} has bad rules: {e}") from None
    return rec


def _hand_text(hand: list[str], strength: list[int]) -> str:
    """Card names sorted weakest first."""
    return " ".join(sorted(hand, key=lambda c: strength[CARDS.index(c)])) or "-"


def frames(rec: dict[str, Any]) -> list[str]:
    """The match as text frames (rich markup): one per trick, then a round summary per round."""
    try:
        return _frames(rec)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise ReplayError(f"malformed game record: {type(e).__name__} {e}") from None


def _frames(rec: dict[str, Any]) -> list[str]:
    rules = Rules.from_dict(rec["rules"])
    sp = engine.tables(rules)
    p, h = rules.players, rules.hand_size
    specs = rec.get("agents") or [f"player_{s}" for s in range(p)]
    names = [escape(f"P{s} {specs[s]}") for s in range(p)]
    head = f"seed {rec.get('seed', '?')} · match {rec.get('match', '?')}"
    out: list[str] = []
    for r, rnd in enumerate(rec["rounds"], 1):
        hands = [list(hand) for hand in rnd["hands"]]
        for t, trick in enumerate(rnd["tricks"], 1):
            strength = (sp.strength_last if sp.low_last and t == h else sp.strength).tolist()
            lines = [f"[bold]{head} · round {r} · trick {t}/{h} · dealer P{rnd['dealer']}[/bold]"]
            for s in range(p):
                if hands[s] or any(seat == s for seat, _ in trick["plays"]):
                    lines.append(f"  {names[s]:<16} holds {_hand_text(hands[s], strength)}")
                else:
                    lines.append(f"  {names[s]:<16} out")
            plays = " ".join(f"P{seat}:{card}" for seat, card in trick["plays"])
            lines.append(f"  plays: {plays}")
            if "winner" in trick:
                lines.append(f"  taken by {names[trick['winner']]}")
            for seat, card in trick["plays"]:
                hands[seat].remove(card)
            out.append("\n".join(lines))
        if "penalties" in rnd:
            lines = [f"[bold]{head} · round {r} over[/bold]"]
            for s in range(p):
                parts = [f"penalty {rnd['penalties'][s]}", f"score {rnd['scores'][s]}"]
                if "lives" in rnd:
                    parts.append(f"lives {rnd['lives'][s]}")
                if s in rnd.get("out", []):
                    parts.append("OUT")
                if s in rnd.get("rebought", []):
                    parts.append("rebought")
                lines.append(f"  {names[s]:<16} " + ", ".join(parts))
            out.append("\n".join(lines))
    if "winners" in rec:
        winners = ", ".join(names[s] for s in rec["winners"]) or "nobody"
        out.append(f"[bold]match over · winners: {winners}[/bold]")
    return out


def replay(
    rec: dict[str, Any],
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
