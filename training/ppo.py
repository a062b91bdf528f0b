"""Masked PPO self-play on the batched engine, in the manner of CleanRL's ``ppo.py``.

Read top to bottom: the game batches, the rollout buffer, the opponent pool, one engine
step, the advantages, the PPO update, then :class:`PPOTrainer` and its loop.

**No per-game Python.** Each player count is one engine batch of ``num_envs`` games
(:class:`Games`). An engine step plays one card in every game: where the seat to move is
a learner seat the policy chooses (its observation, mask, card, log-probability and
value are stored), elsewhere the opponent of that game does (one batched call per
opponent kind). A game is either pure self-play (every seat is the learner; all their
decisions are trained on) or one learner seat against one opponent from the pool in
every other seat: a heuristic or other registry agent, or a past snapshot of the
learner, drawn preferring the snapshots the learner still loses to (PFSP).

**Rewards reach their seat.** A learner seat's transitions form a chain: each stored
decision is linked to the same seat's next decision (``Buffer.next``). The reward of a
transition is everything the seat earns between that decision and its next one: the
round penalty lands when the round ends (often on a seat that did not play last) and is
added to the seat's latest transition (``Games.last``), which is also marked ``done``
when the episode ends for that seat. Episodes (``episode``):

- ``round``: each round is an episode; every seat in it gets ``-penalty_weight *
  penalty / limit`` at its end.
- ``match``: a whole match; the same round rewards, plus ``placement_weight *
  placement`` when the seat leaves the match or it ends (place ``q`` of ``n`` is worth
  ``1 - 2 (q - 1) / (n - 1)``, as in the environments).

A game in which no learner seat is left restarts at once (the opponents do not play
the match out). A transition still waiting for its seat's next decision when a rollout
ends is not trained on yet: it moves to the front of the next rollout's buffer, keeps
collecting its reward, and is trained once its successor or its episode end is known;
its predecessor bootstraps from its stored value (CleanRL's ``next_value``).

**Critics** (``critic``). ``shared``: the value is the policy network's own head on its
trunk, which sees the mover's observation. ``full_info`` ("perfect training, imperfect
execution"): the value is a separate :class:`StateCritic` (the policy network's own head
is then unused) on the full-information state vector of the decision, written in the
mover's relative seats (``state_vector(rules, state, seats=state.cur)``): every hand, slot
0 the mover's own and slot ``r`` the ``r``-th seat clockwise, and the public slices as the
mover observes them.
The value is the mover's, so the vector is written from the mover's seat rather than in
absolute seats: the hands line up with the observation's per-seat slices (cards left,
voids, the trick) and no seat number has to be decoded. The observation is part of that
vector (columns :data:`agurk_env.state.OBSERVATION`), so the buffer stores the state vector
alone and the policy reads its observation columns: the actor never sees another hand. The
critic exists only in training: the checkpoint keeps it for ``--resume`` beside the policy
network, which is all that ``PolicyAgent`` (``ppo:PATH``) and the snapshots load.

**Oracle guiding** (``oracle_steps``, Suphx's "oracle guiding"): over the first
``oracle_steps`` decisions the learner's actor also reads the other seats' hands
(:data:`agurk_env.state.OTHER_HANDS` of the mover's state vector) through an :class:`OracleGuide`,
a zero-initialised linear input added to the first layer of the trunk, so it starts as the
policy network alone. Each hidden entry is shown with a probability that falls linearly from 1
to 0 over those decisions (each decision's draw is stored, so the PPO ratio compares the same
inputs); from then on the actor reads its observation alone, the policy network that every
checkpoint holds. The oracle, like the critic, exists only in training.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from agents.policy import (
    Checkpoint,
    CheckpointError,
    PolicyAgent,
    PolicyNet,
    Trunk,
    layer_init,
    masked_log_softmax,
    pad_legal,
    sample,
)
from agents.registry import make_agent
from agurk_env import engine, observation, seeds
from agurk_env.agent import Agent, dispatch
from agurk_env.observation import MAX_SEATS
from agurk_env.rewards import placement_rewards
from agurk_env.rules import Rules
from agurk_env.state import OBSERVATION, OTHER_HANDS, state_vector
from agurk_env.state import SIZE as STATE_SIZE
from training import mixture
from training.checkpoint import initial_net, save_checkpoint
from training.config import Config, PoolConfig, config_to_dict

if TYPE_CHECKING:
    from training.schedule import UpdateSink

# ----------------------------------------------------------------------------- game batches


@dataclass
class Games:
    """One engine batch (one player count) and who sits where in each game."""

    rules: Rules
    state: engine.State
    learner: np.ndarray  # (B, P) bool: the seat is played by the learner
    opponent: np.ndarray  # (B,) int: the pool entry in the other seats, -1 in self-play games
    last: np.ndarray  # (B, P) int: buffer index of the seat's latest unresolved transition, -1 if none
    deck: np.ndarray | None = None  # (A,) int: copies of each card dealt (engine.deck_counts); None: the rules'

    @classmethod
    def new(cls, rules: Rules, games: int, seed: int, deck: np.ndarray | None = None) -> Games:
        """``games`` fresh matches of ``seed`` dealt from ``deck``, every seat the learner's until the pool draws."""
        p = rules.players
        return cls(
            rules,
            engine.init(rules, games, seed, deck=deck),
            np.ones((games, p), bool),
            np.full(games, -1, np.int64),
            np.full((games, p), -1, np.int64),
            deck,
        )


# ----------------------------------------------------------------------------- the full-information critic


class StateCritic(nn.Module):
    """The ``critic: full_info`` value network: an MLP trunk of its own on the mover's state vector, a linear head."""

    def __init__(self, hidden: list[int]) -> None:
        super().__init__()
        self.trunk = Trunk(STATE_SIZE, hidden)
        self.value = layer_init(nn.Linear(self.trunk.out_size, 1), std=1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Values ``(N,)`` of state vectors ``(N, STATE_SIZE)``."""
        return self.value(self.trunk(x)).squeeze(-1)


# ----------------------------------------------------------------------------- oracle guiding


class OracleGuide(nn.Module):
    """The other seats' hands as an extra input of the actor's first layer, zero at first; ``keep``: how much shows."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.hands = nn.Linear(OTHER_HANDS.size, width, bias=False)
        nn.init.zeros_(self.hands.weight)
        self.keep = 1.0
        """Probability that each hidden entry is shown (annealed by the learner to 0)."""

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Which hidden entries ``(n, OTHER_HANDS.size)`` bool the actor is shown at ``n`` decisions."""
        return rng.random((n, OTHER_HANDS.size)) < self.keep

    def forward(self, net: PolicyNet, x: torch.Tensor, shown: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``net``'s logits and values on state vectors ``x``: their observation columns plus the ``shown`` hands."""
        return net(x[:, OBSERVATION], self.hands(x[:, OTHER_HANDS] * shown))


def actor(
    net: PolicyNet, x: torch.Tensor, oracle: OracleGuide | None, shown: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The learner's logits and values on stored inputs ``x``: observations, or state vectors (via ``oracle``)."""
    if oracle is not None:
        return oracle(net, x, shown)
    return net(x if x.shape[1] == observation.SIZE else x[:, OBSERVATION])


# ----------------------------------------------------------------------------- buffer


class Buffer:
    """Flat, preallocated storage of learner transitions, linked per seat by ``next``.

    ``inputs`` holds each decision's observation, or with ``full_info`` its state vector in
    the mover's seats (the observation is its :data:`~agurk_env.state.OBSERVATION` columns);
    ``shown`` which hidden entries an oracle showed the actor (all ``False`` without one).
    """

    def __init__(self, capacity: int, actions: int, full_info: bool = False) -> None:
        self.full_info = full_info
        self.inputs = np.zeros((capacity, STATE_SIZE if full_info else observation.SIZE), np.float32)
        self.shown = np.zeros((capacity, OTHER_HANDS.size if full_info else 0), bool)
        self.mask = np.zeros((capacity, actions), bool)
        self.action = np.zeros(capacity, np.int64)
        self.logprob = np.zeros(capacity, np.float32)
        self.value = np.zeros(capacity, np.float32)
        self.reward = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, bool)
        self.next = np.full(capacity, -1, np.int64)  # the same seat's next transition, -1 until known
        self.table = np.zeros(capacity, np.int64)  # which of the learner's tables the transition was played at
        self.n = 0
        self.starts: list[int] = [0]  # index ranges added by each engine step, for the backward GAE pass

    def add(
        self,
        inputs: np.ndarray,
        mask: np.ndarray,
        action: np.ndarray,
        logprob: np.ndarray,
        value: np.ndarray,
        shown: np.ndarray | None = None,
        table: int = 0,
    ):
        """Store ``k`` new transitions played at table number ``table``; return their indices."""
        k = inputs.shape[0]
        j = np.arange(self.n, self.n + k)
        if self.n + k > self.inputs.shape[0]:
            raise RuntimeError("rollout buffer overflow")  # pragma: no cover - capacity is computed to fit
        self.inputs[j], self.mask[j], self.action[j] = inputs, mask, action
        self.shown[j] = False if shown is None else shown
        self.logprob[j], self.value[j], self.table[j] = logprob, value, table
        self.reward[j], self.done[j], self.next[j] = 0.0, False, -1
        self.n += k
        return j

    def end_step(self) -> None:
        """Close the index range of one engine step (of every table)."""
        if self.n != self.starts[-1]:
            self.starts.append(self.n)

    def carry(self, tables: list[Games]) -> None:
        """Start a new rollout keeping only the unresolved transitions, renumbered from 0."""
        keep = np.concatenate([t.last[t.last >= 0] for t in tables]) if tables else np.zeros(0, np.int64)
        keep.sort()
        m = keep.size
        for name in ("inputs", "shown", "mask", "action", "logprob", "value", "reward", "table"):
            arr = getattr(self, name)
            arr[:m] = arr[keep]
        self.done[:m], self.next[:m] = False, -1
        renumber = np.full(self.n + 1, -1, np.int64)
        renumber[keep] = np.arange(m)
        for t in tables:
            t.last[:] = renumber[t.last]  # -1 indexes the extra last slot, which maps to -1
        self.n = m
        self.starts = [0, m] if m else [0]


# ----------------------------------------------------------------------------- opponent pool


class Pool:
    """Opponents: registry agents and snapshots of the learner, with the learner's win rate against each.

    Entry ids: ``0 .. len(agents) - 1`` are the agents of ``pool.agents``; the next
    ``max_snapshots`` ids are snapshot slots. ``-1`` marks a self-play game.
    """

    def __init__(self, cfg: PoolConfig, make_net: Callable[[], PolicyNet], seed: int, device: torch.device) -> None:
        self.cfg = cfg
        self.specs = list(cfg.agents)
        self.agents: list[Agent] = [make_agent(spec, seed, i) for i, spec in enumerate(self.specs)]
        self.nets = [make_net().to(device).eval() for _ in range(cfg.max_snapshots)]
        self.snap_step = np.full(cfg.max_snapshots, -1, np.int64)  # learner step of each slot's snapshot, -1 empty
        n = len(self.specs) + cfg.max_snapshots
        self.win_rate = np.zeros(n)  # running learner win share against each entry
        self.wins = np.zeros(n)
        self.games = np.zeros(n)
        self.device = device
        self.generator = torch.Generator(device=device).manual_seed(seed)
        snapshots = [PolicyAgent(net, greedy=False, spec="snapshot", generator=self.generator) for net in self.nets]
        self.players: list[Agent] = [*self.agents, *snapshots]
        """Every entry as an agent, by entry id (the snapshots sample from the pool's one generator)."""

    @property
    def n_agents(self) -> int:
        """Number of registry agents (snapshot ids start here)."""
        return len(self.specs)

    def name(self, oid: int) -> str:
        """A label for entry ``oid`` (for logs)."""
        if oid < self.n_agents:
            return self.specs[oid]
        return f"snapshot@{self.snap_step[oid - self.n_agents]}"

    def draw(self, n: int, players: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Seatings of ``n`` new matches: ``(learner (n, P) bool, opponent (n,) entry id or -1)``."""
        have = np.flatnonzero(self.snap_step >= 0)
        shares = np.array([self.cfg.self_play, self.cfg.snapshots if have.size else 0.0, *self.cfg.agents.values()])
        if shares.sum() <= 0:
            shares[0] = 1.0  # only snapshots asked for, and none yet: self-play
        kind = rng.choice(shares.size, n, p=shares / shares.sum())
        opponent = np.where(kind >= 2, kind - 2, -1)
        snap = np.flatnonzero(kind == 1)
        if snap.size:
            weights = (1.0 - self.win_rate[self.n_agents + have]) ** self.cfg.pfsp_power + 1e-6
            opponent[snap] = self.n_agents + rng.choice(have, snap.size, p=weights / weights.sum())
        learner = np.zeros((n, players), bool)
        learner[kind == 0] = True
        solo = np.flatnonzero(kind != 0)
        learner[solo, rng.integers(0, players, solo.size)] = True
        return learner, opponent

    def record(self, oid: np.ndarray, win: np.ndarray) -> None:
        """Count finished matches against entries ``oid`` with the learner's win shares ``win``."""
        np.add.at(self.wins, oid, win)
        np.add.at(self.games, oid, 1.0)

    def end_update(self) -> dict[str, float]:
        """Fold this update's results into the running win rates; return them by entry name."""
        seen = self.games > 0
        d = self.cfg.win_rate_decay
        self.win_rate[seen] = d * self.win_rate[seen] + (1 - d) * self.wins[seen] / self.games[seen]
        out = {self.name(i): float(self.wins[i] / self.games[i]) for i in np.flatnonzero(seen).tolist()}
        self.wins[:], self.games[:] = 0.0, 0.0
        return out

    def add_snapshot(self, net: PolicyNet, step: int, players: int) -> None:
        """Copy ``net`` into the oldest (or an empty) slot."""
        slot = int(np.argmin(self.snap_step))
        self.nets[slot].load_state_dict(net.state_dict())
        self.snap_step[slot] = step
        self.win_rate[self.n_agents + slot] = 1.0 / players  # an even match, to begin with

    def state_dict(self) -> dict[str, Any]:
        """The snapshots and statistics, for a checkpoint (its ``pool``).

        ``specs``: the pool's agents; ``snap_step`` and ``win_rate``: tensors of the snapshots' steps and
        the learner's win rates; ``nets``: the snapshots' weights (a state dict each).
        """
        return {
            "specs": list(self.specs),
            "snap_step": torch.from_numpy(self.snap_step.copy()),
            "win_rate": torch.from_numpy(self.win_rate.copy()),
            "nets": [{k: v.cpu() for k, v in net.state_dict().items()} for net in self.nets],
        }

    def load_state_dict(self, data: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` (the pool's agents and slot count must match)."""
        if list(data["specs"]) != self.specs or len(data["nets"]) != len(self.nets):
            raise ValueError("the checkpoint's opponent pool differs from the config's (pool.agents, max_snapshots)")
        self.snap_step[:] = data["snap_step"].numpy()
        self.win_rate[:] = data["win_rate"].numpy()
        for net, sd in zip(self.nets, data["nets"], strict=True):
            net.load_state_dict(sd)


# ----------------------------------------------------------------------------- one engine step


@dataclass
class Stats:
    """Counters of one rollout (for the logs)."""

    round_reward: float = 0.0  # summed learner-seat round rewards (penalty part)
    rounds: int = 0  # learner-seat rounds finished


def env_step(
    cfg: Config,
    t: Games,
    net: PolicyNet,
    pool: Pool,
    buf: Buffer,
    rng: np.random.Generator,
    gen: torch.Generator,
    stats: Stats,
    critic: StateCritic | None = None,
    oracle: OracleGuide | None = None,
    table: int = 0,
) -> None:
    """One card in every game of table ``t`` (number ``table``): the learner's where it moves, else its opponent's.

    With a ``critic`` (``full_info``) the learner's values are its values of the movers' state vectors;
    with an ``oracle`` its actor is shown part of the other hands (``oracle.keep``).
    """
    rules, st = t.rules, t.state
    b = st.batch
    rows = np.arange(b)
    bits = engine.legal_bits(rules, st)
    legal = pad_legal(engine.unpack(bits, rules.num_actions), net.actions)
    learns = t.learner[rows, st.cur]
    actions = np.zeros(b, np.int64)

    # inputs of every game where the learner or a snapshot moves (others never read them): the
    # observations, or with a critic or an oracle the movers' state vectors, whose columns hold the observations
    wants_obs = learns | (t.opponent >= pool.n_agents)
    need = np.flatnonzero(wants_obs)
    seen = st if need.size == b else st.take(need)
    if not need.size:
        inputs = np.zeros((0, buf.inputs.shape[1]), np.float32)
    elif not buf.full_info:
        inputs = observation.observe(rules, seen)
    else:
        inputs = state_vector(rules, seen, seen.cur)
    obs = inputs if not buf.full_info else inputs[:, OBSERVATION]
    row_of = np.cumsum(wants_obs) - 1

    mine = np.flatnonzero(learns)
    if mine.size:
        x, m = inputs[row_of[mine]], legal[mine]
        shown = oracle.draw(mine.size, rng) if oracle is not None else None
        device = next(net.parameters()).device
        with torch.inference_mode():
            logits, value = actor(net, torch.from_numpy(x).to(device), oracle, _tensor(shown, device))
            if critic is not None:
                value = critic(torch.from_numpy(x).to(device))
            logp = masked_log_softmax(logits, torch.from_numpy(m).to(device))
            a = sample(logp, generator=gen)
            lp = logp.gather(1, a[:, None]).squeeze(1)
        a_np = a.cpu().numpy()
        j = buf.add(x, m, a_np, lp.cpu().numpy(), value.cpu().numpy(), shown, table)
        seat = st.cur[mine]
        prev = t.last[mine, seat]
        linked = prev >= 0
        buf.next[prev[linked]] = j[linked]  # the seat's previous decision now knows its successor
        t.last[mine, seat] = j
        actions[mine] = a_np

    if not learns.all():
        owner = np.where(learns, -1, t.opponent)

        def opponent_obs(games: np.ndarray) -> np.ndarray:
            """Observations of ``games`` for an opponent that reads them: the ones above, else computed here."""
            if wants_obs[games].all():
                return obs[row_of[games]]
            return observation.observe(rules, st.take(games))  # a registry network (ppo:PATH, zoo) in the pool

        theirs = dispatch(rules, st, bits, pool.players, owner, obs=opponent_obs)
        actions = np.where(learns, actions, theirs)

    st = engine.play(rules, st, actions)
    if st.round_over.any():
        st = _end_rounds(cfg, t, st, pool, buf, rng, stats)
    t.state = st


def _tensor(a: np.ndarray | None, device: torch.device) -> torch.Tensor | None:
    """``a`` as a tensor on ``device`` (``None`` stays ``None``)."""
    return None if a is None else torch.from_numpy(a).to(device)


def _end_rounds(
    cfg: Config, t: Games, st: engine.State, pool: Pool, buf: Buffer, rng: np.random.Generator, stats: Stats
) -> engine.State:
    """Credit the rewards of the rounds that ended to their seats, end episodes, deal on, restart matches."""
    rules = t.rules
    ended = np.flatnonzero(st.round_over)
    penalty = cfg.round_credit(rules, st, ended)  # (k, P)
    if cfg.episode == "match":
        finished, placement = placement_rewards(rules, st)
        reward = penalty + cfg.placement_weight * placement[ended]
        done = finished[ended]
    else:
        reward = penalty
        done = np.ones_like(penalty, bool)
    learner = t.learner[ended]
    restart = st.match_over[ended] | ~(learner & st.alive[ended]).any(1)  # over, or no learner seat left
    done |= restart[:, None]

    last = t.last[ended]
    has = last >= 0
    buf.reward[last[has]] += reward[has]
    buf.done[last[has & done]] = True
    t.last[ended] = np.where(done, -1, last)
    stats.round_reward += float(penalty[has].sum())
    stats.rounds += int(has.sum())

    over = ended[restart]
    solo = over[t.opponent[over] >= 0]
    if solo.size:  # the learner's win share against the pool entry of each finished solo game
        winners = st.winners[solo] & st.match_over[solo, None]
        share = (winners & t.learner[solo]).sum(1) / np.maximum(winners.sum(1), 1)
        pool.record(t.opponent[solo], share)
    st = engine.advance(rules, st, restart=np.isin(np.arange(st.batch), over), deck=t.deck)
    if over.size:
        t.learner[over], t.opponent[over] = pool.draw(over.size, rules.players, rng)
    return st


# ----------------------------------------------------------------------------- advantages


def advantages(buf: Buffer, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE over the per-seat chains: ``(trainable indices, advantages of all n)``.

    A transition is trainable once its successor or its episode end is known. Chains run
    forward in the buffer, so one backward pass over the engine steps' index ranges
    computes every advantage; a successor still unresolved contributes its value only.
    """
    n = buf.n
    nxt, done = buf.next[:n], buf.done[:n]
    resolved = done | (nxt >= 0)
    adv = np.zeros(n + 1, np.float32)  # adv[n] = 0 stands for "no successor"
    value = np.append(buf.value[:n], np.float32(0))
    ok = np.append(resolved, False)
    bounds = buf.starts + ([n] if buf.starts[-1] != n else [])
    for lo, hi in zip(bounds[-2::-1], bounds[:0:-1], strict=True):
        s = slice(lo, hi)
        k = np.where(nxt[s] >= 0, nxt[s], n)
        delta = buf.reward[s] + gamma * value[k] - value[s]
        adv[s] = delta + gamma * lam * np.where(ok[k], adv[k], 0.0)
    return np.flatnonzero(resolved), adv[:n]


# ----------------------------------------------------------------------------- PPO update


def per_table_normalized(adv: np.ndarray, idx: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``adv`` with the trainable rows ``idx`` of each table shifted and scaled to mean 0, std 1 (a copy)."""
    out = adv.copy()
    group = table[idx]
    for g in np.unique(group):
        rows = idx[group == g]
        out[rows] = (adv[rows] - adv[rows].mean()) / (adv[rows].std() + 1e-8)
    return out


def ppo_update(
    cfg: Config,
    net: PolicyNet,
    opt: torch.optim.Optimizer,
    buf: Buffer,
    idx: np.ndarray,
    adv: np.ndarray,
    critic: StateCritic | None = None,
    oracle: OracleGuide | None = None,
) -> dict[str, float]:
    """``update_epochs`` passes of clipped PPO over the trainable transitions ``idx`` (``critic``: values)."""
    device = next(net.parameters()).device
    params = [p for group in opt.param_groups for p in group["params"]]
    to = lambda a: torch.from_numpy(a).to(device)  # noqa: E731
    returns = adv[idx] + buf.value[idx]
    if cfg.norm_adv_tables:
        adv = per_table_normalized(adv, idx, buf.table)
    n = idx.size
    clipfracs, approx_kl, old_approx_kl = [], torch.zeros(()), torch.zeros(())
    pg_loss = v_loss = entropy_loss = torch.zeros(())
    order = np.random.default_rng(int(torch.randint(2**62, ())))
    for _ in range(cfg.update_epochs):
        perm = order.permutation(n)
        for start in range(0, n, cfg.minibatch_size):
            mb = perm[start : start + cfg.minibatch_size]  # rows of idx; NumPy gathers rows far faster than torch
            rows = idx[mb]
            b_in, b_mask, b_act = buf.inputs[rows], to(buf.mask[rows]), to(buf.action[rows])
            b_logp, b_val, b_ret, b_adv = to(buf.logprob[rows]), to(buf.value[rows]), to(returns[mb]), to(adv[rows])
            b_shown = to(buf.shown[rows]) if oracle is not None else None
            logits, newvalue = actor(net, to(b_in), oracle, b_shown)
            if critic is not None:
                newvalue = critic(to(b_in))
            logp = masked_log_softmax(logits, b_mask)
            newlogprob = logp.gather(1, b_act[:, None]).squeeze(1)
            entropy = -(logp.exp() * logp).sum(-1)
            logratio = newlogprob - b_logp
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > cfg.clip_coef).float().mean().item())
            mb_adv = b_adv
            if cfg.norm_adv and mb.size > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
            if cfg.clip_vloss:
                clipped = b_val + (newvalue - b_val).clamp(-cfg.clip_coef, cfg.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_ret) ** 2, (clipped - b_ret) ** 2).mean()
            else:
                v_loss = 0.5 * ((newvalue - b_ret) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - cfg.ent_coef * entropy_loss + v_loss * cfg.vf_coef
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            opt.step()
        if cfg.target_kl and approx_kl > cfg.target_kl:
            break
    y_pred, y_true = buf.value[idx], returns
    var_y = np.var(y_true)
    return {
        "losses/value_loss": v_loss.item(),
        "losses/policy_loss": pg_loss.item(),
        "losses/entropy": entropy_loss.item(),
        "losses/old_approx_kl": old_approx_kl.item(),
        "losses/approx_kl": approx_kl.item(),
        "losses/clipfrac": float(np.mean(clipfracs)) if clipfracs else 0.0,
        "losses/explained_variance": float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y),
    }


# ----------------------------------------------------------------------------- the loop


class PPOTrainer:
    """The PPO trainer (``algo: ppo``): network, optimizer, pool, tables and counters, and the loop.

    ``resume``: a checkpoint to continue (its network, optimizer, pool and counters).
    """

    def __init__(self, cfg: Config, resume: Checkpoint | None = None) -> None:
        self.cfg = cfg
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        self.device = torch.device(cfg.device)
        self.rule_sets = cfg.rule_sets()
        """The tables trained on: the config's, or with a mixture the slots' current draws (:meth:`start_games`)."""
        self.mixed = bool(cfg.mixture.families)
        actions = cfg.actions()
        self.make_net = lambda: PolicyNet(observation.SIZE, actions, cfg.hidden)
        self.net = initial_net(cfg, actions, resume is None).to(self.device)  # a fresh network, or the one of ``init``
        self.critic = StateCritic(cfg.hidden).to(self.device).eval() if cfg.critic == "full_info" else None
        """The ``full_info`` value network (``None``: the policy network's own value head)."""
        self.oracle = OracleGuide(cfg.hidden[0]).to(self.device) if cfg.oracle_steps else None
        """The oracle-guiding input of the actor (``None`` without ``oracle_steps``)."""
        params = [*self.net.parameters(), *(self.critic.parameters() if self.critic else ())]
        groups = [{"params": params}] + ([{"params": [*self.oracle.parameters()]}] if self.oracle else [])
        self.lr_scales = [1.0, cfg.oracle_lr_scale][: len(groups)]
        """Each optimizer group's step size as a multiple of the (annealed) ``learning_rate``."""
        self.opt = torch.optim.Adam(groups, lr=cfg.learning_rate, eps=1e-5)
        self.set_learning_rate(cfg.learning_rate)
        self.pool = Pool(cfg.pool, self.make_net, cfg.seed, self.device)
        self.rng = np.random.default_rng([cfg.seed, seeds.PPO_DRAWS])
        self.gen = torch.Generator(device=self.device).manual_seed(cfg.seed + seeds.PPO_TORCH)
        self.global_step = 0  # learner decisions trained on
        self.update = 0
        self.best_score = float("-inf")
        self.tables: list[Games] = []
        seats = [MAX_SEATS] * cfg.mixture.slots if self.mixed else [r.players for r in self.rule_sets]
        capacity = sum(cfg.num_envs * (p + cfg.num_steps) for p in seats)
        self.buf = Buffer(capacity, actions, full_info=self.critic is not None or self.oracle is not None)
        if resume is not None:
            try:
                self.restore(resume)
            except (KeyError, ValueError, RuntimeError) as e:
                reason = textwrap.shorten(str(e), 160, placeholder=" ...")  # whole words
                raise CheckpointError(f"the checkpoint does not fit this config ({reason})") from None

    def set_learning_rate(self, lr: float) -> None:
        """Set every optimizer group's step size to ``lr`` times its scale."""
        for group, scale in zip(self.opt.param_groups, self.lr_scales, strict=True):
            group["lr"] = lr * scale

    def start_games(self) -> None:
        """Deal fresh games (seeded by the update count, so a resumed run gets new deals) and seat them.

        With a mixture every slot first draws its rules (seeded by the update count too).
        """
        if self.mixed:
            rng = np.random.default_rng([self.cfg.seed, seeds.PPO_TABLES, self.update])
            self.rule_sets = [mixture.draw(self.cfg.mixture, rng) for _ in range(self.cfg.mixture.slots)]
        self.tables = []
        for i, rules in enumerate(self.rule_sets):
            seed = seeds.table_seed(self.cfg.seed, i, self.update)
            t = Games.new(rules, self.cfg.num_envs, seed, self.cfg.deck(rules))
            t.learner[:], t.opponent[:] = self.pool.draw(self.cfg.num_envs, rules.players, self.rng)
            self.tables.append(t)
        self.buf.n, self.buf.starts = 0, [0]

    def iterate(self) -> dict[str, float]:
        """One rollout and one PPO update; return the scalars to log."""
        cfg = self.cfg
        if cfg.anneal_lr:
            self.set_learning_rate(max(1.0 - self.global_step / cfg.total_steps, 0.0) * cfg.learning_rate)
        if self.oracle is not None:
            self.oracle.keep = max(1.0 - self.global_step / cfg.oracle_steps, 0.0)
        stats = Stats()
        for _ in range(cfg.num_steps):
            for i, t in enumerate(self.tables):
                env_step(cfg, t, self.net, self.pool, self.buf, self.rng, self.gen, stats, self.critic, self.oracle, i)
            self.buf.end_step()
        idx, adv = advantages(self.buf, cfg.gamma, cfg.gae_lambda)
        logs = ppo_update(cfg, self.net.train(), self.opt, self.buf, idx, adv, self.critic, self.oracle)
        self.net.eval()
        self.buf.carry(self.tables)
        self.global_step += int(idx.size)
        self.update += 1
        for name, rate in self.pool.end_update().items():
            logs[f"train/win_rate/{name}"] = rate
        if self.update % cfg.pool.snapshot_every == 0 and cfg.pool.snapshots > 0:
            self.pool.add_snapshot(self.net, self.global_step, max(r.players for r in self.rule_sets))
        if self.mixed and self.update % cfg.mixture.redraw_every == 0:
            self.start_games()  # new tables; the unfinished transitions of the old ones are dropped
        logs["charts/learning_rate"] = self.opt.param_groups[0]["lr"]
        if self.oracle is not None:
            logs["charts/oracle_shown"] = self.oracle.keep
        logs["charts/decisions_per_update"] = float(idx.size)
        if stats.rounds:
            logs["charts/round_reward"] = stats.round_reward / stats.rounds
        return logs

    def state(self) -> Checkpoint:
        """What a checkpoint needs besides the network (see :func:`training.checkpoint.save_checkpoint`)."""
        out: Checkpoint = {}
        if self.critic:
            out["state_critic"] = {k: v.cpu() for k, v in self.critic.state_dict().items()}
        if self.oracle:
            out["oracle"] = {k: v.cpu() for k, v in self.oracle.state_dict().items()}
        out.update(
            {
                "optimizer": self.opt.state_dict(),
                "global_step": self.global_step,
                "update": self.update,
                "best_score": self.best_score,
                "pool": self.pool.state_dict(),
                "rng": dict(self.rng.bit_generator.state),
                "torch_rng": self.gen.get_state(),
            }
        )
        return out

    def restore(self, data: Checkpoint) -> None:
        """Continue from a checkpoint's network (and ``full_info`` critic), optimizer, pool and counters."""
        self.net.load_state_dict(data["model"])
        if self.critic is not None:
            self.critic.load_state_dict(data["state_critic"])
        elif "state_critic" in data:
            raise ValueError("the checkpoint holds a full_info critic, the config says critic: shared")
        if self.oracle is not None:
            self.oracle.load_state_dict(data["oracle"])
        self.opt.load_state_dict(data["optimizer"])
        self.global_step, self.update = int(data["global_step"]), int(data["update"])
        self.best_score = float(data["best_score"])
        self.pool.load_state_dict(data["pool"])
        self.rng.bit_generator.state = data["rng"]
        self.gen.set_state(data["torch_rng"])

    def save(self, path: Path, best_score: float, **clock: float) -> None:
        """Write the checkpoint (network, optimizer, pool, counters, ``clock``) atomically to ``path``."""
        self.best_score = best_score
        save_checkpoint(path, self.net, algo="ppo", config=config_to_dict(self.cfg), **self.state(), **clock)

    def train(self, schedule: UpdateSink | None = None) -> None:
        """Train to ``total_steps`` decisions (or ``time_limit`` minutes), reporting each update to ``schedule``."""
        cfg = self.cfg
        self.start_games()
        started = time.perf_counter()
        while self.global_step < cfg.total_steps:
            tick = time.perf_counter()
            logs = self.iterate()
            if schedule is not None:
                decisions = int(logs["charts/decisions_per_update"])
                schedule.after_update(self.global_step, decisions, time.perf_counter() - tick, logs)
            if cfg.time_limit and time.perf_counter() - started > cfg.time_limit * 60:
                break
