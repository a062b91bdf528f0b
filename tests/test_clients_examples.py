"""The masked-training examples (examples/): Tianshou's DQN and RLlib's PPO train a few hundred steps on the AEC env.

Each trains with an action-masking model; the AEC env raises on an illegal card, so the
training itself played none, and then the trained model, asked for its card in positions of
random play (greedy, and RLlib's sampled one too), picks a legal card every time.
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
