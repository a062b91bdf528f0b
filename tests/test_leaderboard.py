"""`agurk leaderboard`: its two designs, ratings vs head-to-head play, the cache, Nash averaging with copies."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import shlex
from pathlib import Path

import numpy as np
import pytest

from agents.tournament import play_planned, tournament
from agurk.cli import build_parser, main
from agurk_env.rules import Rules
from skill.cache import TaskCache
from skill.leaderboard import leaderboard, max_entropy_nash, plan_leaderboard, play_leaderboard, rate, strengths

RULES = Rules.preset("standard", players=3)
DEALS = 12
FIRST = ["random", "shed", "guard"]
AGENTS = [*FIRST, "ducker"]


def board(tmp: Path, agents: list[str], *extra: str, out: str = "lb") -> list[str]:
    """The ``agurk leaderboard`` arguments of a small board at 3 players, into ``tmp/out``."""
    return [
        "leaderboard",
        "--set",
        "players=3",
        "--agents",
        ",".join(agents),
        "--deals",
        str(DEALS),
        "--out",
        str(tmp / out),
        "-q",
        *extra,
    ]


def cached(folder: Path) -> dict[Path, int]:
    """Every table in a cache folder, with its modification time."""
    return {p: p.stat().st_mtime_ns for p in folder.glob("*/*.npz")}


def grow(tmp: Path, *extra: str) -> dict[str, object]:
    """Three agents, then the same leaderboard with a fourth (one cache): what each run printed, stored and wrote."""
    found: dict[str, object] = {"tmp": tmp}
    for name, agents in (("first", FIRST), ("second", AGENTS)):
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            assert main(board(tmp, agents, "--workers", "1", *extra)) == 0
        found[name] = json.loads((tmp / "lb" / "leaderboard.json").read_text())
        found[f"{name}_line"] = text.getvalue().strip().splitlines()[-1]
        found[f"{name}_cache"] = cached(tmp / "lb" / "cache")
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """:func:`grow` in the default design, pairs."""
    return grow(tmp_path_factory.mktemp("leaderboard"))


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_pairs_plan_seats_each_pair_alone_and_every_entry_in_every_seat(players: int) -> None:
    specs = ["random", "shed", "guard", "ducker", "counter"]
    plan = plan_leaderboard(Rules.preset("standard", players=players), specs, 3, 0)
    high, low = players - players // 2, players // 2
    assert len(plan.groups) == (2 if high != low else 1) * 10  # C(5, 2) pairs, mirrored at an odd count
    met = []
    for group, tournament_plan in zip(plan.groups, plan.plans, strict=True):
        i, j = sorted(set(group), key=lambda a: specs[a])
        assert list(group) == sorted(group, key=lambda a: specs[a])  # entries in spec order, as their labels
        assert (group.count(i), group.count(j)) in {(high, low), (low, high)}
        assert tournament_plan.labels == [specs[a] for a in group]
        met.append((i, j, group.count(i)))
        design = tournament_plan.design
        assert len(design.tables) == math.comb(players, low)  # every distinct arrangement, once
        where = np.zeros((players, players), int)  # entry x seat, over the seatings counted
        for _, seat in design.views:
            where[np.arange(players), seat] += 1
        assert (where == where[0, 0]).all()  # every entry in every seat equally often
        agent = np.array([np.asarray(group)[table] for table in design.tables])  # the agent at each seat
        assert ((agent == i).sum(0) == (agent == i).sum(0)[0]).all()  # each agent in every seat equally often
    pairs = [tuple(sorted(p, key=lambda a: specs[a])) for p in itertools.combinations(range(5), 2)]
    assert sorted(met) == sorted((i, j, n) for i, j in pairs for n in {high, low})


def test_one_more_agent_plays_only_its_pairs(runs: dict) -> None:
    first, second = runs["first_cache"], runs["second_cache"]
    assert len(first) == 6  # 3 pairs, each 2 against 1 and 1 against 2 (its 3 tables side by side: one entry)
    assert len(second) == 12  # C(4, 2) pairs, twice
    assert all(second[p] == t for p, t in first.items())  # the first run's groups were read, not written again
    assert "(18 played, 0 from the cache)" in runs["first_line"]
    assert "(18 played, 18 from the cache)" in runs["second_line"]  # ducker's 3 pairs: 6 groups of 3 tables


def test_the_subsets_design_plays_every_subset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = grow(tmp_path, "--design", "subsets")
    assert len(found["first_cache"]) == 1 and len(found["second_cache"]) == 4  # C(3, 3), C(4, 3) groups
    assert all(found["second_cache"][p] == t for p, t in found["first_cache"].items())
    assert "(6 played, 0 from the cache)" in found["first_line"]
    assert "(18 played, 6 from the cache)" in found["second_line"]
    data = found["second"]
    assert data["design"] == "subsets" and data["groups"].startswith("every 3-subset of the 4 agents")
    assert [len(set(t["agents"])) for t in data["tables"]] == [3] * 4 and data["matches"] == 4 * 6 * DEALS
    assert "subsets design: 4 groups (every 3-subset" in (tmp_path / "lb" / "leaderboard.md").read_text()
    assert abs(sum(a["rating"] for a in data["agents"])) < 1e-3
    assert shlex.split(data["command"])[shlex.split(data["command"]).index("--design") + 1] == "subsets"
    capsys.readouterr()
    assert main(board(tmp_path, AGENTS)) == 2  # the pairs design into the subsets' folder
    assert "other rules, deals, seed or design" in capsys.readouterr().err


def test_the_json_has_its_keys_and_a_command_that_parses(runs: dict) -> None:
    data = runs["second"]
    assert {"command", "rules", "players", "hand_size", "deals", "seed", "tables", "matches", "nash", "agents"} <= set(
        data
    )
    assert data["deals"] == DEALS and data["seed"] == 0 and data["players"] == 3
    assert data["design"] == "pairs" and data["groups"].startswith("every pair of the 4 agents alone at the table")
    assert len(data["tables"]) == 12 and data["matches"] == 12 * 3 * DEALS
    assert all(len(set(t["agents"])) == 2 and t["seatings"] == 3 for t in data["tables"])
    assert sorted(a["spec"] for a in data["agents"]) == sorted(AGENTS)
    for a in data["agents"]:
        assert {"spec", "rating", "rating_ci", "nash_rating", "nash_weight", "rank"} <= set(a)
        assert a["rating_ci"][0] <= a["rating"] <= a["rating_ci"][1]
        assert a["nash_rating"] <= 1e-6
    assert [a["rank"] for a in data["agents"]] == [1, 2, 3, 4]
    assert abs(sum(a["rating"] for a in data["agents"])) < 1e-3  # centred
    assert abs(sum(a["nash_weight"] for a in data["agents"]) - 1) < 1e-5
    argv = shlex.split(data["command"])
    assert argv[:2] == ["agurk", "leaderboard"]
    build_parser().parse_args(argv[1:])
    folder = runs["tmp"] / "lb"
    assert (folder / "leaderboard.png").stat().st_size > 0
    md = (folder / "leaderboard.md").read_text()
    assert all(f"`{a}`" in md for a in AGENTS) and data["command"] in md
    assert "pairs design: 12 groups (every pair of the 4 agents" in md


def test_ratings_agree_with_plain_head_to_head_play(runs: dict) -> None:
    """Every pair alone at the table (one seat against two copies of the other, both ways): where the gap is large,
    the leaderboard ranks the pair the same way."""
    rating = {a["spec"]: a["rating"] for a in runs["second"]["agents"]}
    assert rating["guard"] > rating["random"] + 200
    large = 0
    for a, b in itertools.combinations(AGENTS, 2):
        alone = tournament(RULES, [a, b, b], DEALS, 0).entries
        gap = alone[0].rating - alone[1].rating
        if abs(gap) > 150:
            large += 1
            assert np.sign(rating[a] - rating[b]) == np.sign(gap), (a, b, gap)
    assert large >= 3


def test_one_group_is_the_tournament() -> None:
    """With as many agents as seats, the pooled fit and its intervals are agents.tournament's, to rounding."""
    plan = plan_leaderboard(RULES, FIRST, DEALS, 0, "subsets")
    tables = [[play_planned(lambda *_: None, *task) for task in plan.plans[0].tasks]]
    rating, low, high = rate(*strengths(plan, tables))
    entries = plan.plans[0].result(tables[0]).entries
    order = [FIRST.index(s) for s in plan.plans[0].labels]
    assert np.allclose(rating[order], [e.rating for e in entries], atol=1e-6)
    assert np.allclose(low[order], [e.rating_ci[0] for e in entries], atol=1e-6)
    assert np.allclose(high[order], [e.rating_ci[1] for e in entries], atol=1e-6)


def with_copy(payoff: np.ndarray, of: int, noise: np.ndarray | None = None, edge: float = 0.0) -> np.ndarray:
    """``payoff`` with one more agent: a copy of agent ``of`` (its row shifted by ``noise``), ``edge`` ahead of it."""
    n = payoff.shape[0]
    out = np.zeros((n + 1, n + 1))
    out[:n, :n] = payoff
    row = payoff[of] + (0 if noise is None else noise)
    row[of] = edge
    out[n, :n], out[:n, n] = row, -row
    return out


def test_an_exact_copy_moves_no_other_nash_rating(runs: dict) -> None:
    payoff = np.array(runs["second"]["nash"]["payoff_matrix"])
    names = runs["second"]["nash"]["agents"]
    before = payoff @ max_entropy_nash(payoff)
    for of in range(len(names)):
        grown = with_copy(payoff, of)
        p = max_entropy_nash(grown)
        after = grown @ p
        assert np.abs(after[: len(names)] - before).max() <= 0.01, names[of]
        assert np.abs(after[: len(names)] - before).max() < 1e-6  # in fact to the solver's precision
        assert abs(p[of] - p[-1]) < 1e-6  # the copies share the weight


def test_a_near_duplicate_moves_the_others_by_at_most_its_difference(runs: dict) -> None:
    payoff = np.array(runs["second"]["nash"]["payoff_matrix"])
    guard = runs["second"]["nash"]["agents"].index("guard")
    before = payoff @ max_entropy_nash(payoff)
    noise = np.random.default_rng(0).uniform(-0.004, 0.004, payoff.shape[0])
    for edge in (-0.003, 0.0, 0.003):  # the copy a little behind, level with, a little ahead of the original
        grown = with_copy(payoff, guard, noise, edge)
        after = grown @ max_entropy_nash(grown)
        assert np.abs(np.delete(after[:-1], guard) - np.delete(before, guard)).max() <= 0.01


def test_an_alias_played_end_to_end_shares_the_weight(runs: dict, capsys: pytest.CaptureFixture[str]) -> None:
    """``heuristic`` is ``guard`` under another name: the equilibrium weight guard had goes to the two of them, and
    no agent's Nash rating moves (the JSON's 6 decimals)."""
    tmp = runs["tmp"]
    argv = board(tmp, [*AGENTS, "heuristic"], "--workers", "1", "--cache", str(tmp / "lb" / "cache"), out="alias")
    assert main(argv) == 0
    assert "(24 played, 36 from the cache)" in capsys.readouterr().out  # heuristic's 4 pairs, 2 groups of 3 tables
    data = json.loads((tmp / "alias" / "leaderboard.json").read_text())
    weight = {a["spec"]: a["nash_weight"] for a in data["agents"]}
    before = {a["spec"]: a["nash_weight"] for a in runs["second"]["agents"]}
    assert abs(weight["guard"] + weight["heuristic"] - before["guard"]) < 1e-6
    assert all(abs(weight[a] - before[a]) < 1e-6 for a in AGENTS if a != "guard")
    nash = {a["spec"]: a["nash_rating"] for a in data["agents"]}
    assert all(abs(nash[a["spec"]] - a["nash_rating"]) < 2e-6 for a in runs["second"]["agents"])
    assert nash["heuristic"] == nash["guard"]


def test_a_deterministic_copy_plays_the_originals_games_and_moves_no_nash_rating(tmp_path: Path) -> None:
    """At 4 players, ``heuristic`` (``guard`` under another name) plays exactly guard's games against every other
    agent, ``random`` drawing the same cards too (an agent's generator depends on the seed and its entry, not on
    a name), so the pairs meta-game gains a copy of guard's row and every other Nash rating stays as it was."""
    rules, cache = Rules.preset("standard", players=4), TaskCache(tmp_path)
    specs = ["random", "shed", "guard", "ducker"]
    small = plan_leaderboard(rules, specs, 6, 0, resamples=20)
    alone = play_leaderboard(small, cache=cache)
    plan = plan_leaderboard(rules, [*specs, "heuristic"], 6, 0, resamples=20)
    played = play_leaderboard(plan, cache=cache)
    assert (alone.played, alone.cached) == (6 * 6, 0)  # C(4, 2) pairs, 6 tables of 2 against 2 each
    assert (played.played, played.cached) == (4 * 6, 6 * 6)  # only heuristic's 4 pairs are played
    labels = [p.labels for p in plan.plans]
    copies = 0
    for g, group in enumerate(labels):
        if "heuristic" in group and "guard" not in group:
            twin = labels.index(["guard" if a == "heuristic" else a for a in group])
            for ours, theirs in zip(played.tables[g], played.tables[twin], strict=True):
                assert all(np.array_equal(getattr(ours, f), getattr(theirs, f)) for f in ("place", "penalty", "hands"))
            copies += 1
    assert copies == 3
    before, after = leaderboard(small, alone.tables), leaderboard(plan, played.tables)
    assert np.array_equal(after.payoff[:4, :4], before.payoff) and after.payoff[2, 4] == 0
    assert np.array_equal(after.payoff[4, :4], after.payoff[2, :4])  # heuristic's row is guard's
    assert np.abs(after.nash_rating[:4] - before.nash_rating).max() < 1e-9
    assert after.nash_rating[4] == pytest.approx(after.nash_rating[2], abs=1e-9)


def test_same_seed_same_files_with_one_worker_or_two(tmp_path: Path) -> None:
    files = []
    for workers in ("1", "2"):
        argv = board(tmp_path, FIRST, "--workers", workers, "--cache", str(tmp_path / f"cache{workers}"))
        assert main(argv) == 0
        files.append([(tmp_path / "lb" / f"leaderboard.{x}").read_bytes() for x in ("json", "md")])
    assert len(cached(tmp_path / "cache2")) == 6  # 3 pairs, 2 groups each: an entry per group
    assert files[0] == files[1]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--agents", "guard"], "at least 2 agents"),
        (["--agents", "guard,nope,random"], "unknown agent 'nope'"),
        (["--agents", "guard,guard,random"], "guard named twice"),
        (["--agents", "guard,random", "--design", "subsets"], "cannot fill a table of 3 players"),
        (["--agents", "guard,random,shed", "--design", "triples"], "--design"),
        (["--agents", "guard,random,shed", "--deals", "0"], "--deals"),
        (["--agents", "guard,random,shed", "--workers", "0"], "--workers"),
        (["--agents", "guard,random,shed", "--set", "bogus=1"], "unknown rule option 'bogus'"),
        (["--agents", "guard,random,shed", "--rules", "nope"], "unknown preset 'nope'"),
        (["--agents", "guard,random,shed", "--backend", "mpi"], "--backend"),
        (["--agents", "guard,random,shed", "--ray-address", "auto"], "--ray-address needs --backend ray"),
        (["--deals", "3"], "--agents"),
    ],
)
def test_bad_options_are_refused_in_one_line(
    extra: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["leaderboard", "--set", "players=3", "--out", str(tmp_path / "lb"), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("agurk: error:") and says in err, err
    assert not (tmp_path / "lb" / "cache").exists()  # nothing played


def test_an_out_folder_of_other_files_or_settings_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "leaderboard.json").write_text(json.dumps({"deals": 99}))
    for out, says in (("file", "is a file"), ("other", "holds other files (notes.txt)"), ("old", "other rules")):
        argv = ["leaderboard", "--set", "players=3", "--agents", "guard,random,shed", "--out", str(tmp_path / out)]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and says in err, err


def test_max_entropy_nash_of_known_games() -> None:
    rps = np.array([[0.0, -1, 1], [1, 0, -1], [-1, 1, 0]])
    assert np.allclose(max_entropy_nash(rps), 1 / 3)
    rock_twice = rps[np.ix_([0, 0, 1, 2], [0, 0, 1, 2])]
    assert np.allclose(max_entropy_nash(rock_twice), [1 / 6, 1 / 6, 1 / 3, 1 / 3], atol=1e-6)
    ladder = np.array([[0.0, 0.5, 0.6], [-0.5, 0, 0.2], [-0.6, -0.2, 0]])
    assert np.allclose(max_entropy_nash(ladder), [1, 0, 0])
    assert np.allclose(max_entropy_nash(np.zeros((4, 4))), 0.25)
    with pytest.raises(ValueError, match="antisymmetric"):
        max_entropy_nash(np.ones((2, 2)))


def test_max_entropy_nash_is_openspiels() -> None:
    """The same equilibria as OpenSpiel's nash_averaging (where its solver, cvxpy, is installed and converges)."""
    pytest.importorskip("cvxpy")
    from open_spiel.python.algorithms.nash_averaging import _max_entropy_symmetric_nash

    rng = np.random.default_rng(0)
    for n in (3, 4, 5, 6):
        x = rng.normal(size=(n, n))
        for a in (x - x.T, np.sign(x - x.T), (x - x.T)[np.ix_([*range(n), 0], [*range(n), 0])]):
            try:
                theirs = _max_entropy_symmetric_nash(a).ravel()
            except Exception:  # its solver fails on some games
                continue
            assert np.abs(a @ theirs - a @ max_entropy_nash(a)).max() < 1e-3
