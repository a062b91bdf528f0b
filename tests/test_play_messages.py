"""``agurk play``'s words: going out is announced (the match plays on); a hand entry out of range is said so."""

from __future__ import annotations

import io

import numpy as np
from rich.console import Console

from agurk.play import Game, choice_error, parse_choice
from agurk_env.rules import CARDS, Rules


def _play(rules: Rules, seed: int) -> tuple[dict, str]:
    """A whole match, the person at seat 0 playing random legal cards; the record and the text shown."""
    buf = io.StringIO()
    rng = np.random.default_rng(seed)
    game: Game | None = None

    def read(prompt: str) -> str:
        bits = game.env.legal_bits()
        return str(rng.choice([CARDS[c] for c in range(rules.num_actions) if bits >> c & 1]))

    game = Game(rules, "random", seat=0, seed=seed, console=Console(file=buf, width=200), read=read)
    finished, record = game.run()
    assert finished
    return record, buf.getvalue()


def test_going_out_is_announced_and_the_match_plays_on() -> None:
    rules = Rules.preset("standard", players=3, limit=8)
    seen_out = seen_other = False
    for seed in range(6):
        record, text = _play(rules, seed)
        last = len(record["rounds"]) - 1
        for i, rnd in enumerate(record["rounds"]):
            if i == last or not rnd["out"]:
                continue
            lines = text[text.index(f"round {i + 1} over") :].splitlines()
            said = next(line for line in lines if "out of the match" in line)
            if 0 in rnd["out"]:
                seen_out = True
                assert said.startswith("you are out of the match") and "plays on without you" in said
            else:
                seen_other = True
                assert all(f"P{s} random" in said for s in rnd["out"]) and "it plays on" in said
    assert seen_out and seen_other


def test_the_last_round_says_match_over_not_plays_on() -> None:
    record, text = _play(Rules.preset("standard", players=3, limit=8), 4)
    tail = text[text.index(f"round {len(record['rounds'])} over") :]
    assert "match over" in tail and "plays on" not in tail


def test_an_entry_out_of_range_is_said_so() -> None:
    hand = [(0, 1), (3, 1), (5, 2), (9, 1), (12, 1)]  # five entries
    assert parse_choice("#9", hand, 13) is None
    assert choice_error("#9", hand) == "there is no entry #9: your hand has entries #1..#5"
    assert choice_error("15", hand) == "there is no entry #15: your hand has entries #1..#5"
    assert choice_error("zz", hand).startswith("unknown card 'zz'")


def test_a_tie_in_the_last_trick_names_every_seat_charged() -> None:
    seen = False
    for seed in range(8):
        record, text = _play(Rules.preset("standard", players=4), seed)
        for i, rnd in enumerate(record["rounds"]):
            charged = [s for s, p in enumerate(rnd["penalties"]) if p > 0]
            if len(charged) < 2:
                continue
            seen = True
            head = text[: text.index(f"round {i + 1} over")]
            said = head.splitlines()[-1]
            assert "last_trick_ties=all" in said and "each scores it" in said
            assert all(f"P{s} " in said for s in charged), said
        if seen:
            break
    assert seen
