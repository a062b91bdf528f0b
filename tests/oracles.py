"""Independent oracles for engine states: the scalar reference put at a state, and a scalar observation.

``reference_at`` puts :class:`agurk_env.reference.ReferenceMatch` (plain-Python rules) at the current
trick of one game of an engine state, so its ``legal``, ``trick_winner``, ``strength`` and ``points``
can be compared with the engine's vectorized helpers. ``expected_observation`` builds the observation
vector of one seat of one game with plain loops from the state's fields and the reference (the shown
voids are re-derived from the rules by probing the reference with two-card hands), using only the
slice layout of :mod:`agurk_env.observation`, never its ``observe``.
"""

from __future__ import annotations

import numpy as np

from agurk_env import engine
from agurk_env.observation import SIZE, view
from agurk_env.reference import ReferenceMatch
from agurk_env.rules import PRESETS, Rules

RULE_FLAGS: tuple[tuple[str, object], ...] = (
    ("ace", "high"),
    ("ace", "low"),
    ("ace", "low_in_last_trick"),
    ("first_leader", "dealer"),
    ("beat_target", "previous"),
    ("equal_beats", "always"),
    ("equal_beats", "not_last_trick"),
    ("equal_beats", "never"),
    ("beat_choice", "forced"),
    ("beat_choice", "nearest"),
    ("beat_choice", "optional"),
    ("ace_lock", "led"),
    ("ace_lock", "any"),
    ("twos_rule", True),
    ("scoring", "every_trick"),
    ("last_trick_ties", "all"),
    ("limit_rule", "exceed"),
    ("match_end", "first_out"),
)
"""The observation's rule flags, in their (pinned) order: a trained network depends on it."""


def preset_rules(preset: str, players: int) -> Rules:
    """The preset for ``players`` seats, its hand size cut to what the deck allows."""
    deck = 52 + PRESETS[preset].get("jokers", 0)
    return Rules.preset(preset, players=players, hand_size=min(Rules.preset(preset).hand_size, deck // players))


def random_step(rules: Rules, state: engine.State, rng: np.random.Generator) -> engine.State:
    """One random legal card in every game, then the next deal where a round ended."""
    return engine.advance(rules, engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng)))


def midround_states(rules: Rules, batch: int, seed: int, steps: int) -> engine.State:
    """``batch`` matches of ``seed`` after ``steps`` random legal plays (every game in a round)."""
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    for _ in range(steps):
        state = random_step(rules, state, rng)
    return state


def hand_list(counts: np.ndarray) -> list[int]:
    """``(A,)`` counts to a list of cards."""
    return [c for c, n in enumerate(counts.tolist()) for _ in range(n)]


def trick_plays(rules: Rules, state: engine.State, g: int, t: int) -> list[tuple[int, int]]:
    """``(seat, card)`` of trick ``t`` of game ``g`` this round, in playing order (clockwise from its leader)."""
    if t > int(state.trick_no[g]) or (t == int(state.trick_no[g]) and int(state.npos[g]) == 0):
        return []
    alive = state.alive[g].tolist()
    leader = int(state.trick_leader[g, t])
    order = [s % rules.players for s in range(leader, leader + rules.players) if alive[s % rules.players]]
    plays = [(s, int(state.tricks[g, t, s])) for s in order]
    return [(s, c) for s, c in plays if c >= 0]


def reference_at(
    rules: Rules, state: engine.State, g: int, trick: int | None = None, prefix: int | None = None
) -> ReferenceMatch:
    """The reference at game ``g``'s current trick (or the first ``prefix`` plays of trick ``trick``), true hands."""
    ref = ReferenceMatch(rules)
    t = int(state.trick_no[g]) if trick is None else trick
    plays = trick_plays(rules, state, g, t)
    if prefix is not None:
        plays = plays[:prefix]
    ref.alive = state.alive[g].tolist()
    ref.scores = state.scores[g].tolist()
    ref.lives = state.lives[g].tolist()
    ref.rebuys_left = state.rebuys[g].tolist()
    ref.dealer = int(state.dealer[g])
    ref.in_round = True
    ref.hands = [hand_list(row) for row in state.hands[g]]
    ref.trick = list(plays)
    ref.trick_no = t
    if plays:
        ref.leader = plays[0][0]
        ref.to_move = ref.left_of(plays[-1][0])
    else:
        ref.leader = ref.to_move = int(state.cur[g]) if trick is None else int(state.trick_leader[g, t])
    return ref


def legal_with(ref: ReferenceMatch, seat: int, hand: list[int]) -> list[int]:
    """The reference's legal cards for ``seat`` holding ``hand`` at the reference's trick."""
    saved = ref.hands[seat], ref.to_move
    ref.hands[seat], ref.to_move = list(hand), seat
    try:
        return ref.legal()
    finally:
        ref.hands[seat], ref.to_move = saved


def shown_voids(rules: Rules, state: engine.State, g: int) -> list[set[int]]:
    """Per seat: the cards its plays this round have shown it cannot hold.

    A follower's card ``p`` shows it lacks ``c`` when ``p`` would be illegal in any hand holding
    both; legality only shrinks as a hand grows, so the two-card hand ``{p, c}`` decides.
    """
    voids: list[set[int]] = [set() for _ in range(rules.players)]
    for t in range(int(state.trick_no[g]) + 1):
        if t >= rules.hand_size:
            break
        plays = trick_plays(rules, state, g, t)
        for i, (seat, card) in enumerate(plays):
            if i == 0:
                continue
            ref = reference_at(rules, state, g, trick=t, prefix=i)
            for c in range(rules.num_actions):
                if c != card and card not in legal_with(ref, seat, [card, c]):
                    voids[seat].add(c)
    return voids


def expected_observation(rules: Rules, state: engine.State, g: int, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` in game ``g``, built slice by slice with plain loops."""
    p, h, a = rules.players, rules.hand_size, rules.num_actions
    out = np.zeros(SIZE, np.float32)
    o = view(out)
    absolute = [(seat + r) % p for r in range(p)]
    rel = {s: r for r, s in enumerate(absolute)}
    hands = state.hands[g].astype(np.int64)
    t, npos = int(state.trick_no[g]), int(state.npos[g])
    alive = state.alive[g].tolist()

    o["hand"][:a] = hands[seat] / 4.0
    counts = np.zeros(a)
    for c in state.tricks[g].reshape(-1).tolist():
        if c >= 0:
            counts[c] += 1
    o["played"][:a] = counts / 4.0
    if t < h and npos:
        ref = reference_at(rules, state, g)
        for s, c in ref.trick:
            o["trick"][rel[s], c] = 1.0
        winner = ref.trick_winner()
        o["top_card"][dict(ref.trick)[winner]] = 1.0
        o["top_seat"][rel[winner]] = 1.0
        o["leader"][rel[ref.trick[0][0]]] = 1.0
        o["locked"][0] = ref.lock_index() is not None
    for r, s in enumerate(absolute):
        o["cards_left"][r] = hands[s].sum() / h
    for s, cards in enumerate(shown_voids(rules, state, g)):
        for c in cards:
            o["void"][rel[s], c] = 1.0
    o["trick_no"][0] = t / h
    o["last_trick"][0] = t == h - 1
    o["position"][0] = (npos if t < h else 0) / max(sum(alive), 1)
    for r, s in enumerate(absolute):
        o["score"][r] = state.scores[g, s] / rules.limit
        if rules.lives:
            o["lives"][r] = state.lives[g, s] / rules.lives
        o["rebuys"][r] = state.rebuys[g, s]
        o["in_match"][r] = alive[s]
    o["dealer"][rel[int(state.dealer[g])]] = 1.0
    o["players"][p - 2] = 1.0
    flags = [float(getattr(rules, name) == value) for name, value in RULE_FLAGS]
    o["rules"][:] = [*flags, rules.jokers / 2, rules.ace_points / 15, rules.limit / 50]
    return out
