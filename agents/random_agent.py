"""The uniform random agent: every legal card equally likely, for a whole batch at once."""

from __future__ import annotations

import numpy as np

from agents.base import Decision
from agurk_env import engine

_KTH_FLAT = np.ascontiguousarray(engine.KTH_MEMBER).reshape(-1).astype(np.int64)
_KTH_WIDTH = engine.KTH_MEMBER.shape[1]


def random_legal(bits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random card from each card-set bitmask (``engine.legal_bits`` output).

    ``k = floor(u * size)`` with ``u`` uniform in [0, 1), then the k-th member of the set by
    table lookup (:data:`engine.SET_SIZE`, :data:`engine.KTH_MEMBER`). Returns int64 action
    indices with the shape of ``bits``; an empty set raises ``ValueError``.
    """
    bits = np.asarray(bits, dtype=np.int64)
    size = engine.SET_SIZE[bits]
    if not size.all():
        raise ValueError("random_legal got an empty card set (no legal card)")
    k = (rng.random(bits.shape) * size).astype(np.int64)
    return _KTH_FLAT[bits * _KTH_WIDTH + k]


class RandomAgent:
    """Plays a uniformly random legal card in every game (vectorized, no per-game loop)."""

    def __init__(self, rng: np.random.Generator, spec: str = "random") -> None:
        self.rng = rng
        self.spec = spec

    sees_all = False

    def act(self, decision: Decision) -> np.ndarray:
        """A uniformly random legal card in each game of the decision."""
        return random_legal(engine.pack(decision.legal), self.rng)

    def __repr__(self) -> str:
        return f"RandomAgent(spec={self.spec!r})"
