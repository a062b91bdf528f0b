"""The training mixture of the rules-conditioned network: its draws, its config and a tiny run over it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tiny_config import TINY  # noqa: E402

from agents.policy import PolicyNet, load_checkpoint, widened  # noqa: E402
from agurk.cli import main  # noqa: E402
from agurk_env import observation  # noqa: E402
from agurk_env.rules import PRESETS, Rules  # noqa: E402
from training.config import ConfigError, MixtureConfig, TableFamily, config_from_dict, load_config  # noqa: E402
from training.mixture import draw, draw_from  # noqa: E402
from training.ppo import PPOTrainer, Stats, env_step, per_table_normalized  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FAMILIES = {
    "std4": {"weight": 2, "presets": ["standard"], "players": [4]},
    "any": {"players": [2, 5, 8], "hand_size": [3, 6, 7], "random_options": 2, "single_round": 0.3},
}


def _preset_of(rules: Rules) -> str | None:
    table = {k: v for k, v in rules.to_dict().items() if k not in ("players", "hand_size")}
    for name in PRESETS:
        base = {k: v for k, v in Rules.preset(name).to_dict().items() if k not in ("players", "hand_size")}
        if base == table:
            return name
    return None


def test_a_family_draws_only_its_tables_and_every_draw_fits_the_deck() -> None:
    rng = np.random.default_rng(0)
    family = TableFamily(presets=["swedish", "jokers"], players=[3, 8], hand_size=[5, 7])
    drawn = [draw_from(family, rng) for _ in range(300)]
    assert {_preset_of(r) for r in drawn} == {"swedish", "jokers"}
    assert {(r.players, r.hand_size) for r in drawn if r.jokers == 0} == {(3, 5), (3, 7), (8, 5)}  # 8x7 > 52
    assert (8, 6) not in {(r.players, r.hand_size) for r in drawn}


def test_random_options_and_single_rounds_reach_rules_of_no_preset() -> None:
    rng = np.random.default_rng(1)
    single = [draw_from(TableFamily(single_round=1.0), rng) for _ in range(50)]
    assert all(r.limit == 1 and r.match_end == "first_out" for r in single)
    mixed = [draw_from(TableFamily(random_options=3), rng) for _ in range(200)]
    assert sum(_preset_of(r) is None for r in mixed) > 100
    plain = [draw_from(TableFamily(), rng) for _ in range(100)]
    assert all(_preset_of(r) is not None for r in plain)
    assert len({_preset_of(r) for r in plain}) > 12  # every preset is drawn from


def test_families_are_drawn_by_weight_and_the_same_seed_draws_the_same_tables() -> None:
    families = {"a": TableFamily(weight=3, presets=["standard"]), "b": TableFamily(presets=["quick"], random_options=2)}
    mix = MixtureConfig(families=families)
    one, two = np.random.default_rng(5), np.random.default_rng(5)
    first = [draw(mix, one) for _ in range(20)]
    assert first == [draw(mix, two) for _ in range(20)] and len(set(first)) > 3
    rng = np.random.default_rng(2)
    share = np.mean([_preset_of(draw(mix, rng)) == "standard" for _ in range(2000)])
    assert 0.72 < share < 0.78


@pytest.mark.parametrize(
    ("families", "message"),
    [
        ({"x": {"presets": ["standerd"]}}, "mixture.families.x.presets: 'standerd' is not a preset"),
        ({"x": {"rules": {"players": 3}}}, "mixture.families.x.rules: list players"),
        ({"x": {"rules": {"ace": "middle"}}}, "mixture.families.x.rules: "),
        ({"x": {"wieght": 2}}, "unknown config key 'mixture.families.x.wieght'"),
        ({"x": {"players": [9]}}, "mixture.families.x.players"),
    ],
)
def test_bad_families_are_refused_in_one_line_naming_the_key(families: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")) as e:
        config_from_dict({**TINY, "mixture": {"families": families}})
    assert "\n" not in str(e.value)


def test_a_mixture_needs_the_ppo_or_expert_trainer() -> None:
    with pytest.raises(ConfigError, match=r"^mixture\.families needs algo: ppo or expert, not 'sb3'"):
        config_from_dict({**TINY, "algo": "sb3", "mixture": {"families": FAMILIES}})
    assert config_from_dict({**TINY, "algo": "expert", "mixture": {"families": FAMILIES}}).mixture.families


def test_the_shipped_universal_config_loads_and_draws_every_preset() -> None:
    cfg = load_config(REPO / "configs" / "universal.yaml")
    rng = np.random.default_rng(0)
    drawn = [draw(cfg.mixture, rng) for _ in range(2000)]
    assert {_preset_of(r) for r in drawn} >= set(PRESETS)
    assert {r.players for r in drawn} == set(range(2, 9))


def test_a_network_widened_to_the_jokers_output_plays_the_old_cards_as_before() -> None:
    torch.manual_seed(0)
    small = PolicyNet(observation.SIZE, 13, [16])
    big = widened(small, [32, 16], actions=14)
    x = torch.rand(20, observation.SIZE)
    with torch.no_grad():
        (a, va), (b, vb) = small(x), big(x)
    assert big.actions == 14
    torch.testing.assert_close(b[:, :13], a)
    torch.testing.assert_close(vb, va)
    back = widened(big, [32, 16], actions=13)  # a run without jokers from a mixture's network
    with torch.no_grad():
        c, vc = back(x)
    torch.testing.assert_close(c, a)
    torch.testing.assert_close(vc, va)


def test_a_run_without_jokers_starts_from_a_mixture_network_and_resumes(tmp_path: Path) -> None:
    import yaml

    mixed = tmp_path / "mixed"
    families = ["--set", "mixture.slots=2", "--set", "total_steps=600", "--set", "eval.every=0"]
    config = tmp_path / "mix.yaml"
    config.write_text(yaml.safe_dump({**TINY, "mixture": {"families": FAMILIES}}))
    assert main(["train", str(config), "--out", str(mixed), *families]) == 0
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump({**TINY, "init": str(mixed / "checkpoints" / "latest.pt"), "total_steps": 600}))
    run = tmp_path / "run"
    assert main(["train", str(plain), "--out", str(run), "--set", "eval.every=0"]) == 0
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["actions"] == 13
    assert main(["train", "--resume", str(run), "--set", "total_steps=1200"]) == 0


def test_a_mixture_run_trains_on_redrawn_tables_and_resumes(tmp_path: Path) -> None:
    cfg = config_from_dict(
        {**TINY, "penalty_scale": 30, "mixture": {"families": FAMILIES, "slots": 3, "redraw_every": 1}}
    )
    learner = PPOTrainer(cfg)
    learner.start_games()
    seen = set()
    for _ in range(4):
        seen.update(learner.rule_sets)
        assert len(learner.tables) == 3
        logs = learner.iterate()
        assert np.isfinite(logs["losses/value_loss"])
    assert learner.net.actions == 14
    assert len(seen) > 3  # the slots were redrawn
    run = tmp_path / "run"
    sets = ["mixture.slots=3", "mixture.redraw_every=1", "total_steps=1500", "eval.every=0"]
    config = tmp_path / "mix.yaml"
    import yaml

    config.write_text(yaml.safe_dump({**TINY, "penalty_scale": 30, "mixture": {"families": FAMILIES}}))
    assert main(["train", str(config), "--out", str(run), *[a for s in sets for a in ("--set", s)]]) == 0
    first = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert first["actions"] == 14
    assert main(["train", "--resume", str(run), "--set", "total_steps=3000"]) == 0
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["global_step"] >= 3000 > first["global_step"]


def test_per_table_normalization_gives_each_table_mean_0_and_std_1_and_keeps_the_returns() -> None:
    rng = np.random.default_rng(0)
    adv = np.concatenate([rng.normal(5.0, 10.0, 50), rng.normal(-0.1, 0.01, 50), [99.0]]).astype(np.float32)
    table = np.repeat([0, 1, 2], [50, 50, 1])
    idx = np.arange(100)  # the last row is not trainable: it stays as it was
    out = per_table_normalized(adv, idx, table)
    for g in (0, 1):
        rows = table[idx] == g
        assert abs(out[idx][rows].mean()) < 1e-4 and abs(out[idx][rows].std() - 1.0) < 1e-3
    assert out[100] == 99.0 and adv[0] != out[0]  # a copy: the returns are computed from the raw advantages


def test_a_mixture_run_records_each_transitions_table_and_trains_normalized_per_table() -> None:
    cfg = config_from_dict(
        {**TINY, "norm_adv_tables": True, "mixture": {"families": FAMILIES, "slots": 3, "redraw_every": 2}}
    )
    learner = PPOTrainer(cfg)
    learner.start_games()
    for _ in range(cfg.num_steps):
        for i, t in enumerate(learner.tables):
            before = learner.buf.n
            env_step(cfg, t, learner.net, learner.pool, learner.buf, learner.rng, learner.gen, Stats(), table=i)
            assert (learner.buf.table[before : learner.buf.n] == i).all()
        learner.buf.end_step()
    assert np.isfinite(learner.iterate()["losses/policy_loss"])
