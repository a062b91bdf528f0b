"""The one atomic-write helper of the project: a temporary file beside the target, flushed, then ``os.replace``.

A reader never sees half a file, and an interrupted write (Ctrl-C, a stop signal, an error)
leaves the previous file as it was. It lives in the lowest layer so that every package above
(checkpoints, reports, the command line's outputs) writes through it.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO


def file_mode() -> int:
    """The mode a new file gets under the current umask (``mkstemp`` would make it private)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[IO[bytes]]:
    """A binary file that becomes ``path`` when the block ends normally; an exception leaves ``path`` untouched.

    The missing folders of ``path`` are created. Everything written is flushed to disk before the rename.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, file_mode())
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], object]) -> None:
    """Create ``path`` from ``write(file)`` through :func:`atomic_file`.

    An exception while writing (an interruption too) removes the temporary file and leaves
    the previous ``path`` as it was; ``training.schedule`` holds stop signals back around a save.
    """
    with atomic_file(path) as f:
        write(f)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries to disk, so that a rename into it survives a crash (where the OS allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, lines as given) to ``path`` atomically."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


@contextlib.contextmanager
def atomic_text(path: str | Path) -> Iterator[io.StringIO]:
    """A text buffer (for ``csv`` writers and the like) written to ``path`` atomically when the block ends normally."""
    buffer = io.StringIO()
    yield buffer
    atomic_write_text(path, buffer.getvalue())


def atomic_copy(src: str | Path, dst: str | Path) -> None:
    """Copy ``src`` to ``dst`` atomically."""
    with open(src, "rb") as source:
        atomic_write(dst, lambda f: shutil.copyfileobj(source, f))
