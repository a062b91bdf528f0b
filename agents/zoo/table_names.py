"""Table names: the preset a rule set is, and the short text that names a table (``standard 4x7``)."""

from __future__ import annotations

from agurk_env.rules import PRESETS, Rules, RuleValue

TABLE_OPTIONS = ("players", "hand_size")
"""The rule options that make a table of a rule set rather than other rules."""


def table_text(rules: Rules, players: str | None = None, preset: str | None = None) -> str:
    """``standard 4x7`` or ``free_choice 3x5 (ace_lock=any, limit=1)``: a preset, the table, the other options.

    The preset is ``preset`` or the nearest one; ``players`` replaces the player count (``"2-7"``).
    """
    mine = rules.to_dict()

    def other(name: str) -> dict[str, RuleValue]:
        base = Rules.preset(name).to_dict()
        return {k: v for k, v in mine.items() if k not in TABLE_OPTIONS and base[k] != v}

    name = preset or min(PRESETS, key=lambda n: len(other(n)))
    extra = ", ".join(f"{k}={v}" for k, v in other(name).items())
    return f"{name} {players or rules.players}x{rules.hand_size}" + (f" ({extra})" if extra else "")


def preset_of(rules: Rules) -> str | None:
    """The preset ``rules`` are (whatever the player count and hand size), or ``None``."""
    mine = {k: v for k, v in rules.to_dict().items() if k not in TABLE_OPTIONS}
    for name in PRESETS:
        base = Rules.preset(name).to_dict()
        if all(base[k] == v for k, v in mine.items()):
            return name
    return None
