"""Hand-written baseline strategies from the seed texts' advice, batched over games.

Each heuristic scores every card and plays the best-scoring legal one, so the rules
(the legal mask) always decide what is allowed and the heuristic only chooses. They
read the public state and their own hand only.

- ``shed``: get rid of high cards early, while others can still beat them (000:
  "Kom af med de høje kort tidligt"); the strongest legal card, always.
- ``guard``: high cards protect the low ones (004: "Hohe Karten schützen die
  kleinen"): lead high to make others burn their lowest card, follow with the
  weakest card that beats, keep the lowest card for the last trick.
- ``counter``: count what is gone (000: "Tæl de høje kort"): plays like ``guard``,
  but counts, for each card, the stronger cards the opponents can still hold (the
  unseen copies times the share of the unseen cards that are in their hands); a card
  with fewer than one is a *likely winner*, and once the mover holds at least as many
  likely winners as tricks before the last, it sheds the strongest one it may play.
- ``ducker``: for every-trick scoring: never take a trick you can pass, and when
  you must take it, take it with the card worth the fewest points.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from agurk_env import _rules_kernel as kernel
from agurk_env import engine, rules_kernel
from agurk_env.agent import Decision
from agurk_env.rules import Rules

_NEG = -1e9
ABOVE = 100
"""A score step above any card's strength: a card scored this much higher (or lower) goes before (or after) the rest."""


@dataclass
class Table:
    """Per-game facts the heuristics share, for the ``k`` games of a decision, shape ``(k, A)``."""

    hand: np.ndarray  # mover's cards, count per name
    strength: np.ndarray  # strength of each card in the current trick
    takes: np.ndarray  # playing the card would take the trick (so far)
    unseen: np.ndarray  # copies not in the mover's hand and not played this round
    points: np.ndarray  # penalty of each card if it wins the current trick
    leading: np.ndarray  # (k,) the mover leads the trick
    tricks_left: np.ndarray  # (k,) tricks left in the round, the current one included
    opponent_cards: np.ndarray  # (k,) cards in the other seats' hands (public)


def table(rules: Rules, d: Decision) -> Table:
    """Compute the shared :class:`Table` from a decision's public state (every rule fact asked of the engine)."""
    return table_of(rules, d.public, d.hand)


def table_of(rules: Rules, st: engine.State, hand: np.ndarray) -> Table:
    """The :class:`Table` of the player to move in each game of ``st``, holding ``hand`` (reads public fields only)."""
    a, h = rules.num_actions, rules.hand_size
    strength, points = engine.card_values(rules, st)
    hand = hand.astype(np.int64)
    unseen = engine.tables(rules).in_deck - hand - engine.cards_played(rules, st)
    takes = engine.takes_trick(rules, st)
    opponent_cards = engine.cards_left(rules, st).sum(1) - hand.sum(1)
    return Table(hand, strength, takes[:, :a], unseen, points, st.npos == 0, h - st.trick_no, opponent_cards)


def _pick(legal: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The legal card with the highest score in each game."""
    return np.where(legal, score, _NEG).argmax(1)


def _keep_lowest(t: Table, legal: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Lower the score of the mover's weakest card, unless it is the only legal one."""
    held = t.hand > 0
    weakest = np.where(held, t.strength, ABOVE).argmin(1)
    alternatives = legal.sum(1) > 1
    score = score.astype(float).copy()
    score[np.arange(len(score))[alternatives], weakest[alternatives]] -= ABOVE
    return score


class Heuristic:
    """A heuristic agent: ``choose(table, legal) -> actions``, wrapped as a batched agent."""

    sees_all = False

    def __init__(self, name: str, spec: str | None = None) -> None:
        self.name = name
        self.spec = spec or name
        self._choose = STRATEGIES[name]

    def act(self, decision: Decision) -> np.ndarray:
        """The heuristic's card in each game of the decision."""
        return self._choose(table(decision.rules, decision), decision.legal)

    def cards(
        self, rules: Rules, state: engine.State, bits: np.ndarray, rows: np.ndarray, facts: Callable[[], Table]
    ) -> np.ndarray:
        """Its card for the player to move in each of ``rows`` of ``state`` (legal sets ``bits``), without a Decision.

        The same card as :meth:`act` (tested): its compiled loop (:data:`COMPILED`, with numba), else its
        strategy on those rows of ``facts()``, the :func:`table_of` of the whole state (public fields and
        the mover's own hand only, row by row).
        """
        compiled = COMPILED.get(self.name)
        if compiled is not None and rules_kernel.HAS_NUMBA:
            out = np.empty(rows.size, np.int64)
            s = state
            compiled(engine.rule_array(rules), s.cur, s.trick_no, s.npos, s.top, s.locked, s.hands, bits, rows, out)
            return out
        whole = facts()
        return self._choose(
            Table(*(getattr(whole, f.name)[rows] for f in fields(Table))), engine.unpack(bits[rows], rules.num_actions)
        )


def shed(t: Table, legal: np.ndarray) -> np.ndarray:
    """Always the strongest legal card."""
    return _pick(legal, t.strength)


def guard(t: Table, legal: np.ndarray) -> np.ndarray:
    """Lead high; follow with the weakest card that takes the trick; keep the lowest card."""
    lead_score = t.strength
    follow_score = np.where(t.takes, ABOVE - t.strength, t.strength)  # weakest taker first, else strongest
    score = np.where(t.leading[:, None], lead_score, follow_score)
    return _pick(legal, _keep_lowest(t, legal, score))


LIKELY_WINNER = 1.0
"""``counter``: a card is a likely winner when the opponents hold fewer stronger cards than this, on average."""


def counter(t: Table, legal: np.ndarray) -> np.ndarray:
    """Like ``guard``, but shed the strongest likely winner once there are as many as tricks before the last."""
    stronger = (t.unseen[:, None, :] * (t.strength[:, None, :] > t.strength[:, :, None])).sum(2)  # (k, A)
    share = t.opponent_cards / np.maximum(t.unseen.sum(1), 1)  # chance an unseen copy is in an opponent's hand
    winner = stronger * share[:, None] < LIKELY_WINNER
    urgent = (winner & (t.hand > 0)).sum(1) >= t.tricks_left - 1
    shed_winner = urgent & (winner & legal).any(1)
    return np.where(shed_winner, _pick(legal & winner, t.strength), guard(t, legal))


def ducker(t: Table, legal: np.ndarray) -> np.ndarray:
    """Pass the trick with the strongest card that does not take it; else take it for the fewest points."""
    score = np.where(t.takes, -t.points.astype(float), ABOVE + t.strength)
    return _pick(legal, score)


STRATEGIES = {"shed": shed, "guard": guard, "counter": counter, "ducker": ducker}
"""Every heuristic by name."""


@kernel.njit
def guard_rows(
    t: np.ndarray,
    cur: np.ndarray,
    trick_no: np.ndarray,
    npos: np.ndarray,
    top: np.ndarray,
    locked: np.ndarray,
    hands: np.ndarray,
    bits: np.ndarray,
    rows: np.ndarray,
    out: np.ndarray,
) -> None:
    """:func:`guard`'s card in each of ``rows``, one game at a time, into ``out``: its scores, compiled.

    The loop :meth:`Heuristic.cards` runs (by the rules kernel's :func:`~agurk_env._rules_kernel.njit`,
    with numba): lead: strength; follow: ``ABOVE - strength`` for a card that takes the trick (the
    kernel's :func:`~agurk_env._rules_kernel.takes`), else strength; the weakest held card ``ABOVE``
    lower when there is a choice; the first best legal card. ``t`` is :func:`agurk_env.engine.rule_array`.
    """
    a = t[kernel.ACTIONS]
    for i in range(rows.size):
        g = rows[i]
        last = 1 if trick_no[g] == t[kernel.HAND_SIZE] - 1 else 0
        base = kernel.STRENGTH + last * kernel.W
        weakest, weakest_strength = 0, ABOVE
        for c in range(a):
            if hands[g, cur[g], c] > 0 and t[base + c] < weakest_strength:
                weakest, weakest_strength = c, t[base + c]
        choice = bits[g] & (bits[g] - 1) != 0
        best, best_score = -1, 0
        for c in range(a):
            if not (bits[g] >> c) & 1:
                continue
            strength = t[base + c]
            score = strength
            if npos[g] > 0 and kernel.takes(t, strength, top[g], locked[g], last):
                score = ABOVE - strength
            if choice and c == weakest:
                score -= ABOVE
            if best < 0 or score > best_score:
                best, best_score = c, score
        out[i] = best


COMPILED = {"guard": guard_rows}
"""The heuristics with a compiled loop over a state's rows (:meth:`Heuristic.cards`): their arrays' card, compiled."""

DESCRIPTIONS = {
    "shed": "heuristic: always plays its strongest legal card (sheds high cards early)",
    "guard": "heuristic: leads high, follows with the weakest card that takes, keeps its lowest card",
    "counter": "heuristic: plays like guard, but counts the unseen stronger cards and sheds likely winners in time",
    "ducker": "heuristic: avoids taking tricks, or takes them for the fewest points (every-trick scoring)",
}

rules_kernel.fresh_cache(sys.modules[__name__])  # guard_rows has the kernel compiled into it
