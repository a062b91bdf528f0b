"""Masked self-play DQN with Tianshou over the PettingZoo AEC env: one Q-network shared by every seat.

Tianshou's ``PettingZooEnv`` turns the AEC env's ``{"observation", "action_mask"}`` into
``obs.obs`` and ``obs.mask``; its ``DiscreteQLearningPolicy`` reads ``obs.mask`` and gives the
illegal cards a Q-value below every legal one (and explores among the legal cards only), so
the network never plays an illegal card. The same ``DQN`` serves every seat (parameter
sharing through ``MultiAgentOffPolicyAlgorithm``), and each seat learns from its own reward
column. The AEC env raises on an illegal card, so a run that finishes played none.

Run ``python examples/tianshou_masked_dqn.py --steps 20000`` (the test runs a few hundred
steps). It prints the mean round reward of the greedy policy against random play.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass

import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, ReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

import agurk_env


@dataclass
class Args:
    """The options of the example."""

    rules: str = "standard"
    """Rule preset of the table."""
    steps: int = 20_000
    """Environment steps (cards of any seat) to collect in all."""
    collect: int = 64
    """Steps collected between updates."""
    batch: int = 64
    """Transitions per update."""
    seed: int = 0
    """Seed of the deals, the network and the exploration."""


def make_env(rules: str) -> PettingZooEnv:
    """The AEC env (round episodes) as Tianshou sees it."""
    return PettingZooEnv(agurk_env.env(rules, episode="round"))


def build(env: PettingZooEnv, seed: int) -> tuple[MultiAgentOffPolicyAlgorithm, DiscreteQLearningPolicy]:
    """One masked DQN for every seat: the multi-agent algorithm and the shared policy."""
    torch.manual_seed(seed)
    obs_size = env.observation_space["observation"].shape[0]
    net = Net(state_shape=obs_size, action_shape=env.action_space.n, hidden_sizes=[128, 128])
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, observation_space=env.observation_space, eps_training=0.1
    )
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99, target_update_freq=200)
    return MultiAgentOffPolicyAlgorithm(algorithms=[dqn] * len(env.agents), env=env), policy


def train(args: Args) -> tuple[MultiAgentOffPolicyAlgorithm, DiscreteQLearningPolicy]:
    """Collect ``args.steps`` steps of self-play, updating the shared network after every ``args.collect``."""
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)  # its note that (n, seats) returns are flattened
    env = make_env(args.rules)
    algorithm, policy = build(env, args.seed)
    buffer = ReplayBuffer(max(args.steps, args.batch))
    collector = Collector(algorithm, DummyVectorEnv([lambda: env]), buffer, exploration_noise=True)
    np.random.seed(args.seed)  # noqa: NPY002 (Tianshou's exploration draws from NumPy's global generator)
    collector.reset(gym_reset_kwargs={"seed": args.seed})
    done = 0
    with policy_within_training_step(algorithm.policy), policy_within_training_step(policy):  # explore, update
        while done < args.steps:
            with torch_train_mode(algorithm, False):
                done += collector.collect(n_step=args.collect).n_collected_steps
            if len(buffer) >= args.batch:
                algorithm.update(buffer=buffer, sample_size=args.batch)
    return algorithm, policy


def greedy_card(policy: DiscreteQLearningPolicy, observation: np.ndarray, mask: np.ndarray) -> int:
    """The card the trained network plays (no exploration) for one AEC observation and its mask."""
    batch = Batch(obs=Batch(obs=observation[None], mask=mask.astype(bool)[None]), info=Batch())
    with torch.no_grad():
        return int(policy(batch).act[0])


def play_against_random(policy: DiscreteQLearningPolicy, rules: str, rounds: int, seed: int) -> tuple[float, int]:
    """Seat 0 greedy against random seats for ``rounds`` rounds: its mean reward and the number of illegal picks."""
    env = agurk_env.env(rules, episode="round")
    rng = np.random.default_rng(seed)
    total, illegal = 0.0, 0
    for r in range(rounds):
        env.reset(seed=seed + r)
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            if agent == "player_0":
                total += reward
            if terminated or truncated:
                env.step(None)
                continue
            mask = obs["action_mask"].astype(bool)
            if agent == "player_0":
                card = greedy_card(policy, obs["observation"], mask)
                illegal += int(not mask[card])
                card = card if mask[card] else int(np.flatnonzero(mask)[0])
            else:
                card = int(rng.choice(np.flatnonzero(mask)))
            env.step(card)
    return total / rounds, illegal


def main() -> None:
    """Train, then play the greedy network against random seats."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in vars(Args()).items():
        parser.add_argument(f"--{name}", type=type(default), default=default)
    args = Args(**vars(parser.parse_args()))
    _, policy = train(args)
    mean, illegal = play_against_random(policy, args.rules, 200, args.seed + 1)
    print(f"greedy seat 0 vs random: mean round reward {mean:.3f} over 200 rounds, {illegal} illegal picks")


if __name__ == "__main__":
    main()
