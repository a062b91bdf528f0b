"""Files a run writes, each atomically (a temporary file beside it, then ``os.replace``): checkpoints, text, copies.

The one atomic-write helper of the project: a reader never sees half a file, and an
interrupted write leaves the previous file in place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import torch

from agents.policy import FORMAT, VERSION, PolicyNet, can_widen, load_checkpoint, net_from_checkpoint, widened
from agurk_env import observation
from training.config import Config, ConfigError


def file_mode() -> int:
    """The mode a new file gets under the current umask (``mkstemp`` would make it private)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], Any]) -> None:
    """Create ``path`` from ``write(file)`` through a temporary file, flushed to disk, then ``os.replace``.

    An exception while writing (an interruption too) removes the temporary file and leaves
    the previous ``path`` as it was; ``training.schedule`` holds stop signals back around a save.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, file_mode())
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries to disk, so that a rename into it survives a crash (where the OS allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def atomic_copy(src: str | Path, dst: str | Path) -> None:
    """Copy ``src`` to ``dst`` atomically."""
    with open(src, "rb") as source:
        atomic_write(dst, lambda f: shutil.copyfileobj(source, f))


def save_checkpoint(path: str | Path, net: PolicyNet, **extra: Any) -> None:
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
    actions = max(actions, net.actions)  # a network with the joker's output also plays without jokers
    same = small == list(cfg.hidden) and net.actions == actions
    return net if same else widened(net, list(cfg.hidden), actions)
