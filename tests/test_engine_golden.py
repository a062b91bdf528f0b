"""Replay every golden match (tests/data/golden_matches.jsonl) through the vectorized engine.

Each round's recorded hands are put in with ``engine.set_hands``; then every legal set, trick
leader and winner, the penalties, scores, lives, out, rebought and the winners must match. A
:class:`~agurk_env.records.Recorder` watches the same replay and must write the golden rounds back.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from agurk_env import engine
from agurk_env.records import Recorder
from agurk_env.rules import CARDS, PRESETS, Rules

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_matches.jsonl"
RECORDS: list[dict] = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
IDX = {name: i for i, name in enumerate(CARDS)}


def _id(record: dict) -> str:
    return f"{record['preset']}-{record['rules']['players']}p-seed{record['seed']}"


def _hands(rules: Rules, hands: list[list[str]]) -> np.ndarray:
    counts = np.zeros((1, rules.players, rules.num_actions), np.int8)
    for seat, hand in enumerate(hands):
        for name in hand:
            counts[0, seat, IDX[name]] += 1
    return counts


def _seats(row: np.ndarray) -> list[int]:
    return np.flatnonzero(row).tolist()


def test_golden_file_covers_every_preset() -> None:
    assert len(RECORDS) == 255
    assert {r["preset"] for r in RECORDS} == set(PRESETS)
    assert all(all("legal" in t for rnd in r["rounds"] for t in rnd["tricks"]) for r in RECORDS)


@pytest.mark.parametrize("record", RECORDS, ids=[_id(r) for r in RECORDS])
def test_golden_match_on_engine(record: dict) -> None:
    rules = Rules.from_dict(record["rules"])
    recorder = Recorder(rules, 1, ["golden"] * rules.players, with_legal=True)
    st = engine.init(rules, 1, seed=0)
    finished: list[dict] = []
    for r, rnd in enumerate(record["rounds"]):
        at = f"round {r + 1}"
        assert not st.match_over[0] and not st.round_over[0], at
        assert st.dealer[0] == rnd["dealer"], at
        assert st.alive[0].tolist() == [bool(h) for h in rnd["hands"]], at
        st = engine.set_hands(rules, st, _hands(rules, rnd["hands"]))
        for t, trick in enumerate(rnd["tricks"]):
            at = f"round {r + 1} trick {t + 1}"
            assert st.trick_no[0] == t and st.cur[0] == trick["leader"], at
            for (seat, name), legal in zip(trick["plays"], trick["legal"], strict=True):
                assert st.cur[0] == seat, f"{at}: seat {st.cur[0]} to move, record {seat}"
                bits = engine.legal_bits(rules, st)
                mask = engine.legal_mask(rules, st)[0]
                got = [CARDS[i] for i in np.flatnonzero(mask)]
                assert got == legal, f"{at} seat {seat}: legal {got}, record {legal}"
                assert int(bits[0]) == sum(1 << IDX[n] for n in legal), f"{at} seat {seat}: legal bits {bits[0]}"
                recorder.before_play(st, bits)
                st = engine.play(rules, st, np.array([IDX[name]]))
                finished += recorder.after_play(st)
            assert st.trick_leader[0, t] == trick["leader"], at
            assert st.trick_winner[0, t] == trick["winner"], f"{at}: winner {st.trick_winner[0, t]}"
        at = f"round {r + 1}"
        assert st.round_over[0], at
        assert st.round_penalty[0].tolist() == rnd["penalties"], at
        assert st.scores[0].tolist() == rnd["scores"], at
        if rules.lives:
            assert st.lives[0].tolist() == rnd["lives"], at
        assert _seats(st.out_now[0]) == sorted(rnd["out"]), at
        assert _seats(st.rebought_now[0]) == sorted(rnd["rebought"]), at
        if r < len(record["rounds"]) - 1:
            assert not st.match_over[0], f"{at}: the engine ended the match early"
            st = engine.advance(rules, st, reset=False)
    assert st.match_over[0]
    assert _seats(st.winners[0]) == sorted(record["winners"])
    after = engine.advance(rules, st, reset=False)  # a finished match stays finished
    assert after.match_over[0] and after.match_id[0] == st.match_id[0]
    assert np.array_equal(after.scores, st.scores) and np.array_equal(after.winners, st.winners)

    # The recorder, watching the same replay, writes the golden rounds back (hands in any order).
    assert len(finished) == 1
    mine = finished[0]
    assert mine["winners"] == sorted(record["winners"])
    assert len(mine["rounds"]) == len(record["rounds"])
    for got, want in zip(mine["rounds"], record["rounds"], strict=True):
        assert [Counter(h) for h in got["hands"]] == [Counter(h) for h in want["hands"]]
        assert {k: v for k, v in got.items() if k != "hands"} == {k: v for k, v in want.items() if k != "hands"}
