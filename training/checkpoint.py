"""Checkpoints a run writes, atomically (:mod:`agurk_env.atomic`, the project's one atomic-write helper)."""

from __future__ import annotations

from pathlib import Path

import torch

from agents.policy import FORMAT, VERSION, PolicyNet, can_widen, load_checkpoint, net_from_checkpoint, widened
from agurk_env import observation
from agurk_env.atomic import atomic_write
from training.config import Config, ConfigError


def save_checkpoint(path: str | Path, net: PolicyNet, **extra: object) -> None:
    """Write ``net`` and ``extra`` (optimizer state, counters, ...) to ``path`` atomically."""
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "obs_size": net.obs_size,
        "actions": net.actions,
        "hidden": list(net.hidden),
        "model": {k: v.detach().cpu() for k, v in net.state_dict().items()},
        **extra,
    }
    atomic_write(path, lambda f: torch.save(payload, f))


def initial_net(cfg: Config, actions: int, fresh: bool = True) -> PolicyNet:
    """A fresh network, or for a fresh run the one of ``cfg.init``, widened to the config's ``hidden`` if wider.

    A resumed run (``fresh=False``) loads its own checkpoint over this network, so ``init`` is
    not read then: the file may have moved since the run started.
    """
    if not cfg.init or not fresh:
        return PolicyNet(observation.SIZE, actions, cfg.hidden)
    data = load_checkpoint(cfg.init)
    if data.get("ensemble"):
        raise ConfigError(
            f"init: {cfg.init!r} is an ensemble of {len(data['ensemble'])} networks; start from one of its members"
            f" ({', '.join(m['source'] for m in data['ensemble'])})"
        )
    small = [int(h) for h in data["hidden"]]
    if not can_widen(small, list(cfg.hidden)):
        raise ConfigError(
            f"init: the checkpoint's network (hidden {small}) does not fit the config"
            f" (hidden {list(cfg.hidden)}; hidden may be as wide or wider, as deep or deeper)"
        )
    net = net_from_checkpoint(data, cfg.init)
    assert isinstance(net, PolicyNet)  # an ensemble is refused above
    same = small == list(cfg.hidden) and net.actions == actions  # else widened, or the joker's output dropped
    return net if same else widened(net, list(cfg.hidden), actions)
