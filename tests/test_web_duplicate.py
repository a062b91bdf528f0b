"""``agurk serve``'s duplicate games: the person's deal played by an agent too, both results kept in SQLite."""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="agurk serve needs the web extra (starlette)")
from starlette.testclient import TestClient

from agents.registry import make_agents
from agurk.cli.common import resolve_rules
from agurk.replay import parse_record
from agurk.web.app import create_app
from agurk.web.duplicate import COLUMNS, SCHEMA, Results, agent_match, interval, summary
from agurk_env.simulate import simulate

SMALL = {"rules": "standard", "players": 3, "set": ["hand_size=3"], "opponents": "guard"}
RULES = resolve_rules("standard", ["hand_size=3", "players=3"])


def duplicate_game(client: TestClient, **fields: Any) -> tuple[str, dict[str, str], dict[str, Any]]:
    r = client.post("/api/games", json={**SMALL, "duplicate": "random", **fields})
    assert r.status_code == 201, r.text
    body = r.json()
    return body["id"], {"X-Game-Token": body["token"]}, body["view"]


def play_out(client: TestClient, game: str, headers: dict[str, str], view: dict[str, Any], pick: int = 0) -> dict:
    """The person's legal card number ``pick`` (cycling) every turn, then the agents' steps once out, to the end."""
    while not view["over"]:
        if view["stepped"]:
            r = client.post(f"/api/games/{game}/step", headers=headers)
        else:
            r = client.post(
                f"/api/games/{game}/play", json={"card": view["legal"][pick % len(view["legal"])]}, headers=headers
            )
        assert r.status_code == 200, r.text
        view = r.json()
    return view


def record_result(rec: dict[str, Any], seat: int) -> dict[str, Any]:
    """A seat's win share, penalty per round played and rounds, read from a match record (not the engine's state)."""
    played = [rnd["penalties"][seat] for rnd in rec["rounds"] if rnd["hands"][seat]]
    win = 1 / len(rec["winners"]) if seat in rec["winners"] else 0.0
    return {"win": win, "penalty": sum(played) / len(played), "rounds": len(played)}


def test_a_duplicate_match_keeps_both_results_on_the_same_cards(tmp_path: Path) -> None:
    db = tmp_path / "web.sqlite"
    client = TestClient(create_app(results=Results(db)))
    game, headers, view = duplicate_game(client, name="alice", seat=1)
    assert view["seed"] == 0 and view["duplicate"] == {"person": "alice", "agent": "random", "deal": 0, "match": 0}
    assert client.get(f"/api/games/{game}/duplicate", headers=headers).status_code == 409  # not before the end
    final = play_out(client, game, headers, view, pick=1)
    dup = final["duplicate"]
    mine, its = dup["person_result"], dup["agent_result"]
    # the person's result, as their record says
    rec = parse_record(client.get(f"/api/games/{game}/record", headers=headers).text)
    assert {k: mine[k] for k in ("win", "penalty", "rounds")} == record_result(rec, 1)
    # the agent's: the same match as agurk simulate plays it (random at seat 1, guard elsewhere, seed 0, match 0)
    (sim,) = simulate(RULES, make_agents("guard,random,guard", 3, 0), 1, 0)
    assert {k: its[k] for k in ("win", "penalty", "rounds")} == record_result(sim, 1)
    agent_rec = parse_record(client.get(f"/api/games/{game}/duplicate", headers=headers).text)
    assert agent_rec["rounds"] == sim["rounds"] and agent_rec["agents"] == ["guard", "random", "guard"]
    assert agent_rec["rounds"][0]["hands"] == rec["rounds"][0]["hands"]  # the same cards dealt
    assert agent_match(RULES, "guard", 1, "random", 0)["penalty"] == its["penalty"]
    assert dup["win_diff"] == mine["win"] - its["win"] and dup["penalty_diff"] == mine["penalty"] - its["penalty"]
    # the stored row, committed: another connection reads it
    with sqlite3.connect(db) as other:
        other.row_factory = sqlite3.Row
        (row,) = [dict(r) for r in other.execute("SELECT * FROM duplicate")]
    assert row["id"] == dup["id"] and row["person"] == "alice" and row["agent"] == "random"
    assert row["rules"] == "standard + hand_size=3 + players=3" and row["opponents"] == "guard,guard"
    assert (row["seat"], row["seed"], row["match"], row["players"]) == (1, 0, 0, 3)
    assert (row["person_win"], row["person_penalty"], row["person_rounds"]) == (
        mine["win"],
        mine["penalty"],
        mine["rounds"],
    )
    assert (row["agent_win"], row["agent_penalty"], row["agent_rounds"]) == (its["win"], its["penalty"], its["rounds"])
    assert json.loads(row["person_places"]) == places(rec)  # what agurk leaderboard --people rates
    # the view says it again, and the row is written once
    again = client.get(f"/api/games/{game}", headers=headers).json()
    assert again["duplicate"] == dup
    assert len(client.get("/api/duplicate/results").json()["rows"]) == 1


def places(rec: dict[str, Any]) -> list[int]:
    """Each seat's finishing level, read from a match record: winners 0, then by the round out in, latest first."""
    out = [max((r for r, rnd in enumerate(rec["rounds"]) if s in rnd["out"]), default=-1) for s in range(3)]
    key = [99 if s in rec["winners"] else out[s] for s in range(3)]
    return [sorted(set(key), reverse=True).index(k) for k in key]


def test_a_database_made_before_the_finishing_levels_gets_them(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as old:  # the schema of the first release: no person_places
        old.executescript(SCHEMA.replace(",\n    person_places TEXT", ""))
        old.execute(
            f"INSERT INTO duplicate ({', '.join(COLUMNS[:-1])}) VALUES ({', '.join('?' * (len(COLUMNS) - 1))})",
            ["ann", "random", "standard", 4, "guard", 0, 0, 0, 1.0, 2.0, 3, 0.0, 4.0, 3, "x"],
        )
    old.close()
    client = TestClient(create_app(results=Results(db)))
    game, headers, view = duplicate_game(client, name="ann")
    assert view["seed"] == 1
    play_out(client, game, headers, view)
    rows = client.get("/api/duplicate/results").json()["rows"]
    assert rows[0]["person_places"] is None and len(rows[1]["person_places"]) == 3


def test_each_person_gets_the_next_deal_and_bad_duplicate_requests_are_refused(tmp_path: Path) -> None:
    client = TestClient(create_app(results=Results(tmp_path / "web.sqlite")))
    assert duplicate_game(client, name="alice")[2]["seed"] == 0
    assert duplicate_game(client, name="alice")[2]["seed"] == 1  # handed out, not finished: not handed again
    assert duplicate_game(client, name="bob")[2]["seed"] == 0  # every person plays the same deals in order
    assert duplicate_game(client)[2]["duplicate"]["person"] == "guest"
    bad = [
        ({"duplicate": "random", "seed": 4}, "a duplicate game's seed is the server's"),
        ({"duplicate": "random", "mode": "watch"}, "duplicate is for a played game"),
        ({"name": "alice"}, "name is for a duplicate game"),
        ({"duplicate": "deepblue", "name": "alice"}, "unknown agent 'deepblue'"),
        ({"duplicate": "random", "name": "<script>"}, "name must be"),
        ({"duplicate": 3}, "field 'duplicate' must be a JSON string"),
    ]
    for fields, says in bad:
        r = client.post("/api/games", json={**SMALL, **fields})
        assert r.status_code == 400 and says in r.json()["error"], (fields, r.text)
    assert duplicate_game(client, name="alice")[2]["seed"] == 2  # the refused game took no deal
    assert client.get("/api/duplicate?person=<x>").status_code == 400


def test_the_results_survive_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "web.sqlite"
    client = TestClient(create_app(results=Results(db)))
    for pick in (0, 1):
        game, headers, view = duplicate_game(client, name="carol")
        play_out(client, game, headers, view, pick)
    before = client.get("/api/duplicate").json()
    assert before["summary"][0]["matches"] == 2
    # a new server on the same file: the same results, and carol's next deal after the two she played
    again = TestClient(create_app(results=Results(db)))
    assert again.get("/api/duplicate").json() == before
    rows = again.get("/api/duplicate/results?person=carol").json()["rows"]
    assert [r["seed"] for r in rows] == [0, 1] and again.get("/api/duplicate/results?person=dave").json()["rows"] == []
    assert duplicate_game(again, name="carol")[2]["seed"] == 2


def test_concurrent_games_of_two_servers_write_every_row(tmp_path: Path) -> None:
    db = tmp_path / "web.sqlite"
    errors: list[BaseException] = []
    # two servers on one file, each with its event loop (as uvicorn runs it), three people at once on each
    with TestClient(create_app(results=Results(db))) as one, TestClient(create_app(results=Results(db))) as two:

        def person(k: int) -> None:
            try:
                client = (one, two)[k % 2]
                for pick in range(2):
                    game, headers, view = duplicate_game(client, name=f"p{k}")
                    play_out(client, game, headers, view, pick)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=person, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert not errors, errors
    rows = TestClient(create_app(results=Results(db))).get("/api/duplicate/results").json()["rows"]
    assert len(rows) == 12 and len({r["id"] for r in rows}) == 12
    assert sorted((r["person"], r["seed"]) for r in rows) == sorted((f"p{k}", s) for k in range(6) for s in (0, 1))


def test_the_summary_is_the_mean_difference_with_a_normal_95_percent_interval() -> None:
    rows = [
        {"person": "a", "agent": "best", "person_win": w, "agent_win": aw, "person_penalty": p, "agent_penalty": ap}
        for w, aw, p, ap in [(1.0, 0.0, 3.0, 5.0), (0.0, 0.5, 6.0, 4.0), (0.5, 0.5, 2.0, 2.0), (0.0, 1.0, 9.0, 3.0)]
    ]
    (s,) = summary(rows)
    diffs = [1.0, -0.5, 0.0, -1.0]
    mean = sum(diffs) / 4
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 3)
    assert s["matches"] == 4 and s["win_diff"]["mean"] == pytest.approx(mean)
    assert s["win_diff"]["high"] - mean == pytest.approx(1.959964 * sd / 2)
    assert s["penalty_diff"]["mean"] == pytest.approx((-2 + 2 + 0 + 6) / 4)
    assert interval([0.25]) == {"mean": 0.25, "low": None, "high": None}
