"""People on `agurk leaderboard`: duplicate games played through `agurk serve`'s API, rated with --people DB."""

from __future__ import annotations

import json
import shlex
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the duplicate games are played through agurk serve (the web extra)")
pytest.importorskip("scipy", reason="agurk leaderboard needs scipy")
from scipy.optimize import minimize_scalar
from starlette.testclient import TestClient

from agents.tournament import play_planned
from agurk.cli import build_parser, main
from agurk.replay import parse_record
from agurk.web.app import create_app
from agurk.web.duplicate import SCHEMA, Results
from agurk_env.rules import Rules
from skill.cache import TaskCache
from skill.leaderboard import group_places, plan_leaderboard, play_leaderboard, rate, strengths
from skill.people import PersonMatches, rate_person

RULES = Rules.preset("standard", players=3, hand_size=3)
AGENTS = ["random", "shed", "guard", "ducker"]
TABLE = {"rules": "standard", "players": 3, "set": ["hand_size=3"]}
MATCHES = 6


def play_duplicate(client: TestClient, name: str, pick: int, **fields: Any) -> dict[str, Any]:
    """One duplicate game to its end, the person playing their legal card number ``pick`` (-1: the highest)."""
    body = {**TABLE, "opponents": "guard,shed", "duplicate": "random", "name": name, **fields}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    game, headers, view = r.json()["id"], {"X-Game-Token": r.json()["token"]}, r.json()["view"]
    while not view["over"]:
        if view["stepped"]:
            view = client.post(f"/api/games/{game}/step", headers=headers).json()
        else:
            card = view["legal"][pick]
            view = client.post(f"/api/games/{game}/play", json={"card": card}, headers=headers).json()
    return parse_record(client.get(f"/api/games/{game}/record", headers=headers).text)


def record_places(rec: dict[str, Any]) -> list[int]:
    """Each seat's finishing level from a match record: winners 0, then by the round they went out, latest first."""
    seats = len(rec["agents"])
    out = [max((r for r, rnd in enumerate(rec["rounds"]) if s in rnd["out"]), default=-1) for s in range(seats)]
    key = [10**9 if s in rec["winners"] else out[s] for s in range(seats)]
    levels = sorted(set(key), reverse=True)
    return [levels.index(k) for k in key]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two scripted people's duplicate games at the board's table, and a few at other tables, in one database."""
    tmp = tmp_path_factory.mktemp("people")
    db = tmp / "web.sqlite"
    client = TestClient(create_app(results=Results(db)))
    records = {
        "high": [play_duplicate(client, "high", -1, seat=k % 3) for k in range(MATCHES)],
        "low": [play_duplicate(client, "low", 0, seat=k % 3) for k in range(MATCHES)],
    }
    play_duplicate(client, "high", -1, set=["hand_size=4"])  # other rules
    play_duplicate(client, "low", 0, opponents="counter")  # an opponent not on the board
    play_duplicate(client, "odd", 0, opponents="counter")  # nobody the board can rate
    return {"tmp": tmp, "db": db, "records": records, "rows": Results(db).rows()}


def run_board(tmp: Path, *extra: str, out: str = "lb") -> int:
    """``agurk leaderboard`` of :data:`AGENTS` at the people's table into ``tmp/out`` (one cache for all)."""
    argv = ["leaderboard", "--set", "players=3", "--set", "hand_size=3", "--agents", ",".join(AGENTS)]
    argv += ["--deals", "8", "--out", str(tmp / out), "--cache", str(tmp / "cache"), "--workers", "1", *extra]
    return main(argv)


def test_each_row_keeps_the_finishing_levels_of_the_persons_match(served: dict[str, Any]) -> None:
    rows = [r for r in served["rows"] if r["rules"] == "standard + hand_size=3 + players=3"]
    for name, records in served["records"].items():
        mine = [r["person_places"] for r in rows if r["person"] == name and r["opponents"] == "guard,shed"]
        assert mine == [record_places(rec) for rec in records]


def test_the_people_are_rated_from_their_matches(served: dict[str, Any], capsys: pytest.CaptureFixture) -> None:
    tmp = served["tmp"]
    assert run_board(tmp, "-q", out="alone") == 0
    assert run_board(tmp, "--people", str(served["db"])) == 0
    out, err = capsys.readouterr()
    assert "4 agents and 2 people, 36 tables (0 played, 36 from the cache)" in out  # 6 pairs, 2 groups of 3
    assert "person:high: 6 duplicate matches at this table, left out 1 at other rules" in err
    assert "person:low: 6 duplicate matches at this table, left out 1 against counter, not among --agents" in err
    assert "person:odd: 0 duplicate matches at this table, left out 1 against counter" in err
    alone = json.loads((tmp / "alone" / "leaderboard.json").read_text())
    data = json.loads((tmp / "lb" / "leaderboard.json").read_text())
    entries = {a["spec"]: a for a in data["agents"]}
    # the agents' rows are those of the board without people (ranks aside), the people's come from their matches
    for a in alone["agents"]:
        assert {k: v for k, v in entries[a["spec"]].items() if k != "rank"} == {
            k: v for k, v in a.items() if k != "rank"
        }
    assert [a["rank"] for a in data["agents"]] == [1, 2, 3, 4, 5, 6]
    assert [a["rating"] for a in data["agents"]] == sorted((a["rating"] for a in data["agents"]), reverse=True)
    high, low = entries["person:high"], entries["person:low"]
    for person in (high, low):
        assert person["matches"] == MATCHES and person["nash_rating"] is None and person["nash_weight"] is None
        assert person["rating_ci"][0] < person["rating"] < person["rating_ci"][1]
    assert high["rating"] > low["rating"] + 100  # at this table the highest card sheds danger, the lowest keeps it
    assert "person:NAME" in data["people"] and data["nash"]["agents"] == AGENTS
    argv = shlex.split(data["command"])
    assert argv[argv.index("--people") + 1] == str(served["db"])
    build_parser().parse_args(shlex.split(data["command"])[1:])
    md = (tmp / "lb" / "leaderboard.md").read_text()
    assert f"| `person:high` | {high['rating']:.0f} |" in md and "People: person:NAME rows" in md


def test_a_persons_rating_maximizes_the_likelihood_of_their_orders(served: dict[str, Any]) -> None:
    """The rating, recomputed by brute force: the Plackett-Luce likelihood of the person's orders (Breslow ties, the
    agents' strengths as fitted, one virtual win and loss against strength 1), maximized over the person's strength."""
    tmp = served["tmp"]
    assert run_board(tmp, "-q", "--people", str(served["db"]), out="brute") == 0
    rating = {a["spec"]: a["rating"] for a in json.loads((tmp / "brute" / "leaderboard.json").read_text())["agents"]}
    plan = plan_leaderboard(RULES, AGENTS, 8, 0)
    theta, _ = strengths(plan, play_leaderboard(plan, cache=TaskCache(tmp / "cache")).tables)
    strength = dict(zip(AGENTS, np.exp(theta), strict=True))
    for name, records in served["records"].items():
        matches = [(rec["agents"], record_places(rec), rec["agents"].index("human")) for rec in records]

        def minus_log_likelihood(t: float, matches: list = matches) -> float:
            total = t - 2 * np.log1p(np.exp(t))
            for agents, place, me in matches:
                s = [np.exp(t) if k == me else strength[a] for k, a in enumerate(agents)]
                for level in range(max(place)):
                    chosen = [k for k in range(3) if place[k] == level]
                    total += sum(np.log(s[k]) for k in chosen)
                    total -= len(chosen) * np.log(sum(s[k] for k in range(3) if place[k] >= level))
            return -total

        best = minimize_scalar(minus_log_likelihood, bounds=(-30, 30), method="bounded", options={"xatol": 1e-10})
        expected = 400 / np.log(10) * (best.x - theta.mean())
        assert rating[f"person:{name}"] == pytest.approx(expected, abs=1e-3)


def test_an_agents_own_matches_as_a_persons_get_its_rating() -> None:
    """Handed an agent's own matches at the board (its seat the person's), the person's fit finds the agent's rating:
    the joint fit's optimum in that agent's strength, the others' held."""
    specs = ["random", "shed", "guard"]
    plan = plan_leaderboard(Rules.preset("standard", players=2, hand_size=4), specs, 8, 0)
    tables = [[play_planned(lambda *_: None, *task) for task in p.tasks] for p in plan.plans]
    theta, boot = strengths(plan, tables)
    rating = rate(theta, boot)[0]
    for x in range(len(specs)):
        seats, places = [], []
        for g, group in enumerate(plan.groups):
            if x in group:
                place = group_places(plan, tables, g).tolist()
                seats += [[None if i == x else specs[i] for i in group]] * len(place)
                places += place
        person = rate_person(specs, theta, boot, PersonMatches("copy", seats, places), 0)
        assert person.rating == pytest.approx(rating[x], abs=1e-6)
        assert person.low < person.rating < person.high and person.matches == 2 * 2 * 8


def old_database(tmp: Path) -> Path:
    """A database of the schema before the finishing levels, with one row of the board's table."""
    path = tmp / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA.replace(",\n    person_places TEXT", ""))
    db.execute(
        "INSERT INTO duplicate (person, agent, rules, players, opponents, seat, seed, match, person_win, "
        "person_penalty, person_rounds, agent_win, agent_penalty, agent_rounds, finished) VALUES ('ann', 'random', "
        "'standard + hand_size=3 + players=3', 3, 'guard,shed', 0, 0, 0, 1, 0, 3, 0, 4, 3, 'x')"
    )
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda tmp: tmp / "missing.sqlite", "no database there"),
        (lambda tmp: (tmp / "notes.txt").write_text("hello " * 1000) and tmp / "notes.txt", "not a database"),
        (lambda tmp: Results(tmp / "empty.sqlite").rows() == [] and tmp / "empty.sqlite", "no finished duplicate"),
        (old_database, "1 without finishing levels (written before agurk serve kept them)"),
    ],
)
def test_a_database_without_usable_matches_is_refused(
    make: Any, says: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert run_board(tmp_path, "--people", str(make(tmp_path))) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("agurk: error: --people") and says in err, err
    assert not (tmp_path / "cache").exists() and not (tmp_path / "lb").exists()  # nothing played or written


def test_a_database_of_other_tables_is_refused(served: dict[str, Any], tmp_path: Path, capsys) -> None:
    """The same games rated at a board of other rules, or of agents the people never met: one line, exit 2."""
    db = str(served["db"])
    argv = ["leaderboard", "--set", "players=3", "--agents", ",".join(AGENTS), "--out", str(tmp_path / "lb")]
    assert main([*argv, "--people", db]) == 2
    assert "none of its 15 duplicate matches is at this leaderboard's table" in capsys.readouterr().err
    argv = ["leaderboard", "--set", "players=3", "--set", "hand_size=3", "--agents", "random,ducker,heuristic"]
    assert main([*argv, "--out", str(tmp_path / "lb"), "--people", db]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "12 against guard, shed, not among --agents" in err, err
