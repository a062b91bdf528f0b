"""The masked-training examples (examples/): Tianshou's DQN and RLlib's PPO train a few hundred steps on the AEC env.

Each trains with an action-masking model; the AEC env raises on an illegal card, so the
training itself played none, and then the trained model, asked for its card in positions of
random play (greedy, and RLlib's sampled one too), picks a legal card every time.

TorchRL's PPO and RLlib's PPO on the new API stack train one seat against random seats on the
single-learner env (made to raise on an illegal card too): each example's ``main`` runs with a
tiny budget, trains the iterations asked for, and plays the greedy policy and a random learner
against random seats; then the trained policy is asked for its card in the same positions.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import agurk_env

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(module)
    return module


def _positions(rules: str, n: int, seed: int = 7) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(observation, mask)`` of ``n`` turns of random legal play (round episodes, a new deal at each end)."""
    env = agurk_env.env(rules, episode="round")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    while len(out) < n:
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            mask = obs["action_mask"].astype(bool)
            out.append((obs["observation"], mask))
            env.step(int(rng.choice(np.flatnonzero(mask))))
        env.reset()
    return out


def test_tianshou_masked_dqn_never_picks_an_illegal_card() -> None:
    pytest.importorskip("tianshou")
    example = _example("tianshou_masked_dqn")
    _, policy = example.train(example.Args(steps=300, collect=50, batch=32))
    for observation, mask in _positions("standard", 300):
        assert mask[example.greedy_card(policy, observation, mask)]
    mean, illegal = example.play_against_random(policy, "standard", 10, 1)
    assert illegal == 0 and -1.0 <= mean <= 0.0


def test_rllib_masked_ppo_builds_trains_and_never_picks_an_illegal_card() -> None:
    pytest.importorskip("ray.rllib")
    import ray
    import torch
    from ray.rllib.core.columns import Columns

    example = _example("rllib_masked_ppo")
    algo = example.config(batch=256, seed=0).build_algo()
    try:
        result: dict[str, Any] = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 256
        module = algo.get_module(example.MODULE)
        positions = _positions("standard", 300)
        obs = torch.as_tensor(np.stack([o for o, _ in positions]))
        mask = torch.as_tensor(np.stack([m for _, m in positions]).astype(np.int8))
        with torch.no_grad():
            logits = module.forward_inference({Columns.OBS: {"observation": obs, "action_mask": mask}})[
                Columns.ACTION_DIST_INPUTS
            ]
            drawn = torch.distributions.Categorical(logits=logits).sample((20,))
        legal = mask.bool()
        assert legal[torch.arange(len(positions)), logits.argmax(-1)].all()
        assert legal.gather(1, drawn.T).all()
    finally:
        algo.stop()
        ray.shutdown()


def test_torchrl_masked_ppo_trains_never_picks_an_illegal_card_and_plays_random(capsys) -> None:
    pytest.importorskip("torchrl")
    import torch
    from tensordict import TensorDict
    from torchrl.envs import ExplorationType, set_exploration_type

    example = _example("torchrl_masked_ppo")
    argv = ["--frames", "600", "--batch", "300", "--minibatch", "100", "--epochs", "2", "--eval-rounds", "20"]
    threads = torch.get_num_threads()
    try:
        outcome = example.main(argv)
    finally:
        torch.set_num_threads(threads)  # main() sets one thread for the process
    result = outcome.result
    assert (result.iterations, result.frames, result.illegal) == (2, 600, 0)
    assert result.rounds > 0 and len(result.returns) == 2
    for name in ("greedy PPO", "random"):
        mean, lost, illegal = outcome.scores[name]
        assert illegal == 0 and -1.0 <= mean <= 0.0 and 0.0 <= lost <= 1.0
    printed = capsys.readouterr().out
    assert "trained 2 iterations, 600 frames" in printed and "0 illegal steps" in printed
    assert "greedy PPO learner vs random seats: mean round reward" in printed
    positions = _positions("standard", 300)
    td = TensorDict(
        {
            "observation": torch.as_tensor(np.stack([o for o, _ in positions])),
            "action_mask": torch.as_tensor(np.stack([m for _, m in positions])),
        },
        batch_size=[len(positions)],
    )
    legal = td["action_mask"]
    rows = torch.arange(len(positions))
    with torch.no_grad():
        with set_exploration_type(ExplorationType.DETERMINISTIC):
            assert legal[rows, outcome.actor(td.clone())["action"]].all()
        for _ in range(20):
            with set_exploration_type(ExplorationType.RANDOM):
                assert legal[rows, outcome.actor(td.clone())["action"]].all()


def test_rllib_new_api_masked_ppo_trains_never_picks_an_illegal_card_and_plays_random(capsys) -> None:
    pytest.importorskip("ray.rllib")
    import ray
    import torch
    from ray.rllib.core.columns import Columns

    example = _example("rllib_new_api_masked_ppo")
    assert example.config(batch=64).enable_rl_module_and_learner
    assert example.config(batch=64).enable_env_runner_and_connector_v2
    threads = torch.get_num_threads()
    try:
        outcome = example.main(["--iterations", "2", "--batch", "256", "--minibatch", "128", "--eval-rounds", "20"])
    finally:
        ray.shutdown()
        torch.set_num_threads(threads)  # main() sets one thread for the process
    assert outcome.iterations == 2 and outcome.env_steps >= 2 * 256 and len(outcome.returns) == 2
    for name in ("greedy PPO", "random"):  # the env raises on an illegal card: these rounds played none
        mean, lost = outcome.scores[name]
        assert -1.0 <= mean <= 0.0 and 0.0 <= lost <= 1.0
    printed = capsys.readouterr().out
    assert "trained 2 iterations" in printed and "greedy PPO learner vs random seats: mean round reward" in printed
    positions = _positions("standard", 300)
    obs = np.stack([o for o, _ in positions])
    mask = np.stack([m for _, m in positions])
    assert mask[np.arange(len(positions)), example.greedy_cards(outcome.module, obs, mask)].all()
    batch = {
        Columns.OBS: {
            "observations": torch.as_tensor(obs),
            "action_mask": torch.as_tensor(mask.astype(np.float32)),
        }
    }
    with torch.no_grad():
        logits = outcome.module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        drawn = torch.distributions.Categorical(logits=logits).sample((20,))
    assert torch.as_tensor(mask).gather(1, drawn.T).all()
