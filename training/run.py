"""The run folder of ``agurk train``: config, TensorBoard logs, checkpoints, evaluations, progress, stop signals.

Layout of a run folder (the same for ``algo: fast`` and ``algo: sb3``)::

    RUN/config.yaml              the resolved config (every key)
    RUN/events.out.tfevents.*    TensorBoard scalars (tensorboard --logdir RUN)
    RUN/checkpoints/latest.pt    the latest network, optimizer and counters (written atomically)
    RUN/checkpoints/best.pt      the checkpoint with the best evaluation against the heuristics
    RUN/checkpoints/step-*.pt    with ``keep_checkpoints``: a copy of every ``latest.pt`` save
    RUN/checkpoints/kept.csv     with ``keep_checkpoints``: step, training and wall seconds of each copy
    RUN/eval.json                the last evaluation (duplicate-deal tournament, 95% intervals)

An evaluation is ``agurk evaluate``'s tournament (:func:`agents.tournament.tournament`)
of ``ppo:RUN/checkpoints/latest.pt`` against ``eval.opponent`` in every other seat, for
each player count trained on. Its score is the mean over player counts of the win rate
times the player count (1.0 is a fair share); ``best.pt`` is the checkpoint that scored
highest so far.

A run folder belongs to one run: :func:`claim_out` refuses a folder that is not empty
(``--force`` moves it aside), :func:`default_out` never reuses one, and
:func:`resume_checkpoint` refuses a config that does not fit the run it continues.
SIGINT, SIGTERM and SIGHUP stop training and save ``latest.pt`` (:class:`Signals`); a
signal that arrives while a checkpoint is being written waits until the file is complete.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

try:
    import fcntl
except ImportError:  # not on Windows: run folders are not locked there
    fcntl = None  # type: ignore[assignment]

from agents.policy import CheckpointError, load_checkpoint
from training.checkpoint import atomic_copy, atomic_write_text
from training.config import Config, ConfigError, config_from_dict, config_to_dict, dump_config, load_config

CHECKPOINTS = "checkpoints"
KEPT = "kept.csv"
"""The list of kept checkpoints in ``checkpoints/`` (``keep_checkpoints``): ``step,train_seconds,wall_seconds,file``."""
STABLE_SCALARS = (
    "charts/SPS",
    "charts/learning_rate",
    "charts/round_reward",
    "losses/value_loss",
    "losses/policy_loss",
    "losses/entropy",
    "losses/approx_kl",
    "losses/clipfrac",
    "losses/explained_variance",
    "eval/win_rate",
    "eval/score",
)
"""TensorBoard scalar names every run writes (``eval/win_rate/<P>p`` and ``train/win_rate/<agent>`` too)."""
WIN_RATE = "train/win_rate/"
"""Prefix of the training win rates: one scalar per ``pool.agents`` spec, and ``snapshots`` for all snapshots."""
LOG_SECONDS = 30.0
"""Seconds between two plain progress lines when stderr is not a terminal."""
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")
"""The signals that stop training and save ``latest.pt`` (those the platform has)."""
RESUME_KEYS = ("preset", "rules", "players", "episode")
"""The config keys that define the game a run is trained on (a resumed run must keep them, or ``--force``)."""


class RunFolderError(ValueError):
    """A run folder that cannot be used as asked (one-line message)."""


class Run:
    """One run folder: writes the config, scalars, checkpoints and evaluations."""

    def __init__(self, folder: str | Path, cfg: Config, start_step: int = 0) -> None:
        self.folder = Path(folder)
        self.cfg = cfg
        try:
            (self.folder / CHECKPOINTS).mkdir(parents=True, exist_ok=True)
            self._lock = lock_run(self.folder)  # before anything is written: a second run changes nothing
            atomic_write_text(self.folder / "config.yaml", dump_config(cfg))
        except OSError as e:
            raise ConfigError(f"cannot write the run folder {str(self.folder)!r}: {e.strerror or e}") from None
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(self.folder), purge_step=start_step or None)
        self.last_eval: dict[str, Any] | None = None

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

    def log(self, scalars: dict[str, float], step: int) -> None:
        """Write scalars at ``step`` (NaNs are skipped)."""
        for name, value in scalars.items():
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                self.writer.add_scalar(name, value, step)

    def evaluate(self, step: int, deals: int, progress: Any = None) -> dict[str, Any]:
        """Tournament of ``latest.pt`` against ``eval.opponent``; write ``eval.json`` and the ``eval/`` scalars."""
        from agents.tournament import tournament

        ev = self.cfg.eval
        spec = f"ppo:{self.latest.resolve()}" + (";sample" if ev.sample else "")
        results = []
        start = time.perf_counter()
        for rules in self.cfg.rule_sets():
            p = rules.players
            res = tournament(rules, [spec] + [ev.opponent] * (p - 1), deals, ev.seed, resamples=ev.resamples)
            entry = res.entries[0]
            results.append(
                {
                    "players": p,
                    "win_rate": entry.win_rate,
                    "win_rate_ci": list(entry.win_rate_ci),
                    "fair_share": 1.0 / p,
                    "mean_penalty": entry.mean_penalty,
                    "mean_penalty_ci": list(entry.mean_penalty_ci),
                    "rating": entry.rating,
                    "opponents": res.entries[1].to_dict() if p > 1 else None,
                }
            )
            self.log(
                {
                    f"eval/win_rate/{p}p": entry.win_rate,
                    f"eval/win_rate_low/{p}p": entry.win_rate_ci[0],
                    f"eval/mean_penalty/{p}p": entry.mean_penalty,
                },
                step,
            )
        score = sum(r["win_rate"] * r["players"] for r in results) / len(results)
        summary = {
            "step": step,
            "checkpoint": str(self.latest),
            "opponent": ev.opponent,
            "policy": "sampled" if ev.sample else "greedy",
            "deals": deals,
            "seed": ev.seed,
            "rules": self.cfg.preset,
            "score": score,
            "win_rate": sum(r["win_rate"] for r in results) / len(results),
            "results": results,
            "seconds": time.perf_counter() - start,
        }
        self.log({"eval/win_rate": summary["win_rate"], "eval/score": score}, step)
        self.writer.flush()
        atomic_write_text(self.folder / "eval.json", json.dumps(summary, indent=2) + "\n")
        self.last_eval = summary
        return summary

    def promote_if_best(self, score: float, best_score: float) -> bool:
        """Copy ``latest.pt`` to ``best.pt`` when ``score`` beats ``best_score``."""
        if score > best_score or not self.best.exists():
            atomic_copy(self.latest, self.best)
            return True
        return False

    def close(self) -> None:
        """Flush and close the TensorBoard writer; let the folder go (:func:`lock_run`)."""
        self.writer.flush()
        self.writer.close()
        if self._lock is not None:
            self._lock.close()


LOCK = ".lock"
"""The file a training run holds locked in its folder (with its process id), so that no second run writes there."""


def lock_run(folder: Path) -> IO[str] | None:
    """Lock ``folder`` for this process (``fcntl.flock``; held until the returned file is closed).

    :class:`RunFolderError` when another process holds it: two runs in one folder would
    overwrite each other's checkpoints. ``None`` where the platform has no ``fcntl``.
    """
    if fcntl is None:
        return None
    handle = (folder / LOCK).open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        pid = handle.read().strip() or "?"
        handle.close()
        raise RunFolderError(
            f"the run folder {str(folder)!r} is in use by another agurk train (process {pid}); wait for it to end"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def run_in_use(folder: Path) -> bool:
    """Whether another process holds ``folder``'s lock (:func:`lock_run`)."""
    if fcntl is None or not (folder / LOCK).is_file():
        return False
    with (folder / LOCK).open(encoding="utf-8") as handle:  # only looks: nothing written, the lock let go at once
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
    return False


def read_kept(folder: str | Path) -> list[dict[str, Any]]:
    """The kept checkpoints of a run folder (``checkpoints/kept.csv``), in step order; ``[]`` if none."""
    path = Path(folder) / CHECKPOINTS / KEPT
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        step, train, wall, name = line.split(",")
        rows.append({"step": int(step), "train_seconds": float(train), "wall_seconds": float(wall), "file": name})
    return rows


def eval_text(summary: dict[str, Any] | None, short: bool = False) -> str:
    """An evaluation as text: win rate and 95% CI per player count (``short``: for the progress bar)."""
    if not summary:
        return "-"
    parts = []
    for r in summary["results"]:
        lo, hi = r["win_rate_ci"]
        if short:
            parts.append(f"{r['players']}p {r['win_rate']:.3f} [{lo:.3f},{hi:.3f}]")
        else:
            parts.append(f"{r['players']}p win {r['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] (fair {r['fair_share']:.2f})")
    return "; ".join(parts)


def fold_snapshot_rates(logs: dict[str, float], agents: Iterable[str]) -> dict[str, float]:
    """``logs`` with the per-snapshot training win rates replaced by their mean, ``train/win_rate/snapshots``.

    The win rates of the ``agents`` (the ``pool.agents`` specs) keep their own scalars; every
    other ``train/win_rate/...`` is a snapshot's, which would make one TensorBoard tag per snapshot.
    """
    named = {WIN_RATE + spec for spec in agents}
    snapshots = [v for k, v in logs.items() if k.startswith(WIN_RATE) and k not in named]
    out = {k: v for k, v in logs.items() if not k.startswith(WIN_RATE) or k in named}
    if snapshots:
        out[WIN_RATE + "snapshots"] = sum(snapshots) / len(snapshots)
    return out


def _clock(seconds: float) -> str:
    """``H:MM:SS``."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


ProgressMode = Literal["bar", "lines", "off"]
"""``bar``: a rich progress bar (a terminal); ``lines``: plain progress lines (a log file); ``off``: nothing."""


class Progress:
    """Progress over learner decisions on stderr, with steps/s and the latest evaluation.

    ``bar`` draws a rich progress bar; ``lines`` prints one plain, timestamped line after the
    first update, after every evaluation and at most every ``every`` seconds between them.
    """

    def __init__(self, console: Any, total: int, start: int, mode: ProgressMode, every: float = LOG_SECONDS) -> None:
        self.mode, self.total, self.every = mode, total, every
        self._bar: Any = None
        self._sps: float | None = None
        self._eval = "-"
        self._started = time.monotonic()
        self._last_line: float | None = None
        if mode == "bar":
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("[bold]training"),
                BarColumn(),
                TextColumn("{task.completed:,.0f}/{task.total:,.0f} steps"),
                TextColumn("{task.fields[sps]} steps/s"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("win: {task.fields[eval]}"),
                console=console,
                transient=False,
            )
            self._task = self._bar.add_task("train", total=total, completed=start, sps="-", eval="-")
            self._bar.start()

    def update(self, step: int, sps: float | None = None, evaluation: str | None = None) -> None:
        """Move to ``step``; refresh steps/s and the evaluation text when given."""
        if sps is not None:
            self._sps = sps
        if evaluation is not None:
            self._eval = evaluation
        if self.mode == "bar":
            fields: dict[str, Any] = {"eval": self._eval}
            if self._sps is not None:
                fields["sps"] = f"{self._sps:,.0f}"
            self._bar.update(self._task, completed=step, **fields)
        elif self.mode == "lines":
            now = time.monotonic()
            if evaluation is not None or self._last_line is None or now - self._last_line >= self.every:
                self._last_line = now
                print(self.line(step, now), file=sys.stderr, flush=True)

    def line(self, step: int, now: float) -> str:
        """One plain progress line: time, step, share done, steps/s, elapsed, eta, latest evaluation."""
        sps = f"{self._sps:,.0f}" if self._sps else "-"
        eta = _clock(max(self.total - step, 0) / self._sps) if self._sps else "-"
        return (
            f"{time.strftime('%Y-%m-%d %H:%M:%S')} training: step {step:,}/{self.total:,} "
            f"({min(100 * step / self.total, 100):.1f}%), {sps} steps/s, elapsed {_clock(now - self._started)}, "
            f"eta {eta}, win: {self._eval}"
        )

    def close(self) -> None:
        """Stop the bar."""
        if self._bar is not None:
            self._bar.stop()


# ----------------------------------------------------------------------------- configs, resuming, run folders


def resolve_config(config: str | None, resume: str | None, sets: list[str]) -> Config:
    """The run's config: ``CONFIG.yaml`` (or the resumed run's ``config.yaml``) with the ``--set`` overrides."""
    if resume is not None and not Path(resume).is_dir():
        raise CheckpointError(f"--resume {resume!r} is not a run folder")
    if config is None:
        if resume is None:
            raise ConfigError("give a CONFIG.yaml (or --resume RUN_DIR to continue a run)")
        config = str(Path(resume) / "config.yaml")
    return load_config(config, sets)


def _rules_text(cfg: Config) -> str:
    """``standard`` or ``danish21 + limit=31`` for a config's rules."""
    return cfg.preset + "".join(f" + {k}={v}" for k, v in cfg.rules.items())


def _game_differences(saved: dict[str, Any], cfg: Config) -> list[str]:
    """How ``cfg``'s game (rules, players, episode) differs from the one the run with config ``saved`` trained on."""
    try:
        before = config_from_dict({k: saved[k] for k in RESUME_KEYS if k in saved})
    except ValueError:  # ConfigError, RulesError
        return [f"rules: the run's ({saved.get('preset')!r}, {saved.get('rules')!r}) are not valid any more"]
    out = []
    old, new = before.rule_sets(), cfg.rule_sets()
    counts = [r.players for r in old], [r.players for r in new]
    if counts[0] != counts[1]:
        out.append(f"players: the run trained on {counts[0]}, the config says {counts[1]}")
    a, b = old[0].to_dict(), new[0].to_dict()
    options = [f"{k} {a[k]} -> {b[k]}" for k in a if k != "players" and a[k] != b[k]]
    if options:
        out.append(
            f"rules: the run trained under {_rules_text(before)}, the config says {_rules_text(cfg)} "
            f"({', '.join(options)})"
        )
    if before.episode != cfg.episode:
        out.append(f"episode: the run trained on {before.episode!r} episodes, the config says {cfg.episode!r}")
    return out


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A config dict with its sections flattened to dotted keys (``eval.every``)."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if isinstance(v, dict) and k in ("pool", "eval"):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def config_changes(saved: dict[str, Any], cfg: Config) -> list[str]:
    """The keys of ``cfg`` that differ from the run's saved config, as ``key old -> new``."""
    before, after = _flat(saved), _flat(config_to_dict(cfg))
    return [f"{k} {before.get(k)!r} -> {v!r}" for k, v in after.items() if k in before and before[k] != v]


@dataclass
class Resume:
    """A checked ``--resume``: the checkpoint, the differences ``--force`` let through, the other changed keys."""

    data: dict[str, Any]
    forced: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def step(self) -> int:
        """The learner decisions the checkpoint was trained on."""
        return int(self.data["global_step"])


def resume_checkpoint(resume: str, cfg: Config, force: bool = False) -> Resume:
    """Load ``RUN/checkpoints/latest.pt`` and check that ``cfg`` can continue it (one-line errors).

    The algorithm, the network, the critic and the opponent pool's agents must match (the
    saved state cannot be loaded otherwise); a different game (rules, players, episode) is
    refused unless ``force``. Every difference found is named in the one line.
    """
    folder = Path(resume)
    path = folder / CHECKPOINTS / "latest.pt"
    if not folder.is_dir():
        raise CheckpointError(f"--resume {resume!r} is not a run folder")
    data = load_checkpoint(path)
    if "global_step" not in data:
        raise CheckpointError(f"checkpoint {str(path)!r} has no training state to resume from")
    fatal = []
    algo = data.get("algo", "fast")
    if algo != cfg.algo:
        fatal.append(f"algo: the run was trained with algo {algo!r}, the config says {cfg.algo!r}")
    actions = max(r.num_actions for r in cfg.rule_sets())
    if list(data["hidden"]) != list(cfg.hidden) or int(data["actions"]) != actions:
        fatal.append(
            f"network: the run's has hidden {list(data['hidden'])} and {data['actions']} actions, "
            f"the config needs hidden {cfg.hidden} and {actions} actions"
        )
    critic = "full_info" if "state_critic" in data else "shared"  # a checkpoint from before the key: shared
    if algo == cfg.algo == "fast" and critic != cfg.critic:
        fatal.append(f"critic: the run was trained with critic {critic!r}, the config says {cfg.critic!r}")
    pool = data.get("pool")
    if algo == cfg.algo == "fast" and isinstance(pool, dict) and "specs" in pool and "nets" in pool:
        specs, slots = list(pool["specs"]), len(pool["nets"])
        if specs != list(cfg.pool.agents) or slots != cfg.pool.max_snapshots:
            fatal.append(
                f"pool: the run's has pool.agents {specs} and pool.max_snapshots {slots}, "
                f"the config {list(cfg.pool.agents)} and {cfg.pool.max_snapshots}"
            )
    saved = data.get("config")
    if isinstance(saved, dict):
        game = _game_differences(saved, cfg)
    else:
        saved, game = {}, ["the checkpoint does not record the config it was trained with"]
    if fatal:
        raise CheckpointError(
            f"--resume {resume}: the config does not match the run: {'; '.join(fatal + game)}; "
            "its saved state cannot be loaded under this config, even with --force "
            "(resume with the run's own config, or start a new run)"
        )
    if game and not force:
        raise CheckpointError(
            f"--resume {resume}: the config does not match the run: {'; '.join(game)}; "
            "continue with the run's own config (leave out CONFIG.yaml), or add --force to train it on the new game"
        )
    if algo == "sb3":  # the SB3 model beside this checkpoint, wherever the run folder was created
        data["sb3_zip"] = str(path.with_suffix(".sb3.zip").resolve())
    keys = {k for k in _flat(config_to_dict(cfg)) if k.split(".")[0] in RESUME_KEYS}
    changed = [c for c in config_changes(saved, cfg) if c.split(" ")[0] not in keys]
    return Resume(data, game, changed)


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
            raise RunFolderError(f"cannot create the run folder {str(folder)!r}: {e.strerror or e}") from None


def claim_out(out: Path, force: bool = False, resume: str | None = None) -> str | None:
    """Check that ``out`` may receive a new run; with ``force`` move a used folder aside. Return what was done.

    A missing or empty folder is fine, and so is the folder of the run being resumed. A
    folder that holds anything else is refused in one line naming ``--resume`` and
    ``--force``; ``force`` renames it to ``OUT.old-<date>-<time>`` (nothing is deleted).
    """
    if resume is not None and out.resolve() == Path(resume).resolve():
        return None
    if not out.exists():
        return None
    if not out.is_dir():
        raise RunFolderError(f"--out {str(out)!r} exists and is not a folder")
    entries = sorted(p.name for p in out.iterdir())
    if not entries:
        return None
    if resume is not None and out.resolve() in Path(resume).resolve().parents:
        raise RunFolderError(f"--out {str(out)!r} holds the run being resumed, {resume!r}")
    aside = f"{out}.old-<date>-<time>"
    if not force:
        if "config.yaml" in entries or CHECKPOINTS in entries:
            raise RunFolderError(
                f"--out {str(out)!r} already holds a run; continue it with --resume {out}, "
                f"or add --force to move it aside to {aside} and start afresh"
            )
        raise RunFolderError(
            f"--out {str(out)!r} is not empty ({len(entries)} {'entry' if len(entries) == 1 else 'entries'}); "
            "give a new or empty folder, "
            f"or add --force to move it aside to {aside}"
        )
    if out.resolve() in (Path.cwd(), *Path.cwd().parents):
        raise RunFolderError(f"--force will not move {str(out)!r} aside: it holds the current folder")
    if run_in_use(out):
        raise RunFolderError(f"--force will not move {str(out)!r} aside: another agurk train is writing to it")
    target = _fresh(out.with_name(f"{out.name}.old-{time.strftime('%Y%m%d-%H%M%S')}"))
    try:
        out.rename(target)
    except OSError as e:
        raise RunFolderError(f"--force cannot move {str(out)!r} aside: {e.strerror or e}") from None
    return f"--force: moved the old folder {out} aside to {target}; starting a new run in {out}"


# ----------------------------------------------------------------------------- stop signals


class Interrupted(KeyboardInterrupt):
    """Training stopped by the signal ``signum`` (a KeyboardInterrupt, so whatever handles Ctrl-C handles it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_number(stop: KeyboardInterrupt) -> int:
    """The signal behind ``stop``: its ``signum``, or SIGINT for a plain KeyboardInterrupt."""
    return int(getattr(stop, "signum", signal.SIGINT))


def _note(text: str) -> None:
    """One ``agurk: ...`` line on stderr, safe inside a signal handler (one unbuffered write, no ``print``)."""
    with contextlib.suppress(OSError):
        os.write(2, f"agurk: {text}\n".encode())


class Signals:
    """While entered: SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` in the main thread, like Ctrl-C.

    Inside :meth:`held` (a checkpoint being written) a signal is noted on stderr and raised
    when the outermost block ends, so the file is complete first. After :meth:`stop` (the
    final checkpoint) every signal is only noted, until the outermost ``with`` ends (the
    handlers are installed once, however deeply entered). A signal the process ignores
    (SIGHUP under ``nohup``) stays ignored; outside the main thread nothing is installed.
    """

    def __init__(self) -> None:
        self.stopping = False
        self._depth = 0
        self._held = 0
        self._pending: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Signals:
        self._depth += 1
        if self._depth == 1 and threading.current_thread() is threading.main_thread():
            for name in STOP_SIGNALS:
                signum = getattr(signal, name, None)
                if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)
            self._previous.clear()

    def _handle(self, signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if self._held:
            _note(f"{name} received while writing a checkpoint; stopping once it is written")
            if self._pending is None:
                self._pending = signum
        elif self.stopping:
            _note(f"{name} received; already stopping")
        else:
            self.stopping = True
            raise Interrupted(signum)

    def stop(self) -> None:
        """From now on, only note signals (the run is stopping or done)."""
        self.stopping = True

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold signals back for the block; one that arrived is raised once the outermost block ends."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
        if not self._held and self._pending is not None:
            signum, self._pending = self._pending, None
            if not self.stopping:
                self.stopping = True
                raise Interrupted(signum)


# ----------------------------------------------------------------------------- the schedule and the run


class Schedule:
    """After each update: log the scalars with ``charts/SPS``, then checkpoint and evaluate when due.

    ``trainer.save`` runs inside ``hold()`` (signals wait for the file); ``saved_step`` is the
    step of the last checkpoint written, ``None`` before the first.
    """

    def __init__(
        self,
        run: Run,
        progress: Progress,
        trainer: Any,
        start_step: int,
        hold: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
    ) -> None:
        self.run, self.progress, self.trainer, self.hold = run, progress, trainer, hold
        cfg = run.cfg
        self.best_score = trainer.best_score
        self.seconds = 0.0
        self.steps = 0
        self.saved_step: int | None = None
        self.last_save = self.started = time.monotonic()
        self.kept_train, self.kept_wall = run.kept_seconds() if cfg.keep_checkpoints else (0.0, 0.0)
        self.next_eval = (start_step // cfg.eval.every + 1) * cfg.eval.every if cfg.eval.every else None
        every = cfg.checkpoint_every
        self.next_checkpoint = (start_step // every + 1) * every if every else None

    def save(self) -> None:
        """Write ``latest.pt`` (signals held until it is complete)."""
        with self.hold():
            self.trainer.save(self.run.latest, self.best_score)
            self.saved_step = self.trainer.global_step
            self.last_save = time.monotonic()
            if self.run.cfg.keep_checkpoints:
                wall = self.kept_wall + self.last_save - self.started
                self.run.keep(self.saved_step, self.kept_train + self.seconds, wall)

    def checkpoint_due(self, step: int) -> bool:
        """Whether ``checkpoint_every`` decisions or ``checkpoint_minutes`` have passed since the last one."""
        minutes = self.run.cfg.checkpoint_minutes
        by_time = bool(minutes) and time.monotonic() - self.last_save >= minutes * 60
        return by_time or (self.next_checkpoint is not None and step >= self.next_checkpoint)

    def after_update(self, step: int, decisions: int, seconds: float, logs: dict[str, float]) -> None:
        """Log, and checkpoint / evaluate if ``step`` reached the next one."""
        cfg = self.run.cfg
        self.seconds += seconds
        self.steps += decisions
        sps = self.steps / max(self.seconds, 1e-9)
        self.run.log({**fold_snapshot_rates(logs, cfg.pool.agents), "charts/SPS": sps}, step)
        self.progress.update(step, sps=sps)
        if self.next_eval is not None and step >= self.next_eval:
            self.evaluate(step, cfg.eval.deals)
            while self.next_eval <= step:
                self.next_eval += cfg.eval.every
        elif self.checkpoint_due(step):
            self.save()
        if self.next_checkpoint is not None:
            while self.next_checkpoint <= step:
                self.next_checkpoint += cfg.checkpoint_every

    def evaluate(self, step: int, deals: int) -> dict[str, Any]:
        """Save ``latest``, evaluate it, promote it to ``best`` if it scored best so far."""
        self.save()
        summary = self.run.evaluate(step, deals)
        if summary["score"] > self.best_score or not self.run.best.exists():
            self.best_score = max(summary["score"], self.best_score)
            with self.hold():
                self.save()  # latest now records the new best score
                self.run.promote_if_best(summary["score"], float("-inf"))
        self.progress.update(step, evaluation=eval_text(summary, short=True))
        return summary


def make_trainer(cfg: Config, resume: dict[str, Any] | None = None) -> Any:
    """The trainer of ``cfg.algo`` (``FastTrainer``, ``Sb3Trainer``, ``ExpertTrainer``), continuing ``resume``.

    Both have ``train(schedule)`` (``schedule.after_update(step, decisions, seconds, logs)``
    after every update), ``save(path, best_score)``, ``global_step`` and ``best_score``.
    """
    if cfg.algo == "sb3":
        from training.sb3 import Sb3Trainer as Trainer
    elif cfg.algo == "expert":
        from training.expert import ExpertTrainer as Trainer
    else:
        from training.ppo import FastTrainer as Trainer
    return Trainer(cfg, resume)


class _Updates:
    """A trainer ``schedule`` that only forwards each update's step and scalars to ``on_update``."""

    def __init__(self, on_update: Callable[[int, dict[str, float]], Any] | None) -> None:
        self.on_update = on_update

    def after_update(self, step: int, decisions: int, seconds: float, logs: dict[str, float]) -> None:
        if self.on_update is not None:
            self.on_update(step, logs)


def train_to_file(
    cfg: Config, path: str | Path, on_update: Callable[[int, dict[str, float]], Any] | None = None
) -> Any:
    """Train ``cfg`` to ``total_steps`` (no run folder, no evaluation) and save the checkpoint to ``path``.

    The quick way to a trained agent (``ppo:PATH``) from code: ``agurk skill-report`` and
    the quickstart notebook use it. ``on_update(step, logs)`` is called after every update
    with the learner decisions so far and the update's scalars. Returns the trainer.
    """
    trainer = make_trainer(cfg)
    trainer.train(_Updates(on_update))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    trainer.save(path, trainer.best_score)
    return trainer


def execute(
    cfg: Config,
    out: Path,
    resume: dict[str, Any] | None,
    console: Any,
    progress: ProgressMode = "off",
    signals: Signals | None = None,
) -> dict[str, Any]:
    """Train ``cfg`` into the run folder ``out`` (continuing ``resume``); return a summary.

    SIGINT (Ctrl-C), SIGTERM and SIGHUP stop training and save ``latest``; the summary's
    ``signal`` names the one that did (``None`` when training ran to its end), ``saved``
    whether a checkpoint was written (not when stopped while the trainer was being built).
    A caller that enters ``signals`` itself keeps later signals noted only, until it leaves.
    """
    signals = signals or Signals()
    start_step = int(resume["global_step"]) if resume else 0
    stopped: int | None = None
    trainer: Any = None
    schedule: Schedule | None = None
    started = time.perf_counter()
    with signals:
        run = Run(out, cfg, start_step)
        bar = Progress(console, cfg.total_steps, start_step, progress)
        try:
            trainer = make_trainer(cfg, resume)
            schedule = Schedule(run, bar, trainer, start_step, signals.held)
            try:
                trainer.train(schedule)
            except KeyboardInterrupt as e:
                stopped = signal_number(e)
                signals.stop()
            schedule.save()
            if stopped is None and trainer.global_step > start_step:
                schedule.evaluate(trainer.global_step, cfg.eval.final_deals)
        except KeyboardInterrupt as e:  # while building the trainer, saving at the end or the final evaluation
            stopped = signal_number(e) if stopped is None else stopped
        finally:
            signals.stop()
            bar.close()
            run.close()
    return {
        "out": str(out),
        "global_step": trainer.global_step if trainer is not None else start_step,
        "start_step": start_step,
        "decisions_per_s": schedule.steps / max(schedule.seconds, 1e-9) if schedule else 0.0,
        "seconds": time.perf_counter() - started,
        "interrupted": stopped is not None,
        "signal": stopped,
        "saved": schedule is not None and schedule.saved_step is not None,
        "eval": run.last_eval,
        "best_score": schedule.best_score if schedule else float("-inf"),
    }
