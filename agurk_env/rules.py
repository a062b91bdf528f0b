"""The rule options of Agurk (RULES.md), their presets, and validation.

A :class:`Rules` is frozen and always fully resolved: every option holds a
concrete value and every impossible combination is refused at construction
with a one-line :class:`RulesError` naming the option and its allowed values.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from agurk_env.options import OptionError, check, declared, option, unknown
from agurk_env.options import check_choice as check_choice
from agurk_env.options import split_assignment as split_assignment

CARDS: tuple[str, ...] = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "X")
"""Card names in action order: action ``i`` plays ``CARDS[i]`` (``X`` = joker)."""

DECK_SIZE = 52

Ace = Literal["high", "low", "low_in_last_trick"]
FirstLeader = Literal["left_of_dealer", "dealer"]
BeatTarget = Literal["highest", "previous"]
EqualBeats = Literal["always", "not_last_trick", "never"]
BeatChoice = Literal["forced", "nearest", "optional"]
AceLock = Literal["none", "led", "any"]
Scoring = Literal["last_trick", "every_trick"]
LastTrickTies = Literal["all", "winner"]
LimitRule = Literal["reach", "exceed"]
MatchEnd = Literal["last_standing", "first_out"]
RuleValue = int | str | bool | None
"""The value of one rule option (``players=5``, ``ace="low"``, ``twos_rule=True``, ``ace_points=None``)."""


class RulesError(OptionError):
    """An invalid option, value or combination of options (one-line message)."""


@dataclass(frozen=True)
class Rules:
    """Every rule option of RULES.md, resolved; see ``agurk rules`` for presets."""

    players: int = option(4, low=2, high=8)
    """Seats at the table, 2..8."""
    hand_size: int = option(7, low=1)
    """Cards dealt to each seat, and tricks per round."""
    jokers: int = option(0, low=0, high=2)
    """Jokers (``X``, strength and points 15) added to the 52-card deck: 0, 1 or 2."""
    ace: Ace = "high"
    """Ace strength: ``high`` (14), ``low`` (1) or ``low_in_last_trick`` (14, but 1 in the last trick)."""
    ace_points: int | None = option(None, low=0)
    """Penalty points of an ace; ``None`` resolves to 14 (1 when ``ace=low``)."""
    first_leader: FirstLeader = "left_of_dealer"
    """Who leads trick 1: the seat left of the dealer, or the dealer."""
    beat_target: BeatTarget = "highest"
    """What a follower must reach: the highest card in the trick, or the previous card."""
    equal_beats: EqualBeats = "always"
    """Whether an equal card beats: ``always``, ``not_last_trick`` or ``never``."""
    beat_choice: BeatChoice = "forced"
    """A player who can beat: must beat (``forced``), must beat with the least card (``nearest``),
    or may beat or play the lowest card (``optional``)."""
    ace_lock: AceLock = "none"
    """A high ace locks the trick when led (``led``) or when in it at all (``any``)."""
    twos_rule: bool = False
    """When a 2 is led, a player holding a 2 must play it."""
    scoring: Scoring = "last_trick"
    """Which tricks score: only the last one, or every trick."""
    last_trick_ties: LastTrickTies = "all"
    """In the last trick, every seat with a card of the winning strength scores (``all``) or only the winner."""
    limit: int = option(30, low=1)
    """Points at which a seat goes out (points mode)."""
    limit_rule: LimitRule = "reach"
    """Out when the score reaches (>=) or exceeds (>) the limit."""
    match_end: MatchEnd = "last_standing"
    """The match ends when one seat is left, or after the first round in which anyone goes out."""
    rebuys: int = option(0, low=0)
    """Rebuys per seat (points mode with ``last_standing`` only)."""
    rebuy_min_others: int = option(0, low=0)
    """Other seats that must stay in for a rebuy to be allowed."""
    lives: int = option(0, low=0)
    """Lives per seat; 0 plays points mode."""

    def __post_init__(self) -> None:
        check(self, RulesError)
        if self.ace_points is None:
            object.__setattr__(self, "ace_points", 1 if self.ace == "low" else 14)
        _validate(self)

    @property
    def num_actions(self) -> int:
        """13 actions, or 14 when jokers are in the deck."""
        return 14 if self.jokers else 13

    @property
    def deck_size(self) -> int:
        """52 cards plus the jokers."""
        return DECK_SIZE + self.jokers

    def replace(self, **changes: RuleValue) -> Rules:
        """Return a copy with some options changed (``ace_points`` re-resolves with ``ace``)."""
        current = self.to_dict()
        if "ace" in changes and "ace_points" not in changes:
            current.pop("ace_points")
        return Rules.from_dict({**current, **changes})

    def to_dict(self) -> dict[str, RuleValue]:
        """Every option and its value, in RULES.md table order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, RuleValue]) -> Rules:
        """Build from a (partial) option dict; unknown options are refused."""
        for key in data:
            if key not in OPTION_NAMES:
                raise RulesError(str(unknown(key, OPTION_NAMES, "rule option")))
        # Each value is converted and checked by its declaration (check, in __post_init__), not by the signature.
        return cls(**cast("Mapping[str, Any]", data))

    @classmethod
    def preset(cls, name: str, **overrides: RuleValue) -> Rules:
        """The named preset (``agurk rules`` lists them), with any options overridden on top of it.

        ``overrides`` are rule options by name (any field of :class:`Rules`); an unknown
        preset or option, a bad value or an impossible combination raises :class:`RulesError`::

            Rules.preset("danish21")                         # limit 21, aces lock any trick
            Rules.preset("standard", players=3, limit=21)    # standard rules for three seats, out at 21
            Rules.preset("lives", players=5, hand_size=6)    # lives mode: 3 lives per seat, 6 cards each
        """
        if name not in PRESETS:
            raise RulesError(f"unknown preset {name!r}; presets are: {', '.join(PRESETS)}")
        return cls.from_dict({**PRESETS[name], **overrides})


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rules))
CHOICES: dict[str, tuple[str, ...]] = {o.name: o.choices for o in declared(Rules).values() if o.choices}
"""The allowed values of every choice option, read off its declaration."""

_EVERY_TRICK: dict[str, RuleValue] = {
    "ace": "low",
    "equal_beats": "never",
    "beat_choice": "optional",
    "scoring": "every_trick",
    "last_trick_ties": "winner",
    "limit": 21,
}
_DANISH21: dict[str, RuleValue] = {"limit": 21, "ace_lock": "any"}

PRESETS: dict[str, dict[str, RuleValue]] = {
    "standard": {},
    "danish21": dict(_DANISH21),
    "every_trick": dict(_EVERY_TRICK),
    "dealer_leads": {"first_leader": "dealer", "equal_beats": "not_last_trick", "limit_rule": "exceed"},
    "free_choice": {"beat_choice": "optional"},
    "unbeatable_aces": {"ace_lock": "led"},
    "swedish": {"beat_target": "previous"},
    "second_chance": {"limit": 21, "rebuys": 1},
    "buy_in": {"rebuys": 1, "rebuy_min_others": 3},
    "small_ace": {"ace": "low_in_last_trick"},
    "jokers": {"jokers": 2},
    "nearest": {**_DANISH21, "beat_choice": "nearest"},
    "twos": {**_DANISH21, "twos_rule": True},
    "ace_one_point": {**_DANISH21, "ace_points": 1},
    "lives": {"ace_lock": "any", "lives": 3},
    "quick": {**_EVERY_TRICK, "match_end": "first_out"},
    "last_trick_only": {**_EVERY_TRICK, "scoring": "last_trick"},
}
"""Each preset as the options that differ from the defaults (RULES.md)."""


def make_rules(rules: str | Rules = "standard", **options: RuleValue) -> Rules:
    """A preset name or a :class:`Rules`, with any rule options overridden on top."""
    if isinstance(rules, Rules):
        return rules.replace(**options) if options else rules
    if isinstance(rules, str):
        return Rules.preset(rules, **options)
    raise TypeError(f"rules must be a preset name or a Rules object, not {type(rules).__name__}")


def parse_option(name: str, text: str) -> RuleValue:
    """Convert a command-line ``OPTION=VALUE`` string to the option's type (the one converter of options)."""
    if name not in OPTION_NAMES:
        raise RulesError(str(unknown(name, OPTION_NAMES, "rule option")))
    try:
        return declared(Rules)[name].convert(text)
    except OptionError as e:
        raise RulesError(str(e)) from None


def _validate(r: Rules) -> None:
    """Refuse the impossible combinations of options (each option alone is checked by its declaration)."""
    if r.players * r.hand_size > r.deck_size:
        raise RulesError(
            f"hand_size must be at most {r.deck_size // r.players} for {r.players} players "
            f"(players * hand_size = {r.players * r.hand_size} > {r.deck_size} cards)"
        )
    if r.lives and r.scoring != "last_trick":
        raise RulesError("lives needs scoring=last_trick (lives > 0 cannot be combined with scoring=every_trick)")
    if r.rebuys and r.lives:
        raise RulesError("rebuys must be 0 in lives mode (lives > 0)")
    if r.rebuys and r.match_end != "last_standing":
        raise RulesError("rebuys must be 0 with match_end=first_out (rebuys need match_end=last_standing)")
    if r.ace_lock != "none" and r.ace == "low":
        raise RulesError("ace_lock must be none when ace=low (a low ace cannot lock a trick)")


_T = TypeVar("_T")
_PER_RULES_SIZE = 64


def per_rules(build: Callable[[Rules], _T]) -> Callable[[Rules], _T]:
    """Cache ``build(rules)``: by the object's identity first (no hashing on hot paths), then by equal rules.

    A :class:`Rules` hashes and compares all its options, about a microsecond each time;
    the engine asks for its tables several times per move, so a one-game loop (the AEC
    environment) would spend a tenth of its time there. Up to 64 rules sets are kept.
    """
    by_equal = functools.lru_cache(maxsize=_PER_RULES_SIZE)(build)
    by_id: dict[int, tuple[Rules, _T]] = {}

    @functools.wraps(build)
    def cached(rules: Rules) -> _T:
        hit = by_id.get(id(rules))
        if hit is not None and hit[0] is rules:
            return hit[1]
        if len(by_id) >= _PER_RULES_SIZE:
            by_id.clear()
        value = by_equal(rules)
        by_id[id(rules)] = (rules, value)  # the entry holds the object, so its id stays its own
        return value

    cached.cache_clear = by_equal.cache_clear  # type: ignore[attr-defined]
    return cached
