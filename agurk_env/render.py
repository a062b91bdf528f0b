"""Agurk as text: the table view every environment renders, card sets as names, and illegal-move messages."""

from __future__ import annotations

import operator
from typing import Literal, SupportsIndex, cast, get_args

from agurk_env import engine
from agurk_env.records import card_names
from agurk_env.rules import CARDS, Rules

RenderMode = Literal["human", "ansi"]
RENDER_MODES: list[str] = list(get_args(RenderMode))
"""The render modes every Agurk environment supports."""


def card_text(bits: int) -> str:
    """Card names of a card set, space-separated (``"-"`` when empty)."""
    return " ".join(card_names(bits)) or "-"


def render_text(rules: Rules, state: engine.State, names: list[str], game: int = 0, show: int | None = None) -> str:
    """A text view of game ``game``: scores, the current trick, and the hand of seat ``show`` only.

    ``show`` defaults to the seat to move; pass ``-1`` to show no hand.
    """
    st = state.take(slice(game, game + 1))
    p, h = rules.players, rules.hand_size
    cur, over = int(st.cur[0]), bool(st.round_over[0])
    show = cur if show is None else show
    trick_no = int(st.trick_no[0])
    head = f"Agurk · match {int(st.match_id[0])} · round {int(st.round_no[0]) + 1}"
    head += " · round over" if over else f" · trick {trick_no + 1}/{h}"
    lines = [head + f" · dealer {names[int(st.dealer[0])]}"]
    width = max(len(n) for n in names)
    for s in range(p):
        tags = []
        if rules.lives:
            tags.append(f"lives {int(st.lives[0, s])}")
        if rules.rebuys:
            tags.append(f"rebuys {int(st.rebuys[0, s])}")
        if not st.alive[0, s]:
            tags.append("out")
        if over and (st.alive[0, s] or st.out_now[0, s]):
            tags.append(f"penalty {int(st.round_penalty[0, s])}")
        if st.winners[0, s]:
            tags.append("winner")
        if not over and s == cur:
            tags.append("to move")
        held = int(st.hands[0, s].sum())
        extra = ("  " + ", ".join(tags)) if tags else ""
        lines.append(f"  {names[s]:<{width}}  score {int(st.scores[0, s]):>3}  cards {held}{extra}")
    t = min(trick_no, h - 1) if not over else h - 1
    leader = int(st.trick_leader[0, t])
    if leader >= 0:
        order = [(leader + k) % p for k in range(p)]
        plays = [f"{names[s]} {CARDS[int(st.tricks[0, t, s])]}" for s in order if st.tricks[0, t, s] >= 0]
        label = "last trick" if over else "trick"
        lines.append(f"{label}: " + (", ".join(plays) if plays else "-"))
    if not over and 0 <= show < p:
        line = f"{names[show]} holds: " + " ".join(
            f"{CARDS[c]}x{n}" if n > 1 else CARDS[c] for c, n in enumerate(st.hands[0, show].tolist()) if n
        )
        if show == cur:
            line += f"  legal: {card_text(int(engine.legal_bits(rules, st)[0]))}"
        lines.append(line if st.hands[0, show].any() else f"{names[show]} holds no card")
    return "\n".join(lines)


def illegal_message(who: str, action: object, bits: int, actions: int) -> str:
    """The error text for an illegal ``action`` of ``who`` whose legal card set is ``bits``."""
    legal = card_text(bits)
    try:
        a = operator.index(cast("SupportsIndex", action))  # the check itself: TypeError for anything else
    except TypeError:
        return f"{who} must play a card (an action 0..{actions - 1}), got {action!r}; legal cards: {legal}"
    if not 0 <= a < actions:
        return f"{who} played action {a}, which is no card (actions are 0..{actions - 1}); legal cards: {legal}"
    return f"{who} may not play {CARDS[a]} (action {a}); legal cards: {legal}"
