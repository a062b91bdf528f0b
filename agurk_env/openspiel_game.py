"""Agurk as an OpenSpiel game: ``pyspiel.load_game("python_agurk", {...})``, a thin adapter on the engine.

Importing this module registers ``python_agurk`` (it needs the openspiel extra:
``pip install -e ".[openspiel]"``). Each state wraps an engine state of batch 1: every rule
is the engine's (:func:`agurk_env.engine.legal_bits`, :func:`~agurk_env.engine.play`,
:func:`~agurk_env.engine.advance`); this module deals the cards as chance outcomes and turns
the engine state into OpenSpiel's interface.

Parameters (``pyspiel.load_game("python_agurk(rules=danish21,players=2,hand_size=3)")``):
    ``rules``: the preset (``agurk rules``), default ``standard``. Every RULES.md option is a
    parameter too and overrides the preset: the integer options (``players``, ``hand_size``,
    ``jokers``, ``ace_points``, ``limit``, ``rebuys``, ``rebuy_min_others``, ``lives``) and
    ``twos_rule`` (``0`` off, ``1`` on) as integers with ``-1`` meaning "the preset's value", the
    choice options (``ace``, ``beat_choice``, ...) as strings with ``""`` meaning the preset's.
    ``episode``: ``round`` (one round, the default) or ``match`` (a whole match).
    ``deal``: ``hand`` (default) or ``card``, the chance outcomes (below).
    ``ranks`` and ``copies``: the deck dealt from, default every card name (2..A, and X with
    jokers) with ``copies=4`` each, the RULES.md deck. A smaller deck (``ranks=JQKA``,
    ``copies=2``; ``"J,Q,K,A"`` reads the same) keeps exact algorithms tractable; it only
    changes which cards are dealt (X always has ``jokers`` copies), never how they are played.
    Agents that reason about the unseen cards (``pimc``, the heuristics' counts) still assume
    the RULES.md deck.

Chance outcomes:
    Every round starts with chance nodes that deal the seats still in, clockwise from the
    dealer's left. ``deal=hand``: one chance node per seat, whose outcome is the seat's whole
    hand, a multiset of card names (outcome ``i`` is row ``i`` of :attr:`AgurkGame.hands`, every
    multiset of ``hand_size`` cards the deck allows), with its exact probability given the
    hands dealt before it (a product of binomials). ``deal=card``: one chance node per card,
    dealt round-robin; outcome ``i`` is card ``CARDS[i]`` with probability (copies left of it)
    / (cards left). Both give the same distribution of deals; ``hand`` has fewer histories.

Actions:
    ``num_distinct_actions`` is 13 (14 with jokers): action ``i`` plays card ``CARDS[i]``, the
    engine's action space; the legal actions are the engine's legal cards.

Returns and utility:
    ``episode=round``: the round's penalty points as a loss, ``returns()[s] = -penalty[s]``
    (``-13`` for a king in the last trick), at the end of the round. Seats can share a
    penalty (tied last-trick cards) and the penalty's size varies, so the game is declared
    ``GENERAL_SUM``. ``episode=match``: each seat's placement reward
    (:func:`agurk_env.rewards.placement_rewards`: +1 sole winner .. -1 first out, shared places
    averaged), which sums to 0 (``ZERO_SUM``). Rewards come at the end (``TERMINAL``).

Information state and observation:
    ``information_state_string(s)`` identifies seat ``s``'s information state exactly: its own
    dealt cards of every round (sorted: the order they arrived tells nothing), the number of
    cards dealt so far, and every card played with its seat, in order. ``observation_tensor(s)``
    is :func:`agurk_env.observation.observe` for seat ``s`` (slices ``observation.SLICES``);
    ``information_state_tensor(s)`` is the same vector followed by ``history``: the card each
    relative seat played in each trick of the current round, one-hot ``(hand_size, 8, 14)``
    (perfect recall within a round; the string is the exact key across rounds too).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from agurk_env.install import install

try:
    import pyspiel
except ImportError:  # pragma: no cover - the base install has no OpenSpiel
    raise ImportError(f"agurk_env.openspiel_game needs OpenSpiel: {install('openspiel')}") from None

from agurk_env import engine, observation
from agurk_env.engine import deck_counts, parse_ranks
from agurk_env.render import illegal_message
from agurk_env.rewards import EPISODES, placement_rewards
from agurk_env.rules import CARDS, CHOICES, OPTION_NAMES, Rules, check_choice, make_rules

NAME = "python_agurk"
"""The OpenSpiel short name of the game."""
DEALS: tuple[str, ...] = ("hand", "card")
"""The chance models: one outcome per hand, or one per card."""
MAX_HANDS = 200_000
"""Most distinct hands ``deal=hand`` enumerates (beyond it, use ``deal=card``)."""
GameParameter = int | float | str | bool
"""The value of one game parameter, as ``pyspiel.load_game`` takes them."""
PARAMETERS: dict[str, GameParameter] = {
    "rules": "standard",
    "episode": "round",
    "deal": "hand",
    "ranks": "",
    "copies": 4,
    **{name: "" if name in CHOICES else -1 for name in OPTION_NAMES},
}
"""The game parameters and their defaults (``-1`` and ``""``: the preset's value of that option)."""
HISTORY_SLICE = "history"
"""Name of the information-state tensor's slice after the observation."""


def _game_type(utility: pyspiel.GameType.Utility) -> pyspiel.GameType:
    """The registered game type, with ``utility``."""
    return pyspiel.GameType(
        short_name=NAME,
        long_name="Agurk (Python, on the agurk_env engine)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=8,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=PARAMETERS,
    )


GAME_TYPE = _game_type(pyspiel.GameType.Utility.GENERAL_SUM)
"""The registered type (round episodes; a match game reports ``ZERO_SUM``)."""


# ----------------------------------------------------------------------------- parameters and deck


def rules_from_params(params: Mapping[str, GameParameter]) -> Rules:
    """The :class:`Rules` of game parameters: the preset with every option that is not ``-1`` / ``""`` on top."""
    overrides: dict[str, Any] = {}
    for name in OPTION_NAMES:
        value = params.get(name, PARAMETERS[name])
        if value in ("", -1):
            continue
        if name == "twos_rule" and value not in (0, 1):
            raise ValueError(f"twos_rule must be -1 (the preset's), 0 or 1, not {value!r}")
        overrides[name] = bool(value) if name == "twos_rule" else value
    return make_rules(str(params.get("rules", "standard")), **overrides)


def count_hands(deck: np.ndarray, hand_size: int) -> int:
    """Distinct hands (multisets of ``hand_size`` cards) that ``deck`` allows."""
    ways = np.zeros(hand_size + 1, dtype=object)
    ways[0] = 1
    for c in deck.tolist():
        new = np.zeros_like(ways)
        for k in range(min(c, hand_size) + 1):
            new[k:] += ways[: hand_size + 1 - k]
        ways = new
    return int(ways[hand_size])


@functools.lru_cache(maxsize=16)
def _hands(deck: tuple[int, ...], hand_size: int) -> np.ndarray:
    """``(M, A)`` int8: every hand ``deck`` allows, counted per card, in lexicographic order of the counts."""
    rows = np.zeros((1, 0), np.int8)
    room = np.cumsum(np.asarray(deck[::-1]))[::-1]  # cards from each card name on
    for j, c in enumerate(deck):
        taken = rows.sum(1)
        parts = []
        for k in range(min(c, hand_size) + 1):
            after = room[j + 1] if j + 1 < len(deck) else 0
            ok = (taken + k <= hand_size) & (taken + k + after >= hand_size)
            parts.append(np.hstack([rows[ok], np.full((int(ok.sum()), 1), k, np.int8)]))
        rows = np.vstack(parts)
        rows = rows[np.lexsort(rows.T[::-1])]
    return rows


_COMB = np.array([[math.comb(n, k) for k in range(60)] for n in range(60)], dtype=np.float64)


@dataclass(frozen=True)
class _Config:
    """What every state of one game shares (immutable; a clone shares it)."""

    rules: Rules
    episode: str
    deal: str
    deck: tuple[int, ...]

    def __deepcopy__(self, memo: dict[int, object]) -> _Config:
        return self


@functools.lru_cache(maxsize=4096)
def _hand_outcomes(deck: tuple[int, ...], hand_size: int, avail: tuple[int, ...]) -> list[tuple[int, float]]:
    """``deal=hand`` chance outcomes with ``avail`` cards left: (hand index, probability) of every possible hand."""
    hands = _hands(deck, hand_size)
    left = np.asarray(avail)
    ways = np.prod(_COMB[left[None, :], hands], axis=1) / _COMB[left.sum(), hand_size]
    idx = np.flatnonzero(ways > 0)
    return list(zip(idx.tolist(), ways[idx].tolist(), strict=True))


def _max_rounds(rules: Rules, deck: np.ndarray) -> int:
    """An upper bound on the rounds of a match (every round costs someone a life or at least one point)."""
    sp = engine.tables(rules)
    least = int(sp.points_last[: rules.num_actions][deck > 0].min())
    if least < 1:
        raise ValueError("episode=match needs every card to score at least 1 point in the last trick (ace_points >= 1)")
    if rules.lives:
        return rules.players * rules.lives
    return rules.players * (rules.limit // least + 1) * (1 + rules.rebuys)


# ----------------------------------------------------------------------------- the game


class AgurkGame(pyspiel.Game):
    """Agurk under one rule set, deck and episode kind (see the module docstring)."""

    def __init__(self, params: Mapping[str, GameParameter] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        rules = rules_from_params(params)
        episode, deal = str(params["episode"]), str(params["deal"])
        check_choice("episode", episode, EPISODES)
        check_choice("deal", deal, DEALS)
        deck = deck_counts(rules, str(params["ranks"]), int(params["copies"]))
        p, h, a = rules.players, rules.hand_size, rules.num_actions
        sp = engine.tables(rules)
        if deal == "hand":
            n_hands = count_hands(deck, h)
            if n_hands > MAX_HANDS:
                raise ValueError(f"deal=hand would enumerate {n_hands} hands (> {MAX_HANDS}); use deal=card")
            outcomes = n_hands
        else:
            outcomes = a
        worst = int(sp.points_last[:a].max()) + (h - 1) * int(sp.points[:a].max()) * sp.every_trick
        if episode == "match":
            length, low, high, total = _max_rounds(rules, deck) * p * h, -1.0, 1.0, 0.0
            utility = pyspiel.GameType.Utility.ZERO_SUM
        else:
            length, low, high, total = p * h, -float(worst), 0.0, None
            utility = pyspiel.GameType.Utility.GENERAL_SUM
        info = pyspiel.GameInfo(
            num_distinct_actions=a,
            max_chance_outcomes=outcomes,
            num_players=p,
            min_utility=low,
            max_utility=high,
            utility_sum=total,
            max_game_length=length,
        )
        params["ranks"] = "".join(parse_ranks(str(params["ranks"])))  # no commas: the game string stays loadable
        super().__init__(_game_type(utility), info, params)
        self.config = _Config(rules, episode, deal, tuple(deck.tolist()))

    @property
    def rules(self) -> Rules:
        """The resolved rules."""
        return self.config.rules

    @property
    def hands(self) -> np.ndarray:
        """``(M, A)`` the ``deal=hand`` chance outcomes: outcome ``i`` deals the hand ``hands[i]`` (counts per card)."""
        return _hands(self.config.deck, self.rules.hand_size)

    def new_initial_state(self) -> AgurkState:
        """The state before the first deal."""
        return AgurkState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Mapping[str, GameParameter] | None = None
    ) -> AgurkObserver:
        """The observer: information state (``perfect_recall``) or observation."""
        return AgurkObserver(self.rules, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class _Node:
    """An engine state (batch 1) and facts computed from it; never changed, so clones share it."""

    __slots__ = ("legal", "obs", "state")

    def __init__(self, state: engine.State) -> None:
        self.state = state
        self.legal: int | None = None
        self.obs: dict[int, np.ndarray] = {}

    def __deepcopy__(self, memo: dict[int, object]) -> _Node:
        return self

    def __getstate__(self) -> engine.State:
        return self.state

    def __setstate__(self, state: engine.State) -> None:
        self.state, self.legal, self.obs = state, None, {}


Plays = tuple[tuple[int, int], ...]
"""``(seat, card)`` of every card played in a round, in order."""
Dealt = tuple[tuple[int, ...], ...]
"""The cards dealt to each seat in a round, ``(P, A)`` counts."""


@dataclass(frozen=True)
class _Log:
    """The history a state keeps beside the engine state (immutable; a clone shares it)."""

    dealt: Dealt
    deals: int = 0
    plays: Plays = ()
    past: tuple[tuple[Dealt, Plays], ...] = ()
    gains: tuple[float, ...] = ()
    over: bool = False

    def __deepcopy__(self, memo: dict[int, object]) -> _Log:
        return self


def _empty_hands(rules: Rules, st: engine.State) -> engine.State:
    """``st`` with every hand emptied, ready for the chance nodes to deal."""
    return engine.set_hands(rules, st, np.zeros_like(st.hands))


@functools.lru_cache(maxsize=64)
def _first_node(rules: Rules) -> _Node:
    """The engine state before the first deal (shared: a state, and every clone, starts from it)."""
    return _Node(_empty_hands(rules, engine.init(rules, 1, seed=0)))


class AgurkState(pyspiel.State):
    """One history of the game: the engine state, the cards dealt and played this round, the earlier rounds."""

    def __init__(self, game: AgurkGame) -> None:
        super().__init__(game)
        self._config = game.config
        rules = game.config.rules
        self._node = _first_node(rules)
        self._log = _Log(((0,) * rules.num_actions,) * rules.players, gains=(0.0,) * rules.players)

    # ------------------------------------------------------------------ what the engine says

    @property
    def rules(self) -> Rules:
        """The resolved rules."""
        return self._config.rules

    @property
    def engine_state(self) -> engine.State:
        """The wrapped engine state (batch 1; the hands dealt so far while dealing)."""
        return self._node.state

    @property
    def dealt(self) -> np.ndarray:
        """``(P, A)`` the cards dealt to each seat this round so far (counts per card)."""
        return np.asarray(self._log.dealt, np.int64)

    @property
    def plays(self) -> Plays:
        """``(seat, card)`` of every card played this round, in order."""
        return self._log.plays

    @property
    def past_rounds(self) -> tuple[tuple[Dealt, Plays], ...]:
        """The finished rounds of the match: (cards dealt per seat, plays) each."""
        return self._log.past

    def legal_bits(self) -> int:
        """The card set (bitmask) of the legal cards of the player to move."""
        node = self._node
        if node.legal is None:
            node.legal = int(engine.legal_bits(self.rules, node.state)[0])
        return node.legal

    def observe(self, player: int) -> np.ndarray:
        """``(observation.SIZE,)`` :func:`agurk_env.observation.observe` of the engine state for ``player`` (cached)."""
        node = self._node
        if player not in node.obs:
            node.obs[player] = observation.observe(self.rules, node.state, np.full(1, player, np.int64))[0]
        return node.obs[player]

    def _deal_order(self) -> list[int]:
        """The seats still in, clockwise from the dealer's left (the order the cards are dealt)."""
        st, p = self.engine_state, self.rules.players
        dealer = int(st.dealer[0])
        return [s for k in range(1, p + 1) if st.alive[0, s := (dealer + k) % p]]

    def _deals_needed(self) -> int:
        """Chance nodes in this round's deal."""
        seats = int(self.engine_state.n_alive[0])
        return seats if self._config.deal == "hand" else seats * self.rules.hand_size

    def _avail(self) -> np.ndarray:
        """``(A,)`` copies of each card not dealt yet this round."""
        return np.asarray(self._config.deck) - self.dealt.sum(0)

    # ------------------------------------------------------------------ the OpenSpiel API

    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` while dealing, or ``TERMINAL``."""
        if self._log.over:
            return pyspiel.PlayerId.TERMINAL
        if self._log.deals < self._deals_needed():
            return pyspiel.PlayerId.CHANCE
        return int(self.engine_state.cur[0])

    def _legal_actions(self, player: int) -> list[int]:
        """The legal cards of ``player`` (ascending action order); none for a seat not to move."""
        if player != self.current_player():
            return []
        bits = self.legal_bits()
        return engine.KTH_MEMBER[bits, : engine.SET_SIZE[bits]].tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The deal's next outcomes and their probabilities (see the module docstring)."""
        avail = self._avail()
        if self._config.deal == "hand":
            return _hand_outcomes(self._config.deck, self.rules.hand_size, tuple(avail.tolist()))
        cards = np.flatnonzero(avail)
        return list(zip(cards.tolist(), (avail[cards] / avail.sum()).tolist(), strict=True))

    def _apply_action(self, action: int) -> None:
        """Deal (a chance outcome) or play the card ``action`` for the seat to move."""
        if self.is_chance_node():
            self._deal(int(action))
            return
        bits = self.legal_bits()
        if not (0 <= action < self.rules.num_actions and (bits >> action) & 1):
            seat = self.current_player()
            raise ValueError(illegal_message(f"seat {seat}", action, bits, self.rules.num_actions))
        st = engine.play(self.rules, self.engine_state, np.full(1, action, np.int64))
        log = self._log
        self._log = replace(log, plays=(*log.plays, (int(self.engine_state.cur[0]), int(action))))
        if st.round_over[0]:
            self._end_round(st)
        else:
            self._node = _Node(st)

    def _deal(self, outcome: int) -> None:
        """Give the next seat its hand (``deal=hand``) or its next card (``deal=card``)."""
        order, log = self._deal_order(), self._log
        dealt = [list(row) for row in log.dealt]
        if self._config.deal == "hand":
            seat = order[log.deals]
            dealt[seat] = [int(n) for n in _hands(self._config.deck, self.rules.hand_size)[outcome]]
        else:
            seat = order[log.deals % len(order)]
            dealt[seat][outcome] += 1
        self._log = replace(log, dealt=tuple(tuple(row) for row in dealt), deals=log.deals + 1)
        hands = np.asarray(dealt, np.int8)[None]
        self._node = _Node(engine.set_hands(self.rules, self.engine_state, hands))

    def _end_round(self, st: engine.State) -> None:
        """Score the round; end the episode, or deal on in a match."""
        self._node, log = _Node(st), self._log
        if self._config.episode == "round":
            self._log = replace(log, gains=tuple(float(-x) for x in st.round_penalty[0].tolist()), over=True)
            return
        _, reward = placement_rewards(self.rules, st)
        gains = tuple(g + float(r) for g, r in zip(log.gains, reward[0].tolist(), strict=True))
        if st.match_over[0]:
            self._log = replace(log, gains=gains, over=True)
            return
        self._node = _Node(_empty_hands(self.rules, engine.advance(self.rules, st, reset=False)))
        empty = ((0,) * self.rules.num_actions,) * self.rules.players
        self._log = _Log(empty, past=(*log.past, (log.dealt, log.plays)), gains=gains)

    def _action_to_string(self, player: int, action: int) -> str:
        """``deal 2 K K`` (a hand), ``deal K`` (a card) or ``K`` (a play)."""
        if player == pyspiel.PlayerId.CHANCE:
            if self._config.deal == "card":
                return f"deal {CARDS[action]}"
            return "deal " + _cards_text(_hands(self._config.deck, self.rules.hand_size)[action])
        return CARDS[action]

    def is_terminal(self) -> bool:
        """The round (``episode=round``) or the match is over."""
        return self._log.over

    def returns(self) -> list[float]:
        """Minus the round's penalties (round), the placement rewards (match); zeros before the end."""
        return list(self._log.gains) if self._log.over else [0.0] * self.rules.players

    def __str__(self) -> str:
        """Every hand dealt, the plays and the scores of this round (full information, for debugging)."""
        log = self._log
        hands = " ".join(f"{s}:{_cards_text(row)}" for s, row in enumerate(log.dealt))
        plays = " ".join(f"{s}:{CARDS[c]}" for s, c in log.plays) or "-"
        scores = " ".join(str(int(x)) for x in self.engine_state.scores[0])
        return f"round {len(log.past) + 1} hands {hands} | plays {plays} | scores {scores}"

    def information_key(self, player: int) -> str:
        """The exact information state of ``player``: its dealt cards and every public play, each round."""
        log = self._log
        parts = [f"p{player}"]
        for i, (dealt, plays) in enumerate([*log.past, (log.dealt, log.plays)]):
            deals = f" dealt {log.deals}" if i == len(log.past) else ""
            played = " ".join(f"{s}:{CARDS[c]}" for s, c in plays)
            parts.append(f"r{i} hand {_cards_text(dealt[player])}{deals} plays {played}".rstrip())
        return " | ".join(parts)

    def observation_text(self, player: int) -> str:
        """What ``player`` observes now (its hand, the trick, the cards played, the scores), as text."""
        st, log = self.engine_state, self._log
        hand = _cards_text(st.hands[0, player])
        npos = int(st.npos[0]) if not st.round_over[0] else 0
        trick = " ".join(f"{s}:{CARDS[c]}" for s, c in log.plays[len(log.plays) - npos :]) or "-"
        played = _cards_text(np.bincount([c for _, c in log.plays], minlength=self.rules.num_actions))
        scores = " ".join(str(int(x)) for x in st.scores[0])
        alive = "".join("1" if x else "0" for x in st.alive[0])
        lives = " lives " + " ".join(str(int(x)) for x in st.lives[0]) if self.rules.lives else ""
        return (
            f"p{player} round {len(log.past) + 1} trick {int(st.trick_no[0]) + 1} hand {hand} "
            f"| trick {trick} | played {played} | scores {scores}{lives} | in {alive} | to move {self.current_player()}"
        )


def _cards_text(counts: npt.ArrayLike) -> str:
    """Card counts ``(A,)`` as names in action order (``2 K K``); ``-`` for none."""
    return " ".join(CARDS[c] for c, n in enumerate(np.asarray(counts).tolist()) for _ in range(int(n))) or "-"


# ----------------------------------------------------------------------------- observer


class AgurkObserver:
    """OpenSpiel's observer interface: ``tensor`` and its named views ``dict``, ``set_from``, ``string_from``."""

    def __init__(
        self, rules: Rules, iig_obs_type: pyspiel.IIGObservationType, params: Mapping[str, GameParameter] | None
    ) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        if not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError("python_agurk observes the public information and one player's hand only")
        self.rules = rules
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        shape = (rules.hand_size, observation.MAX_SEATS, observation.CARD_SLOTS)
        extra = int(np.prod(shape)) if self.perfect_recall else 0
        self.tensor = np.zeros(observation.SIZE + extra, np.float32)
        self.dict = observation.view(self.tensor[: observation.SIZE])
        if self.perfect_recall:
            self.dict[HISTORY_SLICE] = self.tensor[observation.SIZE :].reshape(shape)

    def set_from(self, state: AgurkState, player: int) -> None:
        """Fill ``tensor``: ``observe`` for ``player``, then (information state) this round's plays."""
        self.tensor[: observation.SIZE] = state.observe(player)
        if self.perfect_recall:
            history = self.dict[HISTORY_SLICE]
            history.fill(0.0)
            seats_in = max(int((state.dealt.sum(1) > 0).sum()), 1)  # every trick has one card from each
            for i, (seat, card) in enumerate(state.plays):
                history[i // seats_in, (seat - player) % self.rules.players, card] = 1.0

    def string_from(self, state: AgurkState, player: int) -> str:
        """The exact information-state key (``perfect_recall``) or the observation as text."""
        return state.information_key(player) if self.perfect_recall else state.observation_text(player)


pyspiel.register_game(GAME_TYPE, AgurkGame)
