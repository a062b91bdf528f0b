"""skill.exact_check: exact focal results by enumeration, checked by hand, on OpenSpiel's tree and against sampling."""

from __future__ import annotations

import json

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from agents.registry import introduce, make_agent  # noqa: E402
from agurk_env import engine  # noqa: E402
from agurk_env.rules import Rules  # noqa: E402
from skill import exact_check as ec  # noqa: E402
from skill.exploitability import Setting  # noqa: E402
from skill.game_tree import load_game  # noqa: E402

TINY = Setting("standard", 3, 3, "Q,K,A", 3, (("limit", 1), ("match_end", "first_out")))
"""One round of three seats from Q K A x3 (all 9 cards dealt): 2,789 histories."""
TWO_ROUNDS = Setting("standard", 3, 2, "Q,K,A", 2, (("limit", 1),))
"""Three seats, the first round's scorers out, then the last two play on (last_standing: always a winner)."""
HEURISTICS = ("shed", "guard", "ducker")


def _agents(specs: list[str]) -> list:
    """One agent per seat (equal specs share one object, as at a tournament table), introduced to the table."""
    first: dict[str, object] = {}
    return introduce([first.setdefault(spec, make_agent(spec, 0, seat)) for seat, spec in enumerate(specs)])


def test_joint_deals_are_openspiels_deal():
    """Every joint deal and its probability: they sum to 1 and are python_agurk's chance outcomes, seat by seat."""
    game = load_game({**TINY.params(), "deal": "hand"})
    deck = tuple(int(x) for x in engine.deck_counts(TINY.rules(), TINY.ranks, TINY.copies))
    hands, prob = ec.joint_deals(deck, 3, (True, True, True))
    assert prob.sum() == pytest.approx(1.0, abs=1e-12)
    theirs: dict[bytes, float] = {}
    stack = [(game.new_initial_state(), 1.0)]
    while stack:
        state, p = stack.pop()
        if not state.is_chance_node():
            theirs[state.dealt.astype(np.int8).tobytes()] = theirs.get(state.dealt.astype(np.int8).tobytes(), 0.0) + p
            continue
        stack += [(state.child(a), p * q) for a, q in state.chance_outcomes()]
    ours = {h.tobytes(): q for h, q in zip(hands, prob, strict=True)}
    assert ours.keys() == theirs.keys()
    assert max(abs(ours[k] - theirs[k]) for k in ours) < 1e-12
    _, two = ec.joint_deals(deck, 3, (True, False, True))  # a seat out: two hands dealt
    assert two.sum() == pytest.approx(1.0, abs=1e-12)


def test_engine_deals_as_enumerated():
    """The engine's deal (what the pipeline plays) has the enumerated distribution: 40,000 deals within 4.5 sigma."""
    rules = TINY.rules()
    deck = engine.deck_counts(rules, TINY.ranks, TINY.copies)
    hands, prob = ec.joint_deals(tuple(int(x) for x in deck), 3, (True, True, True))
    index = {h.tobytes(): i for i, h in enumerate(hands)}
    dealt = engine.init(rules, 40_000, seed=3, deck=deck).hands
    counts = np.bincount([index[h.tobytes()] for h in dealt], minlength=prob.size)
    n = dealt.shape[0]
    assert (np.abs(counts / n - prob) <= 4.5 * np.sqrt(prob * (1 - prob) / n)).all()


def test_exact_values_by_hand():
    """One card each from Q Q K K A A, two seats, out at 1 point, only the trick's winner scores.

    Seat 1 leads, seat 0 follows; an equal card played last takes the trick, so seat 0 takes it
    when its card is at least seat 1's: 18 of the 30 ordered pairs (12 higher, 6 equal), and
    goes out. Seat 0 wins 12/30 = 0.4, seat 1 18/30 = 0.6. Seat 0's penalty: K over Q 4 x 13,
    A over Q 4 x 14, A over K 4 x 14, equal 2 x (12 + 13 + 14): 242/30; seat 1's 164/30.
    """
    rules = Rules.preset("standard", players=2, hand_size=1, limit=1, last_trick_ties="winner")
    deck = engine.deck_counts(rules, "Q,K,A", 2)
    for specs in (["random", "random"], ["guard", "fictive"]):  # one card: every agent plays it
        r = ec.exact_table(rules, deck, _agents(specs))
        assert r["win"] == pytest.approx([0.4, 0.6], abs=1e-12)
        assert r["penalty"] == pytest.approx([242 / 30, 164 / 30], abs=1e-12)
        assert r["rounds"] == pytest.approx([1.0, 1.0], abs=1e-12)


def test_random_against_random_is_one_over_players():
    """Random against a random field: each seat differs, but over the seatings the focal wins 1/players exactly."""
    for setting in (TWO_ROUNDS, Setting("standard", 2, 2, "Q,K,A", 2, (("limit", 25),))):
        r = ec.exact_results(setting, "random", field="random")
        p = setting.players
        assert r["win"] == pytest.approx(1 / p, abs=1e-12)
        assert max(r["by_seat"]) - min(r["by_seat"]) > 1e-3  # the seats themselves are not alike
        seats = ec.exact_table(
            setting.rules(), engine.deck_counts(setting.rules(), setting.ranks, setting.copies), _agents(["random"] * p)
        )
        assert seats["win"].sum() == pytest.approx(1.0, abs=1e-12)  # last_standing: someone always wins


def test_stochastic_agents_are_refused():
    """pimc samples worlds from its generator: no enumerable value."""
    with pytest.raises(ValueError, match="stochastic"):
        ec.exact_table(TINY.rules(), engine.deck_counts(TINY.rules(), "Q,K,A", 3), _agents(["pimc", "guard", "guard"]))


def test_enumeration_equals_openspiel_tree():
    """Two exact computations agree: the batched enumeration and policy values on python_agurk's match tree.

    Also over two rounds (seats going out, the deal to the seats still in), and the fair best
    response is at least every fair agent's value.
    """
    for setting in (TINY, TWO_ROUNDS):
        tv = ec.tree_values(setting, ["random", *HEURISTICS])
        for spec in ["random", *HEURISTICS]:
            assert ec.exact_results(setting, spec)["win"] == pytest.approx(tv["win"][spec], abs=1e-10)
        assert tv["best_response"] >= max(tv["win"].values()) - 1e-12
        assert tv["best_response"] <= 1.0


def test_sampled_pipeline_agrees_with_exact():
    """The pipeline's RS on 4,000 deals: its interval holds the exact RS; each focal win rate is near its exact one."""
    r = ec.check_setting(TINY, deals=4000, candidates=HEURISTICS, resamples=300)
    exact, sampled = r["exact"], r["sampled"]
    assert r["best_agent"] == "guard"
    assert exact["rs_win"] == pytest.approx(
        (exact["R_win"]["guard"] - exact["R_win"]["random"]) / (exact["R_win"]["fictive"] - exact["R_win"]["random"])
    )
    assert 0 < r["exact_rs"] < 1
    lo, hi = r["sampled_rs_ci"]
    assert lo <= r["exact_rs"] <= hi and r["exact_in_interval"]
    assert abs(r["sampled_rs"] - r["exact_rs"]) <= hi - lo
    assert all(abs(z) < 4 for z in sampled["z"].values() if z is not None)
    assert exact["tree_check"] < 1e-10
    assert r["fair_best_response"] >= exact["R_best"]
    assert set(r) >= {"setting", "exact_rs", "sampled_rs", "sampled_rs_ci", "deals", "exact", "sampled"}
    assert set(r) >= {"fair_best_response", "best_agent"}
    json.dumps(r)  # every number is JSON


def test_main_writes_json(tmp_path, monkeypatch):
    """``python -m skill.exact_check --out FILE`` writes one object per setting."""
    monkeypatch.setattr(ec, "SETTINGS", (TINY,))
    monkeypatch.setattr(ec, "CANDIDATES", ("guard",))
    out = tmp_path / "check.json"
    assert ec.main(["--out", str(out), "--deals", "200", "--resamples", "50"]) == 0
    rows = json.loads(out.read_text())
    assert [row["setting"] for row in rows] == [TINY.label]
    assert rows[0]["deals"] == 200
