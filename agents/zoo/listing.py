"""What ``agurk zoo`` prints: the shipped policies one per line, then the universal network at every preset."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _rate(rate: float, low: float, high: float) -> str:
    return f"{rate:.3f} [{low:.3f}, {high:.3f}]"


def _strength(row: Mapping[str, Any]) -> str:
    s = row.get("strength")
    return f"{_rate(s['win_rate'], *s['win_rate_ci'])} vs {s['opponent']} ({s['deals']} deals)" if s else "-"


def policy_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per shipped policy (:func:`agents.zoo.describe`'s rows), and why it ships under it."""
    lines = [] if rows else ["the zoo is empty"]
    for row in rows:
        minutes = "-" if row["train_seconds"] is None else f"{row['train_seconds'] / 60:.0f} min"
        blend = f"  (weights: the mean of {len(row['blend'])} checkpoints)" if row.get("blend") else ""
        if row.get("ensemble"):
            blend = f"  (an ensemble of {len(row['ensemble'])} networks)"
        lines.append(
            f"{'zoo:' + row['name']:<24} {row['table']:<30} {row['decisions']:>11,} decisions  {minutes:>7}"
            f"  {_strength(row)}{blend}"
        )
        lines += [f"{'':<24} {row['why']}"] if row["why"] else []
    return lines


def preset_lines(table: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The shipped table of every preset (:func:`agents.zoo.preset_table`; ``rows`` with what ``best`` plays)."""
    lines = ["", f"zoo:universal at every preset, {table['what']}, win rate [95% CI]: {table['command']}"]
    for r in rows:
        search = f"{r['search']} {_rate(*r['search_win'])}" if r.get("search") else "-"
        lines.append(f"  {r['preset']:<16} zoo {_rate(*r['zoo'])}   search {search:<38} best plays {r['best']}")
    return lines
