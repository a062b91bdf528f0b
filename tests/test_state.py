"""The full-information state vector: slices against the engine state, batched and per game, the AEC ``state()``."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import preset_rules, random_step
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import agurk_env
from agurk_env import engine, observation
from agurk_env.aec_env import raw_env
from agurk_env.observation import CARD_SLOTS, MAX_SEATS
from agurk_env.rules import PRESETS, Rules
from agurk_env.state import OBSERVATION, SIZE, SLICES, state_box, state_vector, view

PUBLIC = [name for name in observation.SLICES if name != "hand"]


def test_slices_are_the_hands_the_seat_to_move_and_the_observations_public_slices() -> None:
    assert list(SLICES) == ["hands", "to_move", *PUBLIC]
    assert SLICES["hands"] == (MAX_SEATS, CARD_SLOTS) and SLICES["to_move"] == (MAX_SEATS,)
    assert all(SLICES[name] == observation.SLICES[name] for name in PUBLIC)
    assert SIZE == sum(int(np.prod(shape)) for shape in SLICES.values()) == observation.SIZE - CARD_SLOTS + 120
    parts = view(np.arange(SIZE, dtype=np.float32))
    assert np.concatenate([parts[name].ravel() for name in SLICES]).tolist() == list(range(SIZE))


def _states(rules: Rules, batch: int, seed: int, steps: int) -> list[engine.State]:
    """A batch after each of ``steps`` random legal plays (deals and restarts included)."""
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    found = [state]
    for _ in range(steps):
        state = random_step(rules, state, rng)
        found.append(state)
    return found


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_slice_against_the_engine_state(preset: str) -> None:
    players = 2 + sorted(PRESETS).index(preset) % 7
    rules = preset_rules(preset, players)
    p, a, b = rules.players, rules.num_actions, 6
    space = state_box(rules)
    rows = np.arange(b)
    for st in _states(rules, b, players, 3 * p * rules.hand_size)[:: max(1, p // 2)]:
        vec = state_vector(rules, st)
        assert vec.shape == (b, SIZE) and vec.dtype == np.float32
        assert all(space.contains(v) for v in vec)
        s = view(vec)
        # every hand, by absolute seat, exactly
        assert np.array_equal(np.rint(s["hands"][:, :p, :a] * 4), st.hands)
        assert not s["hands"][:, p:].any() and not s["hands"][:, :, a:].any()
        assert np.array_equal(s["to_move"].argmax(1), st.cur) and (s["to_move"].sum(1) == 1).all()
        # the public slices: seat 0's observation, so absolute seats
        seat0 = observation.view(observation.observe(rules, st, np.zeros(b, np.int64)))
        for name in PUBLIC:
            assert np.array_equal(s[name], seat0[name]), name
        assert np.allclose(s["score"][:, :p], st.scores / rules.limit)
        assert np.array_equal(s["in_match"][:, :p].astype(bool), st.alive)
        assert np.array_equal(s["dealer"].argmax(1), st.dealer)
        assert np.allclose(s["cards_left"][:, :p] * rules.hand_size, st.hands.sum(2))
        trick = st.tricks[rows, np.minimum(st.trick_no, rules.hand_size - 1)]  # (B, P) card per seat or -1
        for g in np.flatnonzero((st.npos > 0) & (st.trick_no < rules.hand_size)):
            for seat in range(p):
                played = np.flatnonzero(s["trick"][g, seat]).tolist()
                assert played == ([int(trick[g, seat])] if trick[g, seat] >= 0 else [])
        # batched equals one game at a time
        for g in range(b):
            assert np.array_equal(state_vector(rules, st.take(np.array([g])))[0], vec[g])


@pytest.mark.parametrize("preset", ["standard", "danish21"])
def test_the_state_in_a_seats_relative_seats_holds_its_observation(preset: str) -> None:
    rules = preset_rules(preset, 5)
    p, a, b = rules.players, rules.num_actions, 6
    rng = np.random.default_rng(3)
    for st in _states(rules, b, 3, 2 * p * rules.hand_size)[::3]:
        seats = rng.integers(0, p, b)
        vec = state_vector(rules, st, seats)
        s = view(vec)
        rotated = (seats[:, None] + np.arange(p)) % p  # relative seat -> seat
        assert np.array_equal(np.rint(s["hands"][:, :p, :a] * 4), st.hands[np.arange(b)[:, None], rotated])
        assert np.array_equal(s["to_move"].argmax(1), (st.cur - seats) % p)
        assert np.array_equal(vec[:, OBSERVATION], observation.observe(rules, st, seats))
        assert np.array_equal(state_vector(rules, st, np.zeros(b, np.int64)), state_vector(rules, st))


def test_the_state_differs_from_every_observation_in_the_hidden_hands() -> None:
    """Re-dealing two seats' cards changes the state but no other seat's observation."""
    rules = Rules.preset("standard")
    st = engine.init(rules, 1, 5)
    hands = st.hands.copy()
    x = np.flatnonzero(hands[0, 1] > hands[0, 2])[0]  # a card seat 1 holds more of than seat 2
    y = np.flatnonzero(hands[0, 2] > hands[0, 1])[0]
    hands[0, 1, x] -= 1
    hands[0, 2, x] += 1
    hands[0, 2, y] -= 1
    hands[0, 1, y] += 1
    other = engine.set_hands(rules, st, hands)
    assert not np.array_equal(state_vector(rules, st), state_vector(rules, other))
    for seat in (0, 3):
        seats = np.full(1, seat)
        assert np.array_equal(observation.observe(rules, st, seats), observation.observe(rules, other, seats))


AEC_CASES = [("standard", {"limit": 5}, "match"), ("jokers", {}, "round"), ("lives", {"players": 3}, "match")]


@pytest.mark.parametrize(("preset", "options", "episode"), AEC_CASES)
def test_aec_state_is_the_batched_function_on_its_engine_state(preset: str, options: dict, episode: str) -> None:
    e = agurk_env.env(preset, episode=episode, **options)
    rules = e.unwrapped.rules
    assert e.state_space == state_box(rules) and e.state_space.shape == (SIZE,)
    rng = np.random.default_rng(0)
    for seed in range(3):
        e.reset(seed=seed)
        while e.agents:
            got = e.state()
            assert np.array_equal(got, state_vector(rules, e.unwrapped.engine_state)[0])
            assert got in e.state_space
            agent = e.agent_selection
            obs = e.observe(agent)
            if e.terminations[agent]:
                e.step(None)
                continue
            assert view(got)["to_move"].argmax() == int(agent.split("_")[1])
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_parallel_view_passes_the_state_on() -> None:
    par = turn_based_aec_to_parallel(agurk_env.env("standard"))
    par.reset(seed=1)
    assert par.state_space.shape == (SIZE,)
    assert np.array_equal(par.state(), state_vector(par.unwrapped.rules, par.unwrapped.engine_state)[0])


def test_state_space_bounds_hold_at_the_extremes() -> None:
    """Round ends with the highest scores the bounds allow (every-trick scoring, rebuys, lives, jokers)."""
    extremes = [("every_trick", {"players": 2}), ("buy_in", {}), ("lives", {}), ("jokers", {"players": 8})]
    for preset, options in extremes:
        e = raw_env(preset, episode="match", hand_size=6, **options)
        rng = np.random.default_rng(3)
        for seed in range(5):
            e.reset(seed=seed)
            while e.agents:
                assert e.state() in e.state_space
                agent = e.agent_selection
                if e.terminations[agent]:
                    e.step(None)
                else:
                    e.step(int(rng.choice(np.flatnonzero(e.action_mask()))))
            for end in e.round_ends:
                assert state_vector(e.rules, end)[0] in e.state_space
