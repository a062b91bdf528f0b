"""``agurk serve``'s API: whole matches, records, hidden hands, every bad request, expiry, threads."""

from __future__ import annotations

import argparse
import json
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="agurk serve needs the web extra (starlette)")
from replay import replay_record
from starlette.testclient import TestClient

from agents.registry import AGENTS, register
from agurk import cli
from agurk.game_options import GameOptions
from agurk.replay import frames, parse_record, steps
from agurk.web.app import MAX_BODY, NewGame, create_app
from agurk.web.session import Session, WebError
from agurk.web.store import Limits, Store
from agurk_env import engine
from agurk_env.options import declared
from agurk_env.rules import Rules

SMALL = {"rules": "standard", "players": 3, "set": ["hand_size=3"], "opponents": "guard"}


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app())


def new_game(client: TestClient, **fields: Any) -> tuple[str, dict[str, str], dict[str, Any]]:
    r = client.post("/api/games", json={**SMALL, **fields})
    assert r.status_code == 201, r.text
    body = r.json()
    return body["id"], {"X-Game-Token": body["token"]}, body["view"]


def advance(client: TestClient, game: str, headers: dict[str, str], view: dict[str, Any], pick: int) -> dict[str, Any]:
    """The view after the person's legal card number ``pick`` (cycling), or one agent's step once they are out."""
    if view["stepped"]:
        assert view["seats"][view["seat"]]["out"] and view["to_move"] != view["seat"]
        r = client.post(f"/api/games/{game}/step", headers=headers)
    else:
        assert view["to_move"] == view["seat"]
        card = view["legal"][pick % len(view["legal"])]
        r = client.post(f"/api/games/{game}/play", json={"card": card}, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def play_out(client: TestClient, game: str, headers: dict[str, str], pick: int = 0) -> dict[str, Any]:
    """Play the person's legal card number ``pick`` (cycling) every turn, then step once out, to the end."""
    view = client.get(f"/api/games/{game}", headers=headers).json()
    while not view["over"]:
        view = advance(client, game, headers, view, pick)
    return view


def test_a_whole_match_downloads_as_a_record_that_replays(
    client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game, headers, view = new_game(client, seed=3)
    assert view["mode"] == "play" and view["players"] == 3 and not view["over"]
    final = play_out(client, game, headers, pick=1)
    assert final["winners"] and final["rounds"]
    r = client.get(f"/api/games/{game}/record", headers=headers)
    assert r.status_code == 200 and r.text.endswith("\n") and "attachment" in r.headers["content-disposition"]
    rec = parse_record(r.text)
    assert rec["agents"] == ["human", "guard", "guard"] and rec["winners"] == final["winners"]
    replay_record(rec)  # every play legal, every trick winner, penalty and score as the scalar reference says
    assert [rnd["scores"] for rnd in rec["rounds"]] == [s["scores"] for s in final["rounds"]]
    # and the replay API opens it, every hand shown, and so does agurk replay
    frames_ = client.post("/api/replay", content=r.text).json()["frames"]
    assert frames_ == steps(rec) and frames_[-1] == {"kind": "match", "winners": rec["winners"]}
    path = tmp_path / "browser.jsonl"
    path.write_text(r.text)
    assert cli.main(["replay", str(path), "--all"]) == 0
    assert "match over · winners" in capsys.readouterr().out


def test_the_person_sees_only_their_own_hand_and_another_token_sees_nothing(client: TestClient) -> None:
    game, headers, view = new_game(client, seed=5, seat=1)
    for s, row in enumerate(view["seats"]):
        assert ("hand" in row) == (s == 1), row
        assert row["cards"] == 3 - (s in {seat for seat, _ in view["current_trick"]})
    own = view["seats"][1]["hand"]
    assert len(own) == 3 and set(view["legal"]) <= set(own)
    _, other_headers, _ = new_game(client, seed=6)
    for path in ("", "/hint", "/record", "/play", "/step"):
        method = "GET" if path in ("", "/record") else "POST"
        kwargs = {"json": {"card": own[0]}} if path == "/play" else {}
        r = client.request(method, f"/api/games/{game}{path}", headers=other_headers, **kwargs)
        assert r.status_code == 403 and "token" in r.json()["error"], (path, r.text)
        assert client.request(method, f"/api/games/{game}{path}", **kwargs).status_code == 403
    assert client.delete(f"/api/games/{game}", headers=other_headers).status_code == 403
    assert client.get(f"/api/games/{game}", headers=headers).json()["seats"][1]["hand"] == own  # unchanged


def test_the_view_holds_no_hidden_card(client: TestClient) -> None:
    """The view is the same with the other hands emptied: nothing in it comes from a hidden card."""
    game, headers, view = new_game(client, seed=11, players=4, set=["hand_size=5"])
    session: Session = client.app.state.store.get(game, headers["X-Game-Token"])
    turns = 0
    while not view["over"]:
        st = session.env.engine_state
        hands = st.hands.copy()
        hands[0, 1:] = 0
        session.env._state = engine.set_hands(session.rules, st, hands)
        try:
            assert session.view() == view
        finally:
            session.env._state = st
        view = advance(client, game, headers, view, 0)
        turns += 1
    assert turns >= 5


def test_watch_shows_every_hand_and_steps_one_move_at_a_time(client: TestClient) -> None:
    game, headers, view = new_game(client, mode="watch", opponents="guard,shed,random", seed=2)
    assert view["mode"] == "watch" and view["seat"] is None
    moves = 0
    while not view["over"]:
        if view["seats"][view["to_move"]].get("hand") is not None:
            assert all("hand" in row for row in view["seats"] if not row["out"])
        r = client.post(f"/api/games/{game}/step", headers=headers)
        assert r.status_code == 200, r.text
        view = r.json()
        moves += 1
        assert view["moves"] == moves
    rec = parse_record(client.get(f"/api/games/{game}/record", headers=headers).text)
    assert rec["agents"] == ["guard", "shed", "random"]
    replay_record(rec)


def test_hint_names_a_legal_card_with_a_value_per_legal_card(client: TestClient) -> None:
    game, headers, view = new_game(client, seed=4)
    r = client.post(f"/api/games/{game}/hint", headers=headers)
    assert r.status_code == 200, r.text
    hint = r.json()
    assert hint["agent"] == "best" and hint["card"] in view["legal"]
    assert set(hint["values"]) == set(view["legal"]) and all(v <= 0 for v in hint["values"].values())
    assert "sampled deals" in hint["method"]


def test_replay_opens_a_simulate_record(client: TestClient, tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    assert cli.main(["simulate", "--set", "players=3", "--agents", "guard", "--matches", "2", "--out", str(out)]) == 0
    text = out.read_text()
    for match in (0, 1):
        body = client.post(f"/api/replay?match={match}", content=text).json()
        rec = parse_record(text, match)
        assert body["frames"] == steps(rec) and len(body["frames"]) == len(frames(rec))
        assert body["names"] == ["P0 guard", "P1 guard", "P2 guard"] and body["match"] == rec["match"]


BIG = b'{"card": "' + b"K" * (MAX_BODY + 10) + b'"}'
UNFIT = {"rules": "jokers", "opponents": "zoo:standard-4p"}
"""A game whose policy has 13 card outputs under rules of 14 cards."""

# (what is tried, method, path (GAME: a game of ours, WATCH: a watched game of ours), body or json, status, says)
BAD_REQUESTS = [
    ("malformed JSON", "post", "/api/games", b"{not json", 400, "malformed JSON"),
    ("JSON that is not an object", "post", "/api/games", b"[1, 2]", 400, "JSON object"),
    ("an unknown field", "post", "/api/games", {"colour": "red"}, 400, "unknown field 'colour'"),
    ("a field of the wrong type", "post", "/api/games", {"players": "three"}, 400, "'players' must be a JSON integer"),
    ("an unknown preset", "post", "/api/games", {"rules": "poker"}, 400, "unknown preset 'poker'"),
    ("an unknown rule option", "post", "/api/games", {"set": ["colour=red"]}, 400, "unknown rule option 'colour'"),
    ("a bad option value", "post", "/api/games", {"set": ["players=99"]}, 400, "players"),
    ("a set item without =", "post", "/api/games", {"set": ["players"]}, 400, "OPTION=VALUE"),
    ("an impossible table", "post", "/api/games", {"players": 8, "set": ["hand_size=9"]}, 400, "hand_size"),
    ("an unknown agent", "post", "/api/games", {"opponents": "deepblue"}, 400, "unknown agent 'deepblue'"),
    ("a missing checkpoint", "post", "/api/games", {"opponents": "ppo:/nonexistent.pt"}, 400, "ppo:/nonexistent.pt"),
    ("a checkpoint file, without --checkpoints", "post", "NOPATHS", {"opponents": "ppo:a.pt"}, 400, "no checkpoint"),
    ("a policy without the rules' cards", "post", "/api/games", UNFIT, 400, "'zoo:standard-4p' cannot play"),
    ("a watched policy without the rules' cards", "post", "/api/games", {**UNFIT, "mode": "watch"}, 400, "cannot play"),
    ("too many opponent specs", "post", "/api/games", {"opponents": "guard,guard"}, 400, "opponent specs"),
    ("a seat off the table", "post", "/api/games", {"seat": 7}, 400, "seat must be 0..3"),
    ("a negative seed", "post", "/api/games", {"seed": -1}, 400, "seed must be"),
    ("a seed given as text", "post", "/api/games", {"seed": "7"}, 400, "field 'seed' must be a JSON integer"),
    ("a set that is not a list of texts", "post", "/api/games", {"set": [3]}, 400, "'set' must be a JSON array of"),
    ("an unknown mode", "post", "/api/games", {"mode": "spectate"}, 400, "mode must be one of play, watch"),
    ("a seat in a watched game", "post", "/api/games", {"mode": "watch", "seat": 0}, 400, "seat is for a played"),
    ("an oversized body", "post", "/api/games", BIG, 413, "too large"),
    ("an oversized move", "post", "GAME/play", BIG, 413, "too large"),
    ("an unknown game id", "get", "/api/games/no-such-game", None, 404, "unknown game id"),
    ("a move without a card", "post", "GAME/play", {}, 400, '{"card": NAME}'),
    ("an unknown card", "post", "GAME/play", {"card": "Z"}, 400, "unknown card 'Z'"),
    ("a card not held", "post", "GAME/play", {"card": "NOT_HELD"}, 422, "illegal: you do not hold"),
    ("an illegal card held", "post", "GAME/play", {"card": "ILLEGAL"}, 422, "illegal: you may not play"),
    ("a step in a played game", "post", "GAME/step", None, 409, "this game is played"),
    ("a move in a watched game", "post", "WATCH/play", {"card": "K"}, 409, "this game is watched"),
    ("a hint in a watched game", "post", "WATCH/hint", None, 409, "a hint is for your turn"),
    ("the record of a match in play", "get", "GAME/record", None, 409, "once the match is over"),
    ("a replay of a file that is no record", "post", "/api/replay", b'{"a": 1}\n', 400, "is not a game record"),
    ("a replay of no JSON", "post", "/api/replay", b"hello\n", 400, "is not JSON"),
    ("a replay of an empty file", "post", "/api/replay", b"", 400, "holds no game record"),
    ("a replay of a binary file", "post", "/api/replay", b"\xff\xfe\x00", 400, "not a text file"),
    ("a replay of a match not in the file", "post", "/api/replay?match=5", "RECORD", 400, "match 5"),
    ("a replay with a bad match number", "post", "/api/replay?match=-1", "RECORD", 400, "match must be"),
    ("a replay of a broken record", "post", "/api/replay", "BROKEN", 400, "malformed game record"),
    ("an unknown route", "get", "/api/nothing", None, 404, "no such page"),
    ("a wrong method", "delete", "/api/options", None, 405, "method not allowed"),
]


def _illegal_pick(view: dict[str, Any], held: bool) -> str | None:
    own = view["seats"][view["seat"]]["hand"]
    names = [c for c in ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A") if (c in own) == held]
    return next((c for c in names if c not in view["legal"]), None)


@pytest.mark.parametrize(("what", "method", "path", "body", "status", "says"), BAD_REQUESTS, ids=lambda x: str(x))
def test_every_bad_request_gets_a_one_line_4xx_and_the_server_serves_on(
    client: TestClient, what: str, method: str, path: str, body: Any, status: int, says: str
) -> None:
    # the table's first position: a seed where the person must follow and holds cards they may not play
    game, headers, view = new_game(client, seed=1)
    watch, watch_headers, _ = new_game(client, mode="watch", seed=1)
    record = client.get(f"/api/games/{watch}/record", headers=watch_headers)
    assert record.status_code == 200
    if body == {"card": "NOT_HELD"}:
        body = {"card": _illegal_pick(view, held=False)}
    elif body == {"card": "ILLEGAL"}:
        body = {"card": _illegal_pick(view, held=True)}
        assert body["card"] is not None, "seed 1 gives the person an illegal card held"
    elif body == "RECORD":
        body = record.text.encode()
    elif body == "BROKEN":
        rec = json.loads(record.text)
        rec["rounds"][0]["hands"] = rec["rounds"][0]["hands"][:1]
        body = json.dumps(rec).encode()
    sent, target = headers, client
    if path == "NOPATHS":
        path, target = "/api/games", TestClient(create_app(Limits(checkpoints=False)))
    if path.startswith("GAME"):
        path = f"/api/games/{game}{path[4:]}"
    elif path.startswith("WATCH"):
        path, sent = f"/api/games/{watch}{path[5:]}", watch_headers
    kwargs: dict[str, Any] = {"headers": sent}
    if isinstance(body, bytes):
        kwargs["content"] = body
    elif body is not None:
        kwargs["json"] = body
    r = target.request(method.upper(), path, **kwargs)
    assert r.status_code == status, (what, r.status_code, r.text)
    error = r.json()["error"]
    assert says in error and "\n" not in error and "Traceback" not in error, (what, error)
    # the game and the server go on
    assert client.get(f"/api/games/{game}", headers=headers).json() == view
    assert client.post("/api/games", json=SMALL).status_code == 201


TOKEN_REQUESTS = [("another browser's token", 403), ("no token", 403)]
"""Tried on every game route by test_the_person_sees_only_their_own_hand_and_another_token_sees_nothing."""


def test_the_bad_requests_are_in_the_docs() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "web.md").read_text()
    for what, status in [(row[0], row[4]) for row in BAD_REQUESTS] + TOKEN_REQUESTS:
        assert f"| {what} | {status} |" in doc, what


def test_a_new_game_is_declared_once_for_agurk_play_and_the_web(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    """``agurk play``'s options are :class:`GameOptions`' fields; a new-game request's are the same, and four more."""
    subcommands = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    play = {a.dest: a for a in subcommands.choices["play"]._actions if a.option_strings}
    for name, opt in declared(GameOptions).items():
        assert play[name].default == opt.default and play[name].metavar == opt.bounds.metavar, name
        assert opt.doc and opt.doc in play[name].help, name
    assert list(declared(NewGame)) == [*declared(GameOptions), "mode", "players", "duplicate", "name"]
    # one bound, read by both: the same refusal on the command line and in a request
    assert cli.main(["play", "--seat", "-1"]) == 2
    assert "argument --seat: must be an integer >= 0, not '-1'" in capsys.readouterr().err
    r = client.post("/api/games", json={"seat": -1})
    assert r.status_code == 400 and r.json()["error"] == "seat must be an integer >= 0, not -1"


def test_finished_and_idle_games_expire() -> None:
    now = [0.0]
    store = Store(Limits(max_games=2, idle_s=100.0, finished_s=10.0), clock=lambda: now[0])
    rules = Rules.preset("standard", players=3, hand_size=2)
    live, done = Session(rules, "guard", 0, 0), Session(rules, "guard", None, 0)
    while not done.over:
        done.step()
    a, ta = store.add(live)
    b, tb = store.add(done)
    with pytest.raises(WebError) as full:
        store.add(Session(rules, "guard", 0, 1))
    assert full.value.status == 503
    now[0] = 11.0
    with pytest.raises(WebError) as gone:
        store.get(b, tb)
    assert gone.value.status == 404
    assert store.get(a, ta) is live and store.sweep() == 1 and len(store) == 1
    now[0] = 200.0
    with live.lock:  # a game a request is working on never expires under it
        assert store.sweep() == 0
    store.touch(live)  # its answer restarts the clock
    assert store.sweep() == 0
    now[0] = 400.0
    assert store.sweep() == 1 and len(store) == 0


def test_a_busy_game_refuses_a_second_request(client: TestClient) -> None:
    game, headers, _ = new_game(client)
    session = client.app.state.store.get(game, headers["X-Game-Token"])
    with session.lock:
        r = client.get(f"/api/games/{game}", headers=headers)
    assert r.status_code == 409 and "busy" in r.json()["error"]
    assert client.get(f"/api/games/{game}", headers=headers).status_code == 200


def test_ids_and_tokens_are_long_and_random(client: TestClient) -> None:
    made = [new_game(client, seed=s)[:2] for s in range(5)]
    ids, tokens = {g for g, _ in made}, {h["X-Game-Token"] for _, h in made}
    assert len(ids) == len(tokens) == 5
    assert all(len(g) >= 20 for g in ids) and all(len(t) >= 30 for t in tokens)


class _Slow:
    """An agent that thinks for a while: the shed heuristic after a 3 s sleep."""

    sees_all = False

    def __init__(self, spec: str) -> None:
        from agents.heuristics import Heuristic

        self.spec, self.inner = spec, Heuristic("shed", spec=spec)

    def act(self, decision: Any) -> np.ndarray:
        time.sleep(3.0)
        return self.inner.act(decision)


def test_a_slow_agent_never_blocks_other_users(tmp_path: Path) -> None:
    uvicorn = pytest.importorskip("uvicorn")
    import httpx

    register("slow_test_agent", lambda spec, arg, rng: _Slow(spec), "sleeps 3 s, then plays shed")
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="error"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            if server.started:
                break
            time.sleep(0.05)
        game = httpx.post(f"{base}/api/games", json={**SMALL, "mode": "watch", "opponents": "slow_test_agent"}).json()
        step = f"{base}/api/games/{game['id']}/step"
        slow = threading.Thread(
            target=httpx.post, args=(step,), kwargs={"headers": {"X-Game-Token": game["token"]}, "timeout": 10}
        )
        slow.start()
        time.sleep(0.2)  # the slow move is under way in the thread pool
        start = time.perf_counter()
        other = httpx.post(f"{base}/api/games", json=SMALL, timeout=10)
        answered = time.perf_counter() - start
        slow.join()
        assert other.status_code == 201 and answered < 2.0, answered  # a blocked loop would wait out the 3 s
        server.should_exit = True
        thread.join(5)
    finally:
        AGENTS.pop("slow_test_agent", None)


def test_serve_refuses_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--port", "70000"]) == 2
    assert "argument --port: must be an integer 1..65535" in capsys.readouterr().err
    assert cli.main(["serve", "--max-games", "0"]) == 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert cli.main(["serve", "--port", str(s.getsockname()[1])]) == 2
    assert "cannot listen on 127.0.0.1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("host", "printed"),
    [
        ("127.0.0.1", "agurk serve: open http://127.0.0.1:{port}/ (Ctrl-C stops)\n"),
        (
            "::",
            "note: listening on ::: other machines can reach this server (no TLS, no login)\n"
            "agurk serve: open http://[::]:{port}/ (Ctrl-C stops)\n",
        ),
    ],
)
def test_serve_prints_where_to_open_the_page(
    host: str, printed: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import gc

    import uvicorn

    served: list[uvicorn.Config] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda server: served.append(server.config))
    monkeypatch.setattr(gc, "freeze", lambda: None)  # this process is no server
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert cli.main(["serve", "--host", host, "--port", str(port), "--db", str(tmp_path / "db.sqlite")]) == 0
    assert capsys.readouterr().out == printed.format(port=port)
    assert [(c.host, c.port) for c in served] == [(host, port)]


@pytest.mark.parametrize("spec", ["ppo:run.pt", "guided:policy=runs/x.pt", "guard,ppo:/tmp/a.pt", "guided:policy=a.pt"])
def test_a_server_without_checkpoints_refuses_specs_that_name_files(spec: str) -> None:
    client = TestClient(create_app(Limits(checkpoints=False)))
    r = client.post("/api/games", json={**SMALL, "opponents": spec})
    assert r.status_code == 400 and "no checkpoint files" in r.json()["error"]
    assert client.post("/api/games", json={**SMALL, "opponents": "guard,zoo"}).status_code in (201, 400)
    assert client.post("/api/games", json=SMALL).status_code == 201


def test_replay_opens_a_partial_record_of_a_match_in_play(client: TestClient) -> None:
    game, headers, _ = new_game(client, mode="watch", seed=8)
    for _ in range(5):  # a trick and a card of the next one (3 players)
        assert client.post(f"/api/games/{game}/step", headers=headers).status_code == 200
    text = client.get(f"/api/games/{game}/record", headers=headers).text
    rec = parse_record(text)
    assert "winners" not in rec and "penalties" not in rec["rounds"][-1]
    shown = client.post("/api/replay", content=text).json()["frames"]
    assert [f["kind"] for f in shown] == ["trick", "trick"]
    assert shown[0]["winner"] is not None and shown[1]["winner"] is None and len(shown[1]["plays"]) == 2


@pytest.mark.parametrize("preset", ["lives", "second_chance", "every_trick", "twos", "jokers", "swedish", "quick"])
def test_a_match_of_every_kind_of_table_plays_to_its_end(client: TestClient, preset: str) -> None:
    game, headers, _ = new_game(client, rules=preset, seed=9, opponents="guard,counter")
    final = play_out(client, game, headers, pick=2)
    rules = Rules.preset(preset, players=3, hand_size=3)
    assert final["lives"] == bool(rules.lives) and final["rebuys"] == bool(rules.rebuys)
    if rules.lives:
        assert all("lives" in row for row in final["seats"]) and all("lives" in r for r in final["rounds"])
    rec = parse_record(client.get(f"/api/games/{game}/record", headers=headers).text)
    assert Rules.from_dict(rec["rules"]) == rules
    replay_record(rec)


def test_heuristics_moved_together_play_as_one_game_at_a_time() -> None:
    """The mover's one decision for many games (of several tables and heuristics) plays each as it alone would."""
    from agurk.web.mover import move_agents

    tables = [Rules.preset("standard", players=3, hand_size=3), Rules.preset("lives", players=4, hand_size=4)]
    mixed = {3: "shed,counter", 4: "shed,counter,guard"}
    made = [(r, opponents, seed) for r in tables for opponents in ("guard", mixed[r.players]) for seed in (1, 2)]
    alone = [Session(r, o, 1, s) for r, o, s in made]
    together = [Session(r, o, 1, s) for r, o, s in made]
    assert all(s.batched for s in together) and not Session(tables[0], "random", 1, 0).batched
    for s in alone:
        s.start()
    move_agents(together)
    turn = 0
    while not all(s.over for s in alone):
        assert [s.view() for s in alone] == [s.view() for s in together]
        for a, b in zip(alone, together, strict=True):
            if a.person_out:  # the rest is stepped, one agent move at a time, in both
                a.step()
                b.step()
            elif not a.over:
                card = a.view()["legal"][turn % len(a.view()["legal"])]
                a.play(card)
                b.person_plays(card)
        move_agents(together)
        turn += 1
    assert [s.record() for s in alone] == [s.record() for s in together]


# ------------------------------------------------------------------ a new user's first hour (issue 46, items 12-18)


def test_the_first_page_says_what_to_do_before_any_game(client: TestClient) -> None:
    page, script = client.get("/").text, client.get("/static/app.js").text
    assert '<p id="intro">' in page  # filled per tab, shown until the tab has a game (or a record open)
    for words in ("then press New game", "then press New game to watch", "Choose a record file"):
        assert words in script
    # the replay table is hidden, its buttons disabled, until a record is open
    assert '<section id="replay-view" class="hidden">' in page
    assert '<button id="replay-prev" disabled>' in page and '<button id="replay-next" disabled>' in page


def test_the_page_has_an_icon_and_a_one_line_options_field(client: TestClient) -> None:
    page = client.get("/").text
    link = page.split('<link rel="icon"')[1].split(">")[0]
    href = link.split('href="')[1].split('"')[0]
    for path in (href, "/favicon.ico"):
        r = client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml"), path
        assert r.text.lstrip().startswith("<svg")
    field = page.split('id="set"')[1].split(">")[0]
    assert "<textarea" not in page and 'type="text"' in field and 'placeholder="e.g. hand_size=5, limit=21"' in field


def test_replay_messages_count_records_in_good_english(client: TestClient, tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    args = ["simulate", "--set", "players=3", "--set", "hand_size=2", "--agents", "guard", "--matches", "1"]
    assert cli.main([*args, "--out", str(out)]) == 0
    one = out.read_text().splitlines()[0] + "\n"
    said = {
        (one, 5): "match 5: the file holds 1 record (match 0 only)",
        (one * 2, 2): "match 2: the file holds 2 records (matches 0..1)",
        ("hello\n", 0): "line 1 of the file is not JSON: Expecting value",
        ('\n{"a": 1}\n', 0): "line 2 of the file is not a game record (needs 'rules' and 'rounds')",
    }
    for (text, match), says in said.items():
        r = client.post(f"/api/replay?match={match}", content=text)
        assert r.status_code == 400 and r.json()["error"] == says
    assert client.post("/api/replay?match=1", content=one * 2).status_code == 200


def test_a_hint_without_its_agent_is_a_one_line_503(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from agurk.web import session

    monkeypatch.setattr(session, "HINT_AGENT", "nosuchagent", raising=False)
    game, headers, _ = new_game(client, seed=4)
    r = client.post(f"/api/games/{game}/hint", headers=headers)
    assert r.status_code == 503 and r.json()["error"].startswith("no hint on this server: unknown agent 'nosuchagent'")


def test_a_hint_names_the_turn_it_is_for(client: TestClient) -> None:
    game, headers, view = new_game(client, seed=4)
    first = client.post(f"/api/games/{game}/hint", headers=headers).json()
    assert first["moves"] == view["moves"]
    view = advance(client, game, headers, view, 0)
    assert not view["over"] and view["to_move"] == view["seat"] and view["moves"] > first["moves"]
    assert client.post(f"/api/games/{game}/hint", headers=headers).json()["moves"] == view["moves"]


@pytest.mark.parametrize(("opponents", "seed", "out_round"), [("guard", 4, 2), ("random", 6, 1)])
def test_once_you_are_out_the_agents_play_on_one_step_at_a_time(
    client: TestClient, opponents: str, seed: int, out_round: int
) -> None:
    """Going out ends your part, not the match: the other rounds are stepped through, never played at once."""
    game, headers, view = new_game(client, seed=seed, opponents=opponents, set=["hand_size=3", "limit=10"])
    assert client.app.state.store.get(game, headers["X-Game-Token"]).batched == (opponents == "guard")
    while not view["seats"][0]["out"]:
        assert not view["over"] and not view["stepped"]
        view = advance(client, game, headers, view, -1)
    # the round you went out in is over, the next one dealt, and nobody has played in it yet
    assert view["stepped"] and not view["over"] and view["rounds"][-1]["round"] == out_round
    assert 0 in view["rounds"][-1]["out"] and view["round"] == out_round + 1 and view["current_trick"] == []
    assert "legal" not in view and "hand" not in view["seats"][0]
    assert all("hand" not in row for row in view["seats"])  # the others' hands stay hidden till the end
    r = client.post(f"/api/games/{game}/play", json={"card": "K"}, headers=headers)
    assert r.status_code == 409 and "not your turn" in r.json()["error"]
    assert client.post(f"/api/games/{game}/hint", headers=headers).status_code == 409
    steps_ = 0
    while not view["over"]:
        moves = view["moves"]
        view = advance(client, game, headers, view, 0)
        assert view["moves"] == moves + 1
        steps_ += 1
    assert steps_ >= 3 * 2 and len(view["rounds"]) > out_round and not view["stepped"]
    r = client.post(f"/api/games/{game}/step", headers=headers)
    assert r.status_code == 409 and "the match is over" in r.json()["error"]
    replay_record(parse_record(client.get(f"/api/games/{game}/record", headers=headers).text))


WATCHED = [("standard", 3, 4, 2), ("twos", 4, 5, 5), ("free_choice", 3, 4, 2), ("nearest", 4, 5, 0)]
"""Watched tables (preset, players, hand size, seed) that reach every one of the engine's reasons between them."""


def test_a_watched_game_speaks_of_the_seat_to_move_never_to_you(client: TestClient) -> None:
    reached: set[str] = set()
    for preset, players, hand_size, seed in WATCHED:
        agents = ",".join(["guard", "shed", "random", "counter"][:players])
        body = {"mode": "watch", "rules": preset, "players": players, "set": [f"hand_size={hand_size}"], "seed": seed}
        game, headers, view = new_game(client, **body, opponents=agents)
        session: Session = client.app.state.store.get(game, headers["X-Game-Token"])
        while not view["over"]:
            state = session.env.engine_state.take(slice(0, 1))
            reached.add(engine.REASONS[int(engine.legal_reason(session.rules, state)[0])])
            reason = view["reason"]
            assert not re.search(r"\byou(rs?)?\b", reason, re.IGNORECASE), reason
            assert f"P{view['to_move']}" in reason, reason
            view = client.post(f"/api/games/{game}/step", headers=headers).json()
    assert reached == set(engine.REASONS)
    # a played game still speaks to its person
    _, _, played = new_game(client, seed=1)
    assert re.search(r"\byou\b", played["reason"]), played["reason"]
