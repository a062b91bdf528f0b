"""The variant atlas (`agurk skill-report` over players x hand sizes, `--policy zoo`) at the tiniest budget.

Two presets at 2 and 8 players with 7 cards: 2 cells play (2 players), 2 are left out
(8 x 7 = 56 cards > 52). Each cell must carry exactly the numbers of a one-cell report.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agurk.cli import main
from skill import budget as B
from skill.atlas import write_heatmap
from skill.cells import grid
from skill.report import skill_report
from skill.report_text import STAT_KEYS, stat_text

SMOKE = B.Budget("smoke", ("standard",), deals=3, train_steps=2_000, worlds=(1, 2), resamples=60)
"""The tiniest budget, in the place of ``smoke``; the atlas runs it with ``--policy zoo --deals 2``."""
PLAN = dataclasses.replace(SMOKE, policy="zoo", deals=2)
PRESETS = ["standard", "every_trick"]
ARGV = ["skill-report", "--variants", ",".join(PRESETS), "--players", "2,8", "--hand-sizes", "7"]
ARGV += ["--policy", "zoo", "--deals", "2", "--seed", "7", "--workers", "1"]


@dataclasses.dataclass
class Run:
    data: dict
    out: Path
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def atlas_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """The atlas through the CLI, its output not a terminal (plain progress lines)."""
    out = tmp_path_factory.mktemp("atlas") / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(B.BUDGETS, "smoke", SMOKE)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            assert main([*ARGV, "--out", str(out)]) == 0
    yield Run(json.loads((out / "atlas.json").read_text()), out, stdout.getvalue(), stderr.getvalue())


def test_grid_leaves_out_the_combinations_that_do_not_fit_the_deck() -> None:
    cells, left_out = grid(["standard", "jokers"], [3, 4, 5, 6, 8], [5, 6, 7])
    assert len(cells) == 2 * 14
    assert [c.key for c in cells[:4]] == ["standard-3p-5c", "standard-3p-6c", "standard-3p-7c", "standard-4p-5c"]
    assert [(c["preset"], c["players"], c["hand_size"]) for c in left_out] == [("standard", 8, 7), ("jokers", 8, 7)]
    assert "56 > 52 cards" in left_out[0]["reason"] and "56 > 54 cards" in left_out[1]["reason"]
    cells, left_out = grid(["standard"], [4], [])  # no hand sizes: the preset's own
    assert [c.key for c in cells] == ["standard-4p-7c"] and not left_out


def test_the_cells_the_left_out_combinations_and_the_files(atlas_run: Run) -> None:
    data, out = atlas_run.data, atlas_run.out
    for name in ("atlas.md", "atlas.json", "atlas.csv", "atlas-ladder.csv"):
        assert (out / name).stat().st_size > 0, name
    for preset in PRESETS:
        assert (out / "heatmaps" / f"{preset}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (out / "checkpoints").exists()  # --policy zoo trains nothing
    assert (data["format"], data["policy"], data["deals"], data["train_steps"]) == ("agurk-atlas", "zoo", 2, 0)
    assert sorted(c["key"] for c in data["cells"]) == ["every_trick-2p-7c", "standard-2p-7c"]
    assert [(c["preset"], c["players"], c["hand_size"]) for c in data["left_out"]] == [
        ("standard", 8, 7),
        ("every_trick", 8, 7),
    ]
    assert data["ladder"][-3:] == ["zoo", "oracle", "fictive"]
    assert set(data["zoo"]) == {c["zoo_policy"] for c in data["cells"]}
    for c in data["cells"]:
        assert c["rules"]["players"] == 2 and c["rules"]["hand_size"] == 7 and c["ppo_checkpoint"] is None
        assert [a["spec"] for a in c["ladder"]] == data["ladder"]
    md = (out / "atlas.md").read_text()
    assert "- standard, 8 players x 7 cards: hand_size must be at most 6 for 8 players" in md
    assert "--players 2,8 --hand-sizes 7" in md and "![standard: relative skill and N* per cell]" in md
    assert "left out standard 8p x 7c: hand_size must be at most 6" in atlas_run.stderr
    assert "every_trick 2p x 7c: done (" in atlas_run.stderr  # plain progress lines off a terminal
    assert "2 cells (2 left out: they do not fit the deck), smoke budget" in atlas_run.stdout


def test_the_ranked_table_is_sorted_and_carries_the_json_numbers(atlas_run: Run) -> None:
    cells = atlas_run.data["cells"]
    assert [c["rank"] for c in cells] == [1, 2]
    rs = [c["rs_win"] for c in cells]
    defined = [x for x in rs if x is not None]
    assert defined == sorted(defined, reverse=True) and rs[: len(defined)] == defined  # undefined last
    rows = list(csv.DictReader((atlas_run.out / "atlas.csv").open()))
    assert [r["key"] for r in rows] == [c["key"] for c in cells]
    for row, c in zip(rows, cells, strict=True):
        assert (int(row["rank"]), int(row["players"]), int(row["hand_size"])) == (c["rank"], 2, 7)
        for key in STAT_KEYS:
            value = c[key]
            assert (row[key] == "") if value is None else float(row[key]) == pytest.approx(value, rel=1e-5), key
    ladder = list(csv.DictReader((atlas_run.out / "atlas-ladder.csv").open()))
    assert len(ladder) == 2 * len(atlas_run.data["ladder"])
    table = [line for line in (atlas_run.out / "atlas.md").read_text().splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[1] for line in table[1:]] == [c["preset"] for c in cells]
    assert table[1].startswith(f"| 1 | {cells[0]['preset']} | 2 | 7 | {stat_text(cells[0], 'rs_win')} |")


def test_each_cell_equals_a_single_cell_run_with_the_same_seed(atlas_run: Run, tmp_path: Path) -> None:
    report = skill_report(PRESETS, 2, PLAN, 7, tmp_path, workers=1, hand_size=7)
    assert report["policy"] == "zoo" and report["hand_size"] == 7
    assert report["command"].startswith("skill.report.skill_report(['standard', 'every_trick'], 2, Budget(")
    single = {v["preset"]: {k: x for k, x in v.items() if k != "rank"} for v in report["variants"]}
    for cell in atlas_run.data["cells"]:
        assert {k: x for k, x in cell.items() if k not in ("rank", "key")} == single[cell["preset"]]


def test_heatmaps_annotate_each_value_with_its_interval(
    atlas_run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skill.plots

    drawn = {}
    monkeypatch.setattr(
        skill.plots,
        "plot_heatmaps",
        lambda path, title, rows, columns, panels: drawn.update(rows=rows, columns=columns, panels=panels),
    )
    write_heatmap(atlas_run.data, "standard", tmp_path / "x.png")
    cell = next(c for c in atlas_run.data["cells"] if c["preset"] == "standard")
    assert (drawn["rows"], drawn["columns"]) == ([2, 8], [7])
    (rs_title, rs_values, rs_texts, rs_log), (ns_title, ns_values, ns_texts, ns_log) = drawn["panels"]
    assert rs_title.startswith("RS") and ns_title.startswith("N*")
    assert rs_values == [[cell["rs_win"]], [None]] and not rs_log and ns_log
    assert rs_texts[0][0] == stat_text(cell, "rs_win").replace(" [", "\n[")
    assert ns_values[0][0] == cell["n_star"] and "[" in ns_texts[0][0]
    assert rs_texts[1][0] == ns_texts[1][0] == "left out\n(deck)"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--players", "3,x"], "argument --players: must be a list of integers, not '3,x'"),
        (["--players", "3,3"], "--players names a value twice"),
        (["--players", "3", "--hand-sizes", "0"], "hand_size must be an integer"),
        (["--players", "8", "--hand-sizes", "7"], "hand_size must be at most 6 for 8 players"),
        (["--players", "8", "--hand-sizes", "7,8"], "no cell of the grid fits the deck"),
        (["--policy", "zoo", "--checkpoint", "standard=x.pt"], "--checkpoint needs --policy train"),
        (["--policy", "best"], "argument --policy: must be one of train, zoo, not 'best'"),
        (["--deals", "0"], "argument --deals: must be an integer >= 1"),
    ],
)
def test_atlas_user_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["skill-report", "--variants", "standard", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_zoo_without_its_network_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import agents.zoo.shipped

    monkeypatch.setattr(agents.zoo.shipped, "catalogue", lambda: ())  # an empty zoo
    assert main(["skill-report", "--variants", "swedish", "--policy", "zoo", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--policy zoo: no shipped policy 'universal'" in err and err.count("\n") == 1


def test_a_used_out_folder_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "atlas"
    out.mkdir()
    (out / "atlas.json").write_text("{}")
    assert main(["skill-report", "--variants", "standard", "--players", "3,4", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "is not empty" in err and "add --force" in err and err.count("\n") == 1
    assert (out / "atlas.json").read_text() == "{}"  # untouched
    from skill.report_plan import _claim

    assert _claim(out, force=True).name.startswith("atlas.old-")
    assert not any(out.iterdir()) and len(list(tmp_path.glob("atlas.old-*"))) == 1
