"""The result cache of a skill report or atlas (``--cache DIR``): each ladder table played once, for any later run.

A report's tasks are the tables of its ladder agents' tournaments (:func:`skill.variant.agent_plan`,
one :func:`agents.tournament.play_planned` each). :class:`TaskCache` keeps each table's
:class:`agents.tournament_stats.SeatStats` (every per-match array the statistics read) in
``DIR/KK/KEY.npz``, under a key that covers everything the table's numbers depend on
(:meth:`TaskCache.material`):

- the cache layout (:data:`FORMAT`), the package version and a fingerprint of the code that
  plays (every ``.py`` of ``agurk_env`` and ``agents``: a change to the engine or to any
  agent replays everything);
- the table's rules (players and hand size included), its entries' agent specs, and the
  SHA-256 of every file an entry plays (``ppo:PATH``'s checkpoint, ``zoo:NAME``'s shipped
  file; ``best`` and ``guided`` every shipped file), so a retrained checkpoint replays only
  the agents that play it;
- the seating, the agents' seed, the deals, the deal seed and the batch size.

The bootstrap's resamples and the statistics are not cached: they are computed from the
tables on every run, so a report is byte-identical with and without the cache. Entries are
written atomically (a temporary file, then a rename): an interrupted run leaves every table
it finished and no partial entry. An entry that cannot be read, or whose stored key material
differs from the task's, is played again.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from agents.tournament_stats import SeatStats
from agurk_env.atomic import atomic_file

FORMAT = 1
"""The cache's layout and key version: raise it when either changes (old entries are then never read)."""
CODE_PACKAGES = ("agurk_env", "agents")
"""The packages whose sources the key's code fingerprint covers: the engine and every agent."""
_KEY_ARRAY = "__key__"
"""The array of an entry that holds its key material (JSON), checked on every read."""


@functools.cache
def code_fingerprint() -> str:
    """SHA-256 (16 hex digits) of every ``.py`` file of :data:`CODE_PACKAGES`, by path relative to the root."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in CODE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def package_version() -> str:
    """The installed ``agurk-rl`` version (``unknown`` outside an install)."""
    try:
        return metadata.version("agurk-rl")
    except metadata.PackageNotFoundError:
        return "unknown"


def spec_files(spec: str) -> list[Path]:
    """The files agent ``spec`` plays: a ``ppo`` checkpoint, a ``zoo`` policy; ``best`` and ``guided`` all shipped.

    A ``ppo`` run folder is its ``checkpoints/best.pt`` (else ``latest.pt``), as
    :func:`agents.policy.load_checkpoint` reads it. Other agents play no file.
    """
    kind, _, arg = spec.partition(":")
    if kind == "ppo":
        path = Path(arg.partition(";")[0])
        if path.is_dir():
            best = path / "checkpoints" / "best.pt"
            path = best if best.exists() else path / "checkpoints" / "latest.pt"
        return [path]
    if kind in ("zoo", "best", "guided"):
        from agents.zoo import UNIVERSAL, ZOO, path_of

        if kind == "zoo":
            return [path_of(arg or UNIVERSAL)]
        files = sorted(ZOO.glob("*.pt"))
        policy = next((o.partition("=")[2] for o in arg.split(";") if o.startswith("policy=")), "zoo")
        return files if kind == "best" or policy.startswith("zoo") else [*files, Path(policy)]
    return []


class TaskCache:
    """Tables of ladder tournaments on disk (see the module docstring): :meth:`load` and :meth:`store` by task."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._hashes: dict[Path, str] = {}

    def file_hash(self, path: Path) -> str:
        """The SHA-256 of a file's content (read once per cache object)."""
        path = path.resolve()
        if path not in self._hashes:
            self._hashes[path] = hashlib.sha256(path.read_bytes()).hexdigest()
        return self._hashes[path]

    def material(self, task: tuple[Any, ...], specs: list[str]) -> str:
        """The key material (JSON) of one table: ``task`` the :func:`agents.tournament.play_planned` arguments.

        ``specs`` are the tournament's entries (agent specs), in entry order.
        """
        rules, _, table, agent_seed, deals, seed, batch, deck = task
        files = {spec: [self.file_hash(p) for p in spec_files(spec)] for spec in specs}
        return json.dumps(
            {
                "format": FORMAT,
                "package": package_version(),
                "code": code_fingerprint(),
                "rules": rules.to_dict(),
                "entries": specs,
                "files": {spec: hashes for spec, hashes in files.items() if hashes},
                "table": [int(s) for s in table],
                "agent_seed": int(agent_seed),
                "deals": int(deals),
                "seed": int(seed),
                "batch": int(batch),
                "deck": None if deck is None else [int(c) for c in deck],
            },
            sort_keys=True,
        )

    def path(self, material: str) -> Path:
        """Where the entry of key ``material`` lives: ``DIR/KK/KEY.npz`` (``KEY`` its SHA-256)."""
        key = hashlib.sha256(material.encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.npz"

    def load(self, material: str) -> SeatStats | None:
        """The stored table of key ``material``, or ``None`` (none stored, unreadable, or another key's)."""
        arrays = self.load_arrays(material)
        if arrays is None:
            return None
        stored: dict[str, Any] = {f.name: arrays.get(f.name) for f in dataclasses.fields(SeatStats)}
        return SeatStats(**stored)

    def store(self, material: str, stats: SeatStats) -> None:
        """Keep ``stats`` under key ``material``, atomically (a temporary file renamed into place)."""
        arrays = {f.name: getattr(stats, f.name) for f in dataclasses.fields(SeatStats)}
        self.store_arrays(material, {name: np.asarray(value) for name, value in arrays.items() if value is not None})

    def load_arrays(self, material: str) -> dict[str, np.ndarray] | None:
        """Any arrays stored under key ``material`` (:func:`read_arrays`)."""
        return read_arrays(self.path(material), material, _KEY_ARRAY)

    def store_arrays(self, material: str, arrays: dict[str, np.ndarray]) -> None:
        """Keep any ``arrays`` under key ``material`` (:func:`write_arrays`)."""
        write_arrays(self.path(material), material, arrays, _KEY_ARRAY)


def read_arrays(path: Path, material: str, key_array: str) -> dict[str, np.ndarray] | None:
    """The arrays at ``path`` if its ``key_array`` holds ``material``; ``None``: absent, unreadable, another key's."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data[key_array]) != material:
                return None
            return {name: data[name] for name in data.files if name != key_array}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def write_arrays(path: Path, material: str, arrays: dict[str, np.ndarray], key_array: str) -> None:
    """Keep ``arrays`` at ``path``, ``material`` in ``key_array``, atomically (a temporary file renamed into place)."""
    with atomic_file(path) as f:
        np.savez_compressed(f, allow_pickle=True, **arrays, **{key_array: np.array(material)})
