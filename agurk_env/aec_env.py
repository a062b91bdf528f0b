"""Agurk as a PettingZoo AEC environment: a thin adapter on the engine with batch size 1.

``env(rules="standard", episode="round", render_mode=None, **options)`` returns the
environment in PettingZoo's ``OrderEnforcingWrapper``; ``raw_env(...)`` is the bare one.
``rules`` is a preset name or a :class:`~agurk_env.rules.Rules`; ``**options`` override
any RULES.md option (``players=5``, ``limit=21``, ...). Every rule is the engine's
(:mod:`agurk_env.engine`); this module only turns its state into the AEC interface.

Agents:
    ``player_0`` .. ``player_{n-1}``; ``player_i`` sits in seat ``i`` (seat 0 deals round 1).
    ``agents`` holds the seats still in the match, in seat order.

Actions:
    ``Discrete(13)``, or ``Discrete(14)`` with jokers: action ``i`` plays ``CARDS[i]``.

Observations:
    ``{"observation": float32 (SIZE,), "action_mask": int8 (A,)}``. ``observation`` is
    :func:`agurk_env.observation.observe` for the observing seat: seat-relative, public
    information and the seat's own hand only (slices in ``observation.SLICES``).
    ``action_mask`` marks the legal cards of the agent to move; it is all zeros for any
    other agent and after the episode ends.

Episodes and rewards:
    ``episode="round"``: one round (``hand_size`` tricks). When it ends every seat in it
    gets ``-penalty / limit`` (its penalty points this round over the rules' limit, so a
    king in the last trick costs ``-13/30`` under ``standard``; in lives mode too).
    Scores carry over: a reset without a seed deals the next round of the same match, or
    the first round of the next match once the match is over; seats already out sit out.

    ``episode="match"``: the whole match. A seat gets its placement reward when it leaves
    the match (it is then terminated and removed from ``agents`` after its dead step);
    the winners get theirs when the match ends. Seats are placed by when they left
    (later is better, winners first); seats that leave in the same round share the mean
    of their places. Place ``q`` (1 = best, out of ``n`` seats) is worth
    ``1 - 2 (q - 1) / (n - 1)``: +1 for a sole winner, -1 for the first out, 0 in sum.

    Rewards always reach the seat they belong to (a last-trick penalty often falls on a
    seat that did not act last): they accumulate in ``_cumulative_rewards`` and
    ``last()`` hands them over on that seat's next turn or dead step. ``infos[agent]``
    holds the last finished round's ``penalty``, ``score`` and ``out`` for each seat in it.

Seeds:
    ``reset(seed=S)`` starts match 0 of seed ``S``, dealt exactly as ``agurk simulate
    --seed S`` deals its match 0 (the deal of round ``r`` of match ``m`` depends only on
    ``(S, m, r)``). A reset without a seed goes on in the same seed: the next round
    (round episodes, see above) or the next match number; an unfinished episode is
    abandoned and the next match number is dealt. The first reset without any seed
    draws one from the operating system.

Errors:
    An illegal action raises ``ValueError`` naming the agent, the card and the legal cards.

Rendering:
    ``"ansi"`` returns a text view of the table (scores, the trick, the hand of the
    agent to move only); ``"human"`` prints it.

Records:
    ``env.unwrapped.record()`` returns the current match's record so far in the RULES.md
    format (see :meth:`raw_env.record`).

Version history:
    v0: first version.
"""

from __future__ import annotations

import functools
import operator
import secrets
from typing import Any, ClassVar

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from agurk_env import engine, observation
from agurk_env.records import Recorder
from agurk_env.rules import CARDS, Rules

EPISODES: tuple[str, ...] = ("round", "match")
"""The episode kinds: one round, or a whole match."""
RENDER_MODES: list[str] = ["human", "ansi"]
"""The render modes every Agurk environment supports."""

_MASKS_I8 = engine.MEMBERS.astype(np.int8)  # card set -> int8 mask over 14 cards


# ----------------------------------------------------------------------------- shared helpers


def make_rules(rules: str | Rules = "standard", **options: Any) -> Rules:
    """A preset name or a :class:`Rules`, with any rule options overridden on top."""
    if isinstance(rules, Rules):
        return rules.replace(**options) if options else rules
    if isinstance(rules, str):
        return Rules.preset(rules, **options)
    raise TypeError(f"rules must be a preset name or a Rules object, not {type(rules).__name__}")


def check_choice(name: str, value: Any, allowed: tuple | list) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, not {value!r}")


@functools.lru_cache(maxsize=64)
def _high(rules: Rules) -> np.ndarray:
    """Upper bounds of every observation entry under ``rules`` (all entries are >= 0)."""
    most = max(13, rules.ace_points, 15 if rules.jokers else 0)
    per_round = most * (rules.hand_size if rules.scoring == "every_trick" else 1)
    # a seat's score: below the limit (or at it, with exceed) before a round, plus one round;
    # in lives mode a seat scores in at most `lives` rounds (each costs a life)
    score = rules.lives * per_round if rules.lives else rules.limit + per_round
    high = np.ones(observation.SIZE, np.float32)
    parts = observation.view(high)
    parts["score"][:] = score / rules.limit
    parts["rebuys"][:] = max(1, rules.rebuys)
    first = observation.observe(rules, engine.init(rules, 1, 0))[0]  # the constant rule slices
    return np.maximum(high, first)


def observation_box(rules: Rules) -> gymnasium.spaces.Box:
    """The ``Box`` of the observation vector under ``rules`` (a new object)."""
    return gymnasium.spaces.Box(0.0, _high(rules), (observation.SIZE,), np.float32)


def round_rewards(rules: Rules, state: engine.State) -> np.ndarray:
    """``(B, P)`` float32 round-episode rewards: ``-penalty / limit`` (valid at a round's end)."""
    return (state.round_penalty / -rules.limit).astype(np.float32)


def placement_rewards(rules: Rules, state: engine.State) -> tuple[np.ndarray, np.ndarray]:
    """``(finished, reward)``, both ``(B, P)``: the seats whose match ends now, and their placement reward.

    Valid at a round's end. A seat finishes when it goes out or when the match ends
    while it is in. Winners take the best places; the seats that went out this round
    and did not win take the places after every seat still in (or winning), sharing
    their mean. Place ``q`` of ``n`` is worth ``1 - 2 (q - 1) / (n - 1)``.
    """
    p = rules.players
    winners = state.winners
    finished = state.out_now | (state.match_over[:, None] & state.alive)
    losers = finished & ~winners
    n_win = winners.sum(1, keepdims=True)
    better = (state.alive | winners).sum(1, keepdims=True)
    place = np.where(winners, (1 + n_win) / 2, better + (losers.sum(1, keepdims=True) + 1) / 2)
    reward = np.where(finished, 1 - 2 * (place - 1) / (p - 1), 0.0)
    return finished, reward.astype(np.float32)


def card_list(bits: int) -> str:
    """Card names of a card set, space-separated (``"-"`` when empty)."""
    names = [CARDS[c] for c in engine.KTH_MEMBER[bits, : engine.SET_SIZE[bits]].tolist()]
    return " ".join(names) if names else "-"


def render_text(rules: Rules, state: engine.State, names: list[str], game: int = 0, show: int | None = None) -> str:
    """A text view of game ``game``: scores, the current trick, and the hand of seat ``show`` only.

    ``show`` defaults to the seat to move; pass ``-1`` to show no hand.
    """
    st = state.take(slice(game, game + 1))
    p, h = rules.players, rules.hand_size
    cur, over = int(st.cur[0]), bool(st.round_over[0])
    show = cur if show is None else show
    trick_no = int(st.trick_no[0])
    head = f"Agurk · match {int(st.match_id[0])} · round {int(st.round_no[0]) + 1}"
    head += " · round over" if over else f" · trick {trick_no + 1}/{h}"
    lines = [head + f" · dealer {names[int(st.dealer[0])]}"]
    width = max(len(n) for n in names)
    for s in range(p):
        tags = []
        if rules.lives:
            tags.append(f"lives {int(st.lives[0, s])}")
        if rules.rebuys:
            tags.append(f"rebuys {int(st.rebuys[0, s])}")
        if not st.alive[0, s]:
            tags.append("out")
        if over and (st.alive[0, s] or st.out_now[0, s]):
            tags.append(f"penalty {int(st.round_penalty[0, s])}")
        if st.winners[0, s]:
            tags.append("winner")
        if not over and s == cur:
            tags.append("to move")
        held = int(st.hands[0, s].sum())
        extra = ("  " + ", ".join(tags)) if tags else ""
        lines.append(f"  {names[s]:<{width}}  score {int(st.scores[0, s]):>3}  cards {held}{extra}")
    t = min(trick_no, h - 1) if not over else h - 1
    leader = int(st.trick_leader[0, t])
    if leader >= 0:
        order = [(leader + k) % p for k in range(p)]
        plays = [f"{names[s]} {CARDS[int(st.tricks[0, t, s])]}" for s in order if st.tricks[0, t, s] >= 0]
        label = "last trick" if over else "trick"
        lines.append(f"{label}: " + (", ".join(plays) if plays else "-"))
    if not over and 0 <= show < p:
        line = f"{names[show]} holds: " + " ".join(
            f"{CARDS[c]}x{n}" if n > 1 else CARDS[c] for c, n in enumerate(st.hands[0, show].tolist()) if n
        )
        if show == cur:
            line += f"  legal: {card_list(int(engine.legal_bits(rules, st)[0]))}"
        lines.append(line if st.hands[0, show].any() else f"{names[show]} holds no card")
    return "\n".join(lines)


def round_record(rules: Rules, state: engine.State) -> dict[str, Any]:
    """The RULES.md round dict of the round that just ended in game 0 (via :class:`Recorder`)."""
    one = state.take(slice(0, 1))
    one = one._replace(match_over=np.ones(1, bool))  # a one-round "match": the recorder hands it back now
    return Recorder(rules, 1, [""] * rules.players).after_play(one)[0]["rounds"][0]


def partial_round_record(rules: Rules, state: engine.State) -> dict[str, Any]:
    """A round in progress in game 0: ``dealer``, the dealt ``hands`` and the ``tricks`` so far.

    A trick in progress has ``leader`` and ``plays`` only (no ``winner`` yet).
    """
    p, h = rules.players, rules.hand_size
    tricks = state.tricks[0]
    dealt = state.hands[0] + engine.cards_played(rules, state.take(slice(0, 1)), by_seat=True)[0]
    hands = [[CARDS[c] for c, n in enumerate(row) for _ in range(n)] for row in dealt.tolist()]
    done, npos = int(state.trick_no[0]), int(state.npos[0])
    trick_dicts = []
    for t in range(min(done + (npos > 0), h)):
        leader = int(state.trick_leader[0, t])
        seats = [(leader + k) % p for k in range(p)]
        plays = [[s, CARDS[int(tricks[t, s])]] for s in seats if tricks[t, s] >= 0]
        trick: dict[str, Any] = {"leader": leader, "plays": plays}
        if t < done:
            trick["winner"] = int(state.trick_winner[0, t])
        trick_dicts.append(trick)
    return {"dealer": int(state.dealer[0]), "hands": hands, "tricks": trick_dicts}


def hand_counts(rules: Rules, state: engine.State, hands: Any) -> np.ndarray:
    """``(P, A)`` card counts from card-name lists or counts, checked against the deck and game 0's seats."""
    p, a = rules.players, rules.num_actions
    if isinstance(hands, np.ndarray) and hands.dtype != object:
        counts = np.asarray(hands, dtype=np.int64)
    else:
        if len(hands) != p:
            raise ValueError(f"hands needs one list of cards per seat ({p}), got {len(hands)}")
        counts = np.zeros((p, a), np.int64)
        for s, cards in enumerate(hands):
            for card in cards:
                if str(card) not in CARDS[:a]:
                    raise ValueError(f"unknown card {card!r} in the hand of seat {s}; cards are {' '.join(CARDS[:a])}")
                counts[s, CARDS.index(str(card))] += 1
    if counts.shape != (p, a) or (counts < 0).any():
        raise ValueError(f"hands must be {p} lists of card names or ({p}, {a}) counts >= 0")
    copies = np.append(np.full(13, 4), rules.jokers)[:a]
    if (counts.sum(0) > copies).any():
        extra = [CARDS[c] for c in np.flatnonzero(counts.sum(0) > copies).tolist()]
        raise ValueError(f"hands hold more copies than the deck of: {' '.join(extra)}")
    want = np.where(state.alive[0], rules.hand_size, 0)
    if (counts.sum(1) != want).any():
        raise ValueError(
            f"each seat in the match needs {rules.hand_size} cards and each seat out none; got {counts.sum(1).tolist()}"
        )
    return counts


def illegal_message(who: str, action: Any, bits: int, actions: int) -> str:
    """The error text for an illegal ``action`` of ``who`` whose legal card set is ``bits``."""
    legal = card_list(bits)
    try:
        a = operator.index(action)
    except TypeError:
        return f"{who} must play a card (an action 0..{actions - 1}), got {action!r}; legal cards: {legal}"
    if not 0 <= a < actions:
        return f"{who} played action {a}, which is no card (actions are 0..{actions - 1}); legal cards: {legal}"
    return f"{who} may not play {CARDS[a]} (action {a}); legal cards: {legal}"


# ----------------------------------------------------------------------------- the environment


def env(rules: str | Rules = "standard", episode: str = "round", render_mode: str | None = None, **options: Any):
    """The Agurk AEC environment in PettingZoo's standard ``OrderEnforcingWrapper``.

    Args:
        rules: A preset name (``agurk rules``) or a :class:`Rules`.
        episode: ``"round"`` or ``"match"`` (see the module docstring).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        **options: Rule options overriding the preset's (``players=5``, ``limit=21``, ...).
    """
    return wrappers.OrderEnforcingWrapper(raw_env(rules, episode=episode, render_mode=render_mode, **options))


class raw_env(AECEnv):
    """The bare Agurk AEC environment (see the module docstring); prefer :func:`env`."""

    metadata: ClassVar[dict[str, Any]] = {"name": "agurk_v0", "render_modes": RENDER_MODES, "is_parallelizable": False}

    def __init__(
        self, rules: str | Rules = "standard", episode: str = "round", render_mode: str | None = None, **options: Any
    ) -> None:
        super().__init__()
        self.rules = make_rules(rules, **options)
        check_choice("episode", episode, EPISODES)
        check_choice("render_mode", render_mode, [None, *RENDER_MODES])
        self.episode = episode
        self.render_mode = render_mode
        p, self._actions = self.rules.players, self.rules.num_actions
        self.possible_agents = [f"player_{s}" for s in range(p)]
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        self._seat_row = {a: np.full(1, s, np.int64) for s, a in enumerate(self.possible_agents)}
        self._observation_spaces = {
            a: gymnasium.spaces.Dict(
                {
                    "observation": observation_box(self.rules),
                    "action_mask": gymnasium.spaces.Box(0, 1, (self._actions,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._action_spaces = {a: gymnasium.spaces.Discrete(self._actions) for a in self.possible_agents}
        self._state: engine.State | None = None
        self._legal: int | None = None  # legal card set of the agent to move, once computed
        self._end_states: dict[str, engine.State] = {}  # what a terminated agent still observes
        self._round_ends: list[engine.State] = []  # this match's finished rounds, as their end states

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        """The observation space of ``agent`` (the same object on every call)."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        """The action space of ``agent`` (the same object on every call)."""
        return self._action_spaces[agent]

    @property
    def engine_state(self) -> engine.State:
        """The engine state (batch size 1) of the match in play."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    @property
    def round_ends(self) -> tuple[engine.State, ...]:
        """The end states (batch size 1) of this match's finished rounds, oldest first."""
        return tuple(self._round_ends)

    # ------------------------------------------------------------------ reset / step

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new episode; see the module docstring for which deal a reset brings.

        Args:
            seed: Start match 0 of this seed.
            options: ``{"hands": ...}`` replaces the deal: one list of card names per seat
                (``[]`` for a seat out of the match), or ``(P, A)`` counts per card.
        """
        st = self._state
        if seed is not None or st is None:
            st = engine.init(self.rules, 1, seed=int(seed) if seed is not None else secrets.randbits(63))
            self._round_ends = []
        elif self.episode == "round" and st.round_over[0] and not st.match_over[0]:
            st = engine.advance(self.rules, st)
        else:
            st = engine.advance(self.rules, st, restart=np.ones(1, bool))
            self._round_ends = []
        if options and options.get("hands") is not None:
            st = engine.set_hands(self.rules, st, hand_counts(self.rules, st, options["hands"])[None])
        self._state, self._legal = st, None
        self._end_states = {}
        self.agents = [self.possible_agents[s] for s in np.flatnonzero(st.alive[0]).tolist()]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[int(st.cur[0])]
        self._skip_agent_selection = None

    def legal_bits(self) -> int:
        """The card set (bitmask) of the cards the agent to move may play."""
        if self._legal is None:
            self._legal = int(engine.legal_bits(self.rules, self.engine_state)[0])
        return self._legal

    def step(self, action: int | None) -> None:
        """Play ``action`` (a card index) for the agent to move, or ``None`` for a terminated agent."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        bits = self.legal_bits()
        try:
            a = operator.index(action)  # ints and NumPy integers; no floats, strings or None
            ok = 0 <= a < self._actions and (bits >> a) & 1
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(illegal_message(f"{agent} (seat {self._seat[agent]})", action, bits, self._actions))
        self._cumulative_rewards[agent] = 0.0
        st = engine.play(self.rules, self.engine_state, np.full(1, a, np.int64))
        self._legal = None
        self._clear_rewards()
        if st.round_over[0]:
            self._end_round(st)
        else:
            self._state = st
            self.agent_selection = self.possible_agents[int(st.cur[0])]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_round(self, st: engine.State) -> None:
        """Hand out the round's (or match's) rewards, terminate the seats done, deal on in a match."""
        self._round_ends.append(st)
        pen, score, out = st.round_penalty[0].tolist(), st.scores[0].tolist(), st.out_now[0].tolist()
        if self.episode == "round":
            finished = [True] * self.rules.players
            reward = round_rewards(self.rules, st)[0].tolist()
        else:
            done, rew = placement_rewards(self.rules, st)
            finished, reward = done[0].tolist(), rew[0].tolist()
        for agent in self.agents:
            s = self._seat[agent]
            self.infos[agent] = {"penalty": pen[s], "score": score[s], "out": out[s]}
            if finished[s]:
                self.rewards[agent] = reward[s]
                self.terminations[agent] = True
                self._end_states[agent] = st
        if self.episode == "match" and not st.match_over[0]:
            st = engine.advance(self.rules, st, reset=False)
        self._state = st
        self.agent_selection = self.possible_agents[int(st.cur[0])]
        self._deads_step_first()

    # ------------------------------------------------------------------ observations

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation vector and action mask (zeros unless it is to move)."""
        st = self._end_states.get(agent, self.engine_state)
        obs = observation.observe(self.rules, st, self._seat_row[agent])[0]
        if agent == self.agent_selection and agent not in self._end_states and not st.round_over[0]:
            mask = _MASKS_I8[self.legal_bits(), : self._actions].copy()
        else:
            mask = np.zeros(self._actions, np.int8)
        return {"observation": obs, "action_mask": mask}

    def action_mask(self) -> np.ndarray:
        """``(A,)`` bool mask of the legal cards of the agent to move."""
        return engine.MEMBERS[self.legal_bits(), : self._actions].copy()

    def render(self) -> str | None:
        """The table as text (``"ansi"``), printed (``"human"``); warns without a render mode."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        show = self._seat[self.agent_selection] if self.agent_selection not in self._end_states else -1
        text = render_text(self.rules, self.engine_state, self.possible_agents, show=show)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        """Nothing to release."""

    def record(self) -> dict[str, Any]:
        """The current match's record so far, in the RULES.md format.

        ``agents`` holds the agent names, and ``match`` the match number of the seed (as
        ``agurk simulate`` writes). Finished rounds are complete; a round in progress has
        ``dealer``, ``hands`` (as dealt) and the ``tricks`` so far (see
        :func:`partial_round_record`). ``winners`` is present once the match is over.
        """
        st = self.engine_state
        rounds = [round_record(self.rules, end) for end in self._round_ends]
        if not st.round_over[0]:
            rounds.append(partial_round_record(self.rules, st))
        rec: dict[str, Any] = {
            "rules": self.rules.to_dict(),
            "seed": int(st.seed),
            "match": int(st.match_id[0]),
            "agents": list(self.possible_agents),
            "rounds": rounds,
        }
        if st.match_over[0]:
            rec["winners"] = np.flatnonzero(st.winners[0]).tolist()
        return rec
