"""The ``agurk`` command: train, evaluate, simulate, show rule presets, list agents, and benchmark.

One module per command (:mod:`agurk.cli.simulate`, ...), each with ``add_parser(sub)`` and
``run(args)``; :mod:`agurk.cli.common` holds what they share.

Every user error (unknown preset, option or value, an impossible combination of options,
a bad agent spec, a file that cannot be written, a count <= 0) is reported as one line
``agurk: error: ...`` on stderr with exit status 2, never a traceback. Ctrl-C at any moment,
the imports of the commands included, is one line and exit status 130: the ``agurk`` script
imports this module before :func:`main` runs, so it imports nothing of the project itself and
:func:`main` guards every import. ``agurk --version`` prints the installed version (from the
package metadata).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

DISTRIBUTION = "agurk-rl"
"""The name ``pip`` installs this project under (pyproject.toml)."""


def build_parser() -> argparse.ArgumentParser:
    """Build the ``agurk`` argument parser with its subcommands."""
    from agurk.cli import (
        agents,
        bench,
        curve,
        evaluate,
        exploit,
        exploitability,
        leaderboard,
        play,
        replay,
        rules,
        serve,
        simulate,
        skill_report,
        skill_study,
        sweep,
        train,
        zoo,
    )
    from agurk.cli.common import PROG, Formatter, Parser

    parser = Parser(
        prog=PROG,
        formatter_class=Formatter,
        description=(
            "Agurk (Gurka), the Nordic last-trick card game: train agents from configs, evaluate\n"
            "them in duplicate-deal tournaments, simulate matches to JSON Lines game records,\n"
            "inspect the rule presets, and benchmark the engine, environments, search and trainer.\n"
            "The rules are specified in docs/RULES.md."
        ),
        epilog=(
            "examples:\n"
            "  agurk simulate --rules standard --agents random --matches 1000 --seed 0 --out runs/sim.jsonl\n"
            "  agurk evaluate --agents guard,random,random,random --matches 1000 --seed 0\n"
            "  agurk agents\n"
            "  agurk rules\n"
            "  agurk rules danish21 --set players=6\n"
            "  agurk train configs/quickstart.yaml --out runs/quickstart\n"
            "  agurk skill-report --budget smoke\n"
            "  agurk bench engine --seconds 5\n"
            "\n"
            "Run 'agurk COMMAND --help' for the options of a command."
        ),
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=Parser)
    commands = (
        simulate,
        evaluate,
        skill_report,
        skill_study,
        sweep,
        exploit,
        exploitability,
        agents,
        zoo,
        rules,
        train,
        curve,
        play,
        replay,
        serve,
        bench,
        leaderboard,
    )
    for command in commands:
        command.add_parser(sub)
    return parser


def _version() -> str:
    """The installed distribution's version (``unknown`` when run from a tree that is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``agurk`` command line; return the exit status (130 after Ctrl-C, whenever it came)."""
    try:
        return _run(argv)
    except KeyboardInterrupt as e:  # a command that does not catch it (or not yet: it was still starting)
        from training.stop_signals import stopped

        return stopped(e)
    except Exception as e:  # an interrupt wrapped by Python on its way out (an import's __set_name__: RuntimeError)
        interrupt = _interrupt_in(e)
        if interrupt is None:
            raise
        from training.stop_signals import stopped

        return stopped(interrupt)


def _interrupt_in(error: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt among ``error``'s causes and contexts, if one is there."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _run(argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run its command: a user error is one line on stderr and exit status 2."""
    import contextlib
    import os

    from training.stop_signals import Signals

    with Signals():  # a stop while numba loads the commands' kernels is not lost in its callbacks
        from agurk.cli.common import CliError
        from agurk_env.options import OptionError

        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help (0) and argument errors (2)
            return e.code if isinstance(e.code, int) else 2
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        # SIGTERM and SIGHUP stop a command as Ctrl-C does: workers ended, one line, no traceback
        with contextlib.nullcontext() if getattr(args, "own_signals", False) else Signals():
            return args.func(args)
    except (CliError, OptionError) as e:  # a library call's refusal of an option: one line too
        _report(str(e))
        return 2
    except BrokenPipeError:  # e.g. `agurk simulate --out - | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 1


def _report(message: str) -> None:
    """Print one ``agurk: error: ...`` line on stderr."""
    from agurk.cli.common import PROG

    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
