"""``agurk serve``: play, watch and replay Agurk in the browser (a local web server)."""

from __future__ import annotations

import argparse
import gc
import importlib.util
import socket
from dataclasses import dataclass

from agurk.cli.common import CliError, Formatter, Subcommands, add_options, from_args
from agurk_env.options import option

WEB_INSTALL = 'pip install -e ".[web]"'
"""How to install the web extra in a clone of the repository."""
WEB_NEEDS = (("starlette", "starlette"), ("uvicorn", "uvicorn"))
"""What ``agurk serve`` imports: (module, the package that provides it)."""
LOOPBACK = ("127.0.0.1", "localhost", "::1")
"""Hosts that only this machine can reach."""


def require_web(command: str) -> None:
    """A one-line error naming the web extra when its packages are missing."""
    for module, package in WEB_NEEDS:
        if importlib.util.find_spec(module) is None:
            raise CliError(f"{command} needs {package}, from the web extra: run {WEB_INSTALL} in the root of the clone")


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """``agurk serve``'s options."""

    host: str = "127.0.0.1"
    """address to listen on; the default is this machine only"""
    port: int = option(8000, low=1, high=65535, metavar="N")
    """port to listen on"""
    max_games: int = option(1000, low=1, metavar="N")
    """most games kept at once"""
    idle_minutes: float = option(30.0, above=0, metavar="M")
    """forget a game idle this long"""
    finished_minutes: float = option(10.0, above=0, metavar="M")
    """forget a finished game this long after its last request"""
    db: str = option("runs/agurk-web.sqlite", metavar="PATH")
    """SQLite file of the duplicate games' results (made on first use; kept across restarts)"""
    checkpoints: bool | None = None
    """let the page name checkpoint files on this machine as opponents (ppo:PATH, guided:policy=PATH); default: yes
    on 127.0.0.1/localhost, no on any other --host"""


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk serve`` on the subcommands ``sub``."""
    p = sub.add_parser(
        "serve",
        help="play, watch and replay Agurk in the browser (a local web server)",
        formatter_class=Formatter,
        description=(
            "Serve one page: play a whole match against agents by clicking cards (the legal cards lit,\n"
            "the others dimmed with the engine's reason; a hint shows what best would play), watch\n"
            "agents play each other, and replay any JSON Lines record the toolkit writes. Nothing is\n"
            "fetched from the internet. Each game has an unguessable id and a token of the browser that\n"
            "made it; finished and idle games expire. Open the printed address in a browser."
        ),
        epilog=(
            "examples:\n  agurk serve\n  agurk serve --port 8080 --db runs/club.sqlite\n"
            "  agurk serve --host 0.0.0.0 --max-games 200"
        ),
    )
    add_options(p, ServeOptions)
    p.set_defaults(func=run, own_signals=True)  # uvicorn handles Ctrl-C and SIGTERM itself


def run(namespace: argparse.Namespace) -> int:
    """Serve the page until interrupted."""
    args = from_args(ServeOptions, namespace)
    require_web("agurk serve")
    _check_listen(args.host, args.port)
    import uvicorn

    from agurk.web.app import create_app
    from agurk.web.duplicate import Results
    from agurk.web.store import Limits

    checkpoints = args.host in LOOPBACK if args.checkpoints is None else args.checkpoints
    limits = Limits(args.max_games, args.idle_minutes * 60, args.finished_minutes * 60, checkpoints)
    if args.host not in LOOPBACK:
        print(f"note: listening on {args.host}: other machines can reach this server (no TLS, no login)", flush=True)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"agurk serve: open http://{host}:{args.port}/ (Ctrl-C stops)", flush=True)
    app = create_app(limits, Results(args.db))
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    config.load()  # uvicorn's own modules imported now, so that the freeze below holds them too
    gc.collect()
    gc.freeze()  # what the imports made lives as long as the server: full collections skip it (else 0.1 s stalls)
    uvicorn.Server(config).run()
    return 0


def _check_listen(host: str, port: int) -> None:
    """A one-line error when ``host:port`` cannot be listened on (in use, not an address of this machine)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(infos[0][4])
    except OSError as e:
        raise CliError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
