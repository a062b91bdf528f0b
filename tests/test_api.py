"""The Python API: Decision's trick and mover fields, agent objects in tournaments, round-unit scoring, presets."""

from __future__ import annotations

import json
import pickle
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from replay import replay_record

from agents import tournament as T
from agents import tournament_stats as TS
from agents.heuristics import Heuristic
from agents.registry import AgentSpecError, make_agent, make_agents
from agurk.cli import main
from agurk_env import engine
from agurk_env.agent import Decision, RandomAgent
from agurk_env.rules import CARDS, Rules
from agurk_env.simulate import simulate

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_matches.jsonl"


class HighOrLow:
    """An outside agent: reads only public Decision fields (legal, seat, hand, trick_cards), never ``_state``."""

    sees_all = False

    def __init__(self, rng: np.random.Generator, spec: str = "high-or-low") -> None:
        self.rng = rng
        self.spec = spec

    def act(self, decision: Decision) -> np.ndarray:
        """Beat the trick's highest card index with the least legal card above it; else (and leading) a random one."""
        assert (decision.hand.sum(1) > 0).all() and (decision.trick_seats != decision.seat[:, None]).all()
        top = decision.trick_cards.max(1)
        legal = decision.legal
        above = legal & (np.arange(legal.shape[1]) > top[:, None]) & (decision.trick_seats[:, :1] >= 0)
        random = engine.random_legal(decision.bits, self.rng)
        return np.where(above.any(1), above.argmax(1), random)


class Recording:
    """Plays like ``inner`` and keeps, per decision, the trick it was shown (for checking against records)."""

    sees_all = False

    def __init__(self, inner: Heuristic) -> None:
        self.inner, self.spec, self.seen = inner, inner.spec, []

    def act(self, decision: Decision) -> np.ndarray:
        """``inner``'s cards; records ``(match, round, trick, seat, trick seats, trick cards)`` per game."""
        pub = decision.public
        for i in range(len(decision)):
            key = (int(pub.match_id[i]), int(pub.round_no[i]), int(pub.trick_no[i]))
            self.seen.append((key, int(decision.seat[i]), decision.trick_seats[i].tolist(), decision.trick_cards[i]))
        return self.inner.act(decision)


# ----------------------------------------------------------------------------- Decision: the trick in playing order


def _padded(plays: list[list], players: int) -> tuple[list[int], list[int]]:
    seats = [s for s, _ in plays] + [-1] * (players - len(plays))
    cards = [CARDS.index(c) for _, c in plays] + [-1] * (players - len(plays))
    return seats, cards


def test_decision_trick_matches_every_golden_reference_record() -> None:
    # the golden records come from the scalar reference: replay each on the engine and, before every
    # play, the Decision must show exactly the plays of the trick so far, in playing order
    records = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()][::3]
    assert len({(r["preset"], r["rules"]["players"]) for r in records}) == 17 * 5  # every preset, 2..6 players
    checked = set()
    for rec in records:
        rules = Rules.from_dict(rec["rules"])
        p = rules.players
        st = engine.init(rules, 1, seed=0)
        for rnd in rec["rounds"]:
            counts = np.zeros((1, p, rules.num_actions), np.int8)
            for seat, hand in enumerate(rnd["hands"]):
                for name in hand:
                    counts[0, seat, CARDS.index(name)] += 1
            st = engine.set_hands(rules, st, counts)
            for trick in rnd["tricks"]:
                for j, ((seat, name), legal) in enumerate(zip(trick["plays"], trick["legal"], strict=True)):
                    bits = engine.legal_bits(rules, st)
                    d = Decision(rules, st, np.zeros(1, np.int64), bits)
                    seats, cards = _padded(trick["plays"][:j], p)
                    assert d.trick_seats.tolist() == [seats] and d.trick_cards.tolist() == [cards]
                    assert d.seat.tolist() == [seat]
                    assert [CARDS[c] for c in np.flatnonzero(d.legal[0])] == legal
                    np.testing.assert_array_equal(d.hand[0], st.hands[0, seat])
                    checked.add((p, len(trick["plays"]) < p))
                    st = engine.play(rules, st, np.array([CARDS.index(name)]))
            st = engine.advance(rules, st)
    assert {(2, False), (6, False), (6, True)} <= checked  # also with seats out of the match


def test_decision_trick_in_a_batch_matches_the_simulated_records() -> None:
    # many games at once, in different tricks and positions, seats out in between (lives)
    rules = Rules.preset("lives", players=6, hand_size=5, lives=1)
    agents = [Recording(Heuristic(name)) for name in ("guard", "shed", "counter", "ducker", "guard", "shed")]
    records = list(simulate(rules, agents, 40, seed=7, batch=16))
    for rec in records[:5]:
        replay_record(rec)  # the records agree with the scalar reference
    plays = {}
    for rec in records:
        for r, rnd in enumerate(rec["rounds"]):
            for t, trick in enumerate(rnd["tricks"]):
                plays[(rec["match"], r, t)] = trick["plays"]
    n = 0
    gaps = 0
    for agent in agents:
        for key, seat, seats, cards in agent.seen:
            if key[0] >= 40:
                continue  # a spare match beyond the run: not recorded
            trick = plays[key]
            j = next(i for i, (s, _) in enumerate(trick) if s == seat)  # the mover's place in the trick
            assert (seats, cards.tolist()) == _padded(trick[:j], rules.players)
            gaps += any((b - a) % rules.players > 1 for a, b in pairwise(seats[:j]))
            n += 1
    assert n > 1000 and gaps > 0  # checked often, and with seats out between players


def test_an_outside_agent_plays_from_public_fields_only() -> None:
    rules = Rules.preset("standard")
    agents = [HighOrLow(np.random.default_rng(1)), *make_agents("random", 3, 0)]
    followed = 0
    for rec in simulate(rules, agents, 20, seed=2, with_legal=True):
        replay_record(rec)
        for rnd in rec["rounds"]:
            for trick in rnd["tricks"]:
                for j, ((seat, card), legal) in enumerate(zip(trick["plays"], trick["legal"], strict=True)):
                    if seat != 0 or j == 0:
                        continue
                    top = max(CARDS.index(c) for _, c in trick["plays"][:j])  # from the recorded trick
                    above = [CARDS.index(c) for c in legal if CARDS.index(c) > top]
                    if above:  # it saw the trick so far and beat its top card with the least card above it
                        assert CARDS.index(card) == min(above)
                        followed += 1
    assert followed > 50


# ----------------------------------------------------------------------------- tournaments: agent objects


def test_an_agent_object_scores_like_its_spec() -> None:
    rules = Rules.preset("standard", players=3)
    by_spec = T.tournament(rules, ["guard", "random", "counter"], 40, seed=3, resamples=100)
    by_object = T.tournament(rules, [Heuristic("guard"), "random", Heuristic("counter")], 40, seed=3, resamples=100)
    assert by_object.specs == ["guard", "random", "counter"]
    assert [e.to_dict() for e in by_object.entries] == [e.to_dict() for e in by_spec.entries]


def test_agent_objects_give_the_same_numbers_with_one_or_two_workers(monkeypatch) -> None:
    monkeypatch.setattr(T, "PARALLEL_MIN_MATCHES", 0)
    rules = Rules.preset("standard", players=3)
    mine = HighOrLow(np.random.default_rng(5), spec="mine")
    before = mine.rng.bit_generator.state
    runs = [T.tournament(rules, [mine, "random", "guard"], 30, seed=8, resamples=100, workers=w) for w in (1, 2)]
    assert mine.rng.bit_generator.state == before  # the object passed in is never played
    one, two = ([e.to_dict() for e in r.entries] for r in runs)
    assert one == two and one[0]["spec"] == "mine"
    again = T.tournament(rules, [mine, "random", "guard"], 30, seed=8, resamples=100)
    assert [e.to_dict() for e in again.entries] == one
    other = T.tournament(rules, [HighOrLow(np.random.default_rng(6), "mine"), "random", "guard"], 30, 8, resamples=100)
    assert [e.to_dict() for e in other.entries] != one  # the object's own generator drives its random choices


def test_the_same_object_in_two_seats_is_one_agent() -> None:
    mine = RandomAgent(np.random.default_rng(0), spec="mine")
    entries = pickle.loads(T.pack_entries([mine, "random", mine, "guard"], 4, seed=0))
    agents = T.table_agents(entries, np.array([3, 0, 1, 2]), seed=0)  # entry i in seat (i + 1) % 4
    assert agents[1] is agents[3] and agents[1] is not mine and agents[1].spec == "mine"
    assert agents[2].spec == "random" and agents[0].spec == "guard" and agents[2] is not agents[1]


def test_an_object_that_cannot_be_pickled_is_refused_clearly() -> None:
    class Local(RandomAgent):
        """A class inside a function: pickle cannot find it by name."""

    rules = Rules.preset("standard", players=3)
    with pytest.raises(TypeError, match=r"entry 1 \('local'\) cannot be pickled .*module level"):
        T.tournament(rules, ["random", Local(np.random.default_rng(0), "local"), "random"], 5, seed=0)
    holder = RandomAgent(np.random.default_rng(0), spec="holder")
    holder.hook = lambda x: x
    with pytest.raises(TypeError, match=r"entry 2 \('holder'\) cannot be pickled"):
        T.tournament(rules, ["random", "guard", holder], 5, seed=0)
    with pytest.raises(TypeError, match="neither an agent spec nor an agent"):
        T.tournament(rules, ["random", 42, "guard"], 5, seed=0)
    with pytest.raises(AgentSpecError, match="unknown agent 'nope'"):
        T.tournament(rules, ["random", "nope", holder], 5, seed=0)


# ----------------------------------------------------------------------------- tournaments: scoring rounds


def _round_levels(rnd: dict, players: int) -> list[int]:
    """The finishing levels of one recorded round, worked out from its penalties."""
    ins = [s for s in range(players) if rnd["hands"][s]]
    distinct = sorted({rnd["penalties"][s] for s in ins})
    return [distinct.index(rnd["penalties"][s]) if s in ins else -1 for s in range(players)]


@pytest.mark.parametrize(("preset", "players"), [("standard", 4), ("every_trick", 3), ("lives", 5), ("quick", 4)])
def test_round_numbers_equal_the_game_records(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players=players)
    specs = ",".join(["shed", "guard", "counter", "ducker", "guard"][:players])
    n = 20
    records = list(simulate(rules, make_agents(specs, players, 0), n, seed=4, batch=n))
    stats = T.seat_stats(rules, make_agents(specs, players, 0), n, seed=4, batch=7)
    wins = TS.round_wins(stats)
    assert stats.round_match.size == sum(len(r["rounds"]) for r in records)
    for m, rec in enumerate(records):
        got = stats.round_place[stats.round_match == m].tolist()  # a match's rounds end in order
        assert got == [_round_levels(rnd, players) for rnd in rec["rounds"]], f"match {m}"
        expected = np.zeros(players)
        for levels in got:
            top = [s for s in range(players) if levels[s] == 0]
            expected[top] += 1 / len(top)
        np.testing.assert_allclose(wins[m], expected)
        assert (np.array(got) >= 0).sum(0).tolist() == stats.rounds[m].tolist()


def test_round_unit_statistics_are_ratios_over_the_rounds() -> None:
    rules = Rules.preset("standard", players=3)
    specs = ["guard", "random", "random"]
    by_round = T.tournament(rules, specs, 150, seed=9, resamples=300, unit="round")
    by_match = T.tournament(rules, specs, 150, seed=9, resamples=300)
    for s_round, s_match in zip(by_round.by_seating, by_match.by_seating, strict=True):
        np.testing.assert_array_equal(s_round.round_place, s_match.round_place)  # the same play
    won = sum(TS.round_wins(s) for s in by_round.by_seating).sum(0)
    played = sum(s.rounds for s in by_round.by_seating).sum(0)
    for i, (r, m) in enumerate(zip(by_round.entries, by_match.entries, strict=True)):
        assert r.win_rate == pytest.approx(won[i] / played[i])
        assert r.mean_penalty == m.mean_penalty and r.last_trick_rate == m.last_trick_rate
        assert r.win_rate_ci[0] <= r.win_rate <= r.win_rate_ci[1] and r.rating_ci[0] <= r.rating <= r.rating_ci[1]
        assert r.win_rate_ci[1] - r.win_rate_ci[0] < m.win_rate_ci[1] - m.win_rate_ci[0]  # many more rounds
    guard, *randoms = by_round.entries
    assert all(guard.win_rate_ci[0] > e.win_rate_ci[1] and guard.rating_ci[0] > e.rating_ci[1] for e in randoms)
    assert by_round.unit == "round" and by_round.rounds_played == sum(s.round_match.size for s in by_match.tables)
    with pytest.raises(ValueError, match="unit must be one of"):
        T.tournament(rules, specs, 5, seed=9, unit="trick")


def test_round_unit_identical_entries_are_even() -> None:
    rules = Rules.preset("standard", players=2)
    pair = [RandomAgent(np.random.default_rng(s), spec=f"random{s}") for s in (1, 2)]  # two players alike
    res = T.tournament(rules, pair, 300, seed=12, resamples=400, unit="round")
    for e in res.entries:
        assert e.win_rate_ci[0] < 0.5 < e.win_rate_ci[1] and e.rating_ci[0] < 0 < e.rating_ci[1]
    # one card each: nobody chooses, every entry plays every seat of every deal, so all numbers agree
    rules = Rules.preset("lives", players=3, hand_size=1)
    res = T.tournament(rules, ["guard", "random", "shed"], 50, seed=1, resamples=50, unit="round")
    first = res.entries[0]
    for e in res.entries[1:]:
        assert e.win_rate == pytest.approx(first.win_rate) and e.rating == pytest.approx(0.0, abs=1e-6)


def test_evaluate_unit_round_json(tmp_path: Path, capsys) -> None:
    argv = ["evaluate", "--agents", "guard,random,random", "--set", "players=3", "--matches", "30", "--seed", "2"]
    outs = {}
    for unit in ("match", "round"):
        out = tmp_path / f"{unit}.json"
        assert main([*argv, "--bootstrap", "100", "--unit", unit, "--json", str(out), "-q"]) == 0
        outs[unit] = json.loads(out.read_text())
    r, m = outs["round"], outs["match"]
    assert r["unit"] == "round" and m["unit"] == "match" and r["rounds_played"] == m["rounds_played"] > 90
    for er, em in zip(r["entries"], m["entries"], strict=True):
        assert er["mean_penalty"] == em["mean_penalty"] and er["win_rate"] != em["win_rate"]
    assert main([*argv, "--bootstrap", "50", "--unit", "round"]) == 0
    text = capsys.readouterr().out
    assert "round win rate" in text and "rounds in" in text and "order by penalty" in text
    assert main([*argv, "--unit", "trick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agurk: error: ") and err.count("\n") == 1 and "--unit" in err


# ----------------------------------------------------------------------------- documented examples


def test_the_preset_docstring_examples_hold() -> None:
    lines = [line.strip() for line in Rules.preset.__doc__.splitlines() if line.strip().startswith("Rules.preset(")]
    built = [eval(line.split("#")[0], {"Rules": Rules}) for line in lines]
    assert len(built) == 3
    assert built[0] == Rules(limit=21, ace_lock="any")
    assert (built[1].players, built[1].limit) == (3, 21) and built[1].replace(players=4, limit=30) == Rules()
    assert (built[2].lives, built[2].players, built[2].hand_size) == (3, 5, 6)


def test_search_options_are_separated_by_semicolons() -> None:
    agent = make_agent("pimc:worlds=32;rollout=shed", 0, 0)
    assert (agent.options.worlds, agent.options.rollout) == (32, "shed")
    with pytest.raises(AgentSpecError, match="worlds must be an integer >= 1"):
        make_agent("pimc:worlds=32,rollout=shed", 0, 0)
