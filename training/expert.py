"""Expert iteration (Anthony et al. 2017) on the rollout operator: ``agurk train`` with ``algo: expert``.

A **generation** plays self-play games of the current network on the batched engine (one
batch of ``expert.games`` fresh matches per player count, every seat the same network), in
``expert.shards`` tasks on the task runner (:func:`agents.tasks.run_tasks`: this process,
``expert.workers`` local worker processes, or Ray with ``expert.backend: ray``); each shard
is seeded by the run's seed, the generation and the shard, so the data are the same on every
backend and for any number of workers. At every
decision with a choice the rollout policy-improvement operator (:func:`agents.guided.improve`)
values each legal card by rollouts in which the network plays every seat over sampled worlds
of the unseen cards, so no rollout player sees a hidden card; with ``expert.teacher: best``
the agent ``best`` plays at that table teaches instead (:mod:`training.teacher`: a search's
values, or a shipped network's probabilities). Each such decision is recorded
as (observation, legal cards, improved policy ``softmax(values / temperature)``) and, once
its round ends, the mover's round reward (PPO's: ``-penalty_weight * penalty / limit``).
With ``mixture.families`` each shard plays ``mixture.slots`` tables drawn from the mixture.
The card played is drawn from the improved policy (``play: improved``) or the network.

After each generation the network is trained on the newest ``window`` generations: cross
entropy to the improved policy plus ``value_coef`` times the value head's squared error,
``epochs`` passes of Adam in minibatches. The run folder (``training/run.py``) evaluates
``latest`` every ``eval.every`` decisions and keeps the best one as ``best.pt``, exactly as
for PPO; a checkpoint plays as ``ppo:PATH`` and can start a PPO run. ``global_step`` counts
the improved decisions collected. The data window is not checkpointed: a resumed run starts
it afresh (its network, optimizer and counters continue).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from agents.policy import Checkpoint, PolicyNet, masked_log_softmax, pad_legal
from agents.tasks import Backend, TaskProgress, run_tasks
from agurk_env import engine, observation, seeds
from agurk_env.agent import Decision
from agurk_env.rules import Rules
from training.checkpoint import initial_net, save_checkpoint
from training.config import Config, config_from_dict, config_to_dict
from training.mixture import draw
from training.teacher import Teachers

if TYPE_CHECKING:
    from training.schedule import UpdateSink


@dataclass
class Data:
    """One generation's improved decisions: inputs, masks, targets and round rewards."""

    obs: np.ndarray  # (n, SIZE) float32
    legal: np.ndarray  # (n, A) bool
    target: np.ndarray  # (n, A) float32, the improved policy (0 off the legal cards)
    reward: np.ndarray  # (n,) float32, the mover's round reward

    @staticmethod
    def concat(parts: list[Data]) -> Data:
        """All parts as one."""
        return Data(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("obs", "legal", "target", "reward")))

    def __len__(self) -> int:
        return self.reward.size


class Generations:
    """Self-play tables of fresh matches (one per player count, or ``mixture.slots`` drawn tables) and their records."""

    def __init__(self, cfg: Config, seed: int) -> None:
        self.cfg = cfg
        tables = np.random.default_rng([seed, seeds.EXPERT_TABLES])
        self.rule_sets = (
            [draw(cfg.mixture, tables) for _ in range(cfg.mixture.slots)] if cfg.mixture.families else cfg.rule_sets()
        )
        self.teachers = Teachers(cfg.expert.teacher, seed, cfg.expert.teacher_searches)
        games = cfg.expert.games
        self.states = [engine.init(r, games, seeds.table_seed(seed, i)) for i, r in enumerate(self.rule_sets)]
        self.rounds = [np.zeros(cfg.expert.games, np.int64) for _ in self.rule_sets]

    def play(
        self, net: PolicyNet, rng: np.random.Generator, actions: int, decisions: int
    ) -> tuple[Data, dict[str, float]]:
        """Play until ``decisions`` are recorded and every round holding one has ended."""
        ex = self.cfg.expert
        parts: list[tuple[Data, int, np.ndarray, np.ndarray, np.ndarray]] = []  # data, table, game, seat, round
        recorded, steps, started = 0, 0, time.perf_counter()
        open_rounds = [np.zeros(ex.games, bool) for _ in self.rule_sets]  # rounds with a recorded decision
        rewards: list[dict[tuple[int, int], np.ndarray]] = [{} for _ in self.rule_sets]
        while recorded < decisions or any(o.any() for o in open_rounds):
            recording = recorded < decisions
            for i, rules in enumerate(self.rule_sets):
                st = self.states[i]
                if not recording and not open_rounds[i].any():
                    continue
                bits = engine.legal_bits(rules, st)
                cards = engine.KTH_MEMBER[bits, 0].astype(np.int64)
                free = np.flatnonzero(engine.SET_SIZE[bits] > 1)
                if not recording:
                    free = free[open_rounds[i][free]]  # only the rounds still owed a reward need good play
                if free.size:
                    d = Decision(rules, st, free, bits[free])
                    target = self.teachers.target(net, d, rng, ex)
                    if recording:
                        legal = pad_legal(d.legal, actions)
                        wide = np.zeros((free.size, actions), np.float32)
                        wide[:, : rules.num_actions] = target
                        data = Data(d.obs.astype(np.float32), legal, wide, np.zeros(free.size, np.float32))
                        parts.append((data, i, free, d.seat, self.rounds[i][free].copy()))
                        open_rounds[i][free] = True
                        recorded += free.size
                    cards[free] = self._choose(rules, net, d, target, rng)
                st = engine.play(rules, st, cards)
                if st.round_over.any():
                    ended = np.flatnonzero(st.round_over)
                    reward = self.cfg.round_credit(rules, st, ended)
                    for g, r in zip(ended, reward, strict=True):
                        rewards[i][(int(g), int(self.rounds[i][g]))] = r.astype(np.float32)
                    self.rounds[i][ended] += 1
                    open_rounds[i][ended] = False
                    st = engine.advance(rules, st)
                self.states[i] = st
            steps += 1
        for data, i, games, seats, rounds in parts:
            data.reward[:] = [rewards[i][(int(g), int(r))][s] for g, s, r in zip(games, seats, rounds, strict=True)]
        seconds = time.perf_counter() - started
        out = Data.concat([p[0] for p in parts])
        logs = {
            "expert/decisions_per_s": len(out) / max(seconds, 1e-9),
            "expert/engine_steps": float(steps),
            "expert/target_entropy": float(-(out.target * np.log(np.maximum(out.target, 1e-12))).sum(1).mean()),
            "expert/round_reward": float(out.reward.mean()),
        }
        return out, logs

    def _choose(
        self, rules: Rules, net: PolicyNet, d: Decision, target: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The cards played: drawn from the improved policy, or from the network (``play: policy``)."""
        if self.cfg.expert.play == "improved":
            logp = np.log(np.maximum(target, 1e-30))
        else:
            with torch.inference_mode():
                logits, _ = net(torch.from_numpy(d.obs.astype(np.float32)))
                legal = torch.from_numpy(pad_legal(d.legal, net.actions))
                logp = masked_log_softmax(logits, legal).numpy()[:, : rules.num_actions]
        return np.where(d.legal, logp + rng.gumbel(size=logp.shape), -np.inf).argmax(1)


def generation_task(
    progress: TaskProgress, config: dict[str, object], weights: dict[str, torch.Tensor], seed: list[int], decisions: int
) -> tuple[Data, dict[str, float]]:
    """One shard of a generation (a task of :func:`agents.tasks.run_tasks`): fresh self-play games of ``seed``."""
    cfg = config_from_dict(config)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    actions = cfg.actions()
    net = PolicyNet(observation.SIZE, actions, cfg.hidden)
    net.load_state_dict(weights)
    rng = np.random.default_rng(seed)
    return Generations(cfg, int(rng.integers(2**31))).play(net.eval(), rng, actions, decisions)


def fit(cfg: Config, net: PolicyNet, opt: torch.optim.Optimizer, data: Data, gen: torch.Generator) -> dict[str, float]:
    """``expert.epochs`` passes of cross entropy to the improved policy plus the value loss; the mean losses."""
    n = len(data)
    obs, legal = torch.from_numpy(data.obs), torch.from_numpy(data.legal)
    target, reward = torch.from_numpy(data.target), torch.from_numpy(data.reward)
    totals = {"losses/policy_loss": 0.0, "losses/value_loss": 0.0, "expert/agreement": 0.0}
    batches = 0
    net.train()
    for _ in range(cfg.expert.epochs):
        order = torch.randperm(n, generator=gen)
        for start in range(0, n, cfg.minibatch_size):
            idx = order[start : start + cfg.minibatch_size]
            logits, value = net(obs[idx])
            logp = masked_log_softmax(logits, legal[idx])
            policy_loss = -(target[idx] * logp).sum(1).mean()
            value_loss = ((value - reward[idx]) ** 2).mean()
            loss = policy_loss + cfg.expert.value_coef * value_loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            agree = (logp.argmax(1) == target[idx].argmax(1)).float().mean()
            totals["losses/policy_loss"] += policy_loss.item()
            totals["losses/value_loss"] += value_loss.item()
            totals["expert/agreement"] += agree.item()
            batches += 1
    net.eval()
    return {k: v / max(batches, 1) for k, v in totals.items()}


class ExpertTrainer:
    """The ``algo: expert`` trainer behind ``agurk train``: generations, training, checkpoints (see the module)."""

    def __init__(self, cfg: Config, resume: Checkpoint | None = None) -> None:
        self.cfg = cfg
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        self.actions = cfg.actions()
        self.net = initial_net(cfg, self.actions, fresh=resume is None)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.rng = np.random.default_rng([cfg.seed, seeds.EXPERT_DRAWS])
        self.gen = torch.Generator().manual_seed(cfg.seed + seeds.EXPERT_TORCH)
        self.global_step = 0
        self.generation = 0
        self.best_score = float("-inf")
        if resume is not None:
            self.net.load_state_dict(resume["model"])
            self.opt.load_state_dict(resume["optimizer"])
            self.global_step, self.generation = int(resume["global_step"]), int(resume["update"])
            self.best_score = float(resume["best_score"])
            self.rng.bit_generator.state = resume["rng"]
            self.gen.set_state(resume["torch_rng"])
        self.window: list[Data] = []

    def save(self, path: Path, best_score: float, **clock: float) -> None:
        """Write the checkpoint (network, optimizer, counters, ``clock``) atomically to ``path``."""
        self.best_score = best_score
        save_checkpoint(
            path,
            self.net,
            algo="expert",
            config=config_to_dict(self.cfg),
            optimizer=self.opt.state_dict(),
            global_step=self.global_step,
            update=self.generation,
            best_score=best_score,
            rng=self.rng.bit_generator.state,
            torch_rng=self.gen.get_state(),
            **clock,
        )

    def generate(self) -> tuple[Data, dict[str, float]]:
        """One generation: ``expert.shards`` tasks on the task runner, each seeded by the run, generation and shard."""
        ex = self.cfg.expert
        weights = {k: v.detach().clone() for k, v in self.net.state_dict().items()}
        config = config_to_dict(self.cfg)
        share = -(-ex.decisions // ex.shards)
        jobs = [(config, weights, [self.cfg.seed, self.generation, j], share) for j in range(ex.shards)]
        backend = Backend(ex.backend, ex.ray_address or None)
        parts = run_tasks(generation_task, jobs, ex.workers, backend, names=[f"shard {j}" for j in range(ex.shards)])
        data = Data.concat([p[0] for p in parts])
        logs = {k: float(np.mean([p[1][k] for p in parts])) for k in parts[0][1]}
        logs["expert/decisions_per_s"] = sum(p[1]["expert/decisions_per_s"] for p in parts)
        return data, logs

    def train(self, schedule: UpdateSink) -> None:
        """Generations until ``total_steps`` improved decisions (or ``time_limit``); ``schedule`` after each."""
        cfg = self.cfg
        started = time.perf_counter()
        while self.global_step < cfg.total_steps:
            tick = time.perf_counter()
            data, logs = self.generate()
            self.window = [*self.window, data][-cfg.expert.window :]
            logs |= fit(cfg, self.net, self.opt, Data.concat(self.window), self.gen)
            self.global_step += len(data)
            self.generation += 1
            logs["charts/decisions_per_update"] = float(len(data))
            logs["expert/generation"] = float(self.generation)
            schedule.after_update(self.global_step, len(data), time.perf_counter() - tick, logs)
            if cfg.time_limit and time.perf_counter() - started > cfg.time_limit * 60:
                break
