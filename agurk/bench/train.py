"""``agurk bench train``: learner decisions per second of the PPO trainer beside the SB3 route.

A decision is one card chosen by the learner and trained on. Each trainer runs one
warm-up update, then whole updates (collect and train) for about ``seconds``; its rate is
the decisions of those updates over their wall time. Same network (:class:`PolicyNet`,
hidden ``[128, 128]``), same PPO settings, same process, standard rules, 4 players:

- ``decisions_per_s``: the PPO trainer in self-play (every seat is the learner);
- ``ppo_same_opponents_decisions_per_s``: the PPO trainer, one learner seat against
  random opponents (what the SB3 route does);
- ``sb3_decisions_per_s``: MaskablePPO on ``sb3_vec_env`` against random opponents.

The self-play measurement alternates plain updates (its rate) with updates timed by the network
clock (:mod:`agurk.bench.network`), so the clock's cost shows in the same run as the ratio of the
two rates. From the clocked updates: ``network_share``, the network's forward, backward and
optimizer seconds over their wall time; ``network_flop_per_s``, its FLOPs over those seconds;
``matmul_flop_per_s``, plain ``torch.addmm``/``torch.mm`` of the same passes, each clocked
update's run right after it; ``matmul_fraction``, the first rate over the second.
"""

from __future__ import annotations

import platform
import time
from typing import TYPE_CHECKING, TypedDict

from training.config import Config, config_from_dict, config_to_dict, load_config, packaged_config

if TYPE_CHECKING:
    from agurk.bench.network import NetworkProfile
    from training.ppo import PPOTrainer

OPPONENTS = "random"


class TrainRate(TypedDict):
    """Learner decisions per second of one trainer over whole updates after a warm-up update."""

    decisions_per_s: float
    decisions: int
    seconds: float
    updates: int


class TrainResult(TypedDict):
    """The ``agurk bench train`` result (:func:`bench_train`)."""

    bench: str
    decisions_per_s: float
    """The PPO trainer in self-play."""
    sb3_decisions_per_s: float
    """MaskablePPO against :data:`OPPONENTS`."""
    ppo_same_opponents_decisions_per_s: float
    """The PPO trainer, one learner seat against :data:`OPPONENTS`."""
    ratio: float
    ratio_same_opponents: float
    network_share: float
    """The network's forward, backward and optimizer seconds over the clocked self-play updates' wall time."""
    network_flop_per_s: float
    matmul_flop_per_s: float
    """Plain ``torch.addmm``/``torch.mm`` on the network's shapes, same process and threads."""
    matmul_fraction: float
    """``network_flop_per_s / matmul_flop_per_s``."""
    network_profile: NetworkProfile
    opponents: str
    network: str
    threads: int
    rollout: str
    ppo: TrainRate
    ppo_same_opponents: TrainRate
    sb3: TrainRate
    torch: str
    python: str


def bench_config(threads: int, seed: int, **changes: object) -> Config:
    """The benchmark's config: the packaged quickstart's PPO settings, no time limit, no evaluation, fixed lr.

    ``changes`` replace whole keys (the benchmark sets ``pool`` and ``algo``).
    """
    quickstart = config_to_dict(load_config(packaged_config("quickstart.yaml")))
    data = {
        **quickstart,
        "seed": seed,
        "total_steps": 10**12,
        "time_limit": 0,
        "sb3_n_steps": quickstart["num_steps"],
        "threads": threads,
        "anneal_lr": False,
        "eval": {"every": 0},
        **changes,
    }
    return config_from_dict(data)


def _warm_trainer(cfg: Config) -> PPOTrainer:
    """A PPO trainer on fresh games after its warm-up update."""
    from training.ppo import PPOTrainer

    learner = PPOTrainer(cfg)
    learner.start_games()
    learner.iterate()
    return learner


def _ppo_rate(cfg: Config, seconds: float) -> TrainRate:
    """Decisions per second of the PPO trainer over whole updates after a warm-up update."""
    learner = _warm_trainer(cfg)
    start_step, start = learner.global_step, time.perf_counter()
    updates = 0
    while updates < 2 or time.perf_counter() - start < seconds:
        learner.iterate()
        updates += 1
    elapsed = time.perf_counter() - start
    decisions = learner.global_step - start_step
    return {"decisions_per_s": decisions / elapsed, "decisions": decisions, "seconds": elapsed, "updates": updates}


def _clocked_ppo_rate(cfg: Config, seconds: float) -> tuple[TrainRate, NetworkProfile]:
    """The PPO trainer's rate over plain updates alternated with clocked ones (their profile) for about ``seconds``."""
    from agurk.bench.network import NetworkClock, profile

    learner = _warm_trainer(cfg)
    clock = NetworkClock(learner)
    decisions = updates = 0
    elapsed = 0.0
    start = time.perf_counter()
    while updates < 2 or time.perf_counter() - start < seconds:
        step, began = learner.global_step, time.perf_counter()
        learner.iterate()
        elapsed += time.perf_counter() - began
        decisions += learner.global_step - step
        updates += 1
        clock.update()
    rate: TrainRate = {
        "decisions_per_s": decisions / elapsed,
        "decisions": decisions,
        "seconds": elapsed,
        "updates": updates,
    }
    return rate, profile(clock)


def _sb3_rate(cfg: Config, seconds: float) -> TrainRate:
    """Decisions per second of MaskablePPO over whole updates (rollout starts) after a warm-up update."""
    from stable_baselines3.common.callbacks import BaseCallback

    from training.sb3 import Sb3Trainer

    trainer = Sb3Trainer(cfg)
    marks: list[tuple[float, int]] = []

    class Clock(BaseCallback):
        def _on_rollout_start(self) -> None:
            marks.append((time.perf_counter(), int(self.model.num_timesteps)))

        def _on_step(self) -> bool:
            return len(marks) < 4 or marks[-1][0] - marks[1][0] < seconds

    trainer.model.learn(total_timesteps=10**12, callback=Clock(), log_interval=10**9)
    (t0, s0), (t1, s1) = marks[1], marks[-1]  # marks[0] starts the warm-up rollout
    rate = (s1 - s0) / (t1 - t0)
    return {"decisions_per_s": rate, "decisions": s1 - s0, "seconds": t1 - t0, "updates": len(marks) - 2}


def bench_train(seconds: float = 20.0, threads: int = 1, seed: int = 0) -> TrainResult:
    """Run the three measurements (about ``3 * seconds`` plus warm-ups); return their JSON-ready figures."""
    import torch

    from agurk_env import observation

    cfg = bench_config(threads, seed, pool={"self_play": 1.0, "snapshots": 0, "agents": {}})
    self_play, network = _clocked_ppo_rate(cfg, seconds)
    solo = {"self_play": 0.0, "snapshots": 0.0, "agents": {OPPONENTS: 1.0}}
    same = _ppo_rate(bench_config(threads, seed, pool=solo), seconds)
    sb3 = _sb3_rate(bench_config(threads, seed, algo="sb3", pool=solo), seconds)
    return {
        "bench": "train",
        "decisions_per_s": self_play["decisions_per_s"],
        "sb3_decisions_per_s": sb3["decisions_per_s"],
        "ppo_same_opponents_decisions_per_s": same["decisions_per_s"],
        "ratio": self_play["decisions_per_s"] / sb3["decisions_per_s"],
        "ratio_same_opponents": same["decisions_per_s"] / sb3["decisions_per_s"],
        "network_share": network["share"],
        "network_flop_per_s": network["flop_per_s"],
        "matmul_flop_per_s": network["matmul_flop_per_s"],
        "matmul_fraction": network["matmul_fraction"],
        "network_profile": network,
        "opponents": OPPONENTS,
        "network": f"MLP {'-'.join(map(str, [observation.SIZE, *cfg.hidden]))}, linear policy and value heads",
        "threads": threads,
        "rollout": f"{cfg.num_envs} games x {cfg.num_steps} steps, {cfg.update_epochs} epoch(s), "
        f"minibatch {cfg.minibatch_size}",
        "ppo": self_play,
        "ppo_same_opponents": same,
        "sb3": sb3,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
