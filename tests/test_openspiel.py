"""The OpenSpiel adapter (agurk_env.openspiel_game): OpenSpiel's own checks, serialization, and differential replays.

Random OpenSpiel playthroughs are replayed through the scalar reference (RULES.md's oracle) and
through the engine directly: the seat to move and its legal cards at every step, every trick's
winner, the penalties and the returns must agree.
"""

from __future__ import annotations

import math
import pickle
import random
import subprocess
import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as openspiel_policy  # noqa: E402
from open_spiel.python.algorithms import expected_game_score, get_all_states  # noqa: E402

from agurk_env import engine, observation  # noqa: E402
from agurk_env import openspiel_game as og  # noqa: E402
from agurk_env.reference import ReferenceMatch  # noqa: E402
from agurk_env.rewards import placement_rewards  # noqa: E402

GAMES = [
    {"players": 2, "hand_size": 3},
    {"rules": "danish21", "players": 3, "hand_size": 3, "deal": "card"},
    {"rules": "every_trick", "players": 2, "hand_size": 4, "episode": "match"},
    {"rules": "lives", "players": 3, "hand_size": 2, "episode": "match"},
    {"rules": "jokers", "players": 4, "hand_size": 3},
    {"rules": "swedish", "players": 5, "hand_size": 2, "ranks": "9,10,J,Q,K,A", "copies": 2},
    {"rules": "twos", "players": 3, "hand_size": 3, "ranks": "2,3,A", "deal": "card"},
]
PRESETS = ["standard", "danish21", "every_trick", "dealer_leads", "free_choice", "unbeatable_aces", "swedish"]
PRESETS += ["second_chance", "small_ace", "jokers", "nearest", "twos", "ace_one_point", "lives", "quick"]
PRESETS += ["last_trick_only", "buy_in"]


def load(params: dict) -> og.AgurkGame:
    return pyspiel.load_game(og.NAME, params)


def random_actions(game: og.AgurkGame, rng: random.Random) -> tuple[list[int], og.AgurkState]:
    """A random playthrough (chance by its probabilities, players uniformly): its actions and final state."""
    state = game.new_initial_state()
    actions = []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            a = rng.choices(outcomes, weights=probs)[0]
        else:
            a = rng.choice(state.legal_actions())
        actions.append(a)
        state.apply_action(a)
    return actions, state


# ----------------------------------------------------------------------------- OpenSpiel's own checks


@pytest.mark.parametrize("params", GAMES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_random_sim_test(params):
    game = load(params)
    pyspiel.random_sim_test(game, num_sims=4, serialize=True, verbose=False)


def test_registered_and_parameters():
    assert og.NAME in pyspiel.registered_names()
    game = pyspiel.load_game("python_agurk(rules=danish21,players=3,hand_size=2,twos_rule=1,limit=25)")
    assert game.rules.limit == 25 and game.rules.ace_lock == "any" and game.rules.twos_rule
    assert game.num_players() == 3 and game.num_distinct_actions() == 13
    assert game.max_chance_outcomes() == og.count_hands(np.full(13, 4), 2) == 91
    assert pyspiel.load_game(str(game)).rules == game.rules
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    match = load({"players": 2, "hand_size": 2, "episode": "match"})
    assert match.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM and match.utility_sum() == 0.0
    assert load({"rules": "jokers", "players": 2, "hand_size": 1, "deal": "card"}).max_chance_outcomes() == 14
    with pytest.raises(Exception, match="unknown preset"):
        load({"rules": "nope"})
    with pytest.raises(Exception, match="fewer than players"):
        load({"players": 3, "hand_size": 3, "ranks": "Q,K", "copies": 4})


def test_hand_outcomes_are_exact():
    game = load({"players": 2, "hand_size": 2})
    root = game.new_initial_state()
    outcomes = dict(root.chance_outcomes())
    assert len(outcomes) == 91 and math.isclose(sum(outcomes.values()), 1.0, abs_tol=1e-12)
    aces = next(i for i, row in enumerate(game.hands) if row[engine.ACE] == 2)
    assert math.isclose(outcomes[aces], math.comb(4, 2) / math.comb(52, 2))
    after = root.child(aces)  # two aces gone: the other seat gets a pair of aces with C(2, 2) / C(50, 2)
    assert math.isclose(dict(after.chance_outcomes())[aces], 1 / math.comb(50, 2))


def test_hand_and_card_deals_give_the_same_game():
    """Both chance models deal the same distribution: the uniform policy's exact values agree."""
    values = []
    for deal in og.DEALS:
        game = load({"players": 2, "hand_size": 2, "ranks": "Q,K,A", "copies": 2, "deal": deal})
        uniform = openspiel_policy.UniformRandomPolicy(game)
        values.append(expected_game_score.policy_value(game.new_initial_state(), [uniform, uniform]))
    np.testing.assert_allclose(values[0], values[1], rtol=0, atol=1e-12)
    assert values[0][0] < 0 and values[0][1] < 0


# ----------------------------------------------------------------------------- serialization


def test_serialization_round_trip():
    rng = random.Random(3)
    for params in GAMES:
        game = load(params)
        actions, _ = random_actions(game, rng)
        state = game.new_initial_state()
        for a in actions[: len(actions) // 2]:
            state.apply_action(a)
        for copy in (game.deserialize_state(state.serialize()), pickle.loads(pickle.dumps(state))):
            assert copy.history() == state.history() and str(copy) == str(state)
            assert copy.current_player() == state.current_player()
            for p in range(game.num_players()):
                assert copy.information_state_string(p) == state.information_state_string(p)
                np.testing.assert_array_equal(copy.observation_tensor(p), state.observation_tensor(p))
            for a in actions[len(actions) // 2 :]:  # both go on to the same end
                copy.apply_action(a)
            assert copy.is_terminal()
        clone = state.clone()
        clone.apply_action(actions[len(actions) // 2])
        assert len(clone.history()) == len(state.history()) + 1  # a clone never changes its original


# ----------------------------------------------------------------------------- differential replays


def _order(alive: list[bool], dealer: int) -> list[int]:
    """The seats still in, clockwise from the dealer's left (the documented deal order)."""
    p = len(alive)
    return [(dealer + k) % p for k in range(1, p + 1) if alive[(dealer + k) % p]]


def replay_reference(game: og.AgurkGame, actions: list[int]) -> ReferenceMatch:
    """Replay an OpenSpiel action list through the scalar reference, checking every decision against OpenSpiel's."""
    rules, config = game.rules, game.config
    state, ref = game.new_initial_state(), ReferenceMatch(rules)
    dealt: list[list[int]] = [[] for _ in range(rules.players)]
    deals = 0
    for a in actions:
        if state.is_chance_node():
            order = _order(ref.alive, ref.dealer)
            if config.deal == "hand":
                dealt[order[deals]] = [c for c, n in enumerate(game.hands[a]) for _ in range(n)]
            else:
                dealt[order[deals % len(order)]].append(a)
            deals += 1
            state.apply_action(a)
            if not state.is_chance_node():
                ref.start_round(dealt)
                dealt, deals = [[] for _ in range(rules.players)], 0
            continue
        assert state.current_player() == ref.to_move
        assert state.legal_actions() == ref.legal()
        ref.play(a)
        state.apply_action(a)
    assert state.is_terminal()
    return ref


def replay_engine(game: og.AgurkGame, actions: list[int]) -> tuple[list[list[int]], list[list[int]], np.ndarray]:
    """Replay an OpenSpiel action list on the engine directly: trick winners, penalties per round, returns."""
    rules, config = game.rules, game.config
    st = engine.init(rules, 1, seed=0)
    dealt = np.zeros((rules.players, rules.num_actions), np.int8)
    deals, winners, penalties = 0, [], []
    gains = np.zeros(rules.players)
    waiting = True
    for a in actions:
        if waiting:
            order = _order(st.alive[0].tolist(), int(st.dealer[0]))
            if config.deal == "hand":
                dealt[order[deals]] = game.hands[a]
            else:
                dealt[order[deals % len(order)], a] += 1
            deals += 1
            if deals == (len(order) if config.deal == "hand" else len(order) * rules.hand_size):
                st = engine.set_hands(rules, st, dealt[None])
                dealt[:], deals, waiting = 0, 0, False
            continue
        assert (int(engine.legal_bits(rules, st)[0]) >> a) & 1
        st = engine.play(rules, st, np.array([a]))
        if st.round_over[0]:
            winners.append(st.trick_winner[0].tolist())
            penalties.append(st.round_penalty[0].tolist())
            if config.episode == "round":
                gains = -st.round_penalty[0].astype(float)
                break
            gains += placement_rewards(rules, st)[1][0]
            if st.match_over[0]:
                break
            st, waiting = engine.advance(rules, st, reset=False), True
    return winners, penalties, gains


@pytest.mark.parametrize("preset", PRESETS)
def test_random_games_replay_identically(preset):
    """Random OpenSpiel games replay identically through the reference and the engine (round and match episodes)."""
    rng = random.Random(preset)
    for i in range(12):
        players = 2 + i % 3
        params = {"rules": preset, "players": players, "hand_size": 1 + i % 4, "deal": og.DEALS[i % 2]}
        if i % 4 == 3:
            params.update(episode="match", hand_size=2, ranks="9,10,J,Q,K,A,X" if preset == "jokers" else "")
        game = load(params)
        actions, final = random_actions(game, rng)
        ref = replay_reference(game, actions)
        winners, penalties, gains = replay_engine(game, actions)
        assert winners[-1] == ref.last_round.trick_winners
        assert penalties[-1] == ref.last_round.penalties
        np.testing.assert_allclose(final.returns(), gains, atol=1e-6)
        if params.get("episode") == "match":
            assert ref.match_over and ref.round_no == len(winners)
            assert sorted(ref.winners) == np.flatnonzero(final.engine_state.winners[0]).tolist()
            assert abs(sum(final.returns())) < 1e-6
        else:
            assert final.returns() == [float(-x) for x in ref.last_round.penalties]


def test_illegal_action_is_refused():
    game = load({"players": 2, "hand_size": 2})
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    illegal = next(a for a in range(13) if a not in state.legal_actions())
    with pytest.raises(Exception, match="may not play"):
        state.apply_action(illegal)


# ----------------------------------------------------------------------------- tensors and information states


def test_tensors_are_the_observation_spec():
    rng = random.Random(5)
    for params in GAMES[:3]:
        game = load(params)
        actions, _ = random_actions(game, rng)
        state = game.new_initial_state()
        for a in actions:
            state.apply_action(a)
            if state.is_terminal():
                break
            for p in range(game.num_players()):
                want = observation.observe(game.rules, state.engine_state, np.array([p]))[0]
                np.testing.assert_array_equal(state.observation_tensor(p), want)
                info = np.asarray(state.information_state_tensor(p))
                np.testing.assert_array_equal(info[: observation.SIZE], want)
                history = info[observation.SIZE :].reshape(game.rules.hand_size, observation.MAX_SEATS, 14)
                assert history.sum() == len(state.plays)
                seats = max(int((state.dealt.sum(1) > 0).sum()), 1)
                for i, (seat, card) in enumerate(state.plays):
                    assert history[i // seats, (seat - p) % game.rules.players, card] == 1
    assert game.observation_tensor_size() == observation.SIZE


def test_information_state_strings_are_exact():
    """Histories share a key exactly when they share the mover's dealt cards and the public plays."""
    for params in (
        {"players": 2, "hand_size": 2, "ranks": "Q,K,A", "copies": 2},
        {"players": 3, "hand_size": 1, "ranks": "JQKA", "copies": 2},
    ):
        game = load(params)
        states = get_all_states.get_all_states(game, include_terminals=False, include_chance_states=False)
        seen: dict[str, tuple] = {}
        back: dict[tuple, str] = {}
        first: dict[str, og.AgurkState] = {}
        for state in states.values():
            p = state.current_player()
            key = state.information_state_string(p)
            info = (p, tuple(state.dealt[p]), state.plays)
            assert seen.setdefault(key, info) == info
            assert back.setdefault(info, key) == key
            same = first.setdefault(key, state)
            assert same.legal_actions() == state.legal_actions()
            np.testing.assert_array_equal(same.observation_tensor(p), state.observation_tensor(p))
        assert len(first) < len(states)  # hidden cards merge histories


def test_base_install_never_imports_pyspiel():
    code = "import sys, agurk_env, agurk_env.aec_env, agurk.cli; assert 'pyspiel' not in sys.modules; print('ok')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "ok\n"


def test_missing_openspiel_is_one_clear_error():
    code = "import sys; sys.modules['pyspiel'] = None; import agurk_env.openspiel_game"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        'ImportError: agurk_env.openspiel_game needs OpenSpiel: pip install -e ".[openspiel]"'
    )
