"""`agurk skill-report` end to end at a tiny budget: files, schema, reproducibility, checkpoint reuse, errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from agurk.cli import main
from skill import budget as B
from skill.report import skill_report

TINY = B.Budget("tiny", ("standard", "every_trick"), deals=6, train_steps=2_000, worlds=(1, 2), resamples=60)
TRAIN = {**B.quickstart_settings(), "num_envs": 32, "num_steps": 8, "minibatch_size": 256}
CI_KEYS = ("rs_win", "rs_penalty", "skill_share", "n_star", "rating_spread", "upset_rate")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, Path]:
    """The same tiny report twice: in this process, and in two worker processes."""
    one, two = tmp_path_factory.mktemp("one"), tmp_path_factory.mktemp("two")
    first = skill_report(["standard", "every_trick"], 4, TINY, 7, one, train_settings=TRAIN, workers=1, command="x")
    skill_report(["standard", "every_trick"], 4, TINY, 7, two, train_settings=TRAIN, workers=2, command="x")
    return first, one, two


def test_report_files_and_json_schema(reports: tuple[dict, Path, Path]) -> None:
    report, out, _ = reports
    for name in ("report.md", "report.json", "report.csv", "ladder.csv", "rs.png", "ladder.png"):
        assert (out / name).stat().st_size > 0, name
    assert json.loads((out / "report.json").read_text()) == report
    assert (report["seed"], report["budget"], report["players"], report["field"]) == (7, "tiny", 4, "guard")
    assert {v["preset"] for v in report["variants"]} == {"standard", "every_trick"}
    ladder = [
        "random",
        "shed",
        "guard",
        "counter",
        "ducker",
        "pimc:worlds=1",
        "pimc:worlds=2",
        "pimc:eval=exact",
        "ppo",
        "oracle",
        "fictive",
    ]
    assert report["ladder"] == ladder
    for v in report["variants"]:
        for key in CI_KEYS:
            assert len(v[f"{key}_ci"]) == 2, key
        assert [a["spec"] for a in v["ladder"]] == ladder
        for a in v["ladder"]:
            assert a["win_rate_ci"][0] <= a["win_rate"] <= a["win_rate_ci"][1]
            assert a["mean_penalty_ci"][0] <= a["mean_penalty"] <= a["mean_penalty_ci"][1]
        rates = {a["spec"]: a["win_rate"] for a in v["ladder"]}
        assert rates["guard"] == pytest.approx(0.25)  # the field against itself: every seat alike
        assert rates["oracle"] > rates["random"] and rates["fictive"] > rates["random"]
        assert v["best_win"] not in ("oracle", "fictive") and v["best_penalty"] not in ("oracle", "fictive")
        for key in ("learning_win", "random_win", "learning_penalty", "random_penalty"):
            low, high = v[f"{key}_ci"]
            assert low <= v[key] <= high, key
        best = next(a for a in v["ladder"] if a["spec"] == v["best_win"])
        # plain: from the ladder's win rates; corrected: the best agent's results less each round's deal luck
        assert v["random_win_plain"] == pytest.approx(rates["fictive"] - best["win_rate"])  # the gap to fictive
        assert v["learning_win_plain"] == pytest.approx(best["win_rate"] - rates["random"])
        assert v["learning_win"] + v["random_win"] == pytest.approx(rates["fictive"] - rates["random"])
        assert v["learning_win"] != v["learning_win_plain"]  # the correction moved the best agent's result
        for key in ("rs_win", "rs_win_plain"):
            learning, rand = (v[f"{k}_win{key[6:]}"] for k in ("learning", "random"))
            if v[key] is not None:
                assert v[key] == pytest.approx(learning / (learning + rand)), key
        cv = v["control_variates"]
        assert (cv["agent"], cv["fit_deals"]) == (v["best_win"], TINY.deals)
        assert cv["halfwidth_plain"] == pytest.approx((v["rs_win_ci_plain"][1] - v["rs_win_ci_plain"][0]) / 2)
        assert cv["halfwidth"] == pytest.approx((v["rs_win_ci"][1] - v["rs_win_ci"][0]) / 2)
        assert v["ppo_checkpoint"] == f"checkpoints/{v['preset']}.pt"
        assert (out / v["ppo_checkpoint"]).is_file()
    rs = [v["rs_win"] for v in report["variants"]]
    assert rs == sorted(rs, reverse=True) and [v["rank"] for v in report["variants"]] == [1, 2]


def test_csv_and_markdown_carry_the_json_numbers(reports: tuple[dict, Path, Path]) -> None:
    report, out, _ = reports
    rows = list(csv.DictReader((out / "report.csv").open()))
    assert [r["preset"] for r in rows] == [v["preset"] for v in report["variants"]]
    for row, v in zip(rows, report["variants"], strict=True):
        assert float(row["rs_win"]) == pytest.approx(v["rs_win"], rel=1e-5)
        assert float(row["rs_win_plain_low"]) == pytest.approx(v["rs_win_ci_plain"][0], rel=1e-5)
        assert float(row["upset_rate_high"]) == pytest.approx(v["upset_rate_ci"][1], rel=1e-5)
    ladder = list(csv.DictReader((out / "ladder.csv").open()))
    assert len(ladder) == 2 * 11
    assert float(rows[0]["random_win_high"]) == pytest.approx(report["variants"][0]["random_win_ci"][1], rel=1e-5)
    md = (out / "report.md").read_text()
    top = report["variants"][0]
    low, high = top["rs_win_ci_plain"]
    assert f"| 1 | {top['preset']} | {top['rs_win']:.2f} [" in md  # corrected, then plain:
    assert f"] | {top['rs_win_plain']:.2f} [{low:.2f}, {high:.2f}] |" in md
    assert "## Learning and random effects" in md and f"| {top['preset']} | {top['learning_win']:.3f} [" in md
    assert "x" in md.split("## Reproduce")[1]  # the command as given


def test_same_seed_same_report_whatever_the_workers(reports: tuple[dict, Path, Path]) -> None:
    _, one, two = reports
    for name in ("report.json", "report.csv", "ladder.csv", "report.md"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name


def test_cli_reuses_a_given_checkpoint(
    reports: tuple[dict, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # the CLI at the tiny budget, standard only, with the checkpoint the fixture trained:
    # nothing is trained, and the ladder plays exactly as in the fixture's report
    report, out, _ = reports
    monkeypatch.setitem(B.BUDGETS, "smoke", B.Budget("smoke", *list(TINY.__dict__.values())[1:]))
    ckpt = out / "checkpoints" / "standard.pt"
    argv = ["skill-report", "--variants", "standard", "--seed", "7", "--out", str(tmp_path), "-q"]
    assert main([*argv, "--checkpoint", f"standard={ckpt}"]) == 0
    assert "1 variants, smoke budget" in capsys.readouterr().out
    again = json.loads((tmp_path / "report.json").read_text())
    assert not (tmp_path / "checkpoints").exists()  # reused, not trained
    (variant,) = again["variants"]
    assert variant["ppo_checkpoint"] == str(ckpt)
    before = next(v for v in report["variants"] if v["preset"] == "standard")
    assert variant["ladder"] == before["ladder"]
    assert f"--checkpoint standard={ckpt}" in again["command"]
    assert (tmp_path / "report.md").read_text().count(again["command"]) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variants", "standard,bogus"], "unknown preset 'bogus'"),
        (["--variants", "standard,standard"], "names a preset twice"),
        (["--variants", "standard", "--checkpoint", "danish21=x.pt"], "'danish21' is not one of the variants"),
        (["--variants", "standard", "--checkpoint", "standard"], "--checkpoint standard: agent 'ppo:standard': no"),
        (["--variants", "standard", "--checkpoint", "standard="], "needs PRESET=PATH or PATH"),
        (["--variants", "standard", "--checkpoint", "a.pt", "--checkpoint", "b.pt"], "is given twice"),
        (["--variants", "standard", "--policy", "zoo", "--convergence", "x.pt"], "--convergence: no checkpoint at"),
        (["--variants", "standard", "--convergence", "x.pt"], "--convergence needs one network in every variant"),
        (["--variants", "standard", "--checkpoint", "standard=missing.pt"], "no checkpoint at 'missing.pt'"),
        (["--variants", "standard", "--players", "9"], "players must be an integer"),
        (["--variants", "standard", "--workers", "0"], "argument --workers: must be an integer >= 1"),
        (["--variants", "standard", "--seed", "-1"], "argument --seed: must be an integer >= 0"),
        (["--budget", "huge"], "must be one of smoke, small, full, not 'huge'"),
    ],
)
def test_user_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["skill-report", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_train_config_key_is_named(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("learning_rat: 0.1\n")
    assert main(["skill-report", "--variants", "standard", "--train-config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "learning_rat" in err and err.count("\n") == 1


def test_progress_display_shows_every_variant_and_the_whole_run() -> None:
    import io

    from rich.console import Console

    from agurk.monitors import SkillMonitor

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    with SkillMonitor(console, ["standard", "swedish"], enabled=True) as update:
        assert update is not None
        update([5.0, 0.0], [10.0, 10.0], ["pimc:worlds=4", "waiting"])
        update([10.0, 2.5], [10.0, 10.0], ["done", "training PPO"])
    text = buf.getvalue()  # the last frame (rich redraws on a timer and on stop)
    assert "all variants" in text and "standard: done" in text and "swedish: training PPO" in text
    assert " 62%" in text and " 25%" in text  # (10 + 2.5) / 20 overall, 2.5 / 10 for swedish
    with SkillMonitor(console, ["standard"], enabled=False) as update:
        assert update is None


def test_meaning_flags_variants_where_a_real_agent_beats_the_fictive_player() -> None:
    from skill.report_text import meaning

    def variant(preset: str, rs: float) -> dict:
        return {"preset": preset, "rs_win": rs, "rs_win_ci": [rs - 0.1, rs + 0.1], "best_win": "pimc", "n_star": 9.0}

    text = meaning([variant("every_trick", 1.4), variant("standard", 0.7)])
    assert "In every_trick RS is above 1" in text and "standard" not in text.split("RS is above 1")[0][-20:]
    assert "fictive player" in text
    assert "above 1" not in meaning([variant("a", 0.9), variant("b", 0.7)])


def test_tasks_per_ladder_agent_give_run_variants_numbers(tmp_path: Path) -> None:
    import dataclasses

    from skill.cells import grid, make_jobs, play_jobs
    from skill.variant import run_variant

    plan = dataclasses.replace(TINY, deals=2, policy="zoo")
    jobs = make_jobs(grid(["standard", "every_trick"], [3], [5])[0], plan, 7, tmp_path)
    seen: list[list[str]] = []
    split = play_jobs(jobs, 2, monitor=lambda units, totals, stages: seen.append(stages)).rows
    assert json.dumps(split) == json.dumps([run_variant(job) for job in jobs])  # one process, the ladder in order
    assert seen[-1] == ["done", "done"]


def test_a_zoo_ladder_plays_the_universal_network_at_every_table() -> None:
    """Issue 43: the ladder's ``zoo`` is the one network, at every variant's table, with nothing chosen per table."""
    import dataclasses

    from skill.cells import zoo_policies
    from skill.variant import VariantJob

    plan = dataclasses.replace(TINY, policy="zoo")
    four = VariantJob("standard", 4, plan, 0, {})
    five_cards = VariantJob("every_trick", 3, plan, 0, {}, hand_size=5)
    assert four.policy_spec == five_cards.policy_spec == "zoo:universal"
    policies = zoo_policies([four, five_cards, four])
    assert list(policies) == ["universal"] and policies["universal"]["table"].startswith("every table")


def test_plain_progress_lines_say_the_share_done_now_and_then(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log file hears of a long report before its first variant is done: the share done and the time left."""
    import io

    from rich.console import Console

    from agurk import monitors

    buf = io.StringIO()
    now = [100.0]
    monkeypatch.setattr(monitors.time, "monotonic", lambda: now[0])
    with monitors.SkillMonitor(Console(file=buf, width=200), ["standard", "swedish"], False, lines=True) as say:
        say([1.0, 1.0], [10.0, 10.0], ["pimc:worlds=4", "zoo"])
        assert buf.getvalue() == ""  # not yet: one line every LOG_SECONDS
        now[0] += monitors.LOG_SECONDS
        say([2.5, 2.5], [10.0, 10.0], ["pimc:worlds=4", "zoo"])
        say([10.0, 5.0], [10.0, 10.0], ["done", "zoo"])
    lines = buf.getvalue().splitlines()
    assert lines[0].endswith("25% of the work done, 0/2 finished, about 0:01:30 left")
    assert lines[1].endswith("standard: done (1/2)") and len(lines) == 2


def test_the_budget_names_are_the_budgets() -> None:
    """``--budget`` offers the Literal ``BudgetName``: it must name exactly the budgets of ``BUDGETS``, in order."""
    from typing import get_args

    from skill.budget import BUDGETS, BudgetName

    assert tuple(BUDGETS) == get_args(BudgetName)
    assert all(name == b.name for name, b in BUDGETS.items())
