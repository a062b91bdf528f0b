"""Tables on stdout: on a terminal at its width; into a file or a pipe unwrapped, one line per row."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table

    from skill.sweep import SweepRow

UNWRAPPED = 10_000
"""Columns of the console a table is written to a file with: wide enough that no cell wraps."""


def print_table(table: Table) -> None:
    """Print the rich ``table`` on stdout; written to a file or a pipe, every row stays one line.

    A console that is not a terminal is 80 columns wide, so a wide table would wrap cell by
    cell in a log file; there the table gets the width it needs.
    """
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=UNWRAPPED)
    console.print(table)


def sweep_table(rows: list[SweepRow], title: str) -> Table:
    """A sweep's rows (``skill.sweep.COLUMNS``) as a rich table: each statistic with its 95% interval."""
    from rich.table import Table

    keys = ("preset", "players", "hand_size", "seed", "override", "agent", "opponent", "deals")
    stats = (("win rate", "win_rate", 3), ("penalty", "mean_penalty", 2), ("last trick", "last_trick_rate", 3))
    stats += (("rating", "rating", 0),)
    table = Table(title=title, title_justify="left")
    for key in keys:
        name = "hand" if key == "hand_size" else key
        table.add_column(name, justify="right" if key in ("players", "hand_size", "seed", "deals") else "left")
    for name, _, _ in stats:
        table.add_column(name)
    for r in rows:
        cells = [str(r[k]) for k in keys]
        for _, key, digits in stats:
            cells.append(f"{r[key]:.{digits}f} [{r[f'{key}_low']:.{digits}f}, {r[f'{key}_high']:.{digits}f}]")
        table.add_row(*cells)
    return table
