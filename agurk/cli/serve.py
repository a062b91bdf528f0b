"""``agurk serve``: play, watch and replay Agurk in the browser (a local web server)."""

from __future__ import annotations

import argparse
import importlib.util
import socket

from agurk.cli.common import CliError, Formatter, Subcommands, add_options, from_args
from agurk.web.server import WEB_INSTALL, WEB_NEEDS, ServeOptions, serve


def require_web(command: str) -> None:
    """A one-line error naming the web extra when its packages are missing."""
    for module, package in WEB_NEEDS:
        if importlib.util.find_spec(module) is None:
            raise CliError(f"{command} needs {package}, from the web extra: run {WEB_INSTALL} in the root of the clone")


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
    serve(args)
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
