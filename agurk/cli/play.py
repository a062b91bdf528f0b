"""``agurk play``: play one seat of a match against agents in the terminal."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from agurk.cli.common import (
    RULE_NOTES,
    CliError,
    Formatter,
    Subcommands,
    add_options,
    from_args,
    output_file,
    resolve_rules,
    warn_other_players,
)
from agurk.game_options import GameOptions
from agurk_env.options import option


@dataclass(frozen=True, kw_only=True)
class PlayOptions(GameOptions):
    """``agurk play``'s options: a new game's, and where the terminal writes its record."""

    record: str | None = option(None, metavar="FILE")
    """write the match record (one JSON line) at the end; on q or Ctrl-C, the match so far (finished rounds and the
    round in progress), or nothing before your first card. An existing FILE is refused (unless --force)"""
    force: bool = False
    """--record: replace an existing file"""


def add_parser(sub: Subcommands) -> None:
    """Register ``agurk play`` on the subcommands ``sub``: the options of :class:`GameOptions`, and ``--record``."""
    p = sub.add_parser(
        "play",
        help="play one seat of a match against agents in the terminal",
        formatter_class=Formatter,
        description=(
            "Play a whole match in one seat against agents. Each turn shows the scores, the trick\n"
            "so far, your hand by strength, and the legal cards with the reason. Type a card name\n"
            "(10, K, a) or #number from your hand; q quits (with --record, writing the match so far; Ctrl-C too)."
        ),
        epilog="examples:\n  agurk play\n  agurk play --rules danish21 --set players=3 --opponents guard --seed 7",
    )
    add_options(p, PlayOptions, notes=RULE_NOTES)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play one seat of a match against agents in the terminal."""
    game = from_args(PlayOptions, args)
    rules = resolve_rules(game.rules, game.set)
    path = output_file("--record", game.record)  # checked before the match, written at its end (or on q, or Ctrl-C)
    if path is not None and path.exists() and not game.force:
        raise CliError(f"--record {game.record!r} exists: add --force to replace it, or give a new file")

    from agents.registry import AgentSpecError
    from agurk.match import MatchError
    from agurk.play import play

    try:
        warn_other_players(game.opponents.split(","), rules)
        return play(rules, game.opponents, game.seat, game.seed, game.record)
    except (AgentSpecError, MatchError) as e:
        raise CliError(str(e)) from None
    except OSError as e:
        raise CliError(f"cannot write --record {game.record!r}: {e.strerror or e}") from None
