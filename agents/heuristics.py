"""Hand-written baseline strategies from the seed texts' advice, batched over games.

Each heuristic scores every card and plays the best-scoring legal one, so the rules
(the legal mask) always decide what is allowed and the heuristic only chooses. They
read the public state and their own hand only.

- ``shed``: get rid of high cards early, while others can still beat them (000:
  "Kom af med de høje kort tidligt"); the strongest legal card, always.
- ``guard``: high cards protect the low ones (004: "Hohe Karten schützen die
  kleinen"): lead high to make others burn their lowest card, follow with the
  weakest card that beats, keep the lowest card for the last trick.
- ``counter``: count what is gone (000: "Tæl de høje kort"): play the card most
  likely to end on top (fewest unseen stronger cards), keep the safest one.
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


def table(rules: Rules, d: Decision) -> Table:
    """Compute the shared :class:`Table` from a decision's public state (every rule fact asked of the engine)."""
    st = d.public
    a, h = rules.num_actions, rules.hand_size
    strength, points = engine.card_values(rules, st)
    hand = d.hand.astype(np.int64)
    unseen = engine.tables(rules).in_deck - hand - engine.cards_played(rules, st)
    takes = engine.takes_trick(rules, st)
    return Table(hand, strength, takes[:, :a], unseen, points, st.npos == 0, h - st.trick_no)


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


def counter(t: Table, legal: np.ndarray) -> np.ndarray:
    """Play the card with the fewest unseen stronger cards (most likely to end on top); keep the safest."""
    stronger = (t.unseen[:, None, :] * (t.strength[:, None, :] > t.strength[:, :, None])).sum(2)
    score = -stronger * 20.0 + t.strength  # fewest stronger unseen first, then the stronger card
    return _pick(legal, _keep_lowest(t, legal, score))


def ducker(t: Table, legal: np.ndarray) -> np.ndarray:
    """Pass the trick with the strongest card that does not take it; else take it for the fewest points."""
    score = np.where(t.takes, -t.points.astype(float), 100.0 + t.strength)
    return _pick(legal, score)


STRATEGIES = {"shed": shed, "guard": guard, "counter": counter, "ducker": ducker}
"""Every heuristic by name."""

DESCRIPTIONS = {
    "shed": "heuristic: always plays its strongest legal card (sheds high cards early)",
    "guard": "heuristic: leads high, follows with the weakest card that takes, keeps its lowest card",
    "counter": "heuristic: counts unseen cards, plays the one most likely to end on top, keeps the safest",
    "ducker": "heuristic: avoids taking tricks, or takes them for the fewest points (every-trick scoring)",
}
