"""One match core: its moves tell the record's story, and ``agurk play`` and the web play a seed alike."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from agurk.match import Match
from agurk.play import Game
from agurk.web.session import Session
from agurk_env.records import card_names
from agurk_env.rules import CARDS, Rules

CASES = [
    (Rules.preset("standard", players=4, hand_size=5, limit=12), "random", 0, 3),
    (Rules.preset("lives", players=3, hand_size=4, lives=1), "guard,random", 1, 3),
    (Rules.preset("danish21", players=2, hand_size=6, limit=12), "shed", 1, 5),
]


def choose(legal: list[str], moves: int) -> str:
    """The person's card: a legal one, picked by how many cards the match has seen (the same in both front ends)."""
    return legal[moves % len(legal)]


def terminal_record(rules: Rules, opponents: str, seat: int, seed: int) -> dict[str, Any]:
    """The record of the match played through ``agurk play``'s game (prompts answered by :func:`choose`)."""
    game: Game | None = None

    def read(prompt: str) -> str:
        assert game is not None
        return choose(card_names(game.env.legal_bits()), game.moves)

    game = Game(rules, opponents, seat, seed, Console(file=io.StringIO(), width=200), read)
    finished, rec = game.run()
    assert finished
    return rec


def web_record(rules: Rules, opponents: str, seat: int, seed: int) -> tuple[dict[str, Any], bool]:
    """The record of the match played through the web's session, and whether the person went out before its end."""
    session = Session(rules, opponents, seat, seed)
    session.start()
    went_out = False
    while not session.over:
        if session.person_out:  # the rest is the person's to step through, one agent move at a time
            went_out = True
            session.step()
        else:
            session.play(choose(session.view()["legal"], session.moves))
    return session.record(), went_out


def test_a_seeded_match_is_the_same_in_the_terminal_and_the_browser() -> None:
    went_out = []
    for rules, opponents, seat, seed in CASES:
        web, out = web_record(rules, opponents, seat, seed)
        assert terminal_record(rules, opponents, seat, seed) == web
        assert "winners" in web and web["seed"] == seed
        went_out.append(out)
    assert any(went_out) and not all(went_out)  # the person went out (agents played on) in some, not all


@pytest.mark.parametrize("seat", [0, None])
def test_the_moves_tell_the_records_story(seat: int | None) -> None:
    """Every card a match reports is the record's next play; a trick's winner and a round's end come with its last."""
    rules = Rules.preset("lives", players=3, hand_size=4, lives=1)
    match = Match(rules, "guard" if seat is None else "random", seat, 7)
    moves = []
    while not match.over:
        person = CARDS.index(card_names(match.env.legal_bits())[0]) if match.to_move == seat else None
        moves.append(match.apply(match.agent_card() if person is None else person))
    rec = match.record()
    plays = [(r, t, trick) for r, rnd in enumerate(rec["rounds"], 1) for t, trick in enumerate(rnd["tricks"], 1)]
    at = 0
    for r, t, trick in plays:
        for k, (s, card) in enumerate(trick["plays"]):
            move = moves[at]
            at += 1
            last = k == len(trick["plays"]) - 1
            assert (move.round, move.trick, move.seat, card_names(1 << move.card)) == (r, t, s, [card])
            assert move.winner == (trick["winner"] if last else None)
            assert (move.end is not None) == (last and t == len(rec["rounds"][r - 1]["tricks"]))
    assert at == len(moves) == match.moves and bool(moves[-1].end.match_over[0])
