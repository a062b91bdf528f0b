"""The training mixture of a rules-conditioned network: rule sets drawn from weighted families.

A family (:class:`training.config.TableFamily`) names presets, player counts and hand
sizes to draw from, rule options set over the preset, a number of other options set at
random (rule combinations that match no preset) and a chance of single rounds. :func:`draw`
picks a family by weight, then each of its choices uniformly; a table that the rules refuse
(a hand too large for the deck, an impossible combination) is drawn again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from agurk_env.rules import CHOICES, PRESETS, Rules, RulesError
from training.config import MixtureConfig, TableFamily

RANDOM_VALUES: dict[str, tuple[Any, ...]] = {
    **CHOICES,
    "twos_rule": (False, True),
    "jokers": (0, 1, 2),
    "limit": (11, 21, 30, 40),
    "lives": (0, 2, 3),
    "rebuys": (0, 1),
}
"""The values ``random_options`` draws each option from (the choice options take every choice)."""
SINGLE_ROUND = {"limit": 1, "match_end": "first_out", "rebuys": 0, "lives": 0}
"""The options of a single-round table: anyone scoring goes out, and the match ends after that round."""
_RANDOM_NAMES = sorted(RANDOM_VALUES)  # the order random_options draws from, fixed for the seeded draws
_TRIES = 1000
_T = TypeVar("_T")


def _pick(rng: np.random.Generator, items: Sequence[_T]) -> _T:
    """One of ``items``, uniformly."""
    return items[int(rng.integers(len(items)))]


def draw_from(family: TableFamily, rng: np.random.Generator) -> Rules:
    """One table of ``family`` (drawn again while the rules refuse it)."""
    for _ in range(_TRIES):
        preset = _pick(rng, family.presets or list(PRESETS))
        options = {**PRESETS[preset], **family.rules}
        for i in rng.permutation(len(_RANDOM_NAMES))[: family.random_options]:
            options[_RANDOM_NAMES[i]] = _pick(rng, RANDOM_VALUES[_RANDOM_NAMES[i]])
        if rng.random() < family.single_round:
            options.update(SINGLE_ROUND)
        if family.players:
            options["players"] = _pick(rng, family.players)
        if family.hand_size:
            options["hand_size"] = _pick(rng, family.hand_size)
        if options.get("ace") == "low" and "ace_points" not in family.rules:
            options.pop("ace_points", None)  # resolves to 1 with a low ace
        try:
            return Rules.from_dict(options)
        except RulesError:
            continue
    raise RulesError(f"no table of this family fits the deck and the rules in {_TRIES} draws: {family}")


def draw(mixture: MixtureConfig, rng: np.random.Generator) -> Rules:
    """One table of the mixture: a family by weight, then its table."""
    families = list(mixture.families.values())
    weights = np.array([f.weight for f in families], np.float64)
    return draw_from(families[int(rng.choice(len(families), p=weights / weights.sum()))], rng)
