"""The PPO trainer: reward credit, advantages, configs, checkpoints, resume, the CLI end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch")
pytest.importorskip("torch.utils.tensorboard")

from tiny_config import TINY  # noqa: E402

from agents.policy import CheckpointError, PolicyAgent, PolicyNet, load_checkpoint, masked_log_softmax  # noqa: E402
from agents.registry import AgentSpecError, make_agents  # noqa: E402
from agurk.cli import main  # noqa: E402
from agurk_env import engine, observation, state  # noqa: E402
from agurk_env.rules import CARDS, Rules  # noqa: E402
from training.config import Config, ConfigError, config_from_dict, load_config  # noqa: E402
from training.ppo import Games, PPOTrainer, Stats, advantages, env_step  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TWO_TRICKS = ("3 4", "2 2", "5 9", "6 K")  # seats 0..3
TWO_TRICKS_ORDER = [1, 2, 3, 0, 3, 0, 1, 2]  # who plays each card


def hands(rules: Rules, *cards: str) -> np.ndarray:
    """``(1, P, A)`` hand counts from one string of card names per seat (``"K 2"``)."""
    out = np.zeros((1, rules.players, rules.num_actions), np.int8)
    for seat, text in enumerate(cards):
        for name in text.split():
            out[0, seat, CARDS.index(name)] += 1
    return out


def rigged(
    rules: Rules, learner: list[bool], opponent: int, *cards: str, critic: str = "shared", oracle_steps: int = 0
) -> tuple[PPOTrainer, Games]:
    """A learner and a one-game table dealt ``cards`` (seat 0 deals, so seat 1 leads)."""
    game = {"preset": "standard", "rules": {"hand_size": rules.hand_size}}
    cfg = config_from_dict({**TINY, **game, "critic": critic, "oracle_steps": oracle_steps})
    lr = PPOTrainer(cfg)
    t = Games.new(rules, 1, seed=0)
    t.state = engine.set_hands(rules, t.state, hands(rules, *cards))
    t.learner[:] = learner
    t.opponent[:] = opponent
    return lr, t


TINY_LR = Config().learning_rate  # TINY keeps the default step size


def step_all(lr: PPOTrainer, t: Games, n: int, stats: Stats | None = None) -> None:
    for _ in range(n):
        env_step(lr.cfg, t, lr.net, lr.pool, lr.buf, lr.rng, lr.gen, stats or Stats(), lr.critic, lr.oracle)
        lr.buf.end_step()


# ----------------------------------------------------------------------------- reward credit


def test_round_penalty_reaches_the_seat_that_took_the_last_trick_not_the_last_to_act() -> None:
    # one card each; seat 1 leads the K, nobody can beat it: seat 1 takes the trick and scores
    # 13, although seat 0 played last.
    rules = Rules(hand_size=1)
    lr, t = rigged(rules, [True] * 4, -1, "4", "K", "2", "3")
    step_all(lr, t, 4)
    buf = lr.buf
    assert buf.n == 4
    seats = [1, 2, 3, 0]  # the order the transitions were stored in
    np.testing.assert_allclose(buf.reward[:4], [-13 / 30 if s == 1 else 0.0 for s in seats])
    assert buf.done[:4].all() and (buf.next[:4] == -1).all()
    assert (t.last == -1).all()


def test_rewards_accumulate_on_each_seats_latest_transition_and_chains_link() -> None:
    # nearest beat: every card is forced. Trick 1: seat 1 leads 2, seat 2 plays 5, seat 3 plays 6,
    # seat 0 cannot beat and plays 3; seat 3 takes it. Trick 2: seat 3 leads K, nobody beats it, seat 2
    # plays last. Seat 3 scores 13 on its second decision; each first decision links to the second.
    rules = Rules(hand_size=2, beat_choice="nearest")
    lr, t = rigged(rules, [True] * 4, -1, *TWO_TRICKS)
    step_all(lr, t, 8)
    buf = lr.buf
    assert buf.n == 8
    for seat in range(4):
        first, second = (i for i, s in enumerate(TWO_TRICKS_ORDER) if s == seat)
        assert buf.next[first] == second and not buf.done[first] and buf.reward[first] == 0
        assert buf.done[second] and buf.next[second] == -1
        assert buf.reward[second] == pytest.approx(-13 / 30 if seat == 3 else 0.0)
    idx, adv = advantages(buf, gamma=1.0, lam=1.0)
    assert idx.tolist() == list(range(8))
    returns = adv + buf.value[:8]
    np.testing.assert_allclose(returns, [-13 / 30 if s == 3 else 0.0 for s in TWO_TRICKS_ORDER], atol=1e-6)


def test_learner_seat_against_heuristics_gets_its_penalty_even_when_it_acted_first() -> None:
    # seat 1 (learner) leads its only card K; the heuristic seats cannot beat it.
    rules = Rules(hand_size=1)
    lr, t = rigged(rules, [False, True, False, False], 0, "4", "K", "2", "3")
    step_all(lr, t, 4)
    assert lr.buf.n == 1  # the opponents' decisions are not stored
    assert lr.buf.reward[0] == pytest.approx(-13 / 30) and lr.buf.done[0]


def test_match_episode_gives_placement_when_a_seat_goes_out() -> None:
    rules = Rules(hand_size=1)
    cfg = config_from_dict({**TINY, "episode": "match", "rules": {"hand_size": 1}})
    lr = PPOTrainer(cfg)
    t = Games.new(rules, 1, seed=0)
    scored = t.state._replace(scores=np.array([[0, 20, 0, 0]], np.int32))
    t.state = engine.set_hands(rules, scored, hands(rules, "4", "K", "2", "3"))
    step_all(lr, t, 4)
    # seat 1 reaches 33 >= 30 and goes out first of four: placement -1 on top of -13/30
    rewards = dict(zip([1, 2, 3, 0], lr.buf.reward[:4].tolist(), strict=True))
    assert rewards[1] == pytest.approx(-13 / 30 - 1.0)
    assert lr.buf.done[0] and not lr.buf.done[1:4].any()
    assert (t.last[0, [2, 3, 0]] >= 0).all() and t.last[0, 1] == -1


def test_unresolved_transitions_carry_into_the_next_rollout_with_their_reward() -> None:
    rules = Rules(hand_size=2, beat_choice="nearest")
    lr, t = rigged(rules, [True] * 4, -1, *TWO_TRICKS)
    step_all(lr, t, 6)  # stop in the middle of the last trick
    idx, _ = advantages(lr.buf, 1.0, 0.95)
    assert idx.tolist() == [2, 3]  # seats 3 and 0 have made their second decision, seats 1 and 2 not yet
    lr.buf.carry([t])
    assert lr.buf.n == 4  # the first decisions of seats 1, 2 and the second of seats 3, 0 wait
    step_all(lr, t, 2)
    assert t.state.round_no[0] == 1  # the round ended and the next one was dealt
    rewards = lr.buf.reward[: lr.buf.n]
    assert lr.buf.n == 6 and np.isclose(rewards, -13 / 30).sum() == 1
    assert rewards[2] == pytest.approx(-13 / 30)  # seat 3's carried second decision (renumbered 0, 1, 2, 3)
    idx, _ = advantages(lr.buf, 1.0, 0.95)
    assert idx.tolist() == list(range(6))  # everything is resolved now


def test_masked_log_softmax_gives_illegal_cards_zero_probability() -> None:
    logits = torch.tensor([[5.0, 1.0, 0.0], [0.0, 0.0, 9.0]])
    legal = torch.tensor([[False, True, True], [True, True, False]])
    p = masked_log_softmax(logits, legal).exp()
    assert p[0, 0] == 0 and p[1, 2] == 0
    torch.testing.assert_close(p.sum(1), torch.ones(2))


# ----------------------------------------------------------------------------- configs


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"total_step": 5}, "unknown config key 'total_step'"),
        ({"pool": {"selfplay": 1}}, "unknown config key 'pool.selfplay'"),
        ({"num_envs": 0}, "num_envs must be an integer >= 1"),
        ({"num_envs": "many"}, "num_envs must be an integer"),
        ({"episode": "game"}, "episode must be one of round, match"),
        ({"preset": "nope"}, "preset must be one of"),
        ({"rules": {"limit": 0}}, "rules: limit must be an integer"),
        ({"gamma": 1.5}, "gamma must be a number 0..1"),
        ({"anneal_lr": "maybe"}, "anneal_lr must be true or false"),
        ({"pool": {"agents": {"nobody": 1.0}}}, "pool.agents.nobody: unknown agent"),
        ({"eval": {"opponent": "nobody"}}, "eval.opponent: unknown agent"),
        ({"players": [4, 4]}, "players must not repeat"),
        ({"seed": -1}, "seed must be an integer >= 0"),
        ({"eval": {"seed": -1}}, "eval.seed must be an integer >= 0"),
        ({"hidden": [64, 0]}, "hidden must be a list of integers >= 1"),
        ({"pool": {"win_rate_decay": 1}}, r"pool.win_rate_decay must be a number in \[0, 1\)"),
        ({"critic": "oracle"}, "critic must be one of shared, full_info, not 'oracle'"),
        ({"algo": "sb3", "critic": "full_info"}, "critic must be shared with algo: sb3"),
        ({"algo": "expert", "oracle_steps": 10}, "^oracle_steps needs algo: ppo, not 'expert'$"),
        ({"oracle_steps": -1}, "oracle_steps must be an integer >= 0"),
        ({"oracle_lr_scale": 10}, "^oracle_lr_scale needs oracle_steps > 0$"),
        ({"algo": "fast"}, r"^algo must be one of ppo, sb3, expert, not 'fast' \('fast' is now 'ppo'\)$"),
        ({"init": ".", "algo": "sb3"}, "^init: algo sb3 starts from a fresh network"),
        ({"expert": {"init": "x"}}, "unknown config key 'expert.init'"),
        ({"ranks": "A"}, "^ranks, copies: the deck has 4 cards, fewer than players \\* hand_size = 28$"),
        ({"ranks": "1,Z"}, "^ranks, copies: ranks must be card names"),
        ({"copies": 5}, "copies must be an integer 1..4"),
        ({"algo": "expert", "ranks": "JQKA"}, "^ranks and copies need algo: ppo without mixture.families"),
    ],
)
def test_bad_configs_are_refused_in_one_line_naming_the_key(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        config_from_dict(data)
    assert "\n" not in str(err.value)


def test_set_overrides_and_every_shipped_config_loads() -> None:
    cfg = config_from_dict({}, ["pool.self_play=0.25", "hidden=[32, 32]", "players=[3, 4]"])
    assert cfg.pool.self_play == 0.25 and cfg.hidden == [32, 32] and [r.players for r in cfg.rule_sets()] == [3, 4]
    for path in sorted((REPO / "configs").glob("*.yaml")):
        if not path.name.startswith("sweep_"):  # sweep configs: tests/test_sweep.py
            load_config(path)
    with pytest.raises(ConfigError, match="--set needs KEY=VALUE"):
        config_from_dict({}, ["oops"])


# ----------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny run trained once through the CLI (a few seconds)."""
    folder = tmp_path_factory.mktemp("train")
    config = folder / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    out = folder / "run"
    assert main(["train", str(config), "--out", str(out), "-q"]) == 0
    return out


def test_cli_train_writes_the_run_folder(tiny_run: Path) -> None:
    for name in ("config.yaml", "eval.json", "checkpoints/latest.pt", "checkpoints/best.pt"):
        assert (tiny_run / name).is_file(), name
    assert list(tiny_run.glob("events.out.tfevents.*"))
    assert load_config(tiny_run / "config.yaml") == config_from_dict(TINY)
    ev = json.loads((tiny_run / "eval.json").read_text())
    assert ev["opponent"] == "heuristic" and ev["deals"] == 4
    assert 0 <= ev["results"][0]["win_rate"] <= 1 and ev["results"][0]["fair_share"] == 0.25
    assert load_checkpoint(tiny_run / "checkpoints" / "latest.pt")["global_step"] >= 1500


def test_a_ppo_run_starts_from_the_network_of_init(tiny_run: Path) -> None:
    """Issue 20: ``init`` starts a PPO run (a fine-tune) from another run's network; a misfit one is refused."""
    start = config_from_dict({**TINY, "init": str(tiny_run)})
    learner = PPOTrainer(start)
    trained = load_checkpoint(tiny_run)["model"]  # a run folder: its best.pt
    for name, tensor in learner.net.state_dict().items():
        torch.testing.assert_close(tensor, trained[name])
    fresh = PPOTrainer(config_from_dict(TINY)).net.state_dict()
    assert any(not torch.equal(fresh[n], t) for n, t in learner.net.state_dict().items())
    with pytest.raises(ConfigError, match=r"^init: the checkpoint's network .* does not fit the config"):
        PPOTrainer(config_from_dict({**TINY, "init": str(tiny_run), "hidden": [8, 8]}))


@pytest.mark.parametrize("hidden", [[16], [40], [40, 24], [16, 16, 32]])
def test_a_wider_network_from_init_plays_exactly_as_the_checkpoint(tiny_run: Path, hidden: list[int]) -> None:
    """``init`` with a wider or deeper ``hidden`` widens the network (Net2Net): the same logits and values."""
    small = PolicyAgent.from_path(tiny_run).net
    learner = PPOTrainer(config_from_dict({**TINY, "init": str(tiny_run), "hidden": hidden}))
    assert learner.net.hidden == hidden
    x = torch.rand(256, observation.SIZE, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        (la, va), (lb, vb) = small(x), learner.net(x)
    torch.testing.assert_close(lb, la, atol=1e-5, rtol=0)
    torch.testing.assert_close(vb, va, atol=1e-5, rtol=0)
    new_units = learner.net.trunk.net[0].weight[16:] if hidden[0] > 16 else None
    assert new_units is None or new_units.abs().sum() > 0  # the new units are not dead: they read the input


@pytest.mark.parametrize("hidden", [[8], [16, 8], [40, 8]])
def test_a_narrower_network_from_init_is_refused(tiny_run: Path, hidden: list[int]) -> None:
    with pytest.raises(ConfigError, match=r"^init: .* hidden may be as wide or wider, as deep or deeper\)$"):
        PPOTrainer(config_from_dict({**TINY, "init": str(tiny_run), "hidden": hidden}))


def test_a_resumed_run_does_not_read_init_again(tiny_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``init`` starts a fresh run only: a resume loads the run's own checkpoint, even with the init file gone."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    gone = tmp_path / "gone.pt"
    assert main(["train", "--resume", str(run), "--set", f"init={gone}", "--set", "total_steps=3000", "-q"]) == 0
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["global_step"] >= 3000
    # a fresh run refuses it in one line, before its folder is made
    fresh = tmp_path / "fresh"
    assert main(["train", str(run / "config.yaml"), "--out", str(fresh), "--set", f"init={gone}", "-q"]) == 2
    assert f"init: no checkpoint or run folder '{gone}'" in capsys.readouterr().err
    assert not fresh.exists()


def test_a_run_carries_its_training_time_through_a_resume_and_into_the_zoo(tiny_run: Path, tmp_path: Path) -> None:
    """Every checkpoint records the run's training and wall seconds; a resume counts on; an export keeps them."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    before = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert 0 < before["train_seconds"] <= before["wall_seconds"]
    assert main(["train", "--resume", str(run), "--set", "total_steps=3000", "-q"]) == 0
    after = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert after["train_seconds"] > before["train_seconds"] and after["wall_seconds"] > before["wall_seconds"]
    out = tmp_path / "mine.pt"
    assert main(["zoo", "export", str(run / "checkpoints" / "latest.pt"), "--name", "mine", "--out", str(out)]) == 0
    exported = load_checkpoint(out)
    assert exported["train_seconds"] == after["train_seconds"]
    # the run's evaluation at the checkpoint's step travels with it (the run's last one, at the end)
    last = json.loads((run / "eval.json").read_text())
    assert last["step"] == after["global_step"] and exported["strength"]["win_rate"] == last["win_rate"]


def test_checkpoint_round_trip_gives_the_same_greedy_policy(tiny_run: Path) -> None:
    data = load_checkpoint(tiny_run / "checkpoints" / "latest.pt")
    agent = PolicyAgent.from_path(tiny_run / "checkpoints" / "latest.pt")
    net = PolicyNet(observation.SIZE, 13, [16])
    net.load_state_dict(data["model"])
    rules = Rules()
    st = engine.init(rules, 64, seed=3)
    legal = engine.legal_mask(rules, st)
    obs = observation.observe(rules, st)
    logits, _ = net(torch.from_numpy(obs))
    greedy = masked_log_softmax(logits, torch.from_numpy(legal)).argmax(1).numpy()
    np.testing.assert_array_equal(agent.act_obs(obs, legal), greedy)
    assert legal[np.arange(64), greedy].all()
    # a run folder names its best checkpoint; ';sample' draws from the policy
    assert make_agents(f"ppo:{tiny_run}", 4, 0)[0].greedy
    assert not make_agents(f"ppo:{tiny_run};sample", 4, 0)[0].greedy


def test_resume_continues_from_the_saved_step(tiny_run: Path, tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    before = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert main(["train", "--resume", str(run), "--set", "total_steps=3000", "-q"]) == 0
    after = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert after["update"] > before["update"] and after["global_step"] >= 3000
    # the first update after the resume starts from the saved step: the logged steps continue it
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps = set()
    for events in run.glob("events.out.tfevents.*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        steps |= {e.step for e in acc.Scalars("charts/SPS")}
    assert min(s for s in steps if s > before["global_step"]) - before["global_step"] < 400
    assert yaml.safe_load((run / "config.yaml").read_text())["total_steps"] == 3000


def test_ctrl_c_saves_a_checkpoint_that_resume_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from training import ppo

    calls = {"n": 0}
    iterate = ppo.PPOTrainer.iterate

    def interrupted(self: ppo.PPOTrainer) -> dict:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return iterate(self)

    monkeypatch.setattr(ppo.PPOTrainer, "iterate", interrupted)
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "total_steps": 100_000}))
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "-q"]) == 130
    assert "agurk train --resume" in capsys.readouterr().err
    saved = load_checkpoint(out / "checkpoints" / "latest.pt")
    assert saved["update"] == 2
    monkeypatch.setattr(ppo.PPOTrainer, "iterate", iterate)
    assert main(["train", "--resume", str(out), "--set", "total_steps=2000", "-q"]) == 0
    assert load_checkpoint(out / "checkpoints" / "latest.pt")["update"] > 2


def test_checkpoint_plays_in_simulate_the_aec_env_and_sb3_vec_env(tiny_run: Path, tmp_path: Path) -> None:
    import agurk_env

    best = tiny_run / "checkpoints" / "best.pt"
    records = tmp_path / "sim.jsonl"
    agents = f"ppo:{best},heuristic,random,guard"
    assert main(["simulate", "--agents", agents, "--matches", "3", "--out", str(records), "-q"]) == 0
    assert len(records.read_text().splitlines()) == 3

    agent = PolicyAgent.from_path(best)
    env = agurk_env.env(rules="standard", episode="round")
    env.reset(seed=1)
    plays = 0
    for _ in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        action = None
        if not (termination or truncation):
            action = agent.act_obs(obs["observation"], obs["action_mask"])  # unbatched, as docs/agents.md shows
            assert isinstance(action, int) and obs["action_mask"][action]
            assert action == int(agent.act_obs(obs["observation"][None], obs["action_mask"][None].astype(bool))[0])
            plays += 1
        env.step(action)
    assert plays == 28

    venv = agurk_env.sb3_vec_env(8, rules="standard", opponents=make_agents(f"ppo:{best}", 3, 0))
    venv.seed(0)
    venv.reset()
    _, rewards, _, _ = venv.step(venv.action_masks().argmax(1))
    assert rewards.shape == (8,)


def test_sb3_route_trains_checkpoints_and_resumes(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    config = tmp_path / "sb3.yaml"
    sb3 = {**TINY, "algo": "sb3", "sb3_n_steps": 16, "total_steps": 1024, "pool": {"agents": {"heuristic": 1.0}}}
    config.write_text(yaml.safe_dump(sb3))
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "-q"]) == 0
    assert (out / "checkpoints" / "latest.sb3.zip").is_file() and (out / "eval.json").is_file()
    saved = load_checkpoint(out / "checkpoints" / "latest.pt")
    assert saved["algo"] == "sb3" and saved["global_step"] == 1024
    assert make_agents(f"ppo:{out / 'checkpoints' / 'best.pt'},heuristic,heuristic,heuristic", 4, 0)[0].greedy
    assert main(["train", "--resume", str(out), "--set", "total_steps=2048", "-q"]) == 0
    assert load_checkpoint(out / "checkpoints" / "latest.pt")["global_step"] == 2048


def test_corrupt_missing_and_mismatched_checkpoints_give_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="is a text file, not a checkpoint written by agurk train"):
        load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")
    with pytest.raises(AgentSpecError, match="not a checkpoint written by agurk train"):
        make_agents(f"ppo:{bad}", 4, 0)
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "latest.pt").write_bytes(b"\x00" * 64)
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    assert main(["train", str(config), "--resume", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("agurk: error: ") and "is not a checkpoint written by agurk train" in err and "\n" not in err
    # a real checkpoint whose network does not match the config
    from training.ppo import PPOTrainer

    PPOTrainer(config_from_dict(TINY)).save(run / "checkpoints" / "latest.pt", 0.0)
    assert main(["train", str(config), "--resume", str(run), "--set", "hidden=[8]"]) == 2
    err = capsys.readouterr().err.strip()
    assert "the config does not match the run: network" in err and "\n" not in err
    assert main(["train", str(config), "--resume", str(run), "--set", "algo=sb3"]) == 2
    assert "was trained with algo 'ppo'" in capsys.readouterr().err
    assert main(["train", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read config" in capsys.readouterr().err
    assert main(["train", str(config), "--set", "pool.agents={nobody: 1}"]) == 2
    assert capsys.readouterr().err.startswith("agurk: error: pool.agents.nobody: unknown agent")


# ----------------------------------------------------------------------------- the full-information critic


def test_full_info_critic_sees_every_hand_and_the_actor_only_the_observation() -> None:
    # seat 1 leads; seats 2 and 3 swap a card: the state differs, seat 1's observation does not
    rules = Rules(hand_size=2)
    deals = [("3 4", "2 9", "5 K", "6 Q"), ("3 4", "2 9", "5 Q", "6 K")]
    states = [engine.set_hands(rules, engine.init(rules, 1, 0), hands(rules, *cards)) for cards in deals]
    obs = [observation.observe(rules, st) for st in states]
    assert np.array_equal(*obs) and not np.array_equal(*(state.state_vector(rules, st) for st in states))
    lr, t = rigged(rules, [True] * 4, -1, *deals[0], critic="full_info")
    assert lr.critic is not None and lr.critic.trunk.net[0].in_features == state.SIZE
    assert lr.net.obs_size == lr.net.trunk.net[0].in_features == observation.SIZE
    for layer in (lr.net.trunk.net[0], lr.critic.trunk.net[0], lr.net.actor):
        torch.nn.init.normal_(layer.weight)  # every input moves the outputs at once, not only after training
    actor_calls: list[tuple[torch.Tensor, torch.Tensor]] = []
    lr.net.register_forward_hook(lambda net, inputs, out: actor_calls.append((inputs[0].clone(), out[0].clone())))
    rows = []
    for st in states:
        t.state = st
        lr.gen.manual_seed(7)
        step_all(lr, t, 1)
        rows.append(lr.buf.n - 1)
    buf, (a, b) = lr.buf, rows
    for i, st in zip(rows, states, strict=True):  # the critic's input: the state vector in the mover's seats
        np.testing.assert_array_equal(buf.inputs[i], state.state_vector(rules, st, st.cur)[0])
    (seen_a, logits_a), (seen_b, logits_b) = actor_calls
    for seen in (seen_a, seen_b):
        np.testing.assert_array_equal(seen.numpy(), obs[0])  # the actor's input: the observation only
    torch.testing.assert_close(logits_a, logits_b, rtol=0, atol=0)  # same observation, same policy
    assert buf.logprob[a] == buf.logprob[b] and buf.action[a] == buf.action[b]
    assert buf.value[a] != buf.value[b]  # the critic sees the hidden hands


# ----------------------------------------------------------------------------- oracle guiding


def test_the_oracle_shows_the_actor_the_hidden_hands_only_while_it_fades() -> None:
    # seat 1 leads; seats 2 and 3 swap a card: seat 1's observation is the same, the hidden hands are not
    rules = Rules(hand_size=2)
    deals = [("3 4", "2 9", "5 K", "6 Q"), ("3 4", "2 9", "5 Q", "6 K")]
    states = [engine.set_hands(rules, engine.init(rules, 1, 0), hands(rules, *cards)) for cards in deals]
    lr, t = rigged(rules, [True] * 4, -1, *deals[0], oracle_steps=1000)
    assert lr.oracle is not None and lr.buf.full_info and not lr.oracle.hands.weight.any()  # starts as the policy

    def logits_of(st: engine.State, keep: float) -> tuple[torch.Tensor, int]:
        t.state, lr.oracle.keep = st, keep
        step_all(lr, t, 1)
        i = lr.buf.n - 1
        x = torch.from_numpy(lr.buf.inputs[i : i + 1])
        out = lr.oracle(lr.net, x, torch.from_numpy(lr.buf.shown[i : i + 1]))[0]
        logp = masked_log_softmax(out, torch.from_numpy(lr.buf.mask[i : i + 1]))[0, lr.buf.action[i]]
        assert logp.item() == pytest.approx(lr.buf.logprob[i], abs=1e-6)  # the update sees what the rollout saw
        return out, i

    plain = lr.net(torch.from_numpy(observation.observe(rules, states[0])))[0]
    torch.testing.assert_close(logits_of(states[0], 1.0)[0], plain)  # zero weights: the policy network alone
    torch.nn.init.normal_(lr.oracle.hands.weight)
    torch.nn.init.normal_(lr.net.actor.weight)
    shown = [logits_of(st, 1.0) for st in states]
    assert lr.buf.shown[[i for _, i in shown]].all()
    assert not torch.allclose(shown[0][0], shown[1][0])  # every hidden card shown: the hands move the policy
    faded = [logits_of(st, 0.0) for st in states]
    assert not lr.buf.shown[[i for _, i in faded]].any()
    torch.testing.assert_close(faded[0][0], faded[1][0], rtol=0, atol=0)  # none shown: the observation alone
    torch.testing.assert_close(faded[0][0], lr.net(torch.from_numpy(observation.observe(rules, states[0])))[0])


def test_an_oracle_run_fades_keeps_its_oracle_for_resume_and_saves_the_policy_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "oracle_steps": 700}))
    run = tmp_path / "run"
    assert main(["train", str(config), "--out", str(run), "-q"]) == 0
    data = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert data["model"]["trunk.net.0.weight"].shape == (16, observation.SIZE)  # what ppo:PATH plays
    assert data["oracle"]["hands.weight"].shape == (16, state.OTHER_HANDS.size) and data["oracle"]["hands.weight"].any()
    lr = PPOTrainer(config_from_dict({**TINY, "oracle_steps": 700}), resume=data)
    lr.start_games()
    lr.iterate()
    assert lr.oracle is not None and lr.oracle.keep == 0.0 and not lr.buf.shown[: lr.buf.n].any()
    assert main(["train", str(config), "--resume", str(run), "--set", "oracle_steps=0", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "oracle_steps: the run was trained with an oracle, the config says oracle_steps: 0" in err, err


def test_oracle_lr_scale_multiplies_the_oracle_inputs_annealed_step_size() -> None:
    moved = []
    for scale in (1.0, 10.0):
        lr = PPOTrainer(config_from_dict({**TINY, "oracle_steps": 1500, "oracle_lr_scale": scale}))
        assert [g["lr"] for g in lr.opt.param_groups] == [TINY_LR, scale * TINY_LR]
        lr.global_step = TINY["total_steps"] // 2
        lr.start_games()
        lr.iterate()
        assert [g["lr"] for g in lr.opt.param_groups] == [TINY_LR / 2, scale * TINY_LR / 2]
        assert lr.oracle is not None
        moved.append(lr.oracle.hands.weight.abs().sum().item())
    assert moved[1] > 5 * moved[0] > 0  # Adam's first steps scale with the step size


@pytest.fixture(scope="module")
def full_info_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny ``critic: full_info`` run trained once through the CLI (a few seconds)."""
    folder = tmp_path_factory.mktemp("full_info")
    config = folder / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "critic": "full_info"}))
    out = folder / "run"
    assert main(["train", str(config), "--out", str(out), "-q"]) == 0
    return out


def test_a_full_info_run_trains_and_its_checkpoint_plays_as_ppo_path(full_info_run: Path, tmp_path: Path) -> None:
    import shutil

    latest = full_info_run / "checkpoints" / "latest.pt"
    data = load_checkpoint(latest)
    assert data["config"]["critic"] == "full_info" and data["global_step"] >= 1500
    assert data["state_critic"]["trunk.net.0.weight"].shape == (16, state.SIZE)  # kept for --resume
    assert data["model"]["trunk.net.0.weight"].shape == (16, observation.SIZE)  # the actor's network
    assert make_agents(f"ppo:{full_info_run},heuristic,heuristic,heuristic", 4, 0)[0].greedy
    agents = f"ppo:{latest},guard,guard,guard"
    assert (
        main(
            ["evaluate", "--agents", agents, "--matches", "4", "--seed", "1", "-q", "--json", str(tmp_path / "e.json")]
        )
        == 0
    )
    assert json.loads((tmp_path / "e.json").read_text())["entries"][0]["spec"].startswith("ppo:")
    # --resume restores the critic and goes on training it
    run = tmp_path / "run"
    shutil.copytree(full_info_run, run)
    assert main(["train", "--resume", str(run), "--set", "total_steps=3000", "-q"]) == 0
    after = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert after["global_step"] >= 3000
    assert not torch.equal(after["state_critic"]["value.weight"], data["state_critic"]["value.weight"])


def test_resume_with_another_critic_is_refused_in_one_line(
    full_info_run: Path, tiny_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    for run, sets, message in (
        (full_info_run, [], "critic: the run was trained with critic 'full_info', the config says 'shared'"),
        (
            tiny_run,
            ["--set", "critic=full_info"],
            "critic: the run was trained with critic 'shared', the config says 'full_info'",
        ),
    ):
        for force in ([], ["--force"]):
            assert main(["train", str(config), "--resume", str(run), *sets, *force, "-q"]) == 2
            err = capsys.readouterr().err.strip()
            assert err.startswith("agurk: error: ") and message in err and "\n" not in err, err


def test_a_checkpoint_from_before_the_critic_key_still_plays_and_resumes(tiny_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "old"
    (run / "checkpoints").mkdir(parents=True)
    data = load_checkpoint(tiny_run / "checkpoints" / "latest.pt")
    del data["config"]["critic"]  # written before the key existed: a shared critic, no state_critic
    assert "state_critic" not in data
    torch.save(data, run / "checkpoints" / "latest.pt")
    (run / "config.yaml").write_text(yaml.safe_dump(data["config"]))
    agent = PolicyAgent.from_path(run / "checkpoints" / "latest.pt")
    rules = Rules()
    st = engine.init(rules, 8, seed=1)
    legal = engine.legal_mask(rules, st)
    assert legal[np.arange(8), agent.act_obs(observation.observe(rules, st), legal)].all()
    trainer = PPOTrainer(config_from_dict(data["config"]), resume=data)
    assert trainer.critic is None and trainer.global_step == data["global_step"]
    assert main(["train", "--resume", str(run), "--set", "total_steps=2000", "-q"]) == 0
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["global_step"] >= 2000


def test_a_run_from_before_algo_ppo_reads_as_ppo_and_resumes_with_it(
    tiny_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "old"
    (run / "checkpoints").mkdir(parents=True)
    data = load_checkpoint(tiny_run / "checkpoints" / "latest.pt")
    data["algo"] = data["config"]["algo"] = "fast"  # the PPO trainer's name before algo: ppo
    torch.save(data, run / "checkpoints" / "latest.pt")
    (run / "config.yaml").write_text(yaml.safe_dump(data["config"]))
    old = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert old["algo"] == old["config"]["algo"] == "ppo"
    assert main(["train", "--resume", str(run), "--set", "total_steps=2000", "-q"]) == 2  # its config.yaml: fast
    err = capsys.readouterr().err.strip()
    assert err == "agurk: error: algo must be one of ppo, sb3, expert, not 'fast' ('fast' is now 'ppo')", err
    assert main(["train", "--resume", str(run), "--set", "algo=ppo", "--set", "total_steps=2000", "-q"]) == 0
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["global_step"] >= 2000
    assert yaml.safe_load((run / "config.yaml").read_text())["algo"] == "ppo"  # once: the folder now says ppo


@pytest.mark.slow
def test_a_short_run_beats_random_players(tmp_path: Path) -> None:
    config = tmp_path / "short.yaml"
    short = {"total_steps": 600_000, "num_envs": 512, "eval": {"every": 0, "final_deals": 300, "opponent": "random"}}
    config.write_text(yaml.safe_dump(short))
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out), "-q"]) == 0
    low = json.loads((out / "eval.json").read_text())["results"][0]["win_rate_ci"][0]
    assert low > 0.3


def test_every_config_key_is_documented() -> None:
    import dataclasses
    import importlib.util

    from agurk_env.options import declared
    from training.config import Config

    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = hooks.config_reference()  # what the site's generated page docs/reference/config.md shows

    def keys(cls: type, prefix: str = "") -> list[tuple[str, str]]:
        out = []
        for name, option in declared(cls).items():
            if dataclasses.is_dataclass(option.type):
                out += keys(option.type, f"{name}.")
            else:
                out.append((prefix + name, option.doc))
        return out

    undocumented = [key for key, doc in keys(Config) if not doc]
    assert not undocumented, f"config keys without a docstring: {undocumented}"
    missing = [key for key, doc in keys(Config) if f"| `{key}` |" not in page]
    assert not missing, f"docs/reference/config.md does not list {missing}"
    assert "<!-- generated: config -->" in (REPO / "docs" / "reference" / "config.md").read_text()


def test_bench_train_uses_the_packaged_quickstart_settings() -> None:
    from agurk.bench.train import bench_config
    from training.config import load_config, packaged_config

    quickstart = load_config(packaged_config("quickstart.yaml"))
    cfg = bench_config(1, 3, pool={"self_play": 1.0, "snapshots": 0.0, "agents": {}})
    for key in ("num_envs", "num_steps", "hidden", "update_epochs", "minibatch_size", "learning_rate", "ent_coef"):
        assert getattr(cfg, key) == getattr(quickstart, key), key
    assert (cfg.seed, cfg.time_limit, cfg.eval.every, cfg.sb3_n_steps) == (3, 0, 0, quickstart.num_steps)
    assert cfg.pool.self_play == 1.0 and cfg.pool.agents == {}


def test_the_network_clock_leaves_training_unchanged_and_its_flops_match_the_plain_multiplies() -> None:
    from agurk.bench.network import NetworkClock, profile

    cfg = config_from_dict({**TINY, "hidden": [16, 16], "pool": {"self_play": 1.0, "snapshots": 0.0, "agents": {}}})
    plain = PPOTrainer(cfg)  # each trainer seeds torch's global generator, which its updates draw from
    plain.start_games()
    for _ in range(2):
        plain.iterate()
    clocked = PPOTrainer(cfg)
    clocked.start_games()
    clock = NetworkClock(clocked)
    for _ in range(2):
        clock.update()
    assert clocked.global_step == plain.global_step > 0
    for key, value in plain.net.state_dict().items():
        assert torch.equal(value, clocked.net.state_dict()[key]), key
    assert str(plain.opt.state_dict()) == str(clocked.opt.state_dict())
    assert not clocked.net._forward_hooks and not clocked.opt._optimizer_step_pre_hooks  # removed after each update
    assert sum(n for (_, trained), n in clock.batches.items() if not trained) == 2 * cfg.num_steps  # one per step
    assert any(trained for _, trained in clock.batches)

    p = profile(clock)
    assert p["updates"] == 2 and p["threads"] == torch.get_num_threads()
    assert p["collect_s"] + p["train_s"] == pytest.approx(p["seconds"])
    assert 0 < p["forward_collect_s"] < p["collect_s"]
    assert 0 < p["forward_train_s"] + p["backward_s"] + p["optimizer_s"] < p["train_s"]
    assert 0 < p["share"] <= 1
    for batch in p["batches"]:  # the plain multiplies are the network's: FlopCounterMode counts the same
        assert batch["flops"] == batch["matmul_flops"] > 0
    forward = 2 * (observation.SIZE * 16 + 16 * 16 + 16 * cfg.actions() + 16)  # per row
    rollout = next(b for b in p["batches"] if not b["backward"])
    assert rollout["flops"] == forward * rollout["rows"]
    trained = next(b for b in p["batches"] if b["backward"])  # backward: weight gradients, input gradients past layer 1
    assert trained["flops"] == (3 * forward - 2 * observation.SIZE * 16) * trained["rows"]
    assert p["flop_per_s"] == pytest.approx(p["flops"] / p["network_s"])
    assert p["matmul_flop_per_s"] == pytest.approx(p["flops"] / p["matmul_seconds"])


def test_bench_train_reports_the_network_share_and_its_flop_rate() -> None:
    from agurk.bench.benches import TrainBench

    options = TrainBench(seconds=0.1)
    result = options.measure()
    p = result["network_profile"]
    assert p["updates"] >= 2 and result["ppo"]["updates"] >= 2
    assert result["network_share"] == p["share"] and 0 < p["share"] <= 1
    assert 0 < p["network_s"] < p["seconds"] and p["collect_s"] > p["forward_collect_s"] > 0
    # the network's rate is of the order of its plain multiplies' (measured 80-86%; timing noise on a busy machine)
    assert 0 < result["network_flop_per_s"] < 2 * result["matmul_flop_per_s"]
    assert result["matmul_fraction"] == pytest.approx(result["network_flop_per_s"] / result["matmul_flop_per_s"])
    assert {b["rows"] for b in p["batches"] if not b["backward"]} == {1024}  # every game's mover is the learner
    assert max(b["rows"] for b in p["batches"] if b["backward"]) == 4096  # the quickstart's minibatch
    assert all(b["flops"] == b["matmul_flops"] for b in p["batches"])
    assert p["threads"] == result["threads"] == 1
    lines = options.lines(result)
    assert lines[0].startswith("network    MLP") and lines[-4].startswith("network share")
    assert "of the machine's matrix-multiply rate for these shapes" in lines[-2]
