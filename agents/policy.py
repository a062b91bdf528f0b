"""The policy network, the one masking helper, reading checkpoints, and checkpoints as agents (``ppo:PATH``).

:class:`PolicyNet` is a shared MLP trunk with a linear policy head (one logit per card,
``2 .. A, X``) and a linear value head, on the fixed-size observation of
:mod:`agurk_env.observation`; one network serves every rule set and player count. An
:class:`Ensemble` plays several networks as one (an ensemble file of ``agurk zoo export``).
:func:`masked_log_softmax` is the only place where the legal mask meets the logits.

A checkpoint is one ``torch.save`` file (a dict of tensors and plain values, read back
with ``weights_only=True``): the format tag, the network shape, the weights, and for
resuming the optimizer, step counters, pool and generator states (and a ``critic:
full_info`` run's value network, which playing never reads). ``training.checkpoint``
writes it; :func:`load_checkpoint` turns a missing, corrupt or foreign file into a
one-line :class:`CheckpointError`.
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np
import torch
from torch import nn

from agurk_env import observation
from agurk_env.agent import Decision

FORMAT = "agurk-ppo"
"""The ``format`` tag of every checkpoint."""
VERSION = 1
"""Checkpoint layout version."""
MASKED = -1e9
"""The logit given to illegal cards (finite, so that ``0 * log p`` stays 0)."""


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, corrupt or does not fit (one-line message)."""


def layer_init(layer: nn.Linear, std: float = float(np.sqrt(2)), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights, constant bias (CleanRL's initialization)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Trunk(nn.Module):
    """The shared MLP: ``obs_size -> hidden[0] -> ... -> hidden[-1]``, ReLU after every layer."""

    def __init__(self, obs_size: int, hidden: list[int]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for width in hidden:
            layers += [layer_init(nn.Linear(obs_size, width)), nn.ReLU()]
            obs_size = width
        self.net = nn.Sequential(*layers)
        self.out_size = obs_size

    def forward(self, x: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        """Features ``(N, hidden[-1])`` of observations ``(N, obs_size)``; ``extra`` joins the first layer's sum."""
        if extra is None:
            return self.net(x)
        return self.net[1:](self.net[0](x) + extra)


class PolicyNet(nn.Module):
    """Shared trunk, linear policy head (``actions`` logits) and linear value head."""

    def __init__(self, obs_size: int, actions: int, hidden: list[int]) -> None:
        super().__init__()
        self.obs_size, self.actions, self.hidden = obs_size, actions, list(hidden)
        self.trunk = Trunk(obs_size, hidden)
        self.actor = layer_init(nn.Linear(self.trunk.out_size, actions), std=0.01)
        self.critic = layer_init(nn.Linear(self.trunk.out_size, 1), std=1.0)

    def forward(self, x: torch.Tensor, extra: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw logits ``(N, actions)`` and values ``(N,)``; ``extra``: a training-only input to the first layer."""
        h = self.trunk(x, extra)
        return self.actor(h), self.critic(h).squeeze(-1)


class Ensemble(nn.Module):
    """Several policy networks as one: the weighted mean of their logits and values (a logit ensemble).

    After masking, the mean of the logits is the normalized weighted geometric mean of the
    members' policies. Fine-tunes of one network toward different fields keep each field's
    strength better together this way than the mean of their weights does (docs/zoo.md).
    """

    def __init__(self, members: list[PolicyNet], weights: list[float]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)
        self.weights = [float(w) for w in weights]
        self.obs_size, self.actions = members[0].obs_size, members[0].actions

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The weighted mean of the members' raw logits ``(N, actions)`` and values ``(N,)``."""
        outs = [m(x) for m in self.members]
        logits = sum(w * out[0] for w, out in zip(self.weights, outs, strict=True))
        values = sum(w * out[1] for w, out in zip(self.weights, outs, strict=True))
        return logits, values


def can_widen(small: list[int], hidden: list[int]) -> bool:
    """Whether :func:`widened` can grow a trunk of widths ``small`` into ``hidden`` (as wide or deep, or more)."""
    deeper = hidden[len(small) :]
    return (
        len(hidden) >= len(small)
        and all(h >= s for s, h in zip(small, hidden, strict=False))
        and all(h >= small[-1] for h in deeper)
    )


@torch.no_grad()
def widened(net: PolicyNet, hidden: list[int], actions: int | None = None) -> PolicyNet:
    """A wider (or deeper) network that computes exactly what ``net`` computes (Net2Net, Chen et al. 2016).

    Every old unit keeps its weights and reads the old units only; the new units get fresh
    incoming weights and zero outgoing ones, so the logits and values are unchanged while
    the new units start to learn at once. An added layer copies its input into its first
    units (the identity: the ReLU outputs are never negative). Lets a fine-tune give a
    trained policy more capacity without starting over. ``actions`` adds card outputs (the
    joker) with zero weights and bias, or drops the last ones (rules without jokers never
    play it): the logits of the cards kept stay as they were.
    """
    actions = net.actions if actions is None else actions
    if not can_widen(net.hidden, hidden):
        raise ValueError(f"cannot widen hidden {net.hidden} to {hidden}")
    big = PolicyNet(net.obs_size, actions, hidden)
    old = [m for m in net.trunk.net if isinstance(m, nn.Linear)]
    new = [m for m in big.trunk.net if isinstance(m, nn.Linear)]
    width_in = net.obs_size
    w: torch.Tensor
    b: torch.Tensor
    for i, layer in enumerate(new):
        if i < len(old):
            w, b = old[i].weight, old[i].bias
        else:  # an added layer: the identity on the old features
            w, b = torch.eye(width_in), torch.zeros(width_in)
        out, inp = w.shape
        layer.weight[:out] = 0.0
        layer.weight[:out, :inp] = w
        layer.bias[:out] = b
        width_in = out
    for head_new, head_old in ((big.actor, net.actor), (big.critic, net.critic)):
        rows = min(head_old.weight.shape[0], head_new.weight.shape[0])
        head_new.weight.zero_()
        head_new.bias.zero_()
        head_new.weight[:rows, :width_in] = head_old.weight[:rows]
        head_new.bias[:rows] = head_old.bias[:rows]
    return big


def masked_log_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal cards only: illegal logits are set to :data:`MASKED` first."""
    return torch.log_softmax(logits.masked_fill(~legal, MASKED), dim=-1)


def sample(logp: torch.Tensor, greedy: bool = False, generator: torch.Generator | None = None) -> torch.Tensor:
    """One card per row of masked log-probabilities: the most probable, or a draw (Gumbel-max)."""
    if greedy:
        return logp.argmax(-1)
    u = torch.rand(logp.shape, generator=generator, device=logp.device).clamp_(1e-10, 1.0)
    return (logp - torch.log(-torch.log(u))).argmax(-1)


def pad_legal(legal: np.ndarray, actions: int) -> np.ndarray:
    """``(k, A)`` legal masks widened (with False) or checked to the network's ``actions`` columns."""
    a = legal.shape[1]
    if a == actions:
        return legal
    if a > actions:
        if legal[:, actions:].any():
            raise CheckpointError(f"the network has {actions} card outputs but the rules need {a} (jokers)")
        return np.ascontiguousarray(legal[:, :actions])
    out = np.zeros((legal.shape[0], actions), bool)
    out[:, :a] = legal
    return out


# ----------------------------------------------------------------------------- checkpoints


NOT_OURS = "not a checkpoint written by agurk train"
"""What the load errors call a file that is no checkpoint of this project."""


def _unreadable(path: Path, error: Exception) -> str:
    """Why torch could not read ``path``, in the file's own terms (never torch's message)."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as e:
        return f"cannot be read: {e.strerror or e}"
    if not head:
        return f"is empty, {NOT_OURS}"
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, OSError):
            return "is a truncated or damaged checkpoint (an incomplete zip archive: a copy cut short?)"
        if not any(name.endswith("data.pkl") for name in names):
            return f"is a zip archive but {NOT_OURS} (give checkpoints/latest.pt or best.pt)"
        if isinstance(error, pickle.UnpicklingError):
            return f"is a torch file but {NOT_OURS} (it holds Python objects, not only tensors and plain values)"
        return "is a damaged torch file (its contents cannot be read)"
    try:
        head.decode("utf-8")
        text = b"\0" not in head
    except UnicodeDecodeError as e:
        text = e.start >= len(head) - 3  # only a character cut at the end of the head
    return f"is a text file, {NOT_OURS}" if text else f"is {NOT_OURS} (expected a torch zip archive)"


class Member(TypedDict, total=False):
    """One source network of a blend or an ensemble file (``agurk zoo export``)."""

    source: str
    weight: float
    decisions: int
    hidden: list[int]  # an ensemble's members after the first
    model: dict[str, torch.Tensor]


class Strength(TypedDict):
    """A policy's measured strength: its evaluation at one player count, as a zoo file keeps it (``agurk zoo``)."""

    win_rate: float
    win_rate_ci: list[float]
    players: int
    opponent: str
    deals: int


class Checkpoint(TypedDict, total=False):
    """What a checkpoint file holds: the network, and for training runs what ``--resume`` needs.

    ``training.checkpoint.save_checkpoint`` writes it and :func:`load_checkpoint` reads it; a
    zoo file (``agurk zoo export``) keeps the network, ``config``, the counters and ``strength``.
    """

    format: str
    version: int
    obs_size: int
    actions: int
    hidden: list[int]
    model: dict[str, torch.Tensor]
    algo: str
    config: dict[str, Any]  # the run's config as written in YAML (training.config.config_to_dict)
    global_step: int
    update: int
    best_score: float
    optimizer: dict[str, Any]  # torch's optimizer state_dict
    pool: dict[str, Any]  # the PPO opponent pool's state
    rng: dict[str, Any]  # a NumPy bit generator's state
    torch_rng: torch.Tensor
    state_critic: dict[str, torch.Tensor]
    oracle: dict[str, torch.Tensor]
    sb3_zip: str
    train_seconds: float
    wall_seconds: float
    strength: Strength  # the run's evaluation at the exported step
    blend: list[Member]
    ensemble: list[Member]


def load_checkpoint(path: str | Path) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`; raise :class:`CheckpointError` if it is not one."""
    path = Path(path)
    if path.is_dir():
        best, latest = path / "checkpoints" / "best.pt", path / "checkpoints" / "latest.pt"
        if not best.exists() and not latest.exists():
            raise CheckpointError(f"no checkpoint in the folder {str(path)!r} (no checkpoints/best.pt or latest.pt)")
        path = best if best.exists() else latest
    if not path.exists():
        raise CheckpointError(f"no checkpoint at {str(path)!r}")
    if not path.is_file():
        raise CheckpointError(f"{str(path)!r} is not a file, {NOT_OURS}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds on a damaged or foreign file
        raise CheckpointError(f"{str(path)!r} {_unreadable(path, e)}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is a torch file but {NOT_OURS} (no format tag {FORMAT!r})")
    if data.get("version") != VERSION:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has layout version {data.get('version')!r}; this agurk reads version {VERSION}"
        )
    if data.get("obs_size") != observation.SIZE:
        raise CheckpointError(
            f"checkpoint {str(path)!r} expects observations of size {data.get('obs_size')}, "
            f"but the observation has {observation.SIZE}"
        )
    for meta in (data, data.get("config")):
        if isinstance(meta, dict) and meta.get("algo") == "fast":
            meta["algo"] = "ppo"  # written before the PPO trainer's ``algo: fast`` was renamed ``algo: ppo``
    return cast("Checkpoint", data)  # a file's dict: its tag, layout version and observation size checked above


def net_from_checkpoint(data: Checkpoint, path: str | Path = "checkpoint") -> PolicyNet | Ensemble:
    """The :class:`PolicyNet` stored in a loaded checkpoint, or the :class:`Ensemble` an ensemble file holds.

    An ensemble file (``agurk zoo export --ensemble``) is its first member's checkpoint with
    ``ensemble``: every member's ``source``, ``weight`` and ``decisions``, and for the members
    after the first their ``hidden`` and ``model``.
    """
    members = data.get("ensemble")
    nets = [_network(data, path)] + [_network(_member(data, m), path) for m in (members or [])[1:]]
    if not members:
        return nets[0]
    return Ensemble(nets, [float(m["weight"]) for m in members]).eval()


def _member(data: Checkpoint, member: Member) -> Checkpoint:
    """The first member's checkpoint ``data`` with a later ``member``'s ``hidden`` and ``model`` (those it records)."""
    merged = data.copy()
    if "hidden" in member:
        merged["hidden"] = member["hidden"]
    if "model" in member:
        merged["model"] = member["model"]
    return merged


def _network(data: Checkpoint, path: str | Path) -> PolicyNet:
    """The one network of ``data``'s ``hidden`` and ``model``."""
    try:
        net = PolicyNet(int(data["obs_size"]), int(data["actions"]), [int(h) for h in data["hidden"]])
        net.load_state_dict(data["model"])
    except (KeyError, TypeError, ValueError, RuntimeError):
        shape = f"hidden {data.get('hidden')!r}, {data.get('actions')!r} actions"
        raise CheckpointError(
            f"checkpoint {str(path)!r} is damaged: its weights do not fit the network it records ({shape})"
        ) from None
    return net.eval()


# ----------------------------------------------------------------------------- checkpoints as agents


class PolicyAgent:
    """A checkpoint as a batched agent: reads ``decision.obs`` and ``decision.legal`` only.

    ``greedy`` plays the most probable legal card; otherwise a card is drawn from the
    policy with a generator seeded from ``rng``. :meth:`act_obs` takes observation
    vectors and masks directly (e.g. from the PettingZoo environment).
    """

    sees_all = False

    def __init__(
        self,
        net: PolicyNet | Ensemble,
        rng: np.random.Generator | None = None,
        greedy: bool = True,
        spec: str = "ppo",
        generator: torch.Generator | None = None,
    ) -> None:
        self.net = net.eval()
        self.greedy = greedy
        self.deterministic = greedy  # its card a function of the state shown: the fictive player may simulate it
        self.spec = spec
        self.device = next(net.parameters()).device
        if generator is None:
            seed = int((rng or np.random.default_rng(0)).integers(2**62))
            generator = torch.Generator(device=self.device).manual_seed(seed)
        self._gen = generator

    @classmethod
    def from_path(
        cls, path: str | Path, rng: np.random.Generator | None = None, greedy: bool = True, threads: int | None = 1
    ) -> PolicyAgent:
        """Load ``path`` (a checkpoint file, or a run folder: its best checkpoint).

        ``threads`` sets torch's CPU threads for the process (``None``: leave them): the
        network is small, and one thread is much faster when several processes share
        the cores (``agurk evaluate`` plays rotations in parallel worker processes).
        """
        if threads:
            torch.set_num_threads(threads)
        data = load_checkpoint(path)
        mode = "" if greedy else ";sample"
        return cls(net_from_checkpoint(data, path), rng, greedy, spec=f"ppo:{path}{mode}")

    def act_obs(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray | int:
        """``(k,)`` cards for observations ``(k, SIZE)`` and legal masks ``(k, A)``.

        One unbatched observation and mask (the PettingZoo environment's) give one ``int``.
        """
        obs, legal = np.asarray(obs, dtype=np.float32), np.asarray(legal).astype(bool)
        if obs.ndim == 1:
            return int(self._act_batch(obs[None], legal[None])[0])
        return self._act_batch(obs, legal)

    @torch.inference_mode()
    def _act_batch(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """``(k,)`` cards for float32 observations ``(k, SIZE)`` and bool legal masks ``(k, A)``."""
        legal = pad_legal(legal, self.net.actions)
        logits, _ = self.net(torch.as_tensor(obs, device=self.device))
        logp = masked_log_softmax(logits, torch.from_numpy(legal).to(self.device))
        return sample(logp, self.greedy, self._gen).cpu().numpy().astype(np.int64)

    def act(self, decision: Decision) -> np.ndarray:
        """The policy's card in each game of an :class:`agurk_env.agent.Decision`."""
        return self._act_batch(np.asarray(decision.obs, dtype=np.float32), np.asarray(decision.legal).astype(bool))

    def __repr__(self) -> str:
        return f"PolicyAgent(spec={self.spec!r}, greedy={self.greedy})"
