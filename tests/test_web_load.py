"""``agurk bench serve``'s load test, small: 20 concurrent games against guard over loopback (and 10 duplicate ones)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="agurk serve needs the web extra (starlette)")
pytest.importorskip("uvicorn", reason="agurk serve needs the web extra (uvicorn)")
pytest.importorskip("httpx", reason="the load client needs httpx (web extra)")

from agurk import cli
from agurk.web.load import HOST, Wave, run_load


def test_twenty_concurrent_games_end_without_an_error_and_expire() -> None:
    result = run_load(
        [Wave(20, "guard", "standard", ("players=3", "hand_size=3"))],
        think_s=0.02,
        expire_s=1.0,
        seconds=240,
        reference_moves=20,
    )
    assert result["host"] == HOST == "127.0.0.1"
    (wave,) = result["waves"]
    assert wave["errors"] == 0, wave["first_errors"]
    assert wave["finished"] == 20 and wave["games_left_after_expiry"] == 0
    assert wave["moves"] >= 20 * 3  # at least one round of three cards each
    assert wave["move"]["p50_ms"] is not None and wave["reference_move"]["p95_ms"] is not None


def test_a_duplicate_wave_writes_every_result_into_a_temporary_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the server's default database would be runs/agurk-web.sqlite here
    result = run_load(
        [Wave(10, "guard", "standard", ("players=3", "hand_size=3"), duplicate="random")],
        think_s=0.02,
        expire_s=1.0,
        seconds=240,
        reference_moves=10,
    )
    (wave,) = result["waves"]
    assert wave["errors"] == 0, wave["first_errors"]  # each game's view held its written result
    assert wave["finished"] == 10 and wave["duplicate"] == "random" and wave["games_left_after_expiry"] == 0
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--games", "0"], "argument --games: must be an integer 1..1000, not '0'"),
        (["--games", "5000"], "argument --games: must be an integer 1..1000, not '5000'"),
        (["--best-games", "-1"], "argument --best-games: must be an integer 0..1000, not '-1'"),
        (["--seconds", "99999"], "argument --seconds: must be a number in (0, 1800], not '99999'"),
        (["--expire", "0"], "argument --expire: must be a number > 0"),
        (["--seconds", "0"], "argument --seconds: must be a number in (0, 1800], not '0'"),
        (["--think", "-1"], "argument --think: must be a number >= 0"),
        (["--opponents", "nobody"], "unknown agent 'nobody'"),
        (["--duplicate", "nobody"], "unknown agent 'nobody'"),
        (["--set", "players=1"], "players"),
    ],
)
def test_bench_serve_refuses_bad_options(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "serve", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agurk: error: ") and err.count("\n") == 1 and says in err
