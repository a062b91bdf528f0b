"""``agurk serve`` as one call: :func:`serve` runs the page's server on :class:`ServeOptions` until interrupted."""

from __future__ import annotations

import gc
from dataclasses import dataclass

from agurk_env.install import install
from agurk_env.options import option

WEB_INSTALL = install("web")
"""How to install the web extra in a clone of the repository."""
WEB_NEEDS = (("starlette", "starlette"), ("uvicorn", "uvicorn"))
"""What ``agurk serve`` imports: (module, the package that provides it)."""
LOOPBACK = ("127.0.0.1", "localhost", "::1")
"""Hosts that only this machine can reach."""


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


def serve(args: ServeOptions) -> None:
    """Serve the page on ``args.host:args.port`` until interrupted, printing its address (needs the web extra)."""
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
