"""The searches choose today's cards: pimc, oracle and guided specs and the rollout operator, pinned.

``tests/data/search_pinned.json`` holds the cards each spec chose (every seat one agent of
that spec, two rounds of seeded games) and the rollout operator's values on seeded
positions, as the code played them before the searches became settings of one
:class:`agents.search.Search`. The same specs and seeds must give the same numbers.
Regenerate only on purpose: ``python -m tests.test_search_pinned --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.registry import make_agents
from agurk_env import engine
from agurk_env.agent import Decision, act_seats
from agurk_env.rules import Rules

FIXTURE = Path(__file__).parent / "data" / "search_pinned.json"
POLICIES = Path(__file__).parent / "data" / "pinned"
"""The networks the guided specs were pinned with (the zoo's per-preset generalists of that time)."""
TABLES = {  # name: (preset, overrides)
    "standard-4x5": ("standard", {"players": 4, "hand_size": 5, "limit": 12}),
    "every_trick-3x5": ("every_trick", {"players": 3, "hand_size": 5}),
    "lives-3x4": ("lives", {"players": 3, "hand_size": 4}),
}
SPECS = [
    "pimc:worlds=6",
    "pimc:worlds=4;rollout=shed",
    "pimc:eval=exact;worlds=6",
    "pimc:eval=exact;tie=lowest;worlds=4",
    "pimc:eval=exact;tricks=2;worlds=4;rollout=random",
    "pimc:belief=models;worlds=4;pool=12",
    "oracle",
    "oracle:eval=rollout;worlds=4",
    "oracle:tie=lowest;tricks=3",
    "guided:worlds=4",
    "guided:worlds=4;eval=rollout;rollout=sample",
    "guided:worlds=3;prior=0.05;top=2;tie=rollout;tricks=2;out=on",
    "guided:worlds=3;belief=off;rollout=mixed;prior=0.5",
]
OPERATOR = [  # (table, plies into the round, keyword arguments of improve)
    ("standard-4x5", 3, {}),
    ("standard-4x5", 6, {"moves": "sample", "rollouts": 2, "belief": True}),
    ("every_trick-3x5", 4, {"leaf": 2}),
    ("lives-3x4", 2, {"leaf": 1, "belief": True}),
]


def _rules(table: str) -> Rules:
    preset, overrides = TABLES[table]
    return Rules.preset(preset, **overrides)


def play(table: str, spec: str) -> list[int]:
    """Every card chosen in 4 games of two rounds with ``spec`` at every seat (seed 3, deals of seed 5)."""
    rules = _rules(table)
    if spec.startswith("guided"):  # the policy zoo played at these tables when the cards were pinned: the preset's
        spec += f";policy={POLICIES / TABLES[table][0]}.pt"  # generalist of then, kept here: the zoo may change
    agents = make_agents(spec, rules.players, seed=3)
    state = engine.init(rules, 4, seed=5)
    cards: list[int] = []
    for _ in range(2 * rules.players * rules.hand_size):
        bits = engine.legal_bits(rules, state)
        chosen = act_seats(rules, state, bits, agents)
        cards += chosen.tolist()
        state = engine.advance(rules, engine.play(rules, state, chosen))
    return cards


def operator(table: str, plies: int, options: dict) -> list[float | None]:
    """The rollout operator's values (``None``: not a candidate) at seeded positions, with a seeded network."""
    import torch

    from agents.guided import improve
    from agents.policy import PolicyNet
    from agurk_env import observation

    rules = _rules(table)
    rng = np.random.default_rng(7)
    state = engine.init(rules, 8, seed=9)
    for _ in range(plies):
        state = engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng))
    bits = engine.legal_bits(rules, state)
    games = np.flatnonzero(engine.SET_SIZE[bits] > 1)
    d = Decision(rules, state, games, bits[games])
    torch.manual_seed(0)
    net = PolicyNet(observation.SIZE, rules.num_actions, [16]).eval()
    values = improve(rules, net, d.public, d.legal, 3, np.random.default_rng(11), **options)
    return [float(v) if np.isfinite(v) else None for v in values.ravel()]


def record() -> dict:
    """Today's numbers of every case."""
    return {
        "cards": {f"{table} {spec}": play(table, spec) for table in TABLES for spec in SPECS},
        "operator": [operator(*case) for case in OPERATOR],
    }


@pytest.fixture(scope="module")
def pinned() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("table", list(TABLES))
@pytest.mark.parametrize("spec", SPECS)
def test_spec_chooses_the_pinned_cards(pinned: dict, table: str, spec: str) -> None:
    if spec.startswith("guided"):
        pytest.importorskip("torch")
    assert play(table, spec) == pinned["cards"][f"{table} {spec}"]


@pytest.mark.parametrize("case", range(len(OPERATOR)))
def test_operator_gives_the_pinned_values(pinned: dict, case: int) -> None:
    pytest.importorskip("torch")
    got = operator(*OPERATOR[case])
    want = pinned["operator"][case]
    assert [v is None for v in got] == [v is None for v in want]
    # The values pass through a float32 network, whose sums are not bit-identical across machines: a second
    # machine gave the same code's values 1.4e-8 apart, far below any change of the operator itself.
    np.testing.assert_allclose(
        [v for v in got if v is not None], [v for v in want if v is not None], rtol=0, atol=1e-6
    )


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    FIXTURE.write_text(json.dumps(record(), separators=(",", ":")) + "\n", encoding="utf-8")
