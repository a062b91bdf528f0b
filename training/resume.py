"""Continuing a run: its config, and whether a config can continue its checkpoint (one-line errors).

The algorithm, the network, the critic and the opponent pool's agents must match the saved
state (it cannot be loaded otherwise: :class:`ResumeError` ``fatal``); a different game
(rules, players, episode) is refused unless ``new_game`` allows it (``ResumeError`` not
fatal). Every difference found is named in the one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agents.policy import Checkpoint, CheckpointError, load_checkpoint
from training.config import Config, ConfigError, config_from_dict, config_to_dict, load_config
from training.run_folder import CHECKPOINTS, RunFolderError, check_not_in_use

RESUME_KEYS = ("preset", "rules", "players", "episode")
"""The config keys that define the game a run is trained on (a resumed run must keep them, or ``new_game``)."""


class ResumeError(CheckpointError):
    """A config that cannot continue the run: ``differences`` named; ``fatal`` when no override can help."""

    def __init__(self, folder: str | Path, differences: list[str], fatal: bool) -> None:
        super().__init__(f"the config does not match the run in {str(folder)!r}: {'; '.join(differences)}")
        self.folder, self.differences, self.fatal = Path(folder), differences, fatal


def resolve_config(config: str | None, resume: str | None, sets: list[str]) -> Config:
    """The run's config: the file ``config`` (or the resumed run's ``config.yaml``) with the ``sets`` overrides."""
    if resume is not None and not Path(resume).is_dir():
        raise RunFolderError(resume, "is not a run folder")
    if config is None:
        if resume is None:
            raise ConfigError("no config: give one, or a run folder to continue")
        config = str(Path(resume) / "config.yaml")
    return load_config(config, sets)


def _rules_text(cfg: Config) -> str:
    """``standard`` or ``danish21 + limit=31`` for a config's rules."""
    return cfg.preset + "".join(f" + {k}={v}" for k, v in cfg.rules.items())


def _game_differences(saved: Mapping[str, object], cfg: Config) -> list[str]:
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


_SECTIONS = ("pool", "eval", "expert", "mixture", "mixture.families")
"""Config sections flattened to dotted keys; a mixture family is compared whole (``mixture.families.NAME``)."""


def _flat(data: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """A config dict with its sections flattened to dotted keys (``eval.every``, ``mixture.families.hard4``)."""
    out: dict[str, object] = {}
    for k, v in data.items():
        if isinstance(v, dict) and f"{prefix}{k}" in _SECTIONS:
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def config_changes(saved: Mapping[str, object], cfg: Config) -> list[str]:
    """The keys of ``cfg`` that differ from the run's saved config, as ``key old -> new``.

    A key the saved config lacks (an option newer than the run) had its default there.
    """
    before, after = {**_flat(config_to_dict(Config())), **_flat(saved)}, _flat(config_to_dict(cfg))
    family = "mixture.families."
    changed = [
        f"{k} {before.get(k)!r} -> {v!r}"
        for k, v in after.items()
        if (k in before or k.startswith(family)) and before.get(k) != v
    ]
    return changed + [f"{k} {v!r} -> None" for k, v in before.items() if k.startswith(family) and k not in after]


@dataclass
class Resume:
    """A checked resume: the checkpoint, the game differences allowed (``new_game``), the other changed keys."""

    data: Checkpoint
    forced: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def step(self) -> int:
        """The learner decisions the checkpoint was trained on."""
        return int(self.data["global_step"])


def resume_checkpoint(resume: str, cfg: Config, new_game: bool = False) -> Resume:
    """Load ``RUN/checkpoints/latest.pt`` and check that ``cfg`` can continue it (:class:`ResumeError`).

    A folder another run is writing to is :class:`RunFolderError` (remedy ``wait``), and so is
    one whose run stopped before its first checkpoint (remedy ``move_aside``).
    """
    folder = Path(resume)
    path = folder / CHECKPOINTS / "latest.pt"
    if not folder.is_dir():
        raise RunFolderError(resume, "is not a run folder")
    check_not_in_use(folder)
    if not path.exists() and (folder / "config.yaml").is_file():
        raise RunFolderError(folder, "holds a run that stopped before its first checkpoint", "move_aside")
    data = load_checkpoint(path)
    if "global_step" not in data:
        raise CheckpointError(f"checkpoint {str(path)!r} has no training state to resume from")
    fatal = []
    algo = data.get("algo", "ppo")
    if algo != cfg.algo:
        fatal.append(f"algo: the run was trained with algo {algo!r}, the config says {cfg.algo!r}")
    actions = cfg.actions()
    if list(data["hidden"]) != list(cfg.hidden) or int(data["actions"]) != actions:
        fatal.append(
            f"network: the run's has hidden {list(data['hidden'])} and {data['actions']} actions, "
            f"the config needs hidden {cfg.hidden} and {actions} actions"
        )
    critic = "full_info" if "state_critic" in data else "shared"  # a checkpoint from before the key: shared
    if algo == cfg.algo == "ppo" and critic != cfg.critic:
        fatal.append(f"critic: the run was trained with critic {critic!r}, the config says {cfg.critic!r}")
    oracle = "oracle" in data
    if algo == cfg.algo == "ppo" and oracle != bool(cfg.oracle_steps):
        had = "with an oracle" if oracle else "without an oracle"
        fatal.append(f"oracle_steps: the run was trained {had}, the config says oracle_steps: {cfg.oracle_steps}")
    pool = data.get("pool")
    if algo == cfg.algo == "ppo" and isinstance(pool, dict) and "specs" in pool and "nets" in pool:
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
        raise ResumeError(resume, fatal + game, fatal=True)
    if game and not new_game:
        raise ResumeError(resume, game, fatal=False)
    if algo == "sb3":  # the SB3 model beside this checkpoint, wherever the run folder was created
        data["sb3_zip"] = str(path.with_suffix(".sb3.zip").resolve())
    keys = {k for k in _flat(config_to_dict(cfg)) if k.split(".")[0] in RESUME_KEYS}
    changed = [c for c in config_changes(saved, cfg) if c.split(" ")[0] not in keys]
    return Resume(data, game, changed)
