"""Imitate an agent: record its plays, then fit a policy network to them (a fast stand-in for a slow agent).

A search such as ``pimc:eval=exact`` decides about a thousand times a second in batches,
thirty times slower than PPO trains, so a PPO field that holds it trains slowly. A network
fitted to its plays (behaviour cloning) plays at network speed, and can sit in the field
as ``ppo:CLONE.pt`` (``pool.agents``) in its place. How close the clone plays is printed as
the share of held-out decisions where it picks the recorded card.

    python examples/clone_agent.py record --agent pimc:eval=exact --matches 600 --seed 1 --out runs/clone/d1.npz
    python examples/clone_agent.py record --seed 2 --beside agents/zoo/standard-4p.pt --out runs/clone/d2.npz
    python examples/clone_agent.py fit --init agents/zoo/standard-4p.pt --out runs/clone/pimc.pt runs/clone/d*.npz

``record`` plays standard 4-player matches, the agent in every seat (or in two seats,
``--beside``'s policy in the other two), and keeps every decision of the agent's where it
had a choice: the mover's observation, its legal cards and the card played. ``fit`` starts
from ``--init`` (a checkpoint of the same observation) and minimises the cross entropy to the
recorded cards; the checkpoint it writes plays as ``ppo:OUT``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from agents.policy import PolicyAgent, load_checkpoint, masked_log_softmax, net_from_checkpoint
from agents.registry import make_agent
from agents.tournament import seat_stats
from agurk_env.agent import Decision
from agurk_env.rules import Rules


class Recorder:
    """Plays as ``inner`` does and keeps (observation, legal cards, card) of each decision with a choice."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.sees_all = bool(getattr(inner, "sees_all", False))
        self.obs: list[np.ndarray] = []
        self.legal: list[np.ndarray] = []
        self.card: list[np.ndarray] = []

    def act(self, decision: Decision) -> np.ndarray:
        """``inner``'s cards, recorded where the mover had more than one legal card."""
        cards = np.asarray(self.inner.act(decision))
        choice = decision.legal.sum(axis=1) > 1
        if choice.any():
            self.obs.append(decision.obs[choice].astype(np.float32))
            self.legal.append(decision.legal[choice])
            self.card.append(cards[choice].astype(np.int8))
        return cards

    def data(self) -> dict[str, np.ndarray]:
        """Everything recorded, as arrays (``obs``, ``legal``, ``card``)."""
        return {"obs": np.concatenate(self.obs), "legal": np.concatenate(self.legal), "card": np.concatenate(self.card)}


def record(agent: str, matches: int, seed: int, beside: str | None = None) -> dict[str, np.ndarray]:
    """Play ``matches`` standard 4-player matches of ``seed`` with ``agent`` in every seat (two, with ``beside``)."""
    rules = Rules.preset("standard")
    rec = Recorder(make_agent(agent, seed, 0))
    seats = [rec] * 4
    if beside:
        policy = PolicyAgent.from_path(beside, np.random.default_rng(seed))
        seats = [rec, policy, rec, policy] if seed % 2 else [policy, rec, policy, rec]
    seat_stats(rules, seats, matches, seed, batch=matches)
    return rec.data()


def fit(
    init: str, data: dict[str, np.ndarray], epochs: int = 4, lr: float = 3e-4, seed: int = 0
) -> tuple[dict, list[float]]:
    """Fit ``init``'s network to the recorded cards; its checkpoint and the held-out agreement before and per epoch."""
    obs, legal = torch.as_tensor(data["obs"]), torch.as_tensor(data["legal"])
    card = torch.as_tensor(data["card"].astype(np.int64))
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(card), generator=gen)
    test, train = order[: max(1, len(card) // 20)], order[max(1, len(card) // 20) :]
    ckpt = load_checkpoint(init)
    net = net_from_checkpoint(ckpt, init).train()
    opt = torch.optim.Adam(net.parameters(), lr=lr)

    def agreement() -> float:
        with torch.no_grad():
            return float((masked_log_softmax(net(obs[test])[0], legal[test]).argmax(1) == card[test]).float().mean())

    seen = [agreement()]
    for _ in range(epochs):
        shuffled = train[torch.randperm(len(train), generator=gen)]
        for i in range(0, len(shuffled), 1024):
            batch = shuffled[i : i + 1024]
            logp = masked_log_softmax(net(obs[batch])[0], legal[batch])
            loss = -logp.gather(1, card[batch, None]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        seen.append(agreement())
    out = {k: v for k, v in ckpt.items() if k not in ("strength", "blend")}
    out["model"] = net.eval().state_dict()
    return out, seen


def main() -> None:
    """``record`` or ``fit``, as the module docstring shows."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    rec = sub.add_parser("record", help="play matches and keep the agent's decisions")
    rec.add_argument("--agent", default="pimc:eval=exact", help="the agent to imitate (an agent spec)")
    rec.add_argument("--matches", type=int, default=600, help="matches played side by side")
    rec.add_argument("--seed", type=int, default=1, help="seed of the deals and the agent")
    rec.add_argument("--beside", help="a policy checkpoint in two of the four seats (default: the agent in all)")
    rec.add_argument("--out", required=True, help="the .npz file written")
    fitp = sub.add_parser("fit", help="fit a network to recorded decisions")
    fitp.add_argument("--init", default="agents/zoo/standard-4p.pt", help="the checkpoint the fit starts from")
    fitp.add_argument("--epochs", type=int, default=4, help="passes over the data")
    fitp.add_argument("--out", required=True, help="the checkpoint written (plays as ppo:OUT)")
    fitp.add_argument("data", nargs="+", help=".npz files written by record")
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.perf_counter()
    if args.what == "record":
        data = record(args.agent, args.matches, args.seed, args.beside)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out, **data)
        print(f"{len(data['card']):,} decisions of {args.agent} in {time.perf_counter() - start:.0f} s -> {args.out}")
        return
    files = [np.load(f) for f in args.data]
    data = {k: np.concatenate([f[k] for f in files]) for k in ("obs", "legal", "card")}
    ckpt, seen = fit(args.init, data, args.epochs)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, args.out)
    print(f"{len(data['card']):,} decisions; held-out agreement {' -> '.join(f'{a:.3f}' for a in seen)} -> {args.out}")


if __name__ == "__main__":
    main()
