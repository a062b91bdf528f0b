"""Our agents as tabular policies of a tiny game (:func:`agent_policy`, :class:`AgentPolicy`).

An agent is asked on the :class:`~agurk_env.agent.Decision` of the seat to move in one history of
each information set (fair agents read only what that seat knows, so any history gives the
same card); ``random`` is the exact uniform policy; an agent with a random generator (``pimc``)
is made deterministic per information state by seeding its generator from the information
state string (:func:`info_rng`). :class:`AgentPolicy` is the same policy as an OpenSpiel ``Policy``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from agurk_env import engine
from agurk_env.agent import Agent, Decision, RandomAgent, decide
from agurk_env.install import install
from agurk_env.rules import Rules
from skill.game_tree import GameTree

try:
    from open_spiel.python import policy as openspiel_policy
except ImportError:  # pragma: no cover - the base install has no OpenSpiel
    raise ImportError(f"skill.agent_policy needs OpenSpiel: {install('openspiel')}") from None


def info_rng(seed: int, key: str) -> np.random.Generator:
    """The generator a stochastic agent gets at the information state ``key``: seeded from ``seed`` and the key."""
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def check_policy_agent(agent: Agent) -> None:
    """Refuse an agent whose card is no function of the information state (it reads the hidden hands)."""
    if getattr(agent, "sees_all", False):
        raise ValueError(f"agent {agent.spec!r} reads the hidden hands: its play is no policy of the information state")


def agent_probabilities(
    agent: Agent, rules: Rules, states: engine.State, bits: np.ndarray, keys: Sequence[str], seed: int = 0
) -> np.ndarray:
    """``(k, A)`` the agent's action probabilities on the decisions of the seats to move in ``states`` (batch k).

    ``random`` gives the uniform distribution over the legal cards; a ``ppo:...;sample`` agent its
    network's distribution; an agent with a generator (``rng``, e.g. ``pimc``) is asked once per
    game with the generator :func:`info_rng` of that game's key; any other agent is asked for all
    games at once (one-hot). ``bits`` are the legal card sets, ``keys`` the information state strings.
    """
    check_policy_agent(agent)
    a = rules.num_actions
    bits = np.asarray(bits, np.int64)
    legal = engine.unpack(bits, a).astype(np.float64)
    if isinstance(agent, RandomAgent):
        return legal / legal.sum(1, keepdims=True)
    out = legal.copy()  # a single legal card needs no asking
    ask = np.flatnonzero(engine.SET_SIZE[bits] > 1)
    if not ask.size:
        return out
    if hasattr(agent, "net") and getattr(agent, "greedy", True) is False:
        out[ask] = _network_probabilities(agent, rules, states.take(ask), bits[ask])
        return out
    out[ask] = 0.0
    if hasattr(agent, "rng"):
        for i in ask.tolist():
            agent.rng = info_rng(seed, keys[i])
            card = decide(agent, rules, states.take(slice(i, i + 1)), np.zeros(1, np.int64), bits[i : i + 1])
            out[i, int(card[0])] = 1.0
        return out
    for lo in range(0, ask.size, 4096):
        games = ask[lo : lo + 4096]
        cards = decide(agent, rules, states.take(games), np.arange(games.size), bits[games])
        out[games, cards] = 1.0
    return out


def _network_probabilities(agent: Any, rules: Rules, states: engine.State, bits: np.ndarray) -> np.ndarray:
    """``(k, A)`` a policy network's masked softmax on the decisions of ``states``."""
    import torch

    from agents.policy import masked_log_softmax, pad_legal

    d = Decision(rules, states, np.arange(states.batch), np.asarray(bits, np.int64))
    legal = pad_legal(d.legal, agent.net.actions)
    with torch.inference_mode():
        logits, _ = agent.net(torch.as_tensor(d.obs, device=agent.device))
        logp = masked_log_softmax(logits, torch.from_numpy(legal).to(agent.device))
    return logp.exp().cpu().numpy().astype(np.float64)[:, : rules.num_actions]


def _stack(states: list[engine.State]) -> engine.State:
    """Engine states of batch 1 (or more) as one batch, in order."""
    first = states[0]
    arrays: dict[str, Any] = {  # the State's array fields
        k: np.concatenate([getattr(s, k) for s in states]) for k, v in first._asdict().items() if hasattr(v, "shape")
    }
    return first._replace(**arrays)


class Representatives:
    """``on_infoset`` for :func:`build_tree` on ``python_agurk``: keeps one engine state per information set."""

    def __init__(self) -> None:
        self._chunks: list[engine.State] = []
        self._pending: list[engine.State] = []
        self.bits: list[int] = []

    def __call__(self, state: Any, infoset: int) -> None:
        """Keep ``state``'s engine state and legal cards for information set ``infoset`` (met in order)."""
        if infoset != len(self.bits):
            raise ValueError("information sets must be met in order")
        self._pending.append(state.engine_state)
        self.bits.append(state.legal_bits())
        if len(self._pending) == 2048:
            self._chunks.append(_stack(self._pending))
            self._pending = []

    def states(self) -> engine.State:
        """Every kept state, as one batch (information set ``i`` is game ``i``)."""
        if self._pending:
            self._chunks.append(_stack(self._pending))
            self._pending = []
        if len(self._chunks) > 1:
            self._chunks = [_stack(self._chunks)]
        return self._chunks[0]


def agent_policy(tree: GameTree, reps: Representatives, rules: Rules, agent: Agent, seed: int = 0) -> np.ndarray:
    """``(S,)`` the agent as a tabular policy of every seat (see :func:`agent_probabilities`)."""
    probs = agent_probabilities(agent, rules, reps.states(), np.asarray(reps.bits, np.int64), tree.keys, seed)
    return probs[tree.seq_infoset, tree.seq_action]


class AgentPolicy(openspiel_policy.Policy):
    """One of our agents as an OpenSpiel policy of every seat of ``python_agurk``.

    At a state, the agent is asked on the :class:`~agurk_env.agent.Decision` of the seat to
    move in the wrapped engine state (:func:`agent_probabilities`, so a ``pimc`` agent's generator
    is seeded from the information state string); answers are cached per information state.
    """

    def __init__(self, game: Any, agent: Agent, seed: int = 0) -> None:
        super().__init__(game, list(range(game.num_players())))
        check_policy_agent(agent)
        self.agent, self.seed, self.rules = agent, seed, game.rules
        self._cache: dict[str, dict[int, float]] = {}

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        """``{card: probability}`` at ``state`` for the seat to move."""
        key = state.information_state_string()
        if key not in self._cache:
            bits = np.array([state.legal_bits()], np.int64)
            probs = agent_probabilities(self.agent, self.rules, state.engine_state, bits, [key], self.seed)[0]
            self._cache[key] = {int(a): float(probs[a]) for a in state.legal_actions()}
        return self._cache[key]
