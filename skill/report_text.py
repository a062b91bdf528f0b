"""The writers a skill report and an atlas share: the CSV tables, statistics as text, what a ranking means."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agurk_env.atomic import atomic_text
from skill.budget import LadderFields
from skill.variant import EFFECT_KEYS, VariantRow

if TYPE_CHECKING:
    from rich.table import Table

STAT_KEYS = ("rs_win", "rs_win_plain", "rs_penalty", "skill_share", "n_star", "rating_spread", "upset_rate")
"""Variant statistics of the ranked table, each with an interval (:func:`ci_key`); RS by win rate with the control
variates, then without."""
INTERVAL_KEYS = STAT_KEYS + EFFECT_KEYS
"""Every variant statistic with an interval: the ranked table's, then the learning and random effects."""
LADDER_KEYS = ("win_rate", "mean_penalty", "rating")
"""A ladder agent's statistics, each with an interval."""


def write_csv(rows: Sequence[VariantRow], names: Sequence[str], ranked: Path, agents: Path) -> None:
    """``ranked``: one row per variant or cell; ``agents``: one per variant or cell and ladder agent.

    ``names`` are the columns that name a row: ``preset`` in a report, the cell's in an atlas.
    """
    with atomic_text(ranked) as f:
        w = csv.writer(f, lineterminator="\n")
        stats = [f"{k}{s}" for k in INTERVAL_KEYS for s in ("", "_low", "_high")]
        w.writerow(["rank", *names, *stats, "best_win", "best_penalty"])
        for row in rows:
            v: Mapping[str, Any] = row  # read by the statistics' and names' keys
            numbers = (csv_number(x) for k in INTERVAL_KEYS for x in (v[k], *v[ci_key(k)]))
            w.writerow([v["rank"], *(v[k] for k in names), *numbers, v["best_win"], v["best_penalty"]])
    with atomic_text(agents) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow([*names, "spec", *(f"{k}{s}" for k in LADDER_KEYS for s in ("", "_low", "_high"))])
        for row in rows:
            named: Mapping[str, Any] = row  # read by the names' keys
            for agent in row["ladder"]:
                a: Mapping[str, Any] = agent  # read by the statistics' keys
                numbers = (csv_number(x) for k in LADDER_KEYS for x in (a[k], *a[f"{k}_ci"]))
                w.writerow([*(named[k] for k in names), a["spec"], *numbers])


def csv_number(x: float | None) -> str:
    """A CSV number: empty for ``None`` (unbounded or undefined), else 6 significant digits."""
    return "" if x is None else f"{x:.6g}"


DIGITS = {
    "rs_win": 2,
    "rs_win_plain": 2,
    "rs_penalty": 2,
    "skill_share": 3,
    "n_star": 0,
    "rating_spread": 0,
    "upset_rate": 3,
    "learning_win": 3,
    "random_win": 3,
    "learning_penalty": 2,
    "random_penalty": 2,
}
"""Decimals shown for each statistic in tables."""


def stat_text(variant: VariantRow, key: str) -> str:
    """``value [low, high]`` of one statistic for tables; ``None`` reads ∞ for ``n_star``, else n/a."""
    missing = "∞" if key == "n_star" else "n/a"
    digits = DIGITS[key]

    def fmt(x: float | None) -> str:
        return missing if x is None else f"{x:.{digits}f}"

    v: Mapping[str, Any] = variant  # read by the statistic's key
    low, high = v[ci_key(key)]
    return f"{fmt(v[key])} [{fmt(low)}, {fmt(high)}]"


def ranking_table(rows: Sequence[VariantRow], title: str) -> Table:
    """Ranked variants (or atlas cells) as a rich table: each statistic with its interval (:func:`stat_text`)."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    names = ("rank", "variant", "RS win", "RS win plain", "RS penalty", "skill share", "N* matches", "spread", "upsets")
    for name in names:
        table.add_column(name, justify="right" if name == "rank" else "left")
    for v in rows:
        name = f"{v['preset']} {v['players']}p x {v['hand_size']}c" if "key" in v else v["preset"]
        table.add_row(str(v["rank"]), name, *(stat_text(v, k) for k in STAT_KEYS))
    return table


def ci_key(key: str) -> str:
    """A statistic's interval key: ``KEY_ci``, or ``BASE_ci_plain`` for ``BASE_plain`` (as in ``report.json``)."""
    base, plain, _ = key.rpartition("_plain")
    return f"{base}_ci_plain" if plain else f"{key}_ci"


def _overlap(a: Sequence[float | None], b: Sequence[float | None]) -> bool:
    """Whether two intervals overlap (``None`` ends are unbounded)."""
    low = max(x for x in (a[0], b[0], -math.inf) if x is not None)
    high = min(x for x in (a[1], b[1], math.inf) if x is not None)
    return low <= high


def meaning(variants: Sequence[VariantRow]) -> str:
    """A few sentences on what the ranking of ``variants`` (ranked, each named by its ``preset``) means."""
    every = [v for v in variants if v["rs_win"] is not None]
    beyond = [v["preset"] for v in every if _given(v["rs_win"]) > 1]
    vs = [v for v in every if _given(v["rs_win"]) <= 1]  # RS is a share of the gap to the fictive player only up to 1
    if len(vs) < 2:
        return "One variant only: nothing to compare." if len(every) < 2 else _beyond_text(beyond)
    top, bottom = vs[0], vs[-1]
    apart = not _overlap(top["rs_win_ci"], bottom["rs_win_ci"])
    text = (
        f"In **{top['preset']}** the best real agent ({top['best_win']}) closes {top['rs_win']:.0%} of the gap in "
        f"win rate between random play and the fictive player, the best response to the field that sees every "
        f"card; in **{bottom['preset']}** {bottom['best_win']} closes {bottom['rs_win']:.0%}. "
    )
    text += (
        "Their 95% intervals do not overlap, so at this budget the first rewards skill measurably more. "
        if apart
        else "Their 95% intervals overlap, so this budget cannot tell them apart; a larger --budget narrows them. "
    )
    tied = [v["preset"] for v in vs[1:] if _overlap(v["rs_win_ci"], top["rs_win_ci"])]
    if tied:
        text += f"Not told apart from {top['preset']} (their intervals overlap its): {', '.join(tied)}. "
    if beyond:
        text += _beyond_text(beyond) + " "
    finite = [v for v in vs if v["n_star"] is not None]
    if finite:
        fast = min(finite, key=lambda v: _given(v["n_star"]))
        text += (
            f"Skill differences among the real agents outweigh luck after about {fast['n_star']:.0f} matches in "
            f"{fast['preset']} (N*); a smaller N* means fewer matches before the better player reliably shows."
        )
    return text


def _given(x: float | None) -> float:
    """A statistic kept only where it is not ``None``."""
    assert x is not None
    return x


def _beyond_text(beyond: list[str]) -> str:
    """The caveat for variants whose RS is above 1 (a real agent beats the fictive player)."""
    return (
        f"In {', '.join(beyond)} RS is above 1: a real agent beat the fictive player there, which is optimal for "
        "one round at a time against the field's actual play (it searches no later rounds); read their ladder win "
        "rates and the effects' intervals instead (the comparison above leaves them out)."
    )


def policy_sentence(data: LadderFields, variants: Sequence[VariantRow], names: Sequence[str]) -> str:
    """What the ladder's learned agent is: the PPO agent trained per variant (or given), or the zoo's network.

    ``data`` is the report's or atlas's object, ``variants`` its rows and ``names`` their names.
    """
    if data["policy"] == "train":
        given: dict[str, list[str]] = {}  # a checkpoint given (--checkpoint) instead of one trained here
        for v, name in zip(variants, names, strict=True):
            if v["ppo_checkpoint"] not in (None, f"checkpoints/{name}.pt"):
                given.setdefault(v["ppo_checkpoint"], []).append(name)
        if not given:
            return f"The PPO agent of each variant trained for {data['train_steps']:,} decisions."
        trained = [n for v, n in zip(variants, names, strict=True) if v["ppo_checkpoint"] == f"checkpoints/{n}.pt"]
        parts = [
            f"`ppo:{path}` in {'every variant' if len(where) == len(names) else ', '.join(where)}"
            for path, where in given.items()
        ]
        if trained:
            parts.append(f"a PPO agent trained for {data['train_steps']:,} decisions in {', '.join(trained)}")
        return f"The learned agent `ppo`: {'; '.join(parts)}."
    zoo = data["zoo"]
    assert zoo is not None  # the zoo's policies, where the ladder's learned agent is not trained
    each = "; ".join(
        f"`zoo:{name}` ({z['table']}, {z['decisions']:,} decisions) in "
        + ", ".join(n for v, n in zip(variants, names, strict=True) if v["zoo_policy"] == name)
        for name, z in zoo.items()
    )
    return (
        "The learned agent `zoo` is the shipped policy the zoo plays at every table (`agurk zoo`: the universal "
        f"network, trained on a mixture of every preset and table): {each}. Nothing was trained for this report."
    )


def python_call(function: str, *args: Any, **kwargs: Any) -> str:
    """``function(args, key=value, ...)``: the call that made a report or atlas from Python, for its files."""
    return f"{function}({', '.join([*map(repr, args), *(f'{k}={v!r}' for k, v in kwargs.items())])})"


def reproduce(command: str, seed: int, what: str) -> list[str]:
    """The ``## Reproduce`` section's lines: the command that gives the same ``what`` with the same seed."""
    return ["## Reproduce", "", "```", command, "```", "", f"Seed {seed}: the same command gives the same {what}.", ""]
