"""A bounded load test of ``agurk serve`` on loopback: many games played to their end by a script over HTTP.

:func:`run_load` starts ``agurk serve`` on 127.0.0.1 (a separate process, so the client's work is
not the server's) with a short expiry, then plays waves of concurrent games. Each scripted player
makes a game, plays a random legal card after a think time until the match ends, downloads the
record and checks it; in a duplicate wave each game is a duplicate game (the comparison agent plays
the same deal in the server's threads, the finished match is one row of the server's results
database, a temporary file here) and its written result is checked too. Every request's latency
is timed by the client; the server's memory is read after each wave's games have expired. Counts
and time are bounded; nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from agurk.cli.common import resolve_rules
from agurk.replay import parse_record
from agurk.web import MAX_GAMES, MAX_SECONDS
from agurk.web.session import Session
from agurk_env import seeds

HOST = "127.0.0.1"
"""The only address the load test talks to."""
KEEPALIVE_S = 2.0
"""Seconds the client keeps an idle connection (under the server's keep-alive timeout)."""


@dataclass(frozen=True)
class Wave:
    """``games`` concurrent games against ``opponents`` at the table of ``preset`` and ``sets``."""

    games: int
    opponents: str
    preset: str = "standard"
    sets: tuple[str, ...] = ()
    duplicate: str = ""
    """The comparison agent of duplicate games (every person named apart); empty: ordinary games."""


@dataclass
class Tally:
    """What one wave measured."""

    latencies: list[float] = field(default_factory=list)
    create: list[float] = field(default_factory=list)
    finished: int = 0
    errors: list[str] = field(default_factory=list)


class Percentiles(TypedDict):
    """p50, p95 and max of some latencies, in milliseconds (``None`` without any)."""

    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None


class WaveResult(TypedDict):
    """What one wave of :func:`run_load` measured."""

    games: int
    opponents: str
    duplicate: str
    """The duplicate games' comparison agent, empty for ordinary games."""
    rules: str
    """The preset and its ``set`` items, joined by `` + ``."""
    finished: int
    errors: int
    first_errors: list[str]
    """The first three errors' lines."""
    moves: int
    seconds: float
    server_cpu_ms_per_move: float | None
    """``None`` where /proc cannot tell."""
    client_cpu_ms_per_move: float
    server_waited_s: float | None
    """Seconds the server's event loop waited, runnable, for a core (``None`` where /proc cannot tell)."""
    move: Percentiles
    """A move's latency: the card sent to the agents' replies received, timed by the client."""
    create: Percentiles
    reference_move: Percentiles
    """The same kind of plays in this process, no HTTP, one game at a time."""
    rss_mb_played: float | None
    games_left_after_expiry: int
    rss_mb_expired: float | None
    load_avg: float
    """The 1-minute load average after the wave (every process on the machine)."""


class LoadResult(TypedDict):
    """The ``agurk bench serve`` result (:func:`run_load`)."""

    host: str
    think_s: float
    expire_s: float
    cpus: int | None
    load_avg_start: float
    rss_mb_start: float | None
    """The server's memory once warmed up, before the waves."""
    waves: list[WaveResult]


def percentiles(seconds: list[float]) -> Percentiles:
    """p50, p95 and max of latencies, in milliseconds (``None`` without any)."""
    if not seconds:
        return {"p50_ms": None, "p95_ms": None, "max_ms": None}
    ms = np.asarray(seconds) * 1000.0
    return {
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p95_ms": round(float(np.percentile(ms, 95)), 2),
        "max_ms": round(float(ms.max()), 2),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float | None:
    """Resident memory of process ``pid`` in MiB (Linux's /proc; ``None`` elsewhere)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used (Linux's /proc; ``None`` elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def waited_s(pid: int) -> float | None:
    """Seconds the main thread of ``pid`` has waited, runnable, for a core others held (Linux's schedstat).

    The server's main thread runs its event loop and every heuristic's replies; the thread pool's
    threads come and go, so their waits could not be told from one reading to the next.
    """
    try:
        with open(f"/proc/{pid}/schedstat", encoding="ascii") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def server(expire_s: float) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``agurk serve`` on a free loopback port, finished games forgotten after ``expire_s``; yields its URL.

    Its duplicate results go to a temporary database, removed afterwards (never the user's).
    """
    port = _free_port()
    minutes = str(expire_s / 60)
    cmd = [sys.executable, "-m", "agurk.cli", "serve", "--host", HOST, "--port", str(port)]
    cmd += ["--finished-minutes", minutes, "--idle-minutes", str(max(expire_s, 120.0) / 60), "--max-games", "2000"]
    results = tempfile.TemporaryDirectory(prefix="agurk-bench-serve-")
    cmd += ["--db", os.path.join(results.name, "results.sqlite")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None  # a pipe
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=1):
                break
            if proc.poll() is not None:
                raise RuntimeError(f"agurk serve exited: {proc.stderr.read().decode(errors='replace')[-500:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("agurk serve did not start within 60 s")
            time.sleep(0.1)
        yield f"http://{HOST}:{port}", proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        results.cleanup()


class Connection:
    """One keep-alive HTTP/1.1 connection to the server: a request written, its status and body read.

    Hand-written on asyncio's streams, so the client (on the same cores as the server) costs a
    fraction of a general-purpose client's CPU per request. A connection idle for ``KEEPALIVE_S``
    is replaced before the next request (under the server's keep-alive timeout, which closes it).
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._used = 0.0

    async def request(self, method: str, path: str, body: bytes = b"", token: str = "") -> tuple[int, bytes, float]:
        """``(status, body, seconds)``: seconds from the request's first byte sent to the answer's last received."""
        if self._streams is None or time.monotonic() - self._used > KEEPALIVE_S:
            self.close()
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Length: {len(body)}\r\n"
        if body:
            head += "Content-Type: application/json\r\n"
        if token:
            head += f"X-Game-Token: {token}\r\n"
        start = time.perf_counter()
        writer.write(head.encode("ascii") + b"\r\n" + body)
        header = await reader.readuntil(b"\r\n\r\n")
        length = _content_length(header)
        data = await reader.readexactly(length)
        seconds = time.perf_counter() - start
        self._used = time.monotonic()
        return int(header[9:12]), data, seconds

    def close(self) -> None:
        """Close the connection (a later request opens a new one)."""
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


def _content_length(header: bytes) -> int:
    """The Content-Length of a response's header block (the server answers every request with one)."""
    for line in header.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise ValueError(f"an answer without Content-Length: {header[:200]!r}")


async def _player(conn: Connection, wave: Wave, seed: int, think_s: float, tally: Tally) -> None:
    """One scripted person: make a game, play random legal cards (step once out) to the end, check the record."""
    rng = np.random.default_rng([seed, 1])
    body: dict[str, object] = {"rules": wave.preset, "set": list(wave.sets), "opponents": wave.opponents}
    body.update({"duplicate": wave.duplicate, "name": f"load {seed}"} if wave.duplicate else {"seed": seed})
    status, data, seconds = await conn.request("POST", "/api/games", json.dumps(body).encode())
    tally.create.append(seconds)
    if status != 201:
        tally.errors.append(f"create: {status} {data[:200].decode(errors='replace')}")
        return
    made = json.loads(data)
    game, token, view = made["id"], made["token"], made["view"]
    while not view["over"]:
        if view["stepped"]:  # the person is out: the agents' moves, one step each, untimed
            status, data, _ = await conn.request("POST", f"/api/games/{game}/step", token=token)
            if status != 200:
                tally.errors.append(f"step: {status} {data[:200].decode(errors='replace')}")
                return
            view = json.loads(data)
            continue
        await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))
        card = view["legal"][int(rng.integers(len(view["legal"])))]
        move = json.dumps({"card": card}).encode()
        status, data, seconds = await conn.request("POST", f"/api/games/{game}/play", move, token)
        tally.latencies.append(seconds)
        if status != 200:
            tally.errors.append(f"play: {status} {data[:200].decode(errors='replace')}")
            return
        view = json.loads(data)
    status, data, _ = await conn.request("GET", f"/api/games/{game}/record", token=token)
    if status != 200:
        tally.errors.append(f"record: {status} {data[:200].decode(errors='replace')}")
        return
    rec = parse_record(data.decode())
    if rec.get("winners") != view["winners"] or len(rec["rounds"]) != len(view["rounds"]):
        tally.errors.append(f"record of seed {seed} does not match the final view")
        return
    if wave.duplicate and "id" not in view["duplicate"]:
        tally.errors.append(f"duplicate game of player {seed}: no result written ({view['duplicate']})")
        return
    tally.finished += 1


async def _wave(base: str, wave: Wave, think_s: float, seed: int, deadline: float) -> Tally:
    """Play ``wave``'s games at once against the server at ``base``, each player on its own connection."""
    tally = Tally()
    host, port = base.removeprefix("http://").rsplit(":", 1)

    async def player(g: int) -> None:
        conn = Connection(host, int(port))
        try:
            await _player(conn, wave, seed + g, think_s, tally)
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            tally.errors.append(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    players = [player(g) for g in range(wave.games)]
    try:
        await asyncio.wait_for(asyncio.gather(*players), timeout=max(1.0, deadline - time.monotonic()))
    except TimeoutError:
        tally.errors.append(f"the wave ran past the time limit: {tally.finished}/{wave.games} games finished")
    return tally


async def _await_expiry(base: str, deadline: float) -> int:
    """Wait until the server holds no game (or ``deadline``); the games it still holds."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    conn = Connection(host, int(port))
    try:
        while True:
            games = json.loads((await conn.request("GET", "/api/stats"))[1])["games"]
            if games == 0 or time.monotonic() > deadline:
                return games
            await asyncio.sleep(0.5)
    finally:
        conn.close()


def reference_latency(wave: Wave, moves: int, seed: int) -> list[float]:
    """Seconds of ``moves`` plays (a random legal card, then the agents' replies) in-process, without HTTP."""
    rules = resolve_rules(wave.preset, wave.sets)
    rng = np.random.default_rng([seed, 2])
    times: list[float] = []
    game = 0
    while len(times) < moves:
        session = Session(rules, wave.opponents, 0, seed + seeds.LOAD_GAMES + game)
        session.start()
        while not session.over and not session.person_out and len(times) < moves:
            legal = session.view()["legal"]
            start = time.perf_counter()
            session.play(legal[int(rng.integers(len(legal)))])
            session.view()
            times.append(time.perf_counter() - start)
        game += 1
    return times


def run_load(
    waves: list[Wave],
    think_s: float = 1.0,
    seed: int = 0,
    expire_s: float = 10.0,
    seconds: float = 900.0,
    reference_moves: int = 200,
) -> LoadResult:
    """Play ``waves`` one after another against one ``agurk serve``; latencies, errors and memory per wave."""
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"seconds must be in (0, {MAX_SECONDS:g}], not {seconds}")
    for wave in waves:
        if not 1 <= wave.games <= MAX_GAMES:
            raise ValueError(f"a wave plays 1..{MAX_GAMES} games, not {wave.games}")
    deadline = time.monotonic() + seconds
    load_avg_start = round(os.getloadavg()[0], 2)
    with server(expire_s) as (base, proc):
        warm = [Wave(1, wave.opponents, wave.preset, wave.sets, wave.duplicate) for wave in waves]
        for w in warm:  # agents built and searches compiled once, before anything is timed
            asyncio.run(_wave(base, w, 0.0, seed + seeds.LOAD_WARM, deadline))
        asyncio.run(_await_expiry(base, deadline))
        results: LoadResult = {
            "host": HOST,
            "think_s": think_s,
            "expire_s": expire_s,
            "cpus": os.cpu_count(),
            "load_avg_start": load_avg_start,
            "rss_mb_start": rss_mb(proc.pid),
            "waves": [],
        }
        for i, wave in enumerate(waves):
            start, cpu_start, client_start = time.monotonic(), cpu_s(proc.pid), time.process_time()
            wait_start = waited_s(proc.pid)
            tally = asyncio.run(_wave(base, wave, think_s, seed + seeds.LOAD_WAVE_STRIDE * i, deadline))
            wall, cpu_end, client = time.monotonic() - start, cpu_s(proc.pid), time.process_time() - client_start
            used = None if cpu_start is None or cpu_end is None else cpu_end - cpu_start
            wait_end = waited_s(proc.pid)
            waited = None if wait_start is None or wait_end is None else round(wait_end - wait_start, 1)
            rss_played, moves = rss_mb(proc.pid), max(1, len(tally.latencies))
            left = asyncio.run(_await_expiry(base, min(deadline, time.monotonic() + 10 * expire_s + 30)))
            reference = reference_latency(wave, reference_moves, seed) if reference_moves else []
            results["waves"].append(
                {
                    "games": wave.games,
                    "opponents": wave.opponents,
                    "duplicate": wave.duplicate,
                    "rules": " + ".join([wave.preset, *wave.sets]),
                    "finished": tally.finished,
                    "errors": len(tally.errors),
                    "first_errors": tally.errors[:3],
                    "moves": len(tally.latencies),
                    "seconds": round(wall, 1),
                    "server_cpu_ms_per_move": None if used is None else round(1000 * used / moves, 2),
                    "client_cpu_ms_per_move": round(1000 * client / moves, 2),
                    "server_waited_s": waited,
                    "move": percentiles(tally.latencies),
                    "create": percentiles(tally.create),
                    "reference_move": percentiles(reference),
                    "rss_mb_played": rss_played,
                    "games_left_after_expiry": left,
                    "rss_mb_expired": rss_mb(proc.pid),
                    "load_avg": round(os.getloadavg()[0], 2),
                }
            )
    return results
