"""The ASGI app of ``agurk serve`` (Starlette): the page, its static files, and the JSON API.

Every request is validated: malformed JSON, unknown fields, ids or options, wrong tokens,
illegal cards, wrong turns and oversized bodies get a 4xx with ``{"error": "one line"}``.
Game work (agents' moves, the hint's search, building agents) runs in Starlette's thread
pool, one request per game at a time, so a slow search never blocks the event loop; only
heuristic agents, a few NumPy operations for any number of games, reply on the loop, every
waiting game's in one call per heuristic (:mod:`agurk.web.mover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import types
import typing
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agents.registry import AGENTS, AgentSpecError
from agurk.cli.common import CliError, resolve_rules, rules_label
from agurk.game_options import GameOptions
from agurk.match import Match, MatchError
from agurk.replay import Frame, ReplayError, parse_record, seat_names, steps
from agurk.web.duplicate import (
    Duplicate,
    Results,
    agent_specs,
    check_name,
    match_places,
    match_result,
    summary,
)
from agurk.web.mover import Mover
from agurk.web.session import Hint, Session, View, WebError
from agurk.web.store import Limits, Store
from agurk_env.options import Option, OptionError, build, declared, split_list, unknown
from agurk_env.rules import OPTION_NAMES, PRESETS, Rules, RulesError

STATIC = Path(__file__).parent / "static"
"""The page: HTML, JS and CSS shipped as package data (nothing is fetched from the internet)."""
MAX_BODY = 16 * 1024
"""Largest JSON body of a game request, in bytes."""
MAX_RECORD = 4 * 1024 * 1024
"""Largest record file a replay request may upload, in bytes."""
SWEEP_S = 30.0
"""Seconds between two sweeps of the expired games."""
TOKEN = "X-Game-Token"
"""The header that carries a game's token."""
JSON_TYPES: dict[type, str] = {str: "string", list: "array", int: "integer"}
"""JSON's name of each Python type a request field may take."""
AGENT_THREADS = 2
"""Threads that play the comparison agents' matches of duplicate games (one match each at a time)."""
WATCH_OPPONENTS = "guard"
"""The agents of a watched game whose request names none."""


@dataclass(frozen=True)
class NewGame(GameOptions):
    """A new-game request (``POST /api/games``): a game's options (``agurk play``'s), its mode, and a table size."""

    mode: Literal["play", "watch"] = "play"
    """play: your seat against the agents; watch: every seat an agent (no seat; opponents default to guard)"""
    players: int | None = None
    """the table size, over the preset and set (set players=N says the same)"""
    duplicate: str = ""
    """an agent spec: a duplicate game, the person's next deal (the server picks the seed), which this agent plays too
    from the person's seat against the same opponents; both results are compared once the match is over"""
    name: str = ""
    """the person's name in a duplicate game, under which its results are kept (default guest)"""


class ReplayFrames(TypedDict):
    """The page's replay of one match of a record file (``POST /api/replay``)."""

    names: list[str]
    """``P0 SPEC`` per seat."""
    seed: int | None
    match: int | None
    frames: list[Frame]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(message.split())}, status_code=status)


async def _body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) past ``limit`` bytes, whatever Content-Length says."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise WebError(413, f"request body too large: at most {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise WebError(413, f"request body too large: at most {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json(request: Request) -> dict[str, Any]:
    """The JSON object of the body (``{}`` when empty); 400 for anything else."""
    raw = await _body(request, MAX_BODY)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise WebError(400, f"malformed JSON body: {getattr(e, 'msg', e)}") from None
    if not isinstance(data, dict):
        raise WebError(400, "the body must be a JSON object")
    return data


def json_type(opt: Option) -> type:
    """The Python type of the JSON value of a request field declared as ``opt`` (a choice's; ``X`` of ``X | None``)."""
    if opt.choices:
        return type(opt.choices[0])
    hint = typing.get_args(opt.type)[0] if isinstance(opt.type, types.UnionType) else opt.type
    return typing.get_origin(hint) or hint


def new_game_request(data: dict[str, Any]) -> NewGame:
    """The :class:`NewGame` of a request body: unknown fields, wrong JSON types and values out of bounds are a 400."""
    fields = declared(NewGame)
    for key, value in data.items():
        if key not in fields:
            raise WebError(400, str(unknown(key, fields, "field")))
        kind = json_type(fields[key])
        if not isinstance(value, kind) or isinstance(value, bool):
            raise WebError(400, f"field {key!r} must be a JSON {JSON_TYPES[kind]}")
        if kind is list and isinstance(value, list) and not all(isinstance(item, str) for item in value):
            raise WebError(400, f"field {key!r} must be a JSON array of strings")
    try:
        return build(NewGame, data, noun="field")
    except OptionError as e:
        raise WebError(400, str(e)) from None


def new_game_rules(request: NewGame) -> Rules:
    """The rules of a new game: ``rules`` (a preset), ``set`` (``OPTION=VALUE`` items) and ``players``."""
    sets = request.set if request.players is None else [*request.set, f"players={request.players}"]
    try:
        return resolve_rules(request.rules, sets)
    except (CliError, RulesError) as e:
        raise WebError(400, str(e).replace("--set", "set")) from None


def record_lines(text: str) -> int:
    """How many records a JSON Lines text holds (its non-blank lines, as :func:`agurk.replay.parse_record` counts)."""
    return sum(1 for line in text.splitlines() if line.strip())


def replay_reason(error: str) -> str:
    """A replay error as the page says it: ``line 1 of the file ...``, never ``the file line 1 ...``."""
    return re.sub(r"\bthe file line (\d+)", r"line \1 of the file", error).replace("--match", "match")


def names_a_file(spec: str) -> bool:
    """Whether an agent spec may name a file on the server's disk (``ppo:PATH``, ``guided:policy=PATH``, a path)."""
    spec = spec.strip()
    policy = spec.partition("policy=")[2].split(";")[0]
    return spec.startswith("ppo") or "/" in spec or "\\" in spec or bool(policy and not policy.startswith("zoo"))


def new_session(data: dict[str, Any], checkpoints: bool = True, results: Results | None = None) -> Session:
    """A game from a new-game request (``mode`` play or watch), its agents yet to move; 400 naming the bad value.

    Without ``checkpoints``, agent specs that may name a file (``ppo``, or a path anywhere) are refused. A
    duplicate game (``duplicate``: an agent spec) is dealt the person's next deal from ``results`` and holds
    the comparison agent's match, yet to be played (:func:`start_duplicate`).
    """
    request = new_game_request(data)
    rules = new_game_rules(request)
    if "seat" in data and request.mode == "watch":
        raise WebError(400, "seat is for a played game: a watched game has no seat of yours")
    seat = request.seat if request.mode == "play" else None
    opponents = WATCH_OPPONENTS if request.mode == "watch" and "opponents" not in data else request.opponents
    specs = split_list(opponents) + ([request.duplicate] if request.duplicate.strip() else [])
    if not checkpoints and any(names_a_file(spec) for spec in specs):
        raise WebError(400, "this server takes no checkpoint files as agents (agurk serve --checkpoints allows them)")
    if not request.duplicate.strip():
        if request.name:
            raise WebError(400, "name is for a duplicate game: give duplicate: AGENT too")
        return Session(rules, opponents, seat, request.seed)
    if seat is None:
        raise WebError(400, "duplicate is for a played game: a watched game has no seat of yours")
    if "seed" in data:
        raise WebError(400, "a duplicate game's seed is the server's: your next deal (leave seed out)")
    try:
        person = check_name(request.name)
    except ValueError as e:
        raise WebError(400, str(e)) from None
    results = results or Results()
    seed = results.next_seed(person)
    try:
        session = Session(rules, opponents, seat, seed)
        agent = Match(rules, agent_specs(opponents, rules.players, seat, request.duplicate), None, seed)
    except (AgentSpecError, MatchError, WebError) as e:
        results.unissue(person, seed)
        raise WebError(400, str(e).replace("--seat", "seat")) from None
    sets = request.set if request.players is None else [*request.set, f"players={request.players}"]
    others = ",".join(spec for s, spec in enumerate(session.specs) if s != seat)
    session.duplicate = Duplicate(person, agent.specs[seat], rules_label(request.rules, sets), others, seed, agent)
    return session


def agent_plays(match: Match) -> None:
    """The comparison agent's match of a duplicate game, played to its end."""
    while not match.over:
        match.apply(match.agent_card())


def started(session: Session) -> View:
    """The view of a new game once its agents have played up to the person's first turn."""
    session.start()
    return session.view()


async def _index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html")


async def _favicon(request: Request) -> Response:  # for the browsers that ask before reading the page's link
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")


async def _options(request: Request) -> Response:
    agents = [{"spec": kind.usage, "help": kind.help} for kind in AGENTS.values()]
    return JSONResponse({"presets": list(PRESETS), "options": list(OPTION_NAMES), "agents": agents})


def replay_frames(text: str, match: int) -> ReplayFrames:
    """The page's replay of match ``match`` of a record file's ``text``: seat names, seed, match and frames."""
    held = record_lines(text)
    if held and match >= held:
        which = "match 0 only" if held == 1 else f"matches 0..{held - 1}"
        raise WebError(400, f"match {match}: the file holds {held} record{'s' if held > 1 else ''} ({which})")
    rec = parse_record(text, match, "the file")
    data = steps(rec)
    return {"names": seat_names(rec), "seed": rec.get("seed"), "match": rec.get("match"), "frames": data}


async def _replay(request: Request) -> Response:
    raw = await _body(request, MAX_RECORD)
    match_text = request.query_params.get("match", "0")
    if not match_text.isdigit():
        raise WebError(400, f"match must be a whole number >= 0, not {match_text!r}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise WebError(400, "the file is not a text file of game records") from None
    try:
        return JSONResponse(await run_in_threadpool(replay_frames, text, int(match_text)))
    except ReplayError as e:
        raise WebError(400, replay_reason(str(e))) from None


async def _web_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, WebError)
    return _error(exc.status, str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    what = {404: "no such page or API route", 405: "method not allowed on this route"}.get(exc.status_code)
    return _error(exc.status_code, what or str(exc.detail))


def _lock(session: Session) -> None:
    if not session.lock.acquire(blocking=False):
        raise WebError(409, "the game is busy with another request of yours: wait for its answer")


def _played(card: str) -> Callable[[Session], View]:
    """The work of a play request (a thread-pool game): play ``card``, then the game's view."""

    def work(s: Session) -> View:
        s.play(card.strip().upper())
        return s.view()

    return work


def _stepped(s: Session) -> View:
    """The work of a step request: one agent's move, then the game's view."""
    s.step()
    return s.view()


class _Games:
    """The game routes of one app: its store of games (``limits``) and the heuristics' :class:`Mover`."""

    def __init__(self, limits: Limits, results: Results) -> None:
        self.limits, self.results = limits, results
        self.store = Store(limits)
        self.agents = ThreadPoolExecutor(AGENT_THREADS, thread_name_prefix="duplicate")
        """Where the duplicate games' comparison agents play their matches (a thread each, at most a few)."""
        self.mover = Mover(self.store.touch)

    def game(self, request: Request) -> Session:
        return self.store.get(request.path_params["game_id"], request.headers.get(TOKEN))

    async def game_call(self, request: Request, work: Callable[[Session], View | Hint]) -> Response:
        """Run ``work(session)`` in the thread pool on the game of the path, if the token is its token."""
        session = self.game(request)

        def locked() -> View | Hint:
            _lock(session)
            try:
                return work(session)
            finally:
                self.store.touch(session)
                session.lock.release()

        answer = await run_in_threadpool(locked)
        return JSONResponse(await self.finished(session, answer))

    async def finished(self, session: Session, answer: Any) -> Any:
        """``answer`` (a view), with a duplicate game's comparison once its match is over (its row written once)."""
        dup = session.duplicate
        if dup is None or not session.over or not isinstance(answer, dict) or "over" not in answer:
            return answer
        if not dup.done:
            dup.done = True  # no await before this: one request writes the row
            try:
                await asyncio.wrap_future(dup.played)
            except Exception as e:  # a broken agent: said in the view, no row written
                dup.result = {"error": " ".join(f"the agent's match failed: {e}".split())}
                answer["duplicate"] = dup.view()
                return answer
            assert session.seat is not None
            mine, its = match_result(session, session.seat), match_result(dup.match, session.seat)
            row = {
                "person": dup.person,
                "agent": dup.agent,
                "rules": dup.rules,
                "players": session.rules.players,
                "opponents": dup.opponents,
                "seat": session.seat,
                "seed": dup.seed,
                "match": 0,
                **{f"person_{k}": mine[k] for k in ("win", "penalty", "rounds")},
                **{f"agent_{k}": its[k] for k in ("win", "penalty", "rounds")},
                "person_places": match_places(session),
            }
            row["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            row_id = await run_in_threadpool(self.results.add, row)
            dup.result = {
                "id": row_id,
                "finished": row["finished"],
                "person_result": mine,
                "agent_result": its,
                "win_diff": mine["win"] - its["win"],
                "penalty_diff": mine["penalty"] - its["penalty"],
            }
        elif dup.result is None:  # another request is writing the row: this one answers once it is there too
            while dup.result is None:
                await asyncio.sleep(0.01)
        answer["duplicate"] = dup.view()
        return answer

    async def stats(self, request: Request) -> Response:
        return JSONResponse({"games": len(self.store), "max_games": self.limits.max_games})

    async def create(self, request: Request) -> Response:
        data = await _json(request)
        session = await run_in_threadpool(new_session, data, self.limits.checkpoints, self.results)
        if session.batched:  # the heuristics' first moves with every other game's (Mover)
            session.lock.acquire()
            view = await self.mover.reply(session)
        else:
            view = await run_in_threadpool(started, session)
        game_id, token = self.store.add(session)
        if session.duplicate is not None:  # the agent plays the same deal meanwhile, in the thread pool
            session.duplicate.played = self.agents.submit(agent_plays, session.duplicate.match)
        return JSONResponse({"id": game_id, "token": token, "view": view}, status_code=201)

    async def view(self, request: Request) -> Response:
        session = self.game(request)
        _lock(session)  # a view is quick: built here, unless another request holds the game
        try:
            return JSONResponse(session.view())
        finally:
            session.lock.release()

    async def play(self, request: Request) -> Response:
        data = await _json(request)
        card = data.get("card")
        if not isinstance(card, str) or set(data) != {"card"}:
            raise WebError(400, 'the body must be {"card": NAME}, e.g. {"card": "K"}')

        session = self.game(request)
        if session.batched:  # the card played here, the heuristics' replies with every other game's (Mover)
            _lock(session)
            try:
                session.person_plays(card.strip().upper())
            except BaseException:
                session.lock.release()
                raise
            return JSONResponse(await self.finished(session, await self.mover.reply(session)))
        return await self.game_call(request, _played(card))

    async def step(self, request: Request) -> Response:
        return await self.game_call(request, _stepped)

    async def hint(self, request: Request) -> Response:
        return await self.game_call(request, lambda s: s.hint())

    async def record(self, request: Request) -> Response:
        session = self.game(request)
        rec = await run_in_threadpool(session.record)
        name = f"agurk-seed{session.seed}.jsonl"
        return Response(
            json.dumps(rec) + "\n",
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def agent_record(self, request: Request) -> Response:
        session = self.game(request)
        dup = session.duplicate
        if dup is None:
            raise WebError(409, "this game is not a duplicate game: it has no agent's match")
        if dup.result is None or "error" in dup.result:
            raise WebError(409, "the agent's match is shown once yours is over")
        rec = await run_in_threadpool(dup.match.record)
        name = f"agurk-seed{session.seed}-{dup.agent}.jsonl".replace(":", "-").replace("/", "-")
        return Response(
            json.dumps(rec) + "\n",
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def _person(self, request: Request) -> str | None:
        person = request.query_params.get("person")
        if person is None:
            return None
        try:
            return check_name(person)
        except ValueError as e:
            raise WebError(400, str(e)) from None

    async def duplicate_summary(self, request: Request) -> Response:
        rows = await run_in_threadpool(self.results.rows, self._person(request))
        return JSONResponse({"summary": summary(rows)})

    async def duplicate_rows(self, request: Request) -> Response:
        rows = await run_in_threadpool(self.results.rows, self._person(request))
        return JSONResponse({"rows": rows})

    async def delete(self, request: Request) -> Response:
        self.game(request)
        self.store.remove(request.path_params["game_id"])
        return Response(status_code=204)

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """The app's life: a sweeper task removes the expired games every so often."""

        async def sweeper() -> None:
            while True:
                await asyncio.sleep(min(SWEEP_S, self.limits.finished_s, self.limits.idle_s))
                self.store.sweep()

        task = asyncio.create_task(sweeper())
        try:
            yield
        finally:
            task.cancel()


def create_app(limits: Limits | None = None, results: Results | None = None) -> Starlette:
    """The app with its own game store (``limits``: how many games, and for how long; default :class:`Limits`).

    ``results`` keeps the duplicate games' results (default: in memory, gone with the app).
    """
    games = _Games(limits or Limits(), results or Results())
    routes = [
        Route("/", _index),
        Route("/favicon.ico", _favicon),
        Route("/api/options", _options),
        Route("/api/stats", games.stats),
        Route("/api/games", games.create, methods=["POST"]),
        Route("/api/games/{game_id}", games.view, methods=["GET"]),
        Route("/api/games/{game_id}", games.delete, methods=["DELETE"]),
        Route("/api/games/{game_id}/play", games.play, methods=["POST"]),
        Route("/api/games/{game_id}/step", games.step, methods=["POST"]),
        Route("/api/games/{game_id}/hint", games.hint, methods=["POST"]),
        Route("/api/games/{game_id}/record", games.record, methods=["GET"]),
        Route("/api/games/{game_id}/duplicate", games.agent_record, methods=["GET"]),
        Route("/api/duplicate", games.duplicate_summary, methods=["GET"]),
        Route("/api/duplicate/results", games.duplicate_rows, methods=["GET"]),
        Route("/api/replay", _replay, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={WebError: _web_error, HTTPException: _http_error},
        lifespan=games.lifespan,
    )
    app.state.store = games.store
    app.state.results = games.results
    return app
