"""The zoo: a shipped policy per preset, small, weights only, in the wheel, playing every table size."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import best, zoo
from agents.policy import CheckpointError, Ensemble, load_checkpoint, masked_log_softmax, net_from_checkpoint
from agents.registry import AgentSpecError, make_agent
from agurk.cli import main
from agurk_env import engine
from agurk_env.agent import Decision, act_seats
from agurk_env.observation import observe
from agurk_env.rules import PRESETS, Rules
from training.checkpoint import initial_net
from training.config import ConfigError, config_from_dict

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def sibling(tmp_path: Path) -> Path:
    """A fine-tune's stand-in: zoo:standard-4p with its weights nudged (same network and preset)."""
    data = load_checkpoint(zoo.path_of("standard-4p"))
    gen = torch.Generator().manual_seed(0)
    data["model"] = {k: v + 0.05 * torch.randn(v.shape, generator=gen) for k, v in data["model"].items()}
    path = tmp_path / "sources" / "sibling.pt"
    path.parent.mkdir()
    torch.save(data, path)
    return path


def test_the_zoo_ships_the_universal_network_and_only_the_per_table_policies_measured_stronger() -> None:
    assert zoo.UNIVERSAL in zoo.available()
    assert set(zoo.available()) == {zoo.UNIVERSAL, *zoo.KEPT_BECAUSE}, "a shipped file without its measured reason"
    for row in zoo.describe():
        assert row["bytes"] < 1_000_000
        assert row["decisions"] > 0 and row["why"]
        assert row["algo"] in ("ppo", "expert")  # the files written before the rename say "fast": read as ppo
        data = torch.load(zoo.path_of(row["name"]), map_location="cpu", weights_only=True)
        assert "optimizer" not in data and "pool" not in data  # exported: weights and what describes them
    universal = next(s for s in zoo.catalogue() if s.name == zoo.UNIVERSAL)
    assert universal.universal and universal.info["families"] and universal.info["hidden"] == [256, 256]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_universal_network_plays_every_preset_at_every_player_count(preset: str) -> None:
    agent = make_agent("zoo", seed=0, seat=0)
    for players in range(2, 9):
        rules = Rules.preset(preset, players=players, hand_size=min(Rules.preset(preset).hand_size, 52 // players))
        state = engine.init(rules, 8, seed=players)
        for _ in range(2 * players):  # act_seats raises on an illegal card
            legal = engine.legal_bits(rules, state)
            state = engine.advance(rules, engine.play(rules, state, act_seats(rules, state, legal, [agent] * players)))


def test_zoo_plays_the_universal_network_under_any_rules_and_says_nothing() -> None:
    odd = Rules.preset("swedish", players=5, hand_size=4, limit=99, jokers=1, twos_rule=True)
    assert zoo.preset_of(odd) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mine = _choices("zoo", odd, games=16)
    np.testing.assert_array_equal(mine, _choices(f"zoo:{zoo.UNIVERSAL}", odd, games=16))
    for preset in PRESETS:
        assert zoo.preset_of(Rules.preset(preset, players=6, hand_size=5)) == preset


def test_best_and_bad_zoo_specs() -> None:
    assert make_agent("best", seed=0, seat=0).spec == "best"
    with pytest.raises(AgentSpecError, match="no shipped policy 'nope'"):
        make_agent("zoo:nope", seed=0, seat=0)


def _choices(spec: str, rules: Rules, agent: object | None = None, games: int = 8, plays: int = 0) -> np.ndarray:
    """The cards ``spec`` (or ``agent``) picks for the player to move in fresh games of ``rules``, a few plays in."""
    state = engine.init(rules, games, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(plays or rules.players + 2):
        state = engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng))
    player = agent if agent is not None else make_agent(spec, seed=1, seat=0)
    return player.act(Decision(rules, state, np.arange(games), engine.legal_bits(rules, state)))


def _search(rules: Rules) -> str:
    return best.EVERY_TRICK_SEARCH if rules.scoring == "every_trick" else best.SEARCH


def test_best_plays_the_search_where_measured_stronger_the_kept_policy_at_its_table_else_the_network() -> None:
    def searched(rules: Rules) -> bool:
        small = rules.players < best.POLICY_FROM and zoo.preset_of(rules) in best.SEARCH_STRONGER
        return small or zoo.table_text(rules) in best.SEARCH_TABLES

    for name in zoo.KEPT_BECAUSE:
        (shipped,) = [s for s in zoo.catalogue() if s.name == name]
        for rules in shipped.tables:
            assert best.choice(rules) == (_search(rules) if searched(rules) else f"zoo:{name}")
    played = [(name, r) for name in zoo.KEPT_BECAUSE for r in zoo.catalogue()[zoo.available().index(name)].tables]
    assert any(not searched(r) for _, r in played)  # a kept file that best plays somewhere
    name, rules = next((name, r) for name, r in played if not searched(r))
    np.testing.assert_array_equal(_choices("best", rules, games=16), _choices(f"zoo:{name}", rules, games=16))
    for preset in PRESETS:
        rules = Rules.preset(preset)
        if preset in best.SEARCH_STRONGER:
            assert best.choice(rules) == _search(rules)
        elif zoo.specialist_for(rules) is None:
            assert best.choice(rules) == f"zoo:{zoo.UNIVERSAL}"
        large = Rules.preset(preset, players=best.POLICY_FROM, hand_size=6)
        if zoo.specialist_for(large) is None and not searched(large):
            assert best.choice(large) == f"zoo:{zoo.UNIVERSAL}"  # the search weakens with players
    assert best.choice(Rules.preset("swedish")) == f"zoo:{zoo.UNIVERSAL}"  # the network measured above the search
    odd = Rules.preset("standard", limit=99)  # rules of no preset: the network, with no word
    assert best.choice(odd) == f"zoo:{zoo.UNIVERSAL}"
    np.testing.assert_array_equal(_choices("best", odd), _choices("zoo", odd))
    searched_rules = Rules.preset("last_trick_only", players=3)
    np.testing.assert_array_equal(_choices("best", searched_rules), _choices(best.SEARCH, searched_rules))
    for table in best.SEARCH_TABLES:  # the names are tables of the rules: each is reached
        preset, size = table.split(" ")
        players, hand = (int(x) for x in size.split("x"))
        rules = Rules.preset(preset, players=players, hand_size=hand)
        assert zoo.table_text(rules) == table and best.choice(rules) == _search(rules)


def test_best_plays_the_search_without_torch() -> None:
    rules = Rules.preset("danish21", players=3)
    without_torch = make_agent("best", seed=1, seat=0)
    without_torch.has_torch = False
    np.testing.assert_array_equal(_choices("", rules, without_torch), _choices(best.SEARCH, rules))
    every = Rules.preset("every_trick")
    without_torch = make_agent("best", seed=1, seat=0)
    without_torch.has_torch = False
    mine = _choices("", every, without_torch, games=32, plays=9)
    np.testing.assert_array_equal(mine, _choices(best.EVERY_TRICK_SEARCH, every, games=32, plays=9))


def test_export_keeps_the_weights_and_refuses_other_files(tmp_path: Path) -> None:
    out = tmp_path / "universal.pt"
    size = zoo.export(zoo.path_of(zoo.UNIVERSAL), out)  # a shipped policy is itself a checkpoint
    assert size == out.stat().st_size
    a = torch.load(out, weights_only=True)
    b = torch.load(zoo.path_of(zoo.UNIVERSAL), weights_only=True)
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in b["model"])
    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="not a checkpoint written by agurk train"):
        zoo.export(tmp_path / "junk.pt", tmp_path / "x.pt")


def test_a_blend_is_the_weighted_mean_of_the_networks_and_refuses_other_networks(
    tmp_path: Path, sibling: Path
) -> None:
    a, b = zoo.path_of("standard-4p"), sibling
    out = tmp_path / "blend.pt"
    zoo.export(a, out, blend=[(b, 0.25)])
    got, wa, wb = (torch.load(f, weights_only=True) for f in (out, a, b))
    for k in wa["model"]:
        torch.testing.assert_close(got["model"][k], 0.75 * wa["model"][k] + 0.25 * wb["model"][k])
    assert [row["weight"] for row in got["blend"]] == [0.75, 0.25]
    assert "strength" not in got  # nothing was measured on the mean
    with pytest.raises(CheckpointError, match="networks or presets differ"):
        zoo.export(a, tmp_path / "x.pt", blend=[(zoo.path_of(zoo.UNIVERSAL), 0.5)])
    with pytest.raises(CheckpointError, match="sum below 1"):
        zoo.export(a, tmp_path / "x.pt", blend=[(b, 0.6), (b, 0.4)])
    universal = torch.load(zoo.path_of(zoo.UNIVERSAL), weights_only=True)
    universal["config"] = {**universal["config"], "preset": "every_trick"}  # a mixture's preset: only its eval table
    torch.save(universal, tmp_path / "mixture.pt")
    zoo.export(tmp_path / "mixture.pt", tmp_path / "soup.pt", blend=[(zoo.path_of(zoo.UNIVERSAL), 0.5)])
    with pytest.raises(CheckpointError, match="networks or presets differ"):
        zoo.export(tmp_path / "mixture.pt", tmp_path / "x.pt", blend=[(a, 0.5)])  # a mixture with a per-table file


def test_an_ensemble_plays_the_weighted_mean_of_the_members_logits(tmp_path: Path, sibling: Path) -> None:
    a, b = zoo.path_of("standard-4p"), sibling
    out = tmp_path / "ens.pt"
    zoo.export(a, out, ensemble=[(b, 0.25)])
    data = load_checkpoint(out)
    assert [m["weight"] for m in data["ensemble"]] == [0.75, 0.25] and "strength" not in data
    net, na, nb = (net_from_checkpoint(load_checkpoint(f)) for f in (out, a, b))
    assert isinstance(net, Ensemble) and not isinstance(na, Ensemble)
    rules = Rules.preset("standard")
    state = engine.init(rules, 64, seed=3)
    obs = torch.as_tensor(observe(rules, state))
    with torch.no_grad():
        (logits, values), (la, va), (lb, vb) = net(obs), na(obs), nb(obs)
    torch.testing.assert_close(logits, 0.75 * la + 0.25 * lb)
    torch.testing.assert_close(values, 0.75 * va + 0.25 * vb)
    legal = engine.unpack(engine.legal_bits(rules, state), rules.num_actions)
    played = make_agent(f"ppo:{out}", 0, 0).act_obs(obs.numpy(), legal)
    mean = masked_log_softmax(0.75 * la + 0.25 * lb, torch.from_numpy(legal)).argmax(-1).numpy()
    assert np.array_equal(played, mean)
    with pytest.raises(CheckpointError, match="an ensemble already"):
        zoo.export(a, tmp_path / "x.pt", blend=[(out, 0.5)])
    with pytest.raises(CheckpointError, match="or presets differ"):
        zoo.export(a, tmp_path / "x.pt", ensemble=[(zoo.path_of(zoo.UNIVERSAL), 0.5)])
    with pytest.raises(ConfigError, match="is an ensemble of 2 networks; start from one of its members"):
        initial_net(config_from_dict({"init": str(out)}), rules.num_actions)


def test_agurk_zoo_marks_an_ensemble(
    tmp_path: Path, sibling: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    zoo.export(zoo.path_of("standard-4p"), tmp_path / "mine.pt", ensemble=[(sibling, 0.5)])
    monkeypatch.setattr(zoo.shipped, "ZOO", tmp_path)
    zoo.catalogue.cache_clear()
    try:
        assert main(["zoo"]) == 0
        assert [row["ensemble"][1]["weight"] for row in zoo.describe()] == [0.5]
    finally:
        monkeypatch.undo()
        zoo.catalogue.cache_clear()
    out = capsys.readouterr().out
    assert out.startswith("zoo:mine ") and "(an ensemble of 2 networks)" in out


@pytest.mark.parametrize("option", ["--blend", "--ensemble"])
def test_zoo_export_measures_the_combination_it_wrote(
    option: str, tmp_path: Path, sibling: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b.pt"
    a, b = str(zoo.path_of("standard-4p")), str(sibling)
    assert main(["zoo", "export", a, option, f"{b}:0.5", "--name", "b", "--out", str(out)]) == 0
    strength = torch.load(out, weights_only=True)["strength"]
    assert strength["opponent"] == "heuristic" and strength["deals"] == 1000
    assert 0 < strength["win_rate"] < 1
    assert main(["zoo", "export", a, option, f"{b}:1", "--name", "b", "--out", str(tmp_path / "c.pt")]) == 2
    assert f"{option} '{b}:1': give CHECKPOINT:W with 0 < W < 1" in capsys.readouterr().err
    both = ["zoo", "export", a, "--ensemble", f"{b}:0.5", "--blend", f"{b}:0.5", "--name", "f"]
    assert main([*both, "--out", str(tmp_path / "f.pt")]) == 2
    assert "give --blend or --ensemble, not both" in capsys.readouterr().err


def test_a_checkpoint_away_from_its_run_is_measured_alike(tmp_path: Path, sibling: Path) -> None:
    out = tmp_path / "b.pt"
    a, b = str(zoo.path_of("standard-4p")), str(sibling)
    assert main(["zoo", "export", a, "--blend", f"{b}:0.5", "--name", "b", "--out", str(out)]) == 0
    strength = torch.load(out, weights_only=True)["strength"]
    bare = torch.load(out, weights_only=True)
    del bare["strength"], bare["blend"]
    torch.save(bare, tmp_path / "bare.pt")  # a checkpoint file away from its run: no evaluation to carry
    assert main(["zoo", "export", str(tmp_path / "bare.pt"), "--name", "c", "--out", str(tmp_path / "c.pt")]) == 0
    assert torch.load(tmp_path / "c.pt", weights_only=True)["strength"] == strength  # the same weights, measured alike


def test_zoo_command_lists_and_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["zoo"]) == 0
    lines, _, table = capsys.readouterr().out.partition("\n\n")
    lines = lines.splitlines()
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == [f"zoo:{n}" for n in zoo.available()]
    universal = next(i for i, line in enumerate(lines) if line.startswith(f"zoo:{zoo.UNIVERSAL} "))
    assert "the network of every table" in lines[universal + 1]
    head, *rows = table.splitlines()
    assert head.startswith("zoo:universal at every preset") and zoo.preset_table()["command"] in head
    assert [r.split()[0] for r in rows] == sorted(PRESETS) and "best plays pimc:eval=exact" in rows[7]
    out = tmp_path / "p.pt"
    args = ["zoo", "export", str(zoo.path_of("standard-4p")), "--preset", "standard", "--out", str(out)]
    assert main(args) == 0
    assert main(args) == 2  # exists: refused without --force
    assert "add --force" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0
    assert main(["zoo", "export", str(out), "--preset", "nope", "--out", str(tmp_path / "q.pt")]) == 2
    assert main(["zoo", "export", str(out), "--preset", "swedish", "--out", str(tmp_path / "q.pt")]) == 2
    assert "the run trained under 'standard', not 'swedish'" in capsys.readouterr().err
    assert main(["zoo", "export", str(out), "--out", str(tmp_path / "q.pt")]) == 2  # no name
    assert main(["zoo", "export", str(out), "--name", "my-table", "--out", str(tmp_path / "q.pt")]) == 0


def test_the_wheel_ships_every_policy(tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*pip, "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"agents/zoo/{n}.pt" for n in zoo.available()} | {"agents/zoo/presets.json"} <= names
    assert "training/configs/zoo.yaml" in names
    shipped = [n for n in names if n.startswith("agents/zoo/") and n.endswith(".pt")]
    np.testing.assert_equal(len(shipped), len(zoo.available()))


def test_the_shipped_preset_table_is_the_measured_files_and_best_follows_it() -> None:
    table = zoo.preset_table()
    assert sorted(table["presets"]) == sorted(PRESETS) and "--seed 7" in table["command"]
    results = ROOT / "docs" / "results" / "teacher"

    def measured(tag: str, preset: str) -> list[float]:
        entry = json.loads((results / f"{tag}-{preset}.json").read_text())["entries"][0]
        return [round(entry["win_rate"], 4), *(round(x, 4) for x in entry["win_rate_ci"])]

    for row in best.preset_rows():
        preset = str(row["preset"])
        assert row["zoo"] == measured("b015", preset)  # the shipped network's own evaluation files
        rules = Rules.preset(preset)
        if "search" in row:
            tag = "pimc" if row["search"] == best.EVERY_TRICK_SEARCH else "exact"
            assert row["search"] == best.search_for(rules) and row["search_win"] == measured(tag, preset)
            stronger = row["search_win"][0] > row["zoo"][0]  # type: ignore[index]
            assert (row["best"] == row["search"]) == stronger, preset  # the search where it measured stronger
        else:
            assert row["best"] != best.search_for(rules), preset
