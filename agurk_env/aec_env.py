"""Agurk as a PettingZoo AEC environment: a thin adapter on the engine with batch size 1.

``env(rules="standard", episode="round", render_mode=None, out_seats="stay", **options)``
returns the environment in PettingZoo's ``OrderEnforcingWrapper``; ``raw_env(...)`` is the
bare one. ``rules`` is a preset name or a :class:`~agurk_env.rules.Rules`; ``**options``
override any RULES.md option (``players=5``, ``limit=21``, ...). Every rule is the engine's
(:mod:`agurk_env.engine`); this module only turns its state into the AEC interface.

Agents:
    ``player_0`` .. ``player_{n-1}``; ``player_i`` sits in seat ``i`` (seat 0 deals round 1).
    With ``out_seats="stay"`` (the default) ``agents`` holds every seat for the whole
    episode: a seat out of the match never gets a turn (``agent_selection`` is always a seat
    still in, so its mask is all zeros), and every seat is terminated at once when the
    episode ends. ``out_seats="leave"`` is the earlier behaviour: ``agents`` holds the seats
    still in the match at the reset, and in match episodes a seat is terminated at the end
    of the round in which it goes out and leaves ``agents`` after its dead step.

Actions:
    ``Discrete(13)``, or ``Discrete(14)`` with jokers: action ``i`` plays ``CARDS[i]``.

Observations:
    ``{"observation": float32 (SIZE,), "action_mask": int8 (A,)}``. ``observation`` is
    :func:`agurk_env.observation.observe` for the observing seat: seat-relative, public
    information and the seat's own hand only (slices in ``observation.SLICES``).
    ``action_mask`` marks the legal cards of the agent to move; it is all zeros for any
    other agent and after the episode ends.

State:
    ``state()`` is the full-information vector of :func:`agurk_env.state.state_vector`
    (every hand, absolute seats; slices in ``agurk_env.state.SLICES``) for centralized
    critics, and ``state_space`` its ``Box``.

Episodes and rewards:
    ``episode="round"``: one round (``hand_size`` tricks). When it ends every seat gets
    ``-penalty / limit`` (its penalty points this round over the rules' limit, so a king in
    the last trick costs ``-13/30`` under ``standard``; in lives mode too; 0 for a seat out).
    Scores carry over: a reset without a seed deals the next round of the same match, or
    the first round of the next match once the match is over; seats already out sit out.

    ``episode="match"``: the whole match. A seat gets its placement reward at the end of
    the round in which it leaves the match; the winners get theirs when the match ends.
    Seats are placed by when they left (later is better, winners first); seats that leave
    in the same round share the mean of their places. Place ``q`` (1 = best, out of ``n``
    seats) is worth ``1 - 2 (q - 1) / (n - 1)``: +1 for a sole winner, -1 for the first
    out, 0 in sum.

    ``rewards`` holds every agent's reward of the last step, so a last-trick penalty that
    falls on a seat that did not act last is there too; they also accumulate in
    ``_cumulative_rewards``, and ``last()`` hands them over on that seat's next turn or
    dead step. ``infos[agent]`` holds the last finished round's ``penalty``, ``score`` and
    ``out`` of each seat that played it.

Other libraries:
    Clients read an AEC env in three ways, and ``out_seats="stay"`` is the design under
    which all three give every seat its true return in both episode kinds: Tianshou's
    ``PettingZooEnv`` ends the episode as soon as the agent selected after a step is
    terminated and reads ``rewards`` of the agents listed there after every step (keeping
    the last value of a seat no longer listed); RLlib's ``PettingZooEnv`` reads ``last()``
    of each agent as it is selected, dead steps included; PettingZoo's
    ``turn_based_aec_to_parallel`` reads ``rewards`` after each step and builds every
    observation before it takes the dead steps that follow. With every seat listed
    until the end and nobody terminated before it, there is no early end, no stale
    reward, and the seat to move always holds its mask; a seat out never needs an action.
    One policy playing every seat through stable-baselines3 (PettingZoo's action-mask
    tutorial) needs :class:`agurk_env.wrappers.AgurkRewardWrapper`.

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
    v1: every seat is an agent until the episode ends (``out_seats="stay"``, the default);
    ``state()`` and ``state_space``.
    v0: first version (its seats behave as ``out_seats="leave"``).
"""

from __future__ import annotations

import operator
import secrets
from typing import Any, ClassVar, Literal, SupportsIndex, cast, get_args

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from agurk_env import engine, observation
from agurk_env.records import MatchRecord, hand_counts, partial_round_record, round_record
from agurk_env.render import RENDER_MODES, illegal_message, render_text
from agurk_env.rewards import EPISODES, Episode, placement_rewards, round_rewards
from agurk_env.rules import Rules, RuleValue, check_choice, make_rules
from agurk_env.spaces import observation_box
from agurk_env.state import state_box, state_vector

OutSeats = Literal["stay", "leave"]
OUT_SEATS: tuple[str, ...] = get_args(OutSeats)
"""What becomes of a seat out of the match: it stays an agent until the episode ends, or it leaves."""

_MASKS_I8 = engine.MEMBERS.astype(np.int8)  # card set -> int8 mask over 14 cards


# ----------------------------------------------------------------------------- the environment


def env(
    rules: str | Rules = "standard",
    episode: Episode = "round",
    render_mode: str | None = None,
    out_seats: OutSeats = "stay",
    **options: RuleValue,
):
    """The Agurk AEC environment in PettingZoo's standard ``OrderEnforcingWrapper``.

    Args:
        rules: A preset name (``agurk rules``) or a :class:`Rules`.
        episode: ``"round"`` or ``"match"`` (see the module docstring).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        out_seats: ``"stay"`` (every seat an agent until the episode ends) or ``"leave"``.
        **options: Rule options overriding the preset's (``players=5``, ``limit=21``, ...).
    """
    return wrappers.OrderEnforcingWrapper(raw_env(rules, episode, render_mode, out_seats, **options))


class raw_env(AECEnv):
    """The bare Agurk AEC environment (see the module docstring); prefer :func:`env`."""

    metadata: ClassVar[dict[str, Any]] = {"name": "agurk_v1", "render_modes": RENDER_MODES, "is_parallelizable": False}

    def __init__(
        self,
        rules: str | Rules = "standard",
        episode: Episode = "round",
        render_mode: str | None = None,
        out_seats: OutSeats = "stay",
        **options: RuleValue,
    ) -> None:
        super().__init__()
        self.rules = make_rules(rules, **options)
        check_choice("episode", episode, EPISODES)
        check_choice("render_mode", render_mode, [None, *RENDER_MODES])
        check_choice("out_seats", out_seats, OUT_SEATS)
        self.episode = episode
        self.render_mode = render_mode
        self.out_seats = out_seats
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
        self.state_space = state_box(self.rules)
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
        if self.out_seats == "stay":
            self.agents = list(self.possible_agents)
        else:
            self.agents = [self.possible_agents[s] for s in np.flatnonzero(st.alive[0]).tolist()]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
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
            a = operator.index(cast("SupportsIndex", action))  # ints and NumPy integers; no floats, strings or None
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
        played = (st.alive[0] | st.out_now[0]).tolist()
        if self.episode == "round":
            finished = [True] * self.rules.players
            reward = round_rewards(self.rules, st)[0].tolist()
        else:
            done, rew = placement_rewards(self.rules, st)
            finished = done[0].tolist() if self.out_seats == "leave" else [bool(st.match_over[0])] * self.rules.players
            reward = rew[0].tolist()
        for agent in self.agents:
            s = self._seat[agent]
            if played[s]:
                self.infos[agent] = {"penalty": pen[s], "score": score[s], "out": out[s]}
            self.rewards[agent] = reward[s]
            if finished[s]:
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

    def state(self) -> np.ndarray:
        """The full-information state vector ``(state.SIZE,)`` of the match in play (see :mod:`agurk_env.state`)."""
        return state_vector(self.rules, self.engine_state)[0]

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

    def record(self) -> MatchRecord:
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
        rec: MatchRecord = {
            "rules": self.rules.to_dict(),
            "seed": int(st.seed),
            "match": int(st.match_id[0]),
            "agents": list(self.possible_agents),
            "rounds": rounds,
        }
        if st.match_over[0]:
            rec["winners"] = np.flatnonzero(st.winners[0]).tolist()
        return rec
