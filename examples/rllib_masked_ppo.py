"""Masked self-play PPO with RLlib over the PettingZoo AEC env: one action-masking RLModule shared by every seat.

``PPOConfig().environment(...).build_algo()`` fails on the AEC env as it comes: RLlib's env
check plays random, unmasked actions (the env raises on an illegal card), and RLlib's default
module has no encoder for the ``Dict`` observation ``{"observation", "action_mask"}``. Two
settings fix both: ``disable_env_checking=True``, and :class:`MaskedPPOModule`, PPO's default
torch module on the ``"observation"`` vector whose card logits get ``log(mask)`` added
(``-inf`` for every illegal card, clamped to RLlib's ``FLOAT_MIN``), so it never samples an
illegal card, in exploration or greedy. Every seat maps to the one module (parameter sharing).

Run ``python examples/rllib_masked_ppo.py --iterations 20`` (the test runs one iteration of
a few hundred steps, on a local Ray instance with no env-runner processes).
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env

import agurk_env

ENV = "agurk_aec"
"""The name the env is registered under with Ray Tune."""
MODULE = "shared"
"""The one module every seat plays."""


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """PPO's default torch module on the ``"observation"`` vector; illegal cards' logits pushed to ``FLOAT_MIN``."""

    def __init__(self, *, observation_space: gymnasium.spaces.Dict, **kwargs: Any) -> None:
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observation"], **kwargs)

    def setup(self) -> None:
        """Build the default encoder and heads for the observation vector, then report the ``Dict`` space."""
        super().setup()
        self.observation_space = self.observation_space_with_mask

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = _split(batch)
        return _masked(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = _split(batch)
        return _masked(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = _split(batch)
        return _masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        """The value of each observation vector (the mask plays no part)."""
        _, batch = _split(batch)
        return super().compute_values(batch, embeddings)


def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The mask, and the batch with the observation vector in place of the ``Dict`` observation."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict):  # already split
        return batch["action_mask"], batch
    return obs["action_mask"], {**batch, Columns.OBS: obs["observation"], "action_mask": obs["action_mask"]}


def _masked(out: dict[str, Any], mask: Any) -> dict[str, Any]:
    """Add ``log(mask)`` (clamped) to the card logits: an illegal card is never drawn."""
    out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(
        torch.log(mask.float()), min=FLOAT_MIN
    )
    return out


MODULE_SPEC = RLModuleSpec(module_class=MaskedPPOModule, model_config={"fcnet_hiddens": [64, 64]})
"""The shared module: two hidden layers of 64 on the observation vector."""


def make_env(config: dict[str, Any]) -> PettingZooEnv:
    """The AEC env (round episodes) as RLlib's multi-agent env."""
    return PettingZooEnv(agurk_env.env(config.get("rules", "standard"), episode="round"))


def config(rules: str = "standard", batch: int = 512, seed: int = 0) -> PPOConfig:
    """PPO on the masked module, every seat mapped to it, sampling in the driver process."""
    register_env(ENV, make_env)
    return (
        PPOConfig()
        .environment(ENV, env_config={"rules": rules}, disable_env_checking=True)
        .multi_agent(policies={MODULE}, policy_mapping_fn=lambda agent_id, episode, **kw: MODULE)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE: MODULE_SPEC}))
        .env_runners(num_env_runners=0)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=batch, minibatch_size=min(128, batch), num_epochs=2, lr=3e-4)
        .debugging(seed=seed)
    )


def main() -> None:
    """Train for ``--iterations`` and print each iteration's mean episode return of the shared module."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    algo = config(args.rules, seed=args.seed).build_algo()
    for i in range(args.iterations):
        result = algo.train()
        print(i, result["env_runners"].get("episode_return_mean"))
    algo.stop()


if __name__ == "__main__":
    main()
