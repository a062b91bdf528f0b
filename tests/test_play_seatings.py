"""A tournament's tables side by side in one batch (``play_seatings``, ``play_merged``) play the tables' own matches."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agents.registry import make_agent
from agents.tournament import plan_tournament, play_merged, play_planned, seatings_stats
from agents.tournament_stats import SeatStats
from agurk_env.rules import Rules


def rounds(stats: SeatStats) -> list[tuple[int, ...]]:
    """Each round's match and levels, in a fixed order (the merged batch ends rounds in another order)."""
    assert stats.round_match is not None and stats.round_place is not None
    return sorted(tuple(int(x) for x in (m, *p)) for m, p in zip(stats.round_match, stats.round_place, strict=True))


@pytest.mark.parametrize("preset", ["standard", "every_trick", "lives", "swedish"])
def test_deterministic_agents_play_every_table_as_alone(preset: str) -> None:
    rules = Rules.preset(preset, players=4)
    specs = ["shed", "guard", "counter", "ducker"]
    plan = plan_tournament(rules, specs, 12, 5, resamples=1)
    alone = [play_planned(lambda n: None, *task) for task in plan.tasks]
    seats = np.stack([task[2] for task in plan.tasks])
    agents = [make_agent(s, 0, i) for i, s in enumerate(specs)]
    merged = seatings_stats(rules, agents, seats, 12, plan.tasks[0][5])
    assert len(merged) == len(alone) == 24
    for a, b in zip(alone, merged, strict=True):
        for f in dataclasses.fields(SeatStats):
            if f.name not in ("round_place", "round_match"):
                assert np.array_equal(getattr(a, f.name), getattr(b, f.name)), f.name
        assert rounds(a) == rounds(b)


def test_random_agents_get_the_same_deals_at_every_table_and_join_splits_back() -> None:
    rules = Rules.preset("standard", players=3)
    plan = plan_tournament(rules, ["random", "guard", "pimc:worlds=2"], 6, 3, resamples=1)
    rules_, packed, _, _, deals, deal_seed, _, deck = plan.tasks[0]
    seats = np.stack([task[2] for task in plan.tasks])
    joined = play_merged(lambda n: None, rules_, packed, seats, plan.seed, deals, deal_seed, deck)
    tables = joined.split(len(seats))
    alone = play_planned(lambda n: None, *plan.tasks[0])
    for stats in tables:  # seat s is dealt the same round-1 hand at every table, whoever sits there
        assert np.array_equal(stats.hands, alone.hands)
        assert np.isin(np.round(stats.win.sum(1), 9), [0.0, 1.0]).all()  # a match's win shares: 1, or 0 (no winner)
    again = SeatStats.join(tables)
    for f in dataclasses.fields(SeatStats):
        assert np.array_equal(getattr(again, f.name), getattr(joined, f.name)), f.name
