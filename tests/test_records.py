"""Game records from ``Recorder`` / ``simulate``: the RULES.md schema, the hands dealt, and seeding."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from replay import replay_record

from agurk_env import engine
from agurk_env.agent import Decision, RandomAgent
from agurk_env.records import Recorder, card_names
from agurk_env.rules import CARDS, OPTION_NAMES, Rules
from agurk_env.simulate import simulate


class LowestIndex:
    """Deterministic: the legal card with the lowest action index."""

    spec = "lowest"
    sees_all = False

    def act(self, decision: Decision) -> np.ndarray:
        return decision.legal.argmax(1)


class HighestIndex:
    """Deterministic: the legal card with the highest action index."""

    spec = "highest"
    sees_all = False

    def act(self, decision: Decision) -> np.ndarray:
        legal = decision.legal
        return legal.shape[1] - 1 - legal[:, ::-1].argmax(1)


def random_agents(rules: Rules, seed: int) -> list[RandomAgent]:
    return [RandomAgent(np.random.default_rng([seed, s])) for s in range(rules.players)]


def deterministic_agents(rules: Rules) -> list:
    low, high = LowestIndex(), HighestIndex()  # each object sits in several seats
    return [low if s % 2 == 0 else high for s in range(rules.players)]


ROUND_KEYS = ["dealer", "hands", "tricks", "penalties", "scores", "out", "rebought"]
RULES_CASES = {
    "standard": Rules.preset("standard"),
    "lives": Rules.preset("lives", players=5),
    "second_chance": Rules.preset("second_chance", players=3, limit=15),
    "jokers": Rules.preset("jokers", players=8, hand_size=6),
    "quick": Rules.preset("quick", players=2, hand_size=3),
}


def _is_int(x: object) -> bool:
    return type(x) is int


def _int_list(xs: object, n: int | None = None) -> bool:
    return isinstance(xs, list) and all(_is_int(x) for x in xs) and (n is None or len(xs) == n)


def check_schema(record: dict, rules: Rules, seed: int, with_legal: bool) -> None:
    """Every key, type and invariant of a RULES.md game record, as ``simulate`` writes it."""
    p, h = rules.players, rules.hand_size
    assert list(record) == ["rules", "seed", "match", "agents", "rounds", "winners"]
    assert list(record["rules"]) == list(OPTION_NAMES)  # every option, resolved
    assert record["rules"] == rules.to_dict() and Rules.from_dict(record["rules"]) == rules
    assert record["rules"]["ace_points"] is not None
    assert _is_int(record["seed"]) and record["seed"] == seed and _is_int(record["match"])
    assert isinstance(record["agents"], list) and len(record["agents"]) == p
    assert all(isinstance(a, str) for a in record["agents"])
    assert json.loads(json.dumps(record)) == record
    alive = set(range(p))
    assert record["rounds"]
    for rnd in record["rounds"]:
        assert list(rnd) == ROUND_KEYS[:5] + (["lives"] if rules.lives else []) + ROUND_KEYS[5:]
        assert _is_int(rnd["dealer"]) and rnd["dealer"] in alive
        assert len(rnd["hands"]) == p
        for seat, hand in enumerate(rnd["hands"]):
            assert len(hand) == (h if seat in alive else 0)
            assert all(card in CARDS[: rules.num_actions] for card in hand)
        dealt = Counter(card for hand in rnd["hands"] for card in hand)
        assert all(n <= (rules.jokers if card == "X" else 4) for card, n in dealt.items())
        assert len(rnd["tricks"]) == h
        for trick in rnd["tricks"]:
            assert list(trick) == ["leader", "plays", "winner"] + (["legal"] if with_legal else [])
            seats = [seat for seat, _ in trick["plays"]]
            assert all(isinstance(play, list) and len(play) == 2 for play in trick["plays"])
            assert _int_list(seats) and all(isinstance(card, str) for _, card in trick["plays"])
            start = sorted(alive).index(trick["leader"])
            assert seats == (sorted(alive) * 2)[start : start + len(alive)]  # clockwise from the leader
            assert _is_int(trick["winner"]) and trick["winner"] in seats
            if with_legal:
                assert len(trick["legal"]) == len(trick["plays"])
                for legal, (_, card) in zip(trick["legal"], trick["plays"], strict=True):
                    assert card in legal and legal == sorted(legal, key=CARDS.index)
        played = [Counter(card for t in rnd["tricks"] for seat, card in t["plays"] if seat == s) for s in range(p)]
        assert played == [Counter(hand) for hand in rnd["hands"]]  # every card dealt is played
        for key in ("penalties", "scores") + (("lives",) if rules.lives else ()):
            assert _int_list(rnd[key], p)
        for key in ("out", "rebought"):
            assert _int_list(rnd[key]) and rnd[key] == sorted(rnd[key]) and set(rnd[key]) <= alive
        alive -= set(rnd["out"])
    assert _int_list(record["winners"]) and record["winners"] == sorted(record["winners"])
    if rules.match_end == "last_standing":
        assert record["winners"]


@pytest.mark.parametrize("name", list(RULES_CASES))
@pytest.mark.parametrize("with_legal", [False, True])
def test_record_schema(name: str, with_legal: bool) -> None:
    rules = RULES_CASES[name]
    records = list(simulate(rules, random_agents(rules, 5), 12, seed=5, batch=5, with_legal=with_legal))
    assert [r["match"] for r in records] == list(range(12))
    for record in records:
        check_schema(record, rules, 5, with_legal)
        assert record["agents"] == ["random"] * rules.players
        replay_record(record)


def test_records_hold_the_hands_dealt() -> None:
    """Drive the engine by hand: the hands in each record are the hands of ``state.hands`` at the deal."""
    rules = Rules.preset("second_chance", players=4, limit=20)
    batch, rng = 6, np.random.default_rng(0)
    recorder = Recorder(rules, batch, ["random"] * rules.players)
    state = engine.init(rules, batch, seed=9)
    deals: dict[tuple[int, int], np.ndarray] = {}
    records = []
    while len(records) < 15:
        fresh = (state.trick_no == 0) & (state.npos == 0)
        for g in np.flatnonzero(fresh):
            deals.setdefault((int(state.match_id[g]), int(state.round_no[g])), state.hands[g].copy())
        mask = engine.legal_mask(rules, state)
        recorder.before_play(state, engine.legal_bits(rules, state))  # a no-op without with_legal
        state = engine.play(rules, state, np.where(mask, rng.random(mask.shape), -1.0).argmax(1))
        records += recorder.after_play(state)
        state = engine.advance(rules, state)
    assert sorted(r["match"] for r in records) == sorted({r["match"] for r in records})
    for record in records:
        check_schema(record, rules, 9, with_legal=False)
        for r, rnd in enumerate(record["rounds"]):
            dealt = deals[(record["match"], r)]
            for seat, hand in enumerate(rnd["hands"]):
                assert Counter(hand) == {CARDS[c]: int(n) for c, n in enumerate(dealt[seat]) if n}
        replay_record(record)


def test_after_play_is_quiet_between_round_ends() -> None:
    rules = Rules.preset("standard", hand_size=2)
    recorder = Recorder(rules, 3, ["x"] * 4, with_legal=True)
    state = engine.init(rules, 3, seed=1)
    for _ in range(7):  # one card short of the end of round 1
        bits = engine.legal_bits(rules, state)
        recorder.before_play(state, bits)
        state = engine.play(rules, state, engine.KTH_MEMBER[bits, 0].astype(np.int64))
        assert recorder.after_play(state) == []
    assert not state.round_over.any()
    with pytest.raises(ValueError, match="one agent spec per seat"):
        Recorder(rules, 3, ["x"] * 3)


def test_card_names() -> None:
    assert card_names(0) == []
    assert card_names(int(engine.BIT[0] | engine.BIT[9] | engine.BIT[12])) == ["2", "J", "A"]
    assert card_names(int(engine.BIT[13])) == ["X"]


@pytest.mark.parametrize("rules", [Rules.preset("standard"), Rules.preset("jokers", players=3, hand_size=9)])
def test_deals_are_the_same_for_any_batch_size(rules: Rules) -> None:
    """Match m of a seed gets the same first deal whatever the batch size (random agents)."""
    n = 16
    firsts = []
    for batch in (1, 7, 64):
        records = list(simulate(rules, random_agents(rules, batch), n, seed=3, batch=batch))
        assert [r["match"] for r in records] == list(range(n))
        firsts.append([[sorted(h, key=CARDS.index) for h in r["rounds"][0]["hands"]] for r in records])
    assert firsts[0] == firsts[1] == firsts[2]
    assert len({json.dumps(f) for f in firsts[0]}) == n  # and different matches get different deals


@pytest.mark.parametrize("preset", ["standard", "lives", "buy_in", "every_trick"])
def test_whole_records_are_the_same_for_any_batch_size(preset: str) -> None:
    """With agents that choose deterministically from the legal set, every record is batch-independent."""
    rules = Rules.preset(preset, players=5)
    n = 10
    runs = [
        list(simulate(rules, deterministic_agents(rules), n, seed=11, batch=b, with_legal=True)) for b in (1, 7, 64)
    ]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][0]["agents"] == ["lowest", "highest", "lowest", "highest", "lowest"]


def test_same_seed_same_records_other_seed_other_deals() -> None:
    rules = Rules.preset("danish21", players=3)
    first = list(simulate(rules, random_agents(rules, 0), 10, seed=21, batch=4))
    again = list(simulate(rules, random_agents(rules, 0), 10, seed=21, batch=4))
    other = list(simulate(rules, random_agents(rules, 0), 10, seed=22, batch=4))
    assert first == again
    assert [r["rounds"][0]["hands"] for r in first] != [r["rounds"][0]["hands"] for r in other]
    assert all(r["seed"] == 22 for r in other)


def test_simulate_order_progress_and_batches() -> None:
    rules = Rules.preset("quick", players=4)
    done: list[int] = []
    records = list(simulate(rules, random_agents(rules, 1), 23, seed=4, batch=4, progress=done.append))
    assert [r["match"] for r in records] == list(range(23))
    assert done == list(range(1, 24))
    assert list(simulate(rules, random_agents(rules, 1), 0, seed=4)) == []
    big = list(simulate(rules, random_agents(rules, 1), 3, seed=4, batch=10))  # extra matches are dropped
    assert [r["match"] for r in big] == [0, 1, 2]
    lone = list(simulate(rules, deterministic_agents(rules), 3, seed=4))
    assert [r["match"] for r in lone] == [0, 1, 2]


def test_simulate_calls_each_agent_once_per_step() -> None:
    class Counting(LowestIndex):
        def __init__(self, parity: int | None) -> None:
            self.parity = parity
            self.calls = 0
            self.games = 0

        def act(self, decision: Decision) -> np.ndarray:
            legal = decision.legal
            self.calls += 1
            self.games += legal.shape[0]
            assert legal.dtype == bool and legal.shape[1] == 13 and legal.any(1).all()
            assert len(decision) == legal.shape[0]
            if self.parity is not None:
                assert (decision.public.cur % 2 == self.parity).all()
            return super().act(decision)

    rules = Rules.preset("standard", players=4)

    def plays_of(record: dict) -> int:
        return sum(len(t["plays"]) for rnd in record["rounds"] for t in rnd["tricks"])

    # One object in every seat: asked exactly once per step. The 6 matches start together, and the
    # run stops with the step in which the longest one ends, so there are as many steps as it has plays.
    mono = Counting(None)
    records = list(simulate(rules, [mono] * 4, 6, seed=2, batch=6))
    steps = max(plays_of(r) for r in records)
    assert mono.calls == steps
    # slots whose match ended play on (matches 6, 7, ...) until the batch is cut: more games than plays
    assert sum(plays_of(r) for r in records) <= mono.games <= steps * 6

    # Two objects in alternate seats: each asked at most once per step, at least one of them every step.
    a, b = Counting(0), Counting(1)
    records = list(simulate(rules, [a, b, a, b], 6, seed=2, batch=6))
    assert len(records) == 6 and max(plays_of(r) for r in records) == steps  # the same deals and cards
    assert max(a.calls, b.calls) <= steps <= a.calls + b.calls
    assert a.games + b.games == mono.games  # the same games asked in all: the cards do not depend on the seating


def test_simulate_refuses_bad_agents() -> None:
    rules = Rules.preset("standard", players=3)

    class Illegal:
        spec = "illegal"
        sees_all = False

        def act(self, decision: Decision) -> np.ndarray:
            legal = decision.legal
            return np.where(legal.all(1), 0, (~legal).argmax(1))  # a card that is not legal, where one exists

    with pytest.raises(ValueError, match="one agent per seat"):
        list(simulate(rules, random_agents(rules, 0)[:2], 2, seed=0))
    with pytest.raises(ValueError, match="illegal"):
        list(simulate(rules, [Illegal()] * 3, 2, seed=0))

    class Short(LowestIndex):
        def act(self, decision: Decision) -> np.ndarray:
            return super().act(decision)[:-1]

    with pytest.raises(ValueError, match="shape"):
        list(simulate(rules, [Short()] * 3, 2, seed=0, batch=2))
