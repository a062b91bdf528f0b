"""Masked PPO with RLlib's new API stack on the single-learner gymnasium env: one seat learns against random seats.

RLlib's new API stack (``RLModule`` and ``Learner``, ``EnvRunner`` and connectors v2) is
switched on explicitly with ``config.api_stack(enable_rl_module_and_learner=True,
enable_env_runner_and_connector_v2=True)`` (the default of ray 2.60). The env is
``agurk_env.single_agent_env(...)``, with the other seats played by uniform random agents;
two pieces make it a masked env there:

* :class:`MaskInObservation`: the env gives the legal mask in ``info["action_mask"]``; an
  RLModule sees only observations, so the wrapper returns ``{"observations": vector,
  "action_mask": mask}`` (a ``Dict`` space), the layout of RLlib's own action-masking example
  (``ray/rllib/examples/rl_modules/classes/action_masking_rlm.py``).
* :class:`ActionMaskingPPOModule`: PPO's default torch module built for the ``"observations"``
  vector, that adds ``log(mask)`` (``-inf`` for an illegal card, clamped to RLlib's
  ``FLOAT_MIN``) to the card logits in ``_forward_inference``, ``_forward_exploration`` and
  ``_forward_train``, so an illegal card is never sampled, never greedy, and has no weight in
  the PPO loss; ``compute_values`` reads the vector only.

The env is made with ``illegal="raise"``, so an illegal card would stop the run with
``ValueError``; RLlib's env check, which steps random unmasked actions, is switched off for
that reason (``disable_env_checking=True``). Sampling and learning run in the driver
(``num_env_runners=0``, ``num_learners=0``). At the end the greedy module plays
``--eval-rounds`` rounds against the random seats, and so does a uniform random learner.

Run ``python examples/rllib_new_api_masked_ppo.py`` (10 iterations of 2,000 env steps; the test
runs two iterations of 256).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env

import agurk_env

ENV = "agurk_single_masked"
"""The name the env is registered under with Ray Tune."""


class MaskInObservation(gymnasium.Wrapper):
    """The single-learner env with its legal mask moved from ``info`` into a ``Dict`` observation."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        cards = env.action_space.n
        self.observation_space = gymnasium.spaces.Dict(
            {
                "observations": env.observation_space,
                "action_mask": gymnasium.spaces.Box(0.0, 1.0, (cards,), np.float32),
            }
        )

    @staticmethod
    def _with_mask(obs: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        return {"observations": obs, "action_mask": info["action_mask"].astype(np.float32)}

    def reset(self, **kwargs: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Reset; the first observation with its mask."""
        obs, info = self.env.reset(**kwargs)
        return self._with_mask(obs, info), info

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Play the learner's card; the next observation with its mask (all zero once the round is over)."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._with_mask(obs, info), reward, terminated, truncated, info


def make_env(config: dict[str, Any] | None = None) -> MaskInObservation:
    """The single-learner env (random seats, round episodes, illegal cards raise), its mask in the observation."""
    config = config or {}
    return MaskInObservation(agurk_env.single_agent_env(config.get("rules", "standard"), illegal="raise"))


class ActionMaskingPPOModule(DefaultPPOTorchRLModule):
    """PPO's default torch module on the ``"observations"`` vector; illegal cards' logits pushed to ``FLOAT_MIN``."""

    def __init__(self, *, observation_space: gymnasium.spaces.Dict, **kwargs: Any) -> None:
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observations"], **kwargs)

    def setup(self) -> None:
        """Build the default encoder and heads for the vector, then report the ``Dict`` space."""
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
    """The mask, and a new batch with the observation vector in place of the ``Dict`` (the input is not changed)."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict):  # already split
        return batch["action_mask"], batch
    return obs["action_mask"], {**batch, Columns.OBS: obs["observations"], "action_mask": obs["action_mask"]}


def _masked(out: dict[str, Any], mask: Any) -> dict[str, Any]:
    """Add ``log(mask)`` (clamped) to the card logits: an illegal card is never drawn."""
    out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(
        torch.log(mask.float()), min=FLOAT_MIN
    )
    return out


def config(rules: str = "standard", batch: int = 2_000, minibatch: int = 500, seed: int = 0) -> PPOConfig:
    """PPO on the new API stack with the masking module, sampling and learning in the driver process."""
    register_env(ENV, make_env)
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(ENV, env_config={"rules": rules}, disable_env_checking=True)
        .rl_module(
            rl_module_spec=RLModuleSpec(module_class=ActionMaskingPPOModule, model_config={"fcnet_hiddens": [128, 128]})
        )
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=min(minibatch, batch),
            num_epochs=4,
            lr=1e-3,
            gamma=1.0,
            lambda_=0.95,
            entropy_coeff=0.01,
        )
        .debugging(seed=seed)
    )


def greedy_cards(module: RLModule, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The cards the module plays without exploration, for ``(n, SIZE)`` observations and ``(n, A)`` masks."""
    batch = {
        Columns.OBS: {
            "observations": torch.as_tensor(observations, dtype=torch.float32),
            "action_mask": torch.as_tensor(masks, dtype=torch.float32),
        }
    }
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    return logits.argmax(-1).numpy()


def play(module: RLModule | None, rules: str, rounds: int, seed: int) -> tuple[float, float]:
    """``rounds`` rounds against the random seats: mean round reward and the share of rounds with a penalty.

    ``module=None`` plays a uniform random legal card; otherwise the module's greedy card (the env
    raises on an illegal one).
    """
    env = make_env({"rules": rules})
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    total, lost = 0.0, 0
    for _ in range(rounds):
        reward, done = 0.0, False
        while not done:
            mask = obs["action_mask"]
            if module is None:
                card = int(rng.choice(np.flatnonzero(mask)))
            else:
                card = int(greedy_cards(module, obs["observations"][None], mask[None])[0])
            obs, r, done, _, _ = env.step(card)
            reward += r
        total += reward
        lost += reward < 0
        obs, _ = env.reset()
    return total / rounds, lost / rounds


@dataclass
class Outcome:
    """What :func:`main` trained and measured."""

    module: RLModule
    """The trained masking module."""
    iterations: int
    """``algo.train()`` calls made."""
    env_steps: int
    """Env steps (learner cards) sampled in all."""
    returns: list[float]
    """Mean round reward of each iteration (RLlib's ``episode_return_mean``)."""
    scores: dict[str, tuple[float, float]]
    """``play``'s numbers of the greedy module (``"greedy PPO"``) and of a random learner (``"random"``)."""


def main(argv: list[str] | None = None) -> Outcome:
    """Train for ``--iterations``, then play the greedy module and a random learner against random seats."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--batch", type=int, default=2_000, help="env steps per iteration")
    parser.add_argument("--minibatch", type=int, default=500, help="env steps per gradient step")
    parser.add_argument("--eval-rounds", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a small network: more threads only contend for busy shared cores
    start = time.perf_counter()
    algo = config(args.rules, batch=args.batch, minibatch=args.minibatch, seed=args.seed).build_algo()
    try:
        returns, steps = [], 0
        for i in range(args.iterations):
            runners = algo.train()["env_runners"]
            steps = int(runners["num_env_steps_sampled_lifetime"])
            returns.append(float(runners.get("episode_return_mean", float("nan"))))
            print(f"iteration {i + 1}: {steps} env steps, mean round reward {returns[-1]:.3f}")
        print(f"trained {args.iterations} iterations, {steps} env steps in {time.perf_counter() - start:.0f} s")
        module = algo.get_module()
    finally:
        algo.stop()
    scores = {}
    for name, policy in (("greedy PPO", module), ("random", None)):
        mean, lost = scores[name] = play(policy, args.rules, args.eval_rounds, args.seed + 1)
        print(
            f"{name} learner vs random seats: mean round reward {mean:.3f}, "
            f"penalised in {lost:.1%} of {args.eval_rounds} rounds"
        )
    return Outcome(module, args.iterations, steps, returns, scores)


if __name__ == "__main__":
    main()
