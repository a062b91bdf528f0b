"""Replay a game record (RULES.md "Game records") through the scalar reference and check every field."""

from __future__ import annotations

from typing import Any

from agurk_env.reference import ReferenceMatch
from agurk_env.rules import CARDS, Rules


def _card(name: str) -> int:
    return CARDS.index(name)


def replay_record(record: dict[str, Any]) -> None:
    """Replay ``record`` through ``ReferenceMatch``; raise AssertionError at the first difference.

    Checks dealers, turn order, legal sets (when a trick has a ``legal`` key), trick leaders and
    winners, each round's penalties, scores, lives (lives mode), out and rebought, and the winners.
    """
    rules = Rules.from_dict(record["rules"])
    match = ReferenceMatch(rules)
    where = f"seed={record.get('seed')} preset={record.get('preset', '?')} players={rules.players}"
    rounds = record["rounds"]
    assert rounds, f"{where}: no rounds"
    for r, rnd in enumerate(rounds, start=1):
        at = f"{where} round={r}"
        assert not match.match_over, f"{at}: the match ended after round {r - 1}, the record goes on"
        assert match.dealer == rnd["dealer"], f"{at}: dealer {match.dealer}, record {rnd['dealer']}"
        match.start_round([[_card(c) for c in hand] for hand in rnd["hands"]])
        assert len(rnd["tricks"]) == rules.hand_size, f"{at}: {len(rnd['tricks'])} tricks recorded"
        for t, trick in enumerate(rnd["tricks"], start=1):
            at = f"{where} round={r} trick={t}"
            assert match.leader == trick["leader"], f"{at}: leader {match.leader}, record {trick['leader']}"
            legal_sets = trick.get("legal")
            if legal_sets is not None:
                assert len(legal_sets) == len(trick["plays"]), f"{at}: {len(legal_sets)} legal sets for plays"
            for i, (seat, name) in enumerate(trick["plays"]):
                assert match.to_move == seat, f"{at} play={i + 1}: seat {match.to_move} to move, record {seat}"
                legal = [CARDS[c] for c in match.legal()]
                if legal_sets is not None:
                    assert legal == legal_sets[i], (
                        f"{at} play={i + 1} seat={seat}: legal {legal}, record {legal_sets[i]}"
                    )
                assert name in legal, f"{at} play={i + 1} seat={seat}: {name!r} is not legal {legal}"
                match.play(_card(name))
            assert match.trick_winners[t - 1] == trick["winner"], (
                f"{at}: winner {match.trick_winners[t - 1]}, record {trick['winner']}"
            )
        at = f"{where} round={r}"
        result = match.last_round
        assert not match.in_round and result is not None and result.round_no == r, f"{at}: the round did not end"
        assert result.penalties == rnd["penalties"], f"{at}: penalties {result.penalties}, record {rnd['penalties']}"
        assert result.scores == rnd["scores"], f"{at}: scores {result.scores}, record {rnd['scores']}"
        if rules.lives:
            assert result.lives == rnd["lives"], f"{at}: lives {result.lives}, record {rnd['lives']}"
        assert result.out == sorted(rnd["out"]), f"{at}: out {result.out}, record {rnd['out']}"
        assert result.rebought == sorted(rnd["rebought"]), f"{at}: rebought {result.rebought}, record {rnd['rebought']}"
    assert match.match_over, f"{where}: the match is not over after the last recorded round"
    assert match.winners == sorted(record["winners"]), f"{where}: winners {match.winners}, record {record['winners']}"
