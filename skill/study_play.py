"""What a skill study plays: pieces of duplicate deals, each one agent against a field, cached on disk as it finishes.

A study (:mod:`skill.study`) measures relative skill in many **settings** (a preset at a
player count against a field of one agent) on far more deals than a skill report. Its unit
of work is the **piece**: one agent, focal against the field, on one chunk of ``deals``
duplicate deals (match ``m`` of the chunk's deal seed, every seat rotation), as
:func:`agents.tournament.plan_tournament` plays them. A replication with seed ``S`` is the
chunks of deal seeds ``S * CHUNKS + c``; the selection of the best fair agent uses seed 0
(the deals of the committed skill report), so it never sees a replication's deals.

A piece keeps only what the statistics read, per deal summed over the seat rotations
(:class:`Piece`): the focal's win share, penalty points and rounds played. The piece cache
(:class:`PieceCache`) stores it in ``DIR/SETTING/AGENT/SEED.npz`` under the key material of
its tables (:meth:`skill.cache.TaskCache.material`: rules, agents, checkpoints' hashes, the
code's fingerprint, seeds), so a stale piece is never read; each is written atomically as it
finishes, so an interrupted study keeps every finished piece and a rerun plays only what is
missing. A piece is a few kilobytes: a whole study's cache can be committed and resumed on
another machine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.tasks import LOCAL, Backend, TaskProgress, run_tasks
from agents.tournament import TournamentPlan, plan_tournament, play_planned
from agents.tournament_stats import SeatStats
from agurk_env.rules import Rules
from skill.cache import TaskCache, read_arrays, write_arrays
from skill.stats import total

CHUNKS = 1000
"""Chunks per replication seed: chunk ``c`` of seed ``S`` deals from deal seed ``S * CHUNKS + c``."""
PIECE_KEY = "key"
"""The array of a piece's file that holds its key material."""
FORMAT = 1
"""The piece cache's layout version (raise it when a piece's arrays or key change)."""


@dataclass(frozen=True)
class Setting:
    """Where relative skill is measured: a preset at a player count, each agent focal against ``field`` copies."""

    preset: str
    players: int = 4
    field: str = "guard"

    @property
    def key(self) -> str:
        """``PRESET-<P>p-<FIELD>``: the setting's name in files and tables."""
        return f"{self.preset}-{self.players}p-{slug(self.field)}"

    @property
    def rules(self) -> Rules:
        """The preset's rules at the setting's player count."""
        return Rules.preset(self.preset, players=self.players)


def slug(spec: str) -> str:
    """An agent spec as a file name (``pimc:eval=exact`` -> ``pimc_eval_exact``)."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", spec).strip("_")


def chunk_seed(seed: int, chunk: int) -> int:
    """The deal seed of chunk ``chunk`` of replication ``seed`` (seed 0, chunk 0: the selection deals)."""
    if not 0 <= chunk < CHUNKS:
        raise ValueError(f"chunk must be in 0..{CHUNKS - 1}, not {chunk}")
    return seed * CHUNKS + chunk


@dataclass(frozen=True)
class PieceJob:
    """One piece to play: agent ``spec`` focal against the setting's field on ``deals`` deals of ``seed``."""

    setting: Setting
    spec: str
    seed: int
    deals: int

    @property
    def name(self) -> str:
        """The piece in progress lines and errors."""
        return f"{self.setting.key} {self.spec} seed {self.seed}"

    def plan(self) -> TournamentPlan:
        """The piece's tournament: one task per seat rotation."""
        s = self.setting
        return plan_tournament(s.rules, [self.spec] + [s.field] * (s.players - 1), self.deals, self.seed, resamples=1)


@dataclass
class Piece:
    """Per deal (summed over the seat rotations) what one agent did as the focal player."""

    win: np.ndarray  # (D,) mean win share over the rotations
    penalty: np.ndarray  # (D,) penalty points over the rotations
    rounds: np.ndarray  # (D,) rounds played over the rotations

    @staticmethod
    def of(plan: TournamentPlan, tables: Sequence[SeatStats]) -> Piece:
        """The focal entry's numbers of a finished piece (its tables in plan order)."""
        seated = [tables[t].by_entry(seat) for t, seat in plan.design.views]
        return Piece(
            total(s.win[:, 0] for s in seated) / len(seated),
            total(s.penalty[:, 0] for s in seated).astype(np.float64),
            total(s.rounds[:, 0] for s in seated).astype(np.float64),
        )

    @staticmethod
    def join(pieces: Sequence[Piece]) -> Piece:
        """The pieces' deals one after another."""
        return Piece(*(np.concatenate([getattr(p, k) for p in pieces]) for k in ("win", "penalty", "rounds")))


class PieceCache:
    """Finished pieces on disk (see the module docstring): :meth:`load` and :meth:`store` by job."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.tables = TaskCache(self.folder)  # only its key material and file hashes

    def material(self, job: PieceJob, plan: TournamentPlan) -> str:
        """The key material of a piece: the format and every table's (:meth:`TaskCache.material`)."""
        tables = [json.loads(self.tables.material(task, plan.labels)) for task in plan.tasks]
        return json.dumps({"format": FORMAT, "tables": tables}, sort_keys=True)

    def path(self, job: PieceJob) -> Path:
        """``DIR/SETTING/AGENT/SEED-DEALS.npz``."""
        return self.folder / job.setting.key / slug(job.spec) / f"{job.seed}-{job.deals}.npz"

    def load(self, job: PieceJob, material: str) -> Piece | None:
        """The stored piece, or ``None`` (none stored, unreadable, or stored under another key)."""
        arrays = self.load_arrays(self.path(job), material)
        return None if arrays is None else Piece(arrays["win"], arrays["penalty"], arrays["rounds"])

    def store(self, job: PieceJob, material: str, piece: Piece) -> None:
        """Keep a finished piece, atomically."""
        arrays = {"win": piece.win, "penalty": piece.penalty, "rounds": piece.rounds}
        self.store_arrays(self.path(job), material, arrays)

    @staticmethod
    def load_arrays(path: Path, material: str) -> dict[str, np.ndarray] | None:
        """The arrays stored at ``path`` under key ``material``, or ``None``."""
        return read_arrays(path, material, PIECE_KEY)

    @staticmethod
    def store_arrays(path: Path, material: str, arrays: dict[str, np.ndarray]) -> None:
        """Keep ``arrays`` at ``path`` under key ``material``, atomically (a temporary file renamed into place)."""
        write_arrays(path, material, arrays, PIECE_KEY)


def play_piece(progress: TaskProgress, job: PieceJob) -> Piece:
    """A task of :func:`agents.tasks.run_tasks`: play one piece, its seat rotations one after another."""
    plan = job.plan()
    tables: list[SeatStats] = []
    for task in plan.tasks:
        done = len(tables) * job.deals
        tables.append(play_planned(lambda n, base=done: progress(base + n), *task))
    return Piece.of(plan, tables)


def _init_worker() -> None:
    """One torch thread per worker process: one core per piece."""
    import torch

    torch.set_num_threads(1)


Monitor = Callable[[int, int, str], None]
"""``monitor(pieces_done, pieces_total, last_finished)``."""


def play_pieces(
    jobs: Sequence[PieceJob],
    cache: PieceCache | None,
    workers: int = 1,
    backend: Backend = LOCAL,
    monitor: Monitor | None = None,
) -> tuple[list[Piece], int]:
    """Every piece of ``jobs``, read from ``cache`` or played (largest first) and stored as each finishes.

    Returns the pieces in job order and how many were played (the rest came from the cache).
    """
    plans = [job.plan() for job in jobs]
    materials = [cache.material(job, plan) if cache else "" for job, plan in zip(jobs, plans, strict=True)]
    found: list[Piece | None] = [cache.load(job, m) if cache else None for job, m in zip(jobs, materials, strict=True)]
    todo = [i for i, p in enumerate(found) if p is None]
    todo.sort(key=lambda i: -jobs[i].deals * cost(jobs[i].spec, jobs[i].setting))
    done = len(jobs) - len(todo)
    report = monitor or (lambda n, total, name: None)
    report(done, len(jobs), "")

    def finished(index: int, piece: Piece) -> None:
        nonlocal done
        i = todo[index]
        found[i] = piece
        if cache:
            cache.store(jobs[i], materials[i], piece)
        done += 1
        report(done, len(jobs), jobs[i].name)

    run_tasks(
        play_piece,
        [(jobs[i],) for i in todo],
        workers,
        backend,
        names=[jobs[i].name for i in todo],
        initializer=_init_worker if backend.kind == "local" else None,
        on_result=finished,
        every=1.0,
    )
    return [p for p in found if p is not None], len(todo)


def cost(spec: str, setting: Setting) -> float:
    """Rough relative cost of one deal of ``spec`` in ``setting`` (to play the largest pieces first)."""
    base = 60.0 if "eval=exact" in spec else 1.0
    field = 5.0 if spec.startswith("fictive") and not setting.field.startswith(("guard", "heuristic")) else 1.0
    return base * field * setting.players


def jobs_for(setting: Setting, spec: str, seed: int, deals: int, chunk: int) -> list[PieceJob]:
    """The pieces of ``deals`` deals of replication ``seed`` for one agent: chunks of ``chunk`` deals."""
    if deals % chunk:
        raise ValueError(f"deals ({deals}) must be a multiple of the chunk size ({chunk})")
    return [PieceJob(setting, spec, chunk_seed(seed, c), chunk) for c in range(deals // chunk)]
