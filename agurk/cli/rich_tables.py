"""Tables on stdout: on a terminal at its width; into a file or a pipe unwrapped, one line per row."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table

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
