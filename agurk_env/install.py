"""The one install hint: the command that installs an extra's optional dependencies from the clone."""

from __future__ import annotations


def install(extra: str) -> str:
    """``pip install -e ".[EXTRA]"``: what a message tells a user to run when ``extra``'s packages are missing."""
    return f'pip install -e ".[{extra}]"'
