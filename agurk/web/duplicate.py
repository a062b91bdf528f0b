"""Duplicate play in the browser: a person plays the deals an agent played, and their results are compared.

A duplicate game (``POST /api/games`` with ``"duplicate": AGENT``) is a played game whose seed the
server picks: the person's next deal (:meth:`Results.next_seed`). The comparison agent plays that
same match (match 0 of the seed: the same deals, since the engine deals from the seed and the match
number alone) from the person's seat against the same opponent specs, each seat's agent drawing from
``numpy.random.default_rng([seed, seat])`` as in every other front end (:func:`agent_match`). Once the
person's match is over, both results on the same cards are written as one row of a local SQLite
database (:class:`Results`, one write per finished match, committed at once), and the summary per
person (:func:`summary`) gives the mean difference, person minus agent, with a 95% interval.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from agents.tournament_stats import places
from agurk.match import Match, seat_specs
from agurk_env import engine
from agurk_env.rules import Rules

DEFAULT_DB = Path("runs") / "agurk-web.sqlite"
"""Where ``agurk serve`` keeps the duplicate results unless ``--db`` says otherwise."""
GUEST = "guest"
"""The person's name when a duplicate request gives none."""
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.@-]{0,39}")
"""A person's name: 1-40 letters, digits, spaces and ``_ . @ -``, starting with a letter or digit."""
Z95 = 1.959963984540054
"""The standard normal's 97.5% quantile: a 95% interval is the mean +- this many standard errors."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS duplicate (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    person TEXT NOT NULL,
    agent TEXT NOT NULL,
    rules TEXT NOT NULL,
    players INTEGER NOT NULL,
    opponents TEXT NOT NULL,
    seat INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    match INTEGER NOT NULL,
    person_win REAL NOT NULL,
    person_penalty REAL NOT NULL,
    person_rounds INTEGER NOT NULL,
    agent_win REAL NOT NULL,
    agent_penalty REAL NOT NULL,
    agent_rounds INTEGER NOT NULL,
    finished TEXT NOT NULL,
    person_places TEXT
);
CREATE INDEX IF NOT EXISTS duplicate_person ON duplicate (person, seed);
"""
COLUMNS = (
    "person agent rules players opponents seat seed match person_win person_penalty person_rounds "
    "agent_win agent_penalty agent_rounds finished person_places"
).split()
"""A row's columns (besides its ``id``), in order."""
PLACES = "person_places"
"""The column of each seat's finishing level in the person's match (JSON; ``NULL`` in rows written before it)."""


class SeatResult(TypedDict):
    """One seat's result in one match: win share, penalty per round played, and the rounds."""

    win: float
    """1/k when the seat is one of the match's k winners, else 0."""
    penalty: float
    """Mean penalty per round the seat played."""
    rounds: int
    """Rounds the seat played."""
    penalties: list[int | None]
    """The seat's penalty in each round of the match (``None``: not in that round)."""


def seat_result(ends: tuple[engine.State, ...] | list[engine.State], final: engine.State, seat: int) -> SeatResult:
    """``seat``'s result in a finished match: its round end states ``ends`` and its last state ``final``."""
    penalties: list[int | None] = []
    for end in ends:
        played = bool(end.alive[0, seat] or end.out_now[0, seat])
        penalties.append(int(end.round_penalty[0, seat]) if played else None)
    counted = [p for p in penalties if p is not None]
    winners = np.flatnonzero(final.winners[0]).tolist()
    win = 1.0 / len(winners) if seat in winners else 0.0
    return {
        "win": win,
        "penalty": sum(counted) / len(counted) if counted else 0.0,
        "rounds": len(counted),
        "penalties": penalties,
    }


def match_result(match: Match, seat: int) -> SeatResult:
    """``seat``'s result in ``match``, which is over."""
    return seat_result(match.env.round_ends, match.env.engine_state, seat)


def match_places(match: Match) -> list[int]:
    """Each seat's finishing level in ``match``, which is over: 0 for the winners, then by the round a seat went out.

    The levels of :func:`agents.tournament_stats.places`, which ``agurk leaderboard`` rates: the seats out
    latest first, those out in the same round tied.
    """
    out_round = np.full(match.rules.players, -1)
    for end in match.env.round_ends:
        out_round[end.out_now[0]] = int(end.round_no[0])
    return places(match.env.engine_state.winners[:1], out_round[None])[0].tolist()


def agent_specs(opponents: str, players: int, seat: int, agent: str) -> str:
    """Every seat's spec, ``agent`` at ``seat`` and the opponents elsewhere (as the person's game seats them)."""
    specs = seat_specs(opponents, players, seat)
    specs[seat] = agent.strip()
    return ",".join(specs)


def agent_match(rules: Rules, opponents: str, seat: int, agent: str, seed: int) -> SeatResult:
    """The comparison agent's result: it plays match 0 of ``seed`` from ``seat`` against ``opponents``.

    The same match as ``agurk simulate --agents SPECS --seed SEED --matches 1`` (SPECS: :func:`agent_specs`).
    """
    match = Match(rules, agent_specs(opponents, rules.players, seat, agent), None, seed)
    while not match.over:
        match.apply(match.agent_card())
    return match_result(match, seat)


def check_name(name: str) -> str:
    """The person's name, stripped (:data:`GUEST` when empty); ``ValueError`` when it is not a :data:`NAME`."""
    name = " ".join(name.split()) or GUEST
    if not NAME.fullmatch(name):
        raise ValueError(
            f"name must be 1-40 letters, digits, spaces and _ . @ -, starting with a letter or digit, not {name!r}"
        )
    return name


class Interval(TypedDict):
    """A mean over matches and its 95% interval (``None`` with fewer than two matches)."""

    mean: float
    low: float | None
    high: float | None


def interval(values: list[float]) -> Interval:
    """The mean of ``values`` and its normal 95% interval: mean +- 1.96 standard errors (sample deviation)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return {"mean": mean, "low": None, "high": None}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return {"mean": mean, "low": mean - half, "high": mean + half}


class Summary(TypedDict):
    """One person's duplicate matches against one agent (``GET /api/duplicate``)."""

    person: str
    agent: str
    matches: int
    person_win: float
    """The person's mean win share."""
    agent_win: float
    person_penalty: float
    """The person's mean penalty per round played (a mean over matches)."""
    agent_penalty: float
    win_diff: Interval
    """Person minus agent, win share, over matches."""
    penalty_diff: Interval
    """Person minus agent, penalty per round, over matches (negative: the person took fewer points)."""


def summary(rows: list[dict[str, Any]]) -> list[Summary]:
    """Per (person, agent), in that order: the matches, the means and the differences with their intervals."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["person"], row["agent"]), []).append(row)
    out: list[Summary] = []
    for (person, agent), group in sorted(groups.items()):
        n = len(group)
        out.append(
            {
                "person": person,
                "agent": agent,
                "matches": n,
                "person_win": sum(r["person_win"] for r in group) / n,
                "agent_win": sum(r["agent_win"] for r in group) / n,
                "person_penalty": sum(r["person_penalty"] for r in group) / n,
                "agent_penalty": sum(r["agent_penalty"] for r in group) / n,
                "win_diff": interval([r["person_win"] - r["agent_win"] for r in group]),
                "penalty_diff": interval([r["person_penalty"] - r["agent_penalty"] for r in group]),
            }
        )
    return out


@dataclass
class Duplicate:
    """A duplicate game's comparison: the person, the agent, the deal, and once over both results."""

    person: str
    agent: str
    rules: str
    """The rules as the request gave them (``standard + hand_size=3 + players=3``)."""
    opponents: str
    seed: int
    match: Match
    """The comparison agent's match (match 0 of ``seed``), played in the background once the game is made."""
    played: Any = None
    """The ``asyncio`` task that plays :attr:`match` to its end (set when the game is made)."""
    done: bool = False
    """The row is being or has been written (at most once per game)."""
    result: dict[str, Any] | None = None
    """Once the person's match is over and the row written: the row's ``person`` and ``agent`` results."""

    def view(self) -> dict[str, Any]:
        """What a duplicate game's view adds (``view["duplicate"]``)."""
        out: dict[str, Any] = {"person": self.person, "agent": self.agent, "deal": self.seed, "match": 0}
        if self.result is not None:
            out.update(self.result)
        return out


class Results:
    """The duplicate results: one SQLite file (``":memory:"`` for none), one connection behind a lock.

    Opened on first use, in WAL mode, so other readers (another server, ``sqlite3``) never block a
    write; each finished match is one committed insert, so nothing is lost when the server stops.
    """

    def __init__(self, path: Path | str = ":memory:") -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._issued: dict[str, int] = {}  # the highest seed handed to each person since the server started

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            if str(self.path) != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
            db.row_factory = sqlite3.Row
            _set_up(db, wal=str(self.path) != ":memory:")
            self._db = db
        return self._db

    def next_seed(self, person: str) -> int:
        """The seed of ``person``'s next deal: one past the highest they finished or were handed, 0 first.

        Every person plays the same deals in the same order (0, 1, 2, ...); a deal handed out and never
        finished is not handed out again until the server restarts.
        """
        with self._lock:
            (done,) = self._conn().execute("SELECT MAX(seed) FROM duplicate WHERE person = ?", (person,)).fetchone()
            seed = max(-1 if done is None else done, self._issued.get(person, -1)) + 1
            self._issued[person] = seed
            return seed

    def unissue(self, person: str, seed: int) -> None:
        """Take back ``seed`` from ``person`` (their game could not be made), if it is the last handed out."""
        with self._lock:
            if self._issued.get(person) == seed:
                self._issued[person] = seed - 1

    def add(self, row: dict[str, Any]) -> int:
        """Write one finished match (:data:`COLUMNS`; ``finished`` defaults to now, UTC) and commit; its id."""
        row = {"finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **row}
        with self._lock:
            db = self._conn()
            cur = db.execute(
                f"INSERT INTO duplicate ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                [json.dumps(row[c]) if c == PLACES else row[c] for c in COLUMNS],
            )
            db.commit()
            return int(cur.lastrowid or 0)

    def rows(self, person: str | None = None) -> list[dict[str, Any]]:
        """Every finished duplicate match (of ``person`` only, when given), oldest first."""
        query = "SELECT * FROM duplicate"
        args: tuple[str, ...] = ()
        if person is not None:
            query, args = query + " WHERE person = ?", (person,)
        with self._lock:
            return [decoded(r) for r in self._conn().execute(query + " ORDER BY id", args)]

    def close(self) -> None:
        """Close the connection (the next use opens it again)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _set_up(db: sqlite3.Connection, wal: bool, seconds: float = 30.0) -> None:
    """WAL mode, the schema and its columns; retried while another server sets up the same new file.

    Switching a new file to WAL needs it alone, and SQLite answers "database is locked" at once,
    without its busy wait, when another connection is setting it up at that moment.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            if wal:
                db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            _add_places(db)
            db.commit()
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            db.rollback()
            time.sleep(0.05)


def _add_places(db: sqlite3.Connection) -> None:
    """Add the :data:`PLACES` column to a database made before it (its old rows ``NULL``), once."""
    if PLACES not in {r[1] for r in db.execute("PRAGMA table_info(duplicate)")}:
        try:
            db.execute(f"ALTER TABLE duplicate ADD COLUMN {PLACES} TEXT")
        except sqlite3.OperationalError as e:  # another server added it meanwhile
            if "duplicate column" not in str(e):
                raise


def decoded(row: sqlite3.Row) -> dict[str, Any]:
    """A stored row as a dict, its :data:`PLACES` a list (``None`` when the row has none)."""
    out = dict(row)
    text = out.get(PLACES)
    out[PLACES] = None if text is None else json.loads(text)
    return out
