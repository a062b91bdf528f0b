"""The episodes of every Agurk environment and trainer, and their rewards, from engine states.

``round``: each round is an episode; every seat in it gets ``-penalty / limit``.
``match``: the whole match; a seat gets its placement reward when it leaves the match
or the match ends (place ``q`` of ``n`` is worth ``1 - 2 (q - 1) / (n - 1)``).
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from agurk_env import engine
from agurk_env.rules import Rules

Episode = Literal["round", "match"]
EPISODES: tuple[str, ...] = get_args(Episode)
"""The episode kinds: one round, or a whole match."""


def round_rewards(rules: Rules, state: engine.State, scale: float = 0.0) -> np.ndarray:
    """``(B, P)`` float32 round rewards: ``-penalty / scale``, by default ``/ limit`` (valid at a round's end)."""
    return (state.round_penalty / -(scale or rules.limit)).astype(np.float32)


def placement_rewards(rules: Rules, state: engine.State) -> tuple[np.ndarray, np.ndarray]:
    """``(finished, reward)``, both ``(B, P)``: the seats whose match ends now, and their placement reward.

    Valid at a round's end. A seat finishes when it goes out or when the match ends
    while it is in. Winners take the best places; the seats that went out this round
    and did not win take the places after every seat still in (or winning), sharing
    their mean. Place ``q`` of ``n`` is worth ``1 - 2 (q - 1) / (n - 1)``.
    """
    p = rules.players
    winners = state.winners
    finished = state.out_now | (state.match_over[:, None] & state.alive)
    losers = finished & ~winners
    n_win = winners.sum(1, keepdims=True)
    better = (state.alive | winners).sum(1, keepdims=True)
    place = np.where(winners, (1 + n_win) / 2, better + (losers.sum(1, keepdims=True) + 1) / 2)
    reward = np.where(finished, 1 - 2 * (place - 1) / (p - 1), 0.0)
    return finished, reward.astype(np.float32)
