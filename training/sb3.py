"""The ``algo: sb3`` route: sb3-contrib's MaskablePPO on :func:`agurk_env.single_agent.sb3_vec_env`.

The same network as the PPO trainer (:class:`agents.policy.PolicyNet`: the shared
:class:`~agents.policy.Trunk` as SB3's features extractor, linear policy and value heads,
SB3's orthogonal initialization), the same config keys where they apply, and the same run
folder: ``checkpoints/latest.pt`` and ``best.pt`` hold the network in the PPO trainer's
format (so ``ppo:PATH`` plays them), plus ``checkpoints/latest.sb3.zip``, the SB3 model
that ``--resume`` continues.

What differs from the PPO trainer: one learner seat per game (drawn per match), and the
opponents in every other seat are the ``pool.agents`` spec with the largest share
(``self_play`` and ``snapshots`` do not apply); the rewards are the environment's
(``episode: round``: ``-penalty / limit``; ``episode: match``: the placement only).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import gymnasium
import torch
from torch import nn

from agents.policy import Checkpoint, CheckpointError, PolicyNet, Trunk
from agents.registry import opponents
from agurk_env import observation
from agurk_env.single_agent import sb3_vec_env
from training.checkpoint import save_checkpoint
from training.config import Config, config_to_dict

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

    from agurk_env.vec_env import AgurkVecEnv
    from training.schedule import UpdateSink


def _extractor_class() -> type:
    """``TrunkExtractor``: :class:`Trunk` as an SB3 features extractor (imports SB3)."""
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class TrunkExtractor(BaseFeaturesExtractor):
        """The PPO trainer's shared MLP trunk, as SB3's features extractor."""

        def __init__(self, observation_space: gymnasium.spaces.Box, hidden: list[int]) -> None:
            trunk = Trunk(observation_space.shape[0], hidden)
            super().__init__(observation_space, trunk.out_size)
            self.trunk = trunk

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return self.trunk(obs)

    return TrunkExtractor


def opponents_of(cfg: Config) -> str:
    """The opponent spec of the SB3 route: the ``pool.agents`` entry with the largest share (``random`` if none)."""
    agents = {k: v for k, v in cfg.pool.agents.items() if v > 0}
    return max(agents, key=agents.__getitem__) if agents else "random"


def make_model(cfg: Config, venv: AgurkVecEnv) -> MaskablePPO:
    """A MaskablePPO with the PPO trainer's network and PPO settings."""
    from sb3_contrib import MaskablePPO

    lr = cfg.learning_rate
    return MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=(lambda remaining: remaining * lr) if cfg.anneal_lr else lr,
        n_steps=cfg.sb3_n_steps,
        batch_size=cfg.minibatch_size,
        n_epochs=cfg.update_epochs,
        gamma=cfg.gamma,
        gae_lambda=cfg.gae_lambda,
        clip_range=cfg.clip_coef,
        normalize_advantage=cfg.norm_adv,
        ent_coef=cfg.ent_coef,
        vf_coef=cfg.vf_coef,
        max_grad_norm=cfg.max_grad_norm,
        target_kl=cfg.target_kl or None,
        policy_kwargs={
            "features_extractor_class": _extractor_class(),
            "features_extractor_kwargs": {"hidden": list(cfg.hidden)},
            "net_arch": {"pi": [], "vf": []},
            "activation_fn": nn.ReLU,
        },
        seed=cfg.seed,
        device=cfg.device,
        verbose=0,
    )


def policy_net(model: MaskablePPO, hidden: list[int]) -> PolicyNet:
    """The SB3 policy's weights as a :class:`PolicyNet` (trunk, ``action_net``, ``value_net``)."""
    policy = model.policy
    space, trunk = policy.action_space, policy.features_extractor.trunk
    assert isinstance(space, gymnasium.spaces.Discrete) and isinstance(trunk, Trunk)  # make_model's env and extractor
    net = PolicyNet(observation.SIZE, int(space.n), hidden)
    net.trunk.load_state_dict(trunk.state_dict())
    net.actor.load_state_dict(policy.action_net.state_dict())
    net.critic.load_state_dict(policy.value_net.state_dict())
    return net.eval()


_SB3_NAMES = {
    "train/value_loss": "losses/value_loss",
    "train/policy_gradient_loss": "losses/policy_loss",
    "train/approx_kl": "losses/approx_kl",
    "train/clip_fraction": "losses/clipfrac",
    "train/explained_variance": "losses/explained_variance",
    "train/learning_rate": "charts/learning_rate",
}


class Sb3Trainer:
    """The ``algo: sb3`` trainer behind ``agurk train`` (same interface as ``PPOTrainer``)."""

    def __init__(self, cfg: Config, resume: Checkpoint | None = None) -> None:
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.cfg = cfg
        rules = cfg.rule_sets()[0]
        self.venv = sb3_vec_env(
            cfg.num_envs, rules=rules, opponents=opponents(opponents_of(cfg), rules.players), episode=cfg.episode
        )
        self.venv.seed(cfg.seed)
        self.best_score = float("-inf")
        self.start_step = 0
        if resume is not None:
            from sb3_contrib import MaskablePPO

            zip_path = Path(str(resume.get("sb3_zip", "")))
            if not zip_path.is_file():
                raise CheckpointError(f"the SB3 model {str(zip_path)!r} of this checkpoint is missing")
            try:
                self.model = MaskablePPO.load(zip_path, env=self.venv, device=cfg.device)
            except Exception as e:  # SB3 raises many kinds on a damaged zip
                raise CheckpointError(f"cannot load the SB3 model {str(zip_path)!r} ({type(e).__name__})") from None
            self.best_score = float(resume["best_score"])
            self.start_step = int(resume["global_step"])
            self.model.num_timesteps = self.start_step
        else:
            self.model = make_model(cfg, self.venv)

    @property
    def global_step(self) -> int:
        """Learner decisions trained on so far (SB3's ``num_timesteps``)."""
        return int(self.model.num_timesteps)

    def save(self, path: Path, best_score: float, **clock: float) -> None:
        """Write the network checkpoint (with ``clock``) and the SB3 model beside it (``latest.sb3.zip``)."""
        self.best_score = best_score
        zip_path = path.with_suffix(".sb3.zip")
        tmp = zip_path.with_name(f".{zip_path.name}.tmp.zip")
        self.model.save(tmp)
        tmp.replace(zip_path)
        save_checkpoint(
            path,
            policy_net(self.model, self.cfg.hidden),
            algo="sb3",
            config=config_to_dict(self.cfg),
            global_step=self.global_step,
            best_score=best_score,
            sb3_zip=str(zip_path.resolve()),
            **clock,
        )

    def train(self, schedule: UpdateSink) -> None:
        """``model.learn`` to ``total_steps``; ``schedule.after_update`` runs after every update."""
        from stable_baselines3.common.callbacks import BaseCallback

        cfg = self.cfg
        trainer = self

        class Hook(BaseCallback):
            """Report each finished update to the schedule; stop at the time limit."""

            def _on_training_start(self) -> None:
                self.started = self.tick = time.perf_counter()
                self.step_at_tick = trainer.global_step
                self.rollouts = 0

            def _on_rollout_start(self) -> None:
                self.rollouts += 1
                if self.rollouts > 1:
                    self.report()

            def _on_training_end(self) -> None:
                if trainer.global_step > self.step_at_tick:
                    self.report()

            def report(self) -> None:
                values = self.model.logger.name_to_value
                logs = {mine: float(values[theirs]) for theirs, mine in _SB3_NAMES.items() if theirs in values}
                if "train/entropy_loss" in values:
                    logs["losses/entropy"] = -float(values["train/entropy_loss"])
                now = time.perf_counter()
                step = trainer.global_step
                schedule.after_update(step, step - self.step_at_tick, now - self.tick, logs)
                self.step_at_tick = step
                self.tick = time.perf_counter()

            def _on_step(self) -> bool:
                return not (cfg.time_limit and time.perf_counter() - self.started > cfg.time_limit * 60)

        remaining = cfg.total_steps - self.start_step
        if remaining > 0:
            self.model.learn(
                total_timesteps=remaining, callback=Hook(), reset_num_timesteps=self.start_step == 0, log_interval=1
            )
