"""The games of every user: unguessable ids, a secret token per game, bounded count, expiry.

A game belongs to whoever holds its token (handed out once, when the game is made); a
request with another token is refused like one without. Finished games are forgotten
``finished_s`` after their last request, any game ``idle_s`` after it, and at most
``max_games`` live at once, so memory stays bounded however many users come.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from agurk.web.session import Session, WebError


@dataclass(frozen=True)
class Limits:
    """How many games a server keeps, for how long, and whether a request may name a checkpoint file."""

    max_games: int = 1000
    idle_s: float = 1800.0
    finished_s: float = 600.0
    checkpoints: bool = True
    """Whether agent specs may name files on the server's disk (``ppo:PATH``, ``guided:policy=PATH``)."""


class Store:
    """Games by id, each with its token; thread-safe."""

    def __init__(self, limits: Limits = Limits(), clock: Callable[[], float] = time.monotonic) -> None:
        self.limits, self.clock = limits, clock
        self._games: dict[str, tuple[str, Session]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def add(self, session: Session) -> tuple[str, str]:
        """Keep ``session``; returns its ``(id, token)``. Refused (503) when the server is full."""
        self.sweep()
        game_id, token = secrets.token_urlsafe(16), secrets.token_urlsafe(24)
        with self._lock:
            if len(self._games) >= self.limits.max_games:
                raise WebError(503, f"the server holds {self.limits.max_games} games, its limit: try again later")
            session.touched = self.clock()
            self._games[game_id] = (token, session)
        return game_id, token

    def get(self, game_id: str, token: str | None) -> Session:
        """The game ``game_id`` if ``token`` is its token (404 unknown or expired, 403 wrong token)."""
        entry = self._games.get(game_id)
        if entry is None or self._expired(entry[1]):
            raise WebError(404, "unknown game id (never made, ended, or expired)")
        if not token or not hmac.compare_digest(entry[0].encode(), token.encode()):
            raise WebError(403, "wrong or missing game token (X-Game-Token): the game belongs to another browser")
        entry[1].touched = self.clock()
        return entry[1]

    def touch(self, session: Session) -> None:
        """Restart ``session``'s expiry clock: its answer is being sent (a slow move does not count as idle)."""
        session.touched = self.clock()

    def remove(self, game_id: str) -> None:
        """Forget a game."""
        with self._lock:
            self._games.pop(game_id, None)

    def sweep(self) -> int:
        """Forget the expired games; returns how many."""
        with self._lock:
            gone = [g for g, (_, session) in self._games.items() if self._expired(session)]
            for g in gone:
                del self._games[g]
        return len(gone)

    def _expired(self, session: Session) -> bool:
        if session.lock.locked():  # a request is working on it
            return False
        idle = self.clock() - session.touched
        return idle > self.limits.idle_s or (session.over and idle > self.limits.finished_s)
