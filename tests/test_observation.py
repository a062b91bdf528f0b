"""The one observation: the same vector on every route, built from public facts and the observer's own hand.

- Parity: ``Decision.obs``, ``observe`` of the true state, ``observe`` of the public view and a
  slice-by-slice scalar rebuild (``oracles.expected_observation``) agree exactly, and so does the
  PettingZoo AEC env through whole matches.
- Leaks: re-dealing the cards an observer cannot see (keeping every hand's size) changes no slice
  of its observation, for the mover and for any other seat; changing the observer's own hand does.
- ``cards_left``: the true hand sizes, for every seat.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import expected_observation, midround_states, preset_rules, random_step

from agurk_env import engine, observation
from agurk_env.aec_env import raw_env
from agurk_env.agent import Decision
from agurk_env.observation import SIZE, SLICES, observe, view
from agurk_env.rules import PRESETS, Rules


def _differing_slices(a: np.ndarray, b: np.ndarray) -> list[str]:
    va, vb = view(a), view(b)
    return [name for name in SLICES if not np.array_equal(va[name], vb[name])]


@st.composite
def midround(draw: st.DrawFn) -> tuple[Rules, engine.State, np.ndarray]:
    """A preset, 2..8 players, a batch reached by random legal play, and some of its games."""
    rules = preset_rules(draw(st.sampled_from(sorted(PRESETS))), draw(st.integers(2, 8)))
    batch = draw(st.integers(1, 4))
    steps = draw(st.integers(0, 2 * rules.players * rules.hand_size + 2))
    state = midround_states(rules, batch, draw(st.integers(0, 2**32)), steps)
    games = np.array(sorted(draw(st.sets(st.integers(0, batch - 1), min_size=1))), dtype=np.int64)
    return rules, state, games


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=midround())
def test_every_route_gives_the_same_observation(case: tuple[Rules, engine.State, np.ndarray]) -> None:
    rules, state, games = case
    bits = engine.legal_bits(rules, state)
    decision = Decision(rules, state, games, bits[games])
    obs = decision.obs
    assert obs.shape == (games.size, SIZE) and obs.dtype == np.float32
    true_state = observe(rules, state.take(games))
    public = observe(rules, decision.public)
    for i, g in enumerate(games.tolist()):
        rebuilt = expected_observation(rules, state, g, int(state.cur[g]))
        assert np.array_equal(obs[i], rebuilt), _differing_slices(obs[i], rebuilt)
        assert np.array_equal(obs[i], true_state[i]), _differing_slices(obs[i], true_state[i])
        assert np.array_equal(obs[i], public[i]), _differing_slices(obs[i], public[i])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_aec_env_observes_what_the_engine_and_the_rebuild_give(preset: str) -> None:
    """One whole match per preset through the AEC env (match episodes), in lockstep with the engine."""
    players = 2 + sorted(PRESETS).index(preset) % 7
    rules = preset_rules(preset, players)
    seed = 31 + players
    e = raw_env(rules, episode="match")
    e.reset(seed=seed)
    state = engine.init(rules, 1, seed)
    rng = np.random.default_rng(seed)
    turns = 0
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent]:
            e.step(None)
            continue
        seat = int(agent.split("_")[1])
        assert seat == int(state.cur[0])
        bits = engine.legal_bits(rules, state)
        got = e.observe(agent)
        want = Decision(rules, state, np.zeros(1, np.int64), bits).obs[0]
        assert np.array_equal(got["observation"], want), (turns, _differing_slices(got["observation"], want))
        if turns % 5 == 0:  # the scalar rebuild, for the mover and for a seat waiting its turn
            rebuilt = expected_observation(rules, state, 0, seat)
            assert np.array_equal(want, rebuilt), (turns, _differing_slices(want, rebuilt))
            other = next(a for a in e.agents if a != agent and not e.terminations[a])
            s = int(other.split("_")[1])
            rebuilt = expected_observation(rules, state, 0, s)
            assert np.array_equal(e.observe(other)["observation"], rebuilt), turns
        assert np.array_equal(got["action_mask"].astype(bool), engine.unpack(bits, rules.num_actions)[0])
        card = int(engine.random_legal(bits, rng)[0])
        e.step(card)
        state = engine.play(rules, state, np.full(1, card))
        if not state.match_over[0]:
            state = engine.advance(rules, state, reset=False)
        turns += 1
    assert state.match_over[0] and turns >= rules.hand_size * players
    assert e.record()["winners"] == np.flatnonzero(state.winners[0]).tolist()


# ----------------------------------------------------------------------------- leaks


def _redeal(hands: np.ndarray, seats: list[int], rng: np.random.Generator) -> np.ndarray:
    """``(P, A)`` hands with the cards of ``seats`` shuffled among them, every hand keeping its size."""
    out = hands.copy()
    pool = np.concatenate([np.repeat(np.arange(hands.shape[1]), hands[s]) for s in seats])
    rng.shuffle(pool)
    start = 0
    for s in seats:
        n = int(hands[s].sum())
        out[s] = np.bincount(pool[start : start + n], minlength=hands.shape[1])
        start += n
    return out


def _leak_states(preset: str):
    """Mid-round states of ``preset`` for 2..8 players, at every play of the first two rounds."""
    for players in range(2, 9):
        rules = preset_rules(preset, players)
        rng = np.random.default_rng(players)
        state = engine.init(rules, 4, seed=players)
        for _ in range(2 * players * rules.hand_size):
            yield rules, state
            state = random_step(rules, state, rng)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_hidden_cards_never_reach_an_observation(preset: str) -> None:
    rng = np.random.default_rng(len(preset))
    changed = 0
    for rules, state in _leak_states(preset):
        p = rules.players
        rows = np.arange(state.batch)
        watcher = (state.cur + 1 + rng.integers(0, p - 1, state.batch)) % p  # a seat that is not to move
        for observer in ("mover", "watcher"):
            seats = state.cur if observer == "mover" else watcher
            hands = state.hands.copy()
            for g in rows:
                others = [s for s in range(p) if s != seats[g]]
                hands[g] = _redeal(state.hands[g], others, rng)
            other = engine.set_hands(rules, state, hands)
            moved = (other.hands != state.hands).any((1, 2))
            changed += int(moved.sum())
            before = observe(rules, state, None if observer == "mover" else seats)
            after = observe(rules, other, None if observer == "mover" else seats)
            for g in np.flatnonzero(moved):
                assert np.array_equal(before[g], after[g]), (observer, _differing_slices(before[g], after[g]))
            if observer == "mover":  # and the mover's legal cards depend on its own hand only
                assert np.array_equal(engine.legal_bits(rules, state), engine.legal_bits(rules, other))
    assert changed > 1000


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_observers_own_hand_does_reach_it(preset: str) -> None:
    """The positive control: swapping one card between the observer and another seat changes ``hand``, only."""
    swapped = 0
    for rules, state in _leak_states(preset):
        hands = state.hands.copy()
        touched = []
        for g in range(state.batch):
            me = int(state.cur[g])
            for o in range(rules.players):
                give = np.flatnonzero(hands[g, me] > hands[g, o])
                take = np.flatnonzero(hands[g, o] > hands[g, me])
                if o != me and give.size and take.size:
                    hands[g, me, give[0]] -= 1
                    hands[g, o, give[0]] += 1
                    hands[g, me, take[0]] += 1
                    hands[g, o, take[0]] -= 1
                    touched.append(g)
                    break
        other = engine.set_hands(rules, state, hands)
        before, after = observe(rules, state), observe(rules, other)
        for g in touched:
            assert _differing_slices(before[g], after[g]) == ["hand"]
            assert np.array_equal(view(after[g])["hand"][: rules.num_actions], hands[g, state.cur[g]] / 4)
        swapped += len(touched)
    assert swapped > 500


# ----------------------------------------------------------------------------- cards left


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_cards_left_slice_is_the_true_hand_sizes(preset: str) -> None:
    for rules, state in _leak_states(preset):
        p, h = rules.players, rules.hand_size
        sizes = state.hands.sum(2)
        assert np.array_equal(engine.cards_left(rules, state), sizes)
        for s in range(p):
            got = view(observe(rules, state, np.full(state.batch, s)))["cards_left"]
            want = np.roll(sizes, -s, axis=1) / h  # relative seat r is seat s + r
            assert np.array_equal(got[:, :p], want.astype(np.float32))
            assert not got[:, p:].any()


def test_view_tiles_the_vector_with_the_slices_in_order() -> None:
    probe = np.arange(SIZE, dtype=np.float32)
    parts = view(probe)
    flat = np.concatenate([parts[name].reshape(-1) for name in SLICES])
    assert np.array_equal(flat, probe)  # in order, without gaps or overlaps
    assert {name: parts[name].shape for name in SLICES} == SLICES
    assert observation.SIZE == 362  # pinned: trained checkpoints depend on the layout
