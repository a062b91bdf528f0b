"""``agurk serve``'s duplicate results as players of ``agurk leaderboard``: each person's matches at its table.

The database is read, never written (opened read-only). A row counts for a leaderboard when its rules
are the leaderboard's, every opponent is one of its agents (the spec as written), and it holds the
finishing levels of the person's match (rows written before ``agurk serve`` kept them have none).
What counts is handed to :func:`skill.leaderboard.leaderboard` as plain data
(:class:`skill.people.PersonMatches`); the rest is counted by reason.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agurk.cli.common import resolve_rules
from agurk.web.duplicate import PLACES, decoded
from agurk_env.rules import Rules, RulesError
from skill.people import PersonMatches

LeftOut = dict[str, Counter[str]]
"""Per person, the rows left out, counted by reason (``at other rules (standard + players=3)``, ...)."""


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every finished duplicate match in the database at ``path``, oldest first; ``ValueError`` (one line) if none."""
    if not path.is_file():
        raise ValueError("no database there (agurk serve --db PATH keeps one)")
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            db.row_factory = sqlite3.Row
            rows = [decoded(r) for r in db.execute("SELECT * FROM duplicate ORDER BY id")]
        finally:
            db.close()
    except sqlite3.Error as e:
        raise ValueError(f"not a database of agurk serve's duplicate results ({e})") from None
    if not rows:
        raise ValueError("the database holds no finished duplicate match")
    return rows


def rules_of(label: str) -> Rules | None:
    """The rules a row's label names (``standard + hand_size=3 + players=3``); ``None`` if they no longer resolve."""
    preset, *sets = label.split(" + ")
    try:
        return resolve_rules(preset, sets)
    except RulesError:
        return None


def left_out(row: dict[str, Any], rules: Rules, specs: Sequence[str]) -> str | None:
    """Why ``row`` does not count for a leaderboard of ``specs`` at ``rules`` (``None``: it counts)."""
    found = rules_of(row["rules"])
    if found is None or found.to_dict() != rules.to_dict():
        return f"at other rules ({row['rules']})"
    strangers = sorted({s for s in row["opponents"].split(",") if s not in specs})
    if strangers:
        return f"against {', '.join(strangers)}, not among --agents"
    if row[PLACES] is None:
        return "without finishing levels (written before agurk serve kept them)"
    return None


def people_matches(
    rows: list[dict[str, Any]], rules: Rules, specs: Sequence[str]
) -> tuple[list[PersonMatches], LeftOut]:
    """Each person's matches at the table of ``rules`` against ``specs`` (by name), and the rows left out."""
    seats: dict[str, list[list[str | None]]] = {}
    places: dict[str, list[list[int]]] = {}
    dropped: LeftOut = {}
    for row in rows:
        reason = left_out(row, rules, specs)
        if reason is not None:
            dropped.setdefault(row["person"], Counter())[reason] += 1
            continue
        opponents: list[str | None] = list(row["opponents"].split(","))
        seats.setdefault(row["person"], []).append([*opponents[: row["seat"]], None, *opponents[row["seat"] :]])
        places.setdefault(row["person"], []).append(row[PLACES])
    return [PersonMatches(name, seats[name], places[name]) for name in sorted(seats)], dropped


def reasons(counts: Counter[str]) -> str:
    """``3 at other rules (...), 1 against pimc, not among --agents``: the most common first, at most three."""
    common = counts.most_common()
    text = ", ".join(f"{n} {why}" for why, n in common[:3])
    return text + (f" and {sum(n for _, n in common[3:])} more" if len(common) > 3 else "")
