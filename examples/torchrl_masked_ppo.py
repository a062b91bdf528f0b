"""Masked PPO with TorchRL on the single-learner gymnasium env: one seat learns against random seats.

``agurk_env.single_agent_env(...)`` goes into TorchRL's ``GymWrapper`` unchanged; two settings
make it a masked env there:

* The legal mask is in ``info["action_mask"]`` (after every reset and step), not in the
  observation: ``set_info_dict_reader`` with a ``Binary`` spec for that key copies it into the
  tensordict as ``"action_mask"``, and the :class:`~torchrl.envs.ActionMask` transform gives
  it to the action spec, so ``rand_step`` and rollouts without a policy draw legal cards.
* ``categorical_action_encoding=True``: the action is the card index (``Discrete(13)``), not
  a one-hot vector.

The policy is a ``ProbabilisticActor`` whose ``MaskedCategorical`` reads the logits and
``"action_mask"``: an illegal card has probability 0 in sampling, ``log_prob``, the entropy
and the greedy choice (``ExplorationType.DETERMINISTIC``). The env is made with
``illegal="raise"``, so an illegal card would stop the run with ``ValueError``; the loop also
counts collected steps whose action is outside their mask (0).

PPO is TorchRL's usual loop: a ``Collector`` gathers ``--batch`` frames (learner steps) with
the current policy, ``GAE`` adds advantages, ``ClipPPOLoss`` is minimised over ``--epochs``
passes of shuffled minibatches. At the end the greedy policy plays ``--eval-rounds`` rounds
against the random seats, and so does a uniform random learner, through ``env.rollout``.

Run ``python examples/torchrl_masked_ppo.py`` (20,000 frames; the test runs two iterations of
300 frames).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

import torch
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import Binary, LazyTensorStorage, ReplayBuffer
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
from torchrl.envs import ActionMask, ExplorationType, GymWrapper, TransformedEnv, set_exploration_type
from torchrl.envs.gym_like import default_info_dict_reader
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import agurk_env


@dataclass
class Args:
    """The options of the example."""

    rules: str = "standard"
    """Rule preset of the table."""
    frames: int = 20_000
    """Learner steps (cards) to collect in all."""
    batch: int = 2_000
    """Learner steps collected per iteration."""
    minibatch: int = 500
    """Steps per gradient step."""
    epochs: int = 4
    """Passes over each iteration's steps."""
    lr: float = 1e-3
    """Adam's learning rate."""
    eval_rounds: int = 500
    """Rounds the trained policy and the random learner each play at the end."""
    seed: int = 0
    """Seed of the deals, the opponents, the network and the sampling."""


@dataclass
class Result:
    """What :func:`train` did."""

    iterations: int = 0
    """Collector batches trained on."""
    frames: int = 0
    """Learner steps collected."""
    rounds: int = 0
    """Rounds (episodes) that ended while collecting."""
    illegal: int = 0
    """Collected steps whose action was not in their mask."""
    returns: list[float] = field(default_factory=list)
    """Mean round reward of each iteration's finished rounds."""


def make_env(rules: str = "standard", seed: int = 0) -> TransformedEnv:
    """The single-learner env (random seats, round episodes) in TorchRL, its mask in ``"action_mask"``."""
    gym_env = agurk_env.single_agent_env(rules, illegal="raise")
    n = gym_env.action_space.n
    env = GymWrapper(gym_env, categorical_action_encoding=True)
    env.set_info_dict_reader(default_info_dict_reader(["action_mask"], spec=[Binary(n, dtype=torch.bool)]))
    env = TransformedEnv(env, ActionMask())
    env.set_seed(seed)
    return env


def make_modules(env: TransformedEnv, hidden: int = 128) -> tuple[ProbabilisticActor, ValueOperator]:
    """The masked actor (``MaskedCategorical`` over the logits and ``"action_mask"``) and the value network."""
    size = env.observation_spec["observation"].shape[-1]
    cards = env.action_spec.space.n
    actor = ProbabilisticActor(
        TensorDictModule(_mlp(size, hidden, cards), in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"},
        distribution_class=MaskedCategorical,
        spec=env.action_spec,
        return_log_prob=True,
    )
    return actor, ValueOperator(_mlp(size, hidden, 1), in_keys=["observation"])


def _mlp(size: int, width: int, out: int) -> nn.Sequential:
    """Two tanh layers of ``width`` units."""
    return nn.Sequential(nn.Linear(size, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, out))


def illegal_steps(data: TensorDictBase) -> int:
    """The number of steps in ``data`` whose action is not marked in their ``"action_mask"``."""
    mask, action = data["action_mask"], data["action"]
    return int((~mask.gather(-1, action.unsqueeze(-1))).sum())


def train(args: Args) -> tuple[ProbabilisticActor, Result]:
    """PPO for ``args.frames`` learner steps; the trained actor and what was done."""
    torch.manual_seed(args.seed)
    env = make_env(args.rules, args.seed)
    actor, value = make_modules(env)
    advantage = GAE(gamma=1.0, lmbda=0.95, value_network=value, average_gae=True)
    loss_module = ClipPPOLoss(actor, value, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5)
    optim = torch.optim.Adam(loss_module.parameters(), lr=args.lr)
    buffer = ReplayBuffer(
        storage=LazyTensorStorage(args.batch), sampler=SamplerWithoutReplacement(), batch_size=args.minibatch
    )
    collector = Collector(
        env,
        actor,
        frames_per_batch=args.batch,
        total_frames=args.frames,
        auto_register_policy_transforms=False,  # a feed-forward policy: no InitTracker (torchrl 0.14 warns without)
    )
    result = Result()
    for data in collector:
        result.iterations += 1
        result.frames += data.numel()
        result.illegal += illegal_steps(data)
        done = data["next", "done"].squeeze(-1)
        result.rounds += int(done.sum())
        if done.any():  # a round's reward comes on its last step
            result.returns.append(float(data["next", "reward"].squeeze(-1)[done].mean()))
        with torch.no_grad():
            advantage(data)
        buffer.empty()
        buffer.extend(data.reshape(-1))
        for _ in range(args.epochs):
            for _ in range(max(1, args.batch // args.minibatch)):
                losses = loss_module(buffer.sample())
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), 1.0)
                optim.step()
        collector.update_policy_weights_()
    collector.shutdown()
    return actor, result


def play(actor: ProbabilisticActor | None, rules: str, rounds: int, seed: int) -> tuple[float, float, int]:
    """``rounds`` rounds against the random seats: mean round reward, share of rounds with a penalty, illegal steps.

    ``actor=None`` plays a uniform random legal card (``env.rand_step`` on the masked spec);
    otherwise the actor's greedy card.
    """
    env = make_env(rules, seed)
    reward, lost, illegal = 0.0, 0, 0
    with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
        for _ in range(rounds):
            trajectory = env.rollout(1_000, actor, break_when_any_done=True)
            illegal += illegal_steps(trajectory)
            r = float(trajectory["next", "reward"].sum())
            reward += r
            lost += r < 0
    return reward / rounds, lost / rounds, illegal


@dataclass
class Outcome:
    """What :func:`main` trained and measured."""

    actor: ProbabilisticActor
    """The trained masked actor."""
    result: Result
    """What training did."""
    scores: dict[str, tuple[float, float, int]]
    """``play``'s numbers of the greedy actor (``"greedy PPO"``) and of a random learner (``"random"``)."""


def main(argv: list[str] | None = None) -> Outcome:
    """Train, then play the greedy policy and a random learner against random seats, printing the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in vars(Args()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    args = Args(**vars(parser.parse_args(argv)))
    torch.set_num_threads(1)  # a small network: more threads only contend for busy shared cores
    start = time.perf_counter()
    actor, result = train(args)
    print(
        f"trained {result.iterations} iterations, {result.frames} frames, {result.rounds} rounds, "
        f"{result.illegal} illegal steps in {time.perf_counter() - start:.0f} s"
    )
    print("mean round reward per iteration:", " ".join(f"{r:.3f}" for r in result.returns))
    scores = {}
    for name, policy in (("greedy PPO", actor), ("random", None)):
        mean, lost, illegal = scores[name] = play(policy, args.rules, args.eval_rounds, args.seed + 1)
        print(
            f"{name} learner vs random seats: mean round reward {mean:.3f}, penalised in {lost:.1%} "
            f"of {args.eval_rounds} rounds, {illegal} illegal steps"
        )
    return Outcome(actor, result, scores)


if __name__ == "__main__":
    main()
