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

from dataclasses import dataclass

import numpy as np

from agurk_env import engine
from agurk_env.agent import Decision
from agurk_env.rules import Rules

_NEG = -1e9


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
    weakest = np.where(held, t.strength, 99).argmin(1)
    alternatives = legal.sum(1) > 1
    score = score.astype(float).copy()
    score[np.arange(len(score))[alternatives], weakest[alternatives]] -= 100.0
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


def shed(t: Table, legal: np.ndarray) -> np.ndarray:
    """Always the strongest legal card."""
    return _pick(legal, t.strength)


def guard(t: Table, legal: np.ndarray) -> np.ndarray:
    """Lead high; follow with the weakest card that takes the trick; keep the lowest card."""
    lead_score = t.strength
    follow_score = np.where(t.takes, 100 - t.strength, t.strength)  # weakest taker first, else strongest
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
    score = np.where(t.takes, -t.points.astype(float), 100.0 + t.strength)
    return _pick(legal, score)


STRATEGIES = {"shed": shed, "guard": guard, "counter": counter, "ducker": ducker}
"""Every heuristic by name."""

DESCRIPTIONS = {
    "shed": "heuristic: always plays its strongest legal card (sheds high cards early)",
    "guard": "heuristic: leads high, follows with the weakest card that takes, keeps its lowest card",
    "counter": "heuristic: plays like guard, but counts the unseen stronger cards and sheds likely winners in time",
    "ducker": "heuristic: avoids taking tricks, or takes them for the fewest points (every-trick scoring)",
}
