"""Differential test: random matches played on the vectorized engine, replayed through the scalar reference.

``simulate(..., with_legal=True)`` plays random legal cards on the engine and records every legal
set; ``replay_record`` replays each record through ``ReferenceMatch`` and checks the legal sets,
trick leaders and winners, penalties, scores, lives, eliminations, rebuys and the winners. Every
preset is played with 2..8 players (``hand_size`` cut down where the deck is too small), and many
random option combinations. The default run plays a few thousand matches; ``-m slow`` many more.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from replay import replay_record

from agurk_env.agent import RandomAgent
from agurk_env.rules import CHOICES, PRESETS, Rules, RulesError
from agurk_env.simulate import simulate


def preset_rules(preset: str, players: int) -> Rules:
    """The preset for ``players`` seats, with the default hand size cut to what the deck allows."""
    deck = 52 + PRESETS[preset].get("jokers", 0)
    return Rules.preset(preset, players=players, hand_size=min(7, deck // players))


def random_rules(rng: random.Random) -> Rules:
    """A random valid option combination (invalid draws are refused by ``Rules`` and drawn again)."""
    while True:
        options = {name: rng.choice(values) for name, values in CHOICES.items()}
        options["twos_rule"] = rng.random() < 0.5
        options["players"] = rng.randint(2, 8)
        options["jokers"] = rng.choice((0, 0, 1, 2))
        deck = 52 + options["jokers"]
        options["hand_size"] = rng.randint(1, min(13, deck // options["players"]))
        if rng.random() < 0.5:
            options["ace_points"] = rng.randint(0, 20)
        options["limit"] = rng.randint(1, 60)
        options["lives"] = rng.choice((0, 0, 0, 1, 2, 4))
        options["rebuys"] = rng.choice((0, 0, 1, 2))
        options["rebuy_min_others"] = rng.randint(0, 7)
        try:
            return Rules.from_dict(options)
        except RulesError:
            continue


def play_and_replay(rules: Rules, n: int, seed: int, batch: int | None, label: str, shared_agent: bool = False) -> int:
    """Play matches ``0..n-1`` of ``seed`` on the engine and replay each through the reference; return plays."""
    if shared_agent:  # one agent object in every seat: called once per step for the whole batch
        agents = [RandomAgent(np.random.default_rng(seed))] * rules.players
    else:
        agents = [RandomAgent(np.random.default_rng([seed, s])) for s in range(rules.players)]
    count = plays = 0
    for record in simulate(rules, agents, n, seed, batch=batch, with_legal=True):
        assert record["match"] == count
        try:
            replay_record({**record, "preset": label})
        except AssertionError as exc:
            raise AssertionError(f"match {record['match']} of seed {seed}, rules {rules.to_dict()}: {exc}") from None
        plays += sum(len(t["plays"]) for rnd in record["rounds"] for t in rnd["tricks"])
        count += 1
    assert count == n
    return plays


PRESET_CASES = [(preset, players) for preset in PRESETS for players in range(2, 9)]


@pytest.mark.parametrize(("preset", "players"), PRESET_CASES, ids=[f"{p}-{n}p" for p, n in PRESET_CASES])
def test_preset_matches_agree_with_reference(preset: str, players: int) -> None:
    rules = preset_rules(preset, players)
    seed = 1000 * players + list(PRESETS).index(preset)
    assert play_and_replay(rules, 16, seed, batch=None, label=preset) > 0


@pytest.mark.parametrize("case", range(48))
def test_random_option_combinations_agree_with_reference(case: int) -> None:
    rules = random_rules(random.Random(f"combo-{case}"))
    assert play_and_replay(rules, 20, case, batch=8, label=f"combo-{case}", shared_agent=case % 2 == 1) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), PRESET_CASES, ids=[f"{p}-{n}p" for p, n in PRESET_CASES])
def test_preset_matches_agree_with_reference_slow(preset: str, players: int) -> None:
    rules = preset_rules(preset, players)
    assert play_and_replay(rules, 200, 77 + players, batch=64, label=preset) > 0


@pytest.mark.slow
@pytest.mark.parametrize("case", range(400))
def test_random_option_combinations_agree_with_reference_slow(case: int) -> None:
    rules = random_rules(random.Random(f"slow-combo-{case}"))
    assert play_and_replay(rules, 40, case, batch=16, label=f"slow-combo-{case}", shared_agent=case % 2 == 1) > 0
