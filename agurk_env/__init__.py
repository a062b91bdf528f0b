"""Agurk (Gurka, "Cucumber"): rules, a vectorized NumPy engine and game records."""

from agurk_env.rules import CARDS, OPTION_NAMES, PRESETS, Rules, RulesError

__all__ = ["CARDS", "OPTION_NAMES", "PRESETS", "Rules", "RulesError"]
