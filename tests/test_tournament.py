"""Duplicate-deal tournaments (agents.tournament) and the `agurk evaluate` / `agurk agents` commands."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents import seatings as S
from agents import tournament as T
from agents import tournament_stats as TS
from agents.heuristics import Heuristic
from agents.registry import AGENTS, make_agents
from agurk.cli import main
from agurk_env import engine
from agurk_env.agent import RandomAgent
from agurk_env.rules import CARDS, Rules
from agurk_env.simulate import simulate

# ----------------------------------------------------------------------------- the match loop vs game records


def _expected_from_record(rec: dict, rules: Rules) -> dict[str, np.ndarray]:
    """The per-seat numbers of one match, computed independently from its RULES.md record."""
    p = rules.players
    win = np.zeros(p)
    if rec["winners"]:  # under first_out a round can put every seat out: nobody wins
        win[rec["winners"]] = 1.0 / len(rec["winners"])
    penalty, rounds, last = np.zeros(p, int), np.zeros(p, int), np.zeros(p, int)
    out_round = np.full(p, -1)
    for i, rnd in enumerate(rec["rounds"]):
        penalty += rnd["penalties"]
        rounds += [bool(h) for h in rnd["hands"]]
        took = {rnd["tricks"][-1]["winner"]}
        if rules.scoring == "last_trick":
            took |= {s for s in range(p) if rnd["penalties"][s] > 0}
        last[sorted(took)] += 1
        out_round[rnd["out"]] = i
    key = [10**9 if s in rec["winners"] else out_round[s] for s in range(p)]
    distinct = sorted(set(key), reverse=True)
    place = np.array([distinct.index(k) for k in key])
    hand = np.zeros((p, len(CARDS) if rules.jokers else 13), np.int8)
    for s, cards in enumerate(rec["rounds"][0]["hands"]):
        for c in cards:
            hand[s, CARDS.index(c)] += 1
    return {"win": win, "penalty": penalty, "rounds": rounds, "last": last, "place": place, "hands": hand}


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [("standard", {}), ("every_trick", {"players": 3}), ("quick", {}), ("lives", {"players": 5}), ("buy_in", {})],
)
def test_match_numbers_equal_the_game_records(preset: str, overrides: dict) -> None:
    # deterministic agents play the same games in simulate() and in the tournament loop,
    # whatever the batch; a small batch exercises restarts and the dropped tail slots
    rules = Rules.preset(preset, **overrides)
    specs = ",".join(["shed", "guard", "counter", "ducker", "guard"][: rules.players])
    n = 24
    records = list(simulate(rules, make_agents(specs, rules.players, 0), n, seed=3, batch=n))
    stats = T.seat_stats(rules, make_agents(specs, rules.players, 0), n, seed=3, batch=9)
    for m, rec in enumerate(records):
        expected = _expected_from_record(rec, rules)
        for field, value in expected.items():
            np.testing.assert_array_equal(getattr(stats, field)[m], value, err_msg=f"{field} of match {m}")


def test_places() -> None:
    winners = np.array([[False, True, False, False], [True, True, False, False], [False, False, True, False]])
    out_round = np.array([[3, -1, 5, 3], [-1, -1, 2, 2], [4, 4, 6, 6]])
    np.testing.assert_array_equal(
        TS.places(winners, out_round), [[2, 0, 1, 2], [0, 0, 1, 1], [2, 2, 0, 1]]
    )  # all out together in round 6: the winner among them first, the other ties below it


# ----------------------------------------------------------------------------- duplicate deals


def test_duplicate_deals_give_every_entry_every_seat() -> None:
    rules = Rules.preset("standard")
    specs = ["guard", "random", "counter", "random"]
    res = T.tournament(rules, specs, 24, seed=5, batch=24, resamples=20)
    assert res.seating.design == "permutations" and len(res.tables) == 12  # 4! / 2! arrangements of the kinds
    for table in res.tables[1:]:
        np.testing.assert_array_equal(table.hands, res.tables[0].hands)  # match m: the same hands at every table
    records = list(simulate(rules, make_agents("random", 4, 0), 24, seed=5))
    for m in (0, 17, 23):
        np.testing.assert_array_equal(res.tables[0].hands[m], _expected_from_record(records[m], rules)["hands"])
    seats = np.array([seat for _, seat in res.seating.views])  # (seatings, entries)
    for entry in range(4):  # every entry holds every seat's cards equally often
        assert np.bincount(seats[:, entry], minlength=4).tolist() == [len(seats) // 4] * 4
    for view, (t, seat) in zip(res.by_seating, res.seating.views, strict=True):
        np.testing.assert_array_equal(view.hands, res.tables[t].hands[:, seat])


def _followers(seats: np.ndarray) -> np.ndarray:
    """``(E, E)``: how often entry ``b`` sits right after entry ``a`` (clockwise), over the seatings ``(S, E)``."""
    p = seats.shape[1]
    after = (seats[:, None, :] - seats[:, :, None]) % p == 1
    return after.sum(0)


@pytest.mark.parametrize("players", range(2, 9))
def test_balanced_and_permutation_designs_seat_everyone_everywhere_after_everyone(players: int) -> None:
    entries = [f"e{i}" for i in range(players)]
    designs = ["balanced", "cyclic"] + (["permutations"] if players <= 5 else [])
    for design in designs:
        plan = S.seatings(entries, design)
        seats = np.array([seat for _, seat in plan.views])
        assert sorted(map(sorted, seats.tolist())) == [list(range(players))] * len(seats)  # each a seating
        for entry in range(players):
            assert len(set(np.bincount(seats[:, entry], minlength=players).tolist())) == 1, (design, entry)
        followers = _followers(seats)[~np.eye(players, dtype=bool)]
        assert (len(set(followers.tolist())) == 1) == (design != "cyclic" or players == 2), design
        assert len(plan.tables) == len(plan.views) == len({tuple(t) for t in plan.tables})  # all distinct
    sizes = {"balanced": players * (players - 1) * (2 if players in (4, 6) else 1), "cyclic": players}
    for design, size in sizes.items():
        assert len(S.seatings(entries, design).views) == size
    expected = "permutations" if players <= 4 else "balanced"
    assert S.seatings(entries).design == expected  # auto


def test_entries_of_one_kind_share_their_tables() -> None:
    # one entry against a field: the P tables of the cyclic rotation, in its order, whatever the design
    for design in ("auto", "permutations", "balanced"):
        plan = S.seatings(["x", "g", "g", "g", "g"], design)
        assert [t.tolist() for t in plan.tables] == [np.roll([0, 1, 1, 1, 1], r).tolist() for r in range(5)]
    plan = S.seatings(["g", "g", "r", "r"])
    assert len(plan.tables) == 6 and len(plan.views) == 24  # 4! / (2! 2!) tables, both kinds' shifts
    seats = np.array([seat for _, seat in plan.views])
    assert (_followers(seats)[~np.eye(4, dtype=bool)] == 8).all()
    same = Heuristic("guard")
    assert S.kinds(["guard", same, "guard", same, Heuristic("guard")]).tolist() == [0, 1, 0, 1, 4]


def _difference_interval(res: T.TournamentResult, a: int, b: int) -> tuple[float, float]:
    """99% bootstrap interval (over deals, paired) of entry ``a``'s win rate minus entry ``b``'s."""
    views = res.by_seating
    per_deal = sum(v.win[:, a] - v.win[:, b] for v in views) / len(views)
    counts = np.concatenate(list(TS.deal_resamples(res.seed, res.deals, 2000)))
    low, high = np.percentile(counts @ per_deal / res.deals, [0.5, 99.5])
    return float(low), float(high)


def test_identical_entries_get_the_same_figures() -> None:
    rules = Rules.preset("standard")
    by_spec = T.tournament(rules, ["guard", "guard", "random", "random"], 200, seed=1, resamples=300)
    a, b, c, d = by_spec.entries
    for x, y in ((a, b), (c, d)):  # one player: one set of figures
        for name in ("win_rate", "mean_penalty", "last_trick_rate", "rating"):
            assert getattr(x, name) == pytest.approx(getattr(y, name), rel=1e-9)
            assert getattr(x, f"{name}_ci") == pytest.approx(getattr(y, f"{name}_ci"), rel=1e-9)
    cyclic = T.tournament(rules, ["guard", "guard", "random", "random"], 200, seed=1, resamples=300, seating="cyclic")
    first, second = cyclic.entries[:2]
    assert first.win_rate_ci[1] < second.win_rate_ci[0]  # cyclic: the guard sitting after the other guard wins less
    assert _difference_interval(cyclic, 0, 1)[1] < 0
    # two guard objects are two entries: their figures differ by chance only
    for table, field in (
        (Rules.preset("standard"), ["random", "random"]),  # 12 tables
        (Rules.preset("standard", players=5, hand_size=4, limit=12), ["shed", "random", "random"]),  # 60 > 24: 20
    ):
        res = T.tournament(table, [Heuristic("guard"), Heuristic("guard"), *field], 60, seed=2, resamples=300)
        assert res.seating.design == ("permutations" if table.players == 4 else "balanced")
        low, high = _difference_interval(res, 0, 1)
        assert low < 0 < high, (table.players, low, high)


def test_identical_random_entries_are_even_in_two_player() -> None:
    rules = Rules.preset("standard", players=2)
    one = T.tournament(rules, ["random", "random"], 40, seed=11, resamples=100)
    assert [e.win_rate for e in one.entries] == [0.5, 0.5]  # one player in both seats: even by construction
    pair = [RandomAgent(np.random.default_rng(s), spec=f"random{s}") for s in (1, 2)]  # two players alike
    res = T.tournament(rules, pair, 400, seed=11, resamples=500)
    a, b = res.entries
    assert a.win_rate + b.win_rate == pytest.approx(1.0)
    for e in res.entries:
        assert e.win_rate_ci[0] < 0.5 < e.win_rate_ci[1]
        assert e.rating_ci[0] < 0 < e.rating_ci[1]
        assert e.win_rate_ci[1] - e.win_rate_ci[0] < 0.12  # a real interval, not a degenerate one
    assert abs(a.mean_penalty - b.mean_penalty) < 0.5


def test_without_decisions_duplicate_deals_cancel_all_luck() -> None:
    # one card per hand: nobody chooses anything, so the deal alone decides and every entry,
    # having played every seat of every deal, gets exactly the same numbers
    rules = Rules.preset("lives", players=3, hand_size=1)
    res = T.tournament(rules, ["guard", "random", "shed"], 50, seed=1, resamples=50)
    first = res.entries[0]
    for e in res.entries[1:]:
        assert e.win_rate == pytest.approx(first.win_rate) and e.mean_penalty == pytest.approx(first.mean_penalty)
        assert e.last_trick_rate == pytest.approx(first.last_trick_rate)
        assert e.rating == pytest.approx(0.0, abs=1e-6)


def test_guard_beats_three_random_players() -> None:
    rules = Rules.preset("standard")
    res = T.tournament(rules, ["guard", "random", "random", "random"], 200, seed=2, resamples=300)
    guard, *randoms = res.entries
    assert guard.win_rate > 0.45 and guard.win_rate_ci[0] > 0.25
    assert sum(e.win_rate for e in res.entries) == pytest.approx(1.0)
    for e in randoms:
        assert e.win_rate < guard.win_rate_ci[0]
        assert e.rating_ci[1] < guard.rating_ci[0]
        assert e.mean_penalty > guard.mean_penalty
    assert sum(e.rating for e in res.entries) == pytest.approx(0.0, abs=1e-6)
    for e in res.entries:
        for name in ("win_rate", "mean_penalty", "last_trick_rate", "rating"):
            low, high = getattr(e, f"{name}_ci")
            assert low <= getattr(e, name) <= high
        assert 0.0 <= e.last_trick_rate <= 1.0


def test_plackett_luce_fit_recovers_known_strengths() -> None:
    rng = np.random.default_rng(0)
    theta = np.array([1.0, 0.3, 0.0, -1.3])
    m, e = 4000, theta.size
    # sample full orders: repeatedly pick the next finisher with probability proportional to exp(theta)
    gumbel = theta + rng.gumbel(size=(m, e))
    place = np.argsort(np.argsort(-gumbel, axis=1), axis=1)
    st = TS.stages(place, np.arange(m) % 100, 100)
    fit = TS.fit_plackett_luce(st.chosen, st.risk, st.counts.sum(0, keepdims=True))[0]
    np.testing.assert_allclose(fit - fit.mean(), theta - theta.mean(), atol=0.08)
    # two entries: Bradley-Terry, where the maximum (with the prior's virtual games) is in closed form
    place2 = np.array([[0, 1]] * 30 + [[1, 0]] * 10)
    st2 = TS.stages(place2, np.zeros(40, int), 1)
    fit2 = TS.fit_plackett_luce(st2.chosen, st2.risk, st2.counts)[0]
    gamma = np.exp(fit2)
    # stationarity: wins_i + 1 = sum over games of p_i, plus 2 gamma_i / (1 + gamma_i) for the virtual games
    p0 = gamma[0] / gamma.sum()
    assert 31 == pytest.approx(40 * p0 + 2 * gamma[0] / (1 + gamma[0]), abs=1e-6)
    assert 11 == pytest.approx(40 * (1 - p0) + 2 * gamma[1] / (1 + gamma[1]), abs=1e-6)


def test_stages_with_ties_and_the_last_group_dropped() -> None:
    st = TS.stages(np.array([[0, 1, 1], [1, 0, 2]]), np.array([0, 1]), 2)
    stages = {(tuple(c), tuple(r)) for c, r in zip(st.chosen.tolist(), st.risk.tolist(), strict=True)}
    assert stages == {
        ((True, False, False), (True, True, True)),  # match 0: entry 0 first; the tied last group is not a choice
        ((False, True, False), (True, True, True)),  # match 1: entry 1 first ...
        ((True, False, False), (True, False, True)),  # ... then entry 0 ahead of entry 2
    }
    assert st.counts.sum() == 3


# ----------------------------------------------------------------------------- CLI


def _evaluate(tmp_path, *extra: str) -> dict:
    out = tmp_path / "e.json"
    argv = ["evaluate", "--agents", "guard,random,guard", "--set", "players=3", "--matches", "40", "--seed", "4"]
    assert main([*argv, "--bootstrap", "200", "--json", str(out), "-q", *extra]) == 0
    return json.loads(out.read_text())


def test_evaluate_json_schema_and_reproducible(tmp_path) -> None:
    data = _evaluate(tmp_path)
    assert data["rules"] == Rules.preset("standard", players=3).to_dict()
    assert data["seed"] == 4 and data["matches"] == 40 and data["matches_played"] == 120
    assert (data["seating"], data["tables"], data["seatings"]) == ("permutations", 3, 6)  # 3 orders; guards alternate
    assert [e["spec"] for e in data["entries"]] == ["guard", "random", "guard"]
    for e in data["entries"]:
        for name in ("win_rate", "mean_penalty", "last_trick_rate", "rating"):
            assert isinstance(e[name], float)
            low, high = e[f"{name}_ci"]
            assert isinstance(low, float) and low <= high
    again = _evaluate(tmp_path)
    data.pop("seconds"), again.pop("seconds")
    assert again == data
    other = _evaluate(tmp_path, "--seed", "5")
    assert other["entries"] != data["entries"]
    cyclic = _evaluate(tmp_path, "--seating", "cyclic")
    assert (cyclic["seating"], cyclic["tables"], cyclic["seatings"]) == ("cyclic", 3, 3)
    assert cyclic["entries"][0] != cyclic["entries"][2]  # the two guards sit apart: cyclic gives them two figures
    first, second = data["entries"][0], data["entries"][2]  # one player: one set of figures
    assert first["win_rate"] == second["win_rate"] and first["rating"] == pytest.approx(second["rating"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "guard,random", "--matches", "5"], "one spec per seat"),
        (["--agents", "guard,random,random,nope", "--matches", "5"], "unknown agent 'nope'"),
        (["--agents", "guard,random,random,random", "--matches", "0"], "argument --matches: must be an integer >= 1"),
        (["--agents", "guard,,random,random", "--matches", "5"], "empty agent spec"),
        (["--agents", "random,random,random,random", "--matches", "5", "--rules", "nope"], "unknown preset"),
        (["--agents", "random,random,random,random", "--matches", "5", "--json", "/proc/no/x.json"], "cannot write"),
        (["--agents", "pimc:worlds=0,random,random,random", "--matches", "5"], "worlds must be an integer >= 1"),
        (["--matches", "5"], "required: --agents"),
        (["--agents", "guard,random,random,random", "--matches", "5", "--seating", "round"], "must be one of auto"),
    ],
)
def test_evaluate_errors_are_one_line(capsys, argv: list[str], message: str) -> None:
    assert main(["evaluate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agurk: error: ") and err.count("\n") == 1 and message in err


def test_evaluate_table(capsys) -> None:
    argv = ["--agents", "shed,random", "--set", "players=2", "--matches", "10", "--bootstrap", "50", "-q"]
    assert main(["evaluate", *argv]) == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "rating" in out and "shed" in out and "10 deals x 2 seatings" in out


def test_help(capsys) -> None:
    for argv in (["--help"], ["evaluate", "--help"], ["agents", "--help"]):
        assert main(argv) == 0
    assert "duplicate" in capsys.readouterr().out


def test_agents_lists_every_spec(capsys) -> None:
    assert main(["agents"]) == 0
    lines = capsys.readouterr().out.splitlines()
    heads = [line for line in lines if not line.startswith(" ")]  # a kind's usage, then its help and options indented
    assert len(heads) == len(AGENTS) and max(map(len, lines)) <= 80
    assert {line.split()[0].split("[")[0].split(":")[0] for line in heads} == set(AGENTS)
    assert {"random", "guard", "heuristic", "pimc", "oracle"} <= set(AGENTS)


def test_engine_deals_do_not_depend_on_the_rotation() -> None:
    # the property duplicate deals rest on: round 1 of match m is a function of (seed, m)
    rules = Rules.preset("standard")
    a = engine.init(rules, 4, seed=9, first_match=10)
    b = engine.init(rules, 2, seed=9, first_match=12)
    np.testing.assert_array_equal(a.hands[2:], b.hands)


def test_a_match_nobody_wins_counts_as_no_win() -> None:
    # quick (first_out): guard seats all go out in the same round of match 288 of seed 0,
    # and the record says nobody won; the tournament counts 0 wins there, not NaN
    rules = Rules.preset("quick")
    agents = make_agents("guard", 4, 0)
    records = list(simulate(rules, agents, 300, seed=0, batch=64))
    assert records[288]["winners"] == []
    stats = T.seat_stats(rules, make_agents("guard", 4, 0), 300, seed=0, batch=64)
    assert np.isfinite(stats.win).all()
    np.testing.assert_array_equal(stats.win[288], 0.0)
    assert [m for m, r in enumerate(records) if not r["winners"]] == [288]
    assert TS.summarize(["guard"] * 4, [stats], seed=0, resamples=50)[0].win_rate < 0.25


def test_worker_processes_give_the_same_numbers(monkeypatch) -> None:
    monkeypatch.setattr(T, "PARALLEL_MIN_MATCHES", 0)
    rules = Rules.preset("standard", players=3)
    specs = ["guard", "random", "random"]
    seen: list[int] = []
    one = T.tournament(rules, specs, 30, seed=8, resamples=100)
    two = T.tournament(rules, specs, 30, seed=8, resamples=100, workers=2, progress=seen.append)
    assert [e.to_dict() for e in two.entries] == [e.to_dict() for e in one.entries]
    assert seen and seen[-1] == 90
