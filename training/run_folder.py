"""A run folder and its lock: which folder a run may use, who holds it, the files a run writes there.

A run folder belongs to one run: :func:`claim_out` refuses a folder that is not empty (or,
with ``move_aside``, renames it), :func:`default_out` never reuses one, and :func:`lock_run`
keeps a second process out while a run writes. A folder that a run left before its first
checkpoint is empty again (:meth:`Run.discard`); a finished run lets its lock file go.

Errors are :class:`RunFolderError`: the folder, why, and what would help (``remedy``), in
words of this library; the application words the remedy in its own options.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Literal, TypedDict

try:
    import fcntl
except ImportError:  # not on Windows: run folders are not locked there
    fcntl = None  # type: ignore[assignment]

from agurk_env.atomic import atomic_copy, atomic_write_text
from training.config import Config, dump_config

CHECKPOINTS = "checkpoints"
KEPT = "kept.csv"
"""The list of kept checkpoints in ``checkpoints/`` (``keep_checkpoints``): ``step,train_seconds,wall_seconds,file``."""
LOCK = ".lock"
"""The file a training run holds locked in its folder (with its process id), so that no second run writes there."""
Remedy = Literal["resume", "move_aside", "wait", "fix"]
"""What would help: continue the run in it (or move it aside), only move it aside, wait for its run, fix the path."""


class RunFolderError(ValueError):
    """A folder that cannot be used as asked: ``folder``, ``reason`` (the message) and ``remedy``."""

    def __init__(self, folder: str | Path, reason: str, remedy: Remedy = "fix") -> None:
        super().__init__(f"the folder {str(folder)!r} {reason}")
        self.folder, self.reason, self.remedy = Path(folder), reason, remedy


class Run:
    """One run folder, locked while open: the config, TensorBoard scalars, checkpoints and kept copies."""

    def __init__(self, folder: str | Path, cfg: Config, start_step: int = 0) -> None:
        self.folder = Path(folder)
        self.cfg = cfg
        self.made = not self.folder.exists() or not any(self.folder.iterdir())
        try:
            (self.folder / CHECKPOINTS).mkdir(parents=True, exist_ok=True)
            self._lock = lock_run(self.folder)  # before anything is written: a second run changes nothing
            atomic_write_text(self.folder / "config.yaml", dump_config(cfg))
        except OSError as e:
            raise RunFolderError(self.folder, f"cannot be written: {e.strerror or e}") from None
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(self.folder), purge_step=start_step or None)

    @property
    def latest(self) -> Path:
        """``checkpoints/latest.pt``."""
        return self.folder / CHECKPOINTS / "latest.pt"

    @property
    def best(self) -> Path:
        """``checkpoints/best.pt``."""
        return self.folder / CHECKPOINTS / "best.pt"

    def kept_seconds(self) -> tuple[float, float]:
        """Training and wall seconds of the last kept checkpoint (``(0, 0)`` if none): a resumed run counts on."""
        rows = read_kept(self.folder)
        return (rows[-1]["train_seconds"], rows[-1]["wall_seconds"]) if rows else (0.0, 0.0)

    def keep(self, step: int, train_seconds: float, wall_seconds: float) -> None:
        """Copy ``latest.pt`` to ``step-STEP.pt`` and list it in ``kept.csv`` (once per step)."""
        name = f"step-{step:010d}.pt"
        atomic_copy(self.latest, self.folder / CHECKPOINTS / name)
        rows = read_kept(self.folder)
        if rows and rows[-1]["step"] == step:
            return
        lines = ["step,train_seconds,wall_seconds,file"] + [
            f"{r['step']},{r['train_seconds']:.3f},{r['wall_seconds']:.3f},{r['file']}" for r in rows
        ]
        lines.append(f"{step},{train_seconds:.3f},{wall_seconds:.3f},{name}")
        atomic_write_text(self.folder / CHECKPOINTS / KEPT, "\n".join(lines) + "\n")

    def log(self, scalars: Mapping[str, float | None], step: int) -> None:
        """Write scalars at ``step`` (None and NaN are skipped)."""
        for name, value in scalars.items():
            if value is not None and value == value:  # NaN != NaN
                self.writer.add_scalar(name, value, step)

    def promote(self) -> None:
        """Copy ``latest.pt`` to ``best.pt``."""
        atomic_copy(self.latest, self.best)

    def close(self) -> None:
        """Flush and close the TensorBoard writer; remove the lock file and let the folder go."""
        self.writer.flush()
        self.writer.close()
        if self._lock is not None:
            (self.folder / LOCK).unlink(missing_ok=True)  # while still held: no other run holds this file
            self._lock.close()

    def discard(self) -> None:
        """Close, and leave the folder as it was found: a run stopped before its first checkpoint left nothing."""
        self.close()
        if self.made and not self.latest.exists():
            for entry in self.folder.iterdir():
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


def lock_run(folder: Path) -> IO[str] | None:
    """Lock ``folder`` for this process (``fcntl.flock``; held until the returned file is closed).

    :class:`RunFolderError` when another process holds it: two runs in one folder would
    overwrite each other's checkpoints. ``None`` where the platform has no ``fcntl``.
    """
    if fcntl is None:
        return None
    while True:
        handle = (folder / LOCK).open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise RunFolderError(folder, f"is in use by {_holder(folder)}", "wait") from None
        try:
            same = os.stat(folder / LOCK).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a lock file its finished run removed while this process opened it
            break
        handle.close()
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def _holder(folder: Path) -> str:
    """``another training run (process PID)``: who holds ``folder``'s lock, as its lock file says."""
    try:
        pid = (folder / LOCK).read_text(encoding="utf-8").strip() or "?"
    except OSError:
        pid = "?"
    return f"another training run (process {pid})"


def check_not_in_use(folder: Path) -> None:
    """:class:`RunFolderError` (remedy ``wait``) when another process holds ``folder``'s lock (:func:`lock_run`)."""
    if fcntl is None or not (folder / LOCK).is_file():
        return
    try:
        handle = (folder / LOCK).open(encoding="utf-8")  # only looks: nothing written, the lock let go at once
    except FileNotFoundError:  # its run just finished
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RunFolderError(folder, f"is in use by {_holder(folder)}", "wait") from None


class KeptCheckpoint(TypedDict):
    """One row of ``checkpoints/kept.csv``: a kept copy of ``latest.pt``."""

    step: int
    train_seconds: float
    wall_seconds: float
    file: str


def read_kept(folder: str | Path) -> list[KeptCheckpoint]:
    """The kept checkpoints of a run folder (``checkpoints/kept.csv``), in step order; ``[]`` if none."""
    path = Path(folder) / CHECKPOINTS / KEPT
    if not path.is_file():
        return []
    rows: list[KeptCheckpoint] = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        step, train, wall, name = line.split(",")
        rows.append({"step": int(step), "train_seconds": float(train), "wall_seconds": float(wall), "file": name})
    return rows


def _fresh(path: Path) -> Path:
    """``path``, or ``path-2``, ``path-3``... : the first that does not exist."""
    n = 1
    while True:
        candidate = path if n == 1 else path.with_name(f"{path.name}-{n}")
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
        n += 1


def default_out(config: str | None, root: str | Path = "runs") -> Path:
    """Create and return a new ``runs/<config name>-<date>-<time>`` (``-2``, ``-3``... if taken)."""
    stem = Path(config).stem if config else "run"
    base = Path(root) / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    while True:
        folder = _fresh(base)
        try:
            folder.mkdir(parents=True)  # not exist_ok: of two runs started at once, one gets each folder
            return folder
        except FileExistsError:
            continue
        except OSError as e:
            raise RunFolderError(folder, f"cannot be created: {e.strerror or e}") from None


def aside_name(out: Path) -> str:
    """Where :func:`claim_out` moves ``out`` aside, as a pattern: ``OUT.old-<date>-<time>``."""
    return f"{out}.old-<date>-<time>"


def claim_out(out: Path, move_aside: bool = False, resume: str | None = None) -> Path | None:
    """Check that ``out`` may receive a new run; with ``move_aside`` rename a used folder. Return where it went.

    A missing or empty folder is fine, and so is the folder of the run being resumed. A
    folder that holds anything else is refused (:class:`RunFolderError`: remedy ``resume``
    for a run with a checkpoint, else ``move_aside``); ``move_aside`` renames it to
    ``OUT.old-<date>-<time>`` (nothing is deleted), unless a run is writing to it.
    """
    if resume is not None and out.resolve() == Path(resume).resolve():
        return None
    if not out.exists():
        return None
    if not out.is_dir():
        raise RunFolderError(out, "exists and is not a folder")
    entries = sorted(p.name for p in out.iterdir())
    if not entries:
        return None
    if resume is not None and out.resolve() in Path(resume).resolve().parents:
        raise RunFolderError(out, f"holds the run being resumed, {resume!r}")
    check_not_in_use(out)
    if not move_aside:
        if (out / CHECKPOINTS / "latest.pt").is_file():
            raise RunFolderError(out, "already holds a run", "resume")
        if "config.yaml" in entries or CHECKPOINTS in entries:
            raise RunFolderError(out, "holds a run that stopped before its first checkpoint", "move_aside")
        many = "entry" if len(entries) == 1 else "entries"
        raise RunFolderError(out, f"is not empty ({len(entries)} {many})", "move_aside")
    if out.resolve() in (Path.cwd(), *Path.cwd().parents):
        raise RunFolderError(out, "holds the current folder: it is not moved aside")
    target = _fresh(out.with_name(f"{out.name}.old-{time.strftime('%Y%m%d-%H%M%S')}"))
    try:
        out.rename(target)
    except OSError as e:
        raise RunFolderError(out, f"cannot be moved aside: {e.strerror or e}") from None
    return target
