"""Differential test: the rules kernel against the scalar reference, state by state.

Random legal play of whole matches (dealing, restarts, every preset at 2..8 players, and random
option combinations); at every step each game's legal set is the reference's
(:func:`oracles.reference_at`), the observation of the mover and of another seat is the plain-loop
oracle's (:func:`oracles.expected_observation`), and ``play_in`` on some games equals ``play`` there
and leaves the others alone. The kernel run as plain Python (numba's ``py_func``, and a process
without numba) plays as the compiled one. tests/test_engine_differential.py replays whole matches
through the reference; ``-m slow`` runs many more states here.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys

import numpy as np
import pytest
from oracles import expected_observation, preset_rules, reference_at
from test_engine_differential import random_rules

from agurk_env import _rules_kernel, engine, observation, rules_kernel
from agurk_env.rules import PRESETS, Rules


def _same_state(a: engine.State, b: engine.State, where: str) -> None:
    for name, x, y in zip(engine.State._fields, a, b, strict=True):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f"{where}: field {name} differs"
        else:
            assert x == y, f"{where}: field {name} differs"


def _check_step(rules: Rules, state: engine.State, actions: np.ndarray, rng: np.random.Generator, where: str) -> None:
    """The legal sets and the observations are the oracles'; ``play_in`` is ``play`` on its games."""
    bits = engine.legal_bits(rules, state)
    others = rng.integers(0, rules.players, state.batch)
    mover, other = observation.observe(rules, state), observation.observe(rules, state, others)
    for g in range(state.batch):
        want = sum(1 << c for c in set(reference_at(rules, state, g).legal()))
        assert int(bits[g]) == want, f"{where}, game {g}: legal set"
        assert np.array_equal(mover[g], expected_observation(rules, state, g, int(state.cur[g]))), f"{where}: observe"
        assert np.array_equal(other[g], expected_observation(rules, state, g, int(others[g]))), f"{where}: observe"
    played = engine.play(rules, state, actions)
    games = np.flatnonzero(rng.random(state.batch) < 0.5)
    got = engine.play_in(rules, state, games, actions[games])
    rest = np.setdiff1d(np.arange(state.batch), games)
    _same_state(got.take(games), played.take(games), f"{where}: play_in's games")
    _same_state(got.take(rest), state.take(rest), f"{where}: the other games")


def check_matches(rules: Rules, batch: int, steps: int, seed: int, label: str) -> int:
    """Random legal play of ``batch`` games for ``steps`` steps, every step checked; returns the states checked."""
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    for step in range(steps):
        actions = engine.random_legal(engine.legal_bits(rules, state), rng)
        _check_step(rules, state, actions, rng, f"{label}, seed {seed}, step {step}")
        state = engine.advance(rules, engine.play(rules, state, actions))
    return steps * batch


PRESET_CASES = [(preset, players) for preset in PRESETS for players in range(2, 9)]


@pytest.mark.parametrize(("preset", "players"), PRESET_CASES, ids=[f"{p}-{n}p" for p, n in PRESET_CASES])
def test_kernel_agrees_with_the_reference_on_every_preset(preset: str, players: int) -> None:
    rules = preset_rules(preset, players)
    assert check_matches(rules, 3, 20, 7 * players + list(PRESETS).index(preset), preset) > 0


@pytest.mark.parametrize("case", range(24))
def test_kernel_agrees_with_the_reference_on_random_options(case: int) -> None:
    rules = random_rules(random.Random(case))
    assert check_matches(rules, 3, 30, case, str(rules.to_dict())) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), PRESET_CASES, ids=[f"{p}-{n}p" for p, n in PRESET_CASES])
def test_kernel_agrees_with_the_reference_on_many_states(preset: str, players: int) -> None:
    rules = preset_rules(preset, players)
    assert check_matches(rules, 32, 200, 99 + players, preset) > 0


@pytest.mark.slow
@pytest.mark.parametrize("case", range(200))
def test_kernel_agrees_with_the_reference_on_many_random_options(case: int) -> None:
    rules = random_rules(random.Random(10_000 + case))
    assert check_matches(rules, 16, 200, case, str(rules.to_dict())) > 0


def _python(function: object) -> object:
    """The kernel function's plain-Python body (numba keeps it as ``py_func``)."""
    return getattr(function, "py_func", function)


@pytest.mark.parametrize("preset", ["standard", "twos", "every_trick", "lives", "second_chance", "quick"])
def test_the_pure_python_kernel_plays_as_the_compiled_one(preset: str) -> None:
    rules = Rules.preset(preset, players=5)
    rng = np.random.default_rng(3)
    state = engine.init(rules, 6, seed=5)
    t, sp = engine.rule_array(rules), engine.tables(rules)
    for _ in range(3 * rules.hand_size * rules.players):
        bits = np.empty(state.batch, np.int64)
        reasons = np.empty(state.batch, np.int8)
        legal_args = [getattr(state, k) for k in ("held", "tricks", "trick_no", "cur", "npos", "leader")]
        legal_args += [getattr(state, k) for k in ("top", "prev", "locked")]
        _python(_rules_kernel.legal_all)(t, *legal_args, bits, reasons)
        assert np.array_equal(bits, engine.legal_bits(rules, state))
        assert np.array_equal(reasons, engine.legal_reason(rules, state))
        actions = engine.random_legal(bits, rng)
        fields = [v.copy() if isinstance(v, np.ndarray) else v for v in state]
        written = [fields[i] for i in engine._PLAY_FIELDS]
        _python(_rules_kernel.play_games)(t, *written, np.arange(state.batch), actions)
        played = engine.State._make(fields)
        _same_state(played, engine.play(rules, state, actions), preset)
        fields = [v.copy() if isinstance(v, np.ndarray) else v for v in played]
        with np.errstate(over="ignore"):  # NumPy's uint64 scalars wrap as the hash needs, with a warning
            restarted = _python(_rules_kernel.advance_games)(
                t, sp.deck, *[fields[i] for i in engine._ADVANCE_FIELDS], np.uint64(state.seed), state.next_match, True
            )
        fields[-1] += restarted
        state = engine.advance(rules, played)
        _same_state(engine.State._make(fields), state, f"{preset}: advance")


_DIGEST = """
import hashlib, sys
import numpy as np
from agurk_env import engine, observation, rules_kernel
from agurk_env.rules import Rules
rules, rng = Rules.preset("twos", players=4), np.random.default_rng(1)
state, digest = engine.init(rules, 3, seed=2), hashlib.sha256()
for _ in range(60):
    digest.update(observation.observe(rules, state).tobytes())
    state = engine.advance(rules, engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng)))
print(rules_kernel.HAS_NUMBA, digest.hexdigest())
"""


def test_without_numba_the_kernel_runs_as_plain_python_with_the_same_results() -> None:
    hidden = "import sys; sys.modules['numba'] = None\n"  # import numba then raises ImportError
    runs = [subprocess.run([sys.executable, "-c", head + _DIGEST], capture_output=True, text=True, check=True)
            for head in ("", hidden)]  # fmt: skip
    (compiled, with_numba), (python, without) = (run.stdout.split() for run in runs)
    assert (compiled, python) == (str(rules_kernel.HAS_NUMBA), "False")
    assert with_numba == without and len(without) == len(hashlib.sha256().hexdigest())


def test_a_card_out_of_range_or_a_finished_round_is_refused() -> None:
    rules = Rules.preset("standard")
    state = engine.init(rules, 2, seed=0)
    with pytest.raises(ValueError, match="out of range"):
        engine.play(rules, state, np.array([0, 13]))
    rng = np.random.default_rng(0)
    while not state.round_over.all():
        state = engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng))
    with pytest.raises(ValueError, match="round is over"):
        engine.play(rules, state, np.zeros(2, np.int64))


def test_the_kernel_writes_the_slices_it_names_where_the_observation_lays_them_out() -> None:
    assert set(_rules_kernel.OBSERVED) <= set(observation.SLICES)
    assert _rules_kernel.CARD_SLOTS == observation.CARD_SLOTS
    for i, name in enumerate(_rules_kernel.OBSERVED):
        assert getattr(_rules_kernel, f"O_{name.upper()}") == i
    order = list(observation.SLICES)
    assert order[order.index("players") + 1] == "rules"  # written with "players", from one constant row
