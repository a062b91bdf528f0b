"""Differential test: the compiled rules kernel against the engine's NumPy vectorisation, state by state.

Random legal play of whole matches (dealing, restarts, every preset at 2..8 players, and random
option combinations); at every step both paths give the same legal sets and reasons, the same
observation of the mover and of another seat, and the same next state, field by field and dtype by
dtype (``play``, ``play_in``, and ``advance`` with and without ``reset`` and ``restart``). The
pure-Python run of the kernel is checked on a few states too, and ``agurk simulate`` writes the
recorded bytes of tests/test_simulate_unchanged.py on either path. CI runs a slice (about 200k
states); ``-m slow`` runs tens of millions.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import numpy as np
import pytest
from oracles import preset_rules
from test_engine_differential import random_rules
from test_simulate_unchanged import RUNS, _digests

from agurk.cli import main
from agurk_env import _rules_kernel, engine, observation, rules_kernel
from agurk_env.rules import PRESETS, Rules

pytestmark = pytest.mark.skipif(not rules_kernel.HAS_NUMBA, reason="numba not installed")


def _same_state(a: engine.State, b: engine.State, where: str) -> None:
    for name, x, y in zip(engine.State._fields, a, b, strict=True):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f"{where}: field {name} differs"
        else:
            assert x == y, f"{where}: field {name} differs"


def _check_step(rules: Rules, state: engine.State, actions: np.ndarray, rng: np.random.Generator, where: str) -> None:
    """Both paths agree on the legal sets, every seat's observation, and the play (whole batch and some games)."""
    sp = engine.tables(rules)
    bits, reasons = engine._legal_compiled(rules_kernel.compiled(), rules, state)
    want_bits, want_reasons = engine._legal(sp, state, reasons=True)
    assert bits.dtype == want_bits.dtype and np.array_equal(bits, want_bits), f"{where}: legal_bits"
    assert reasons.dtype == want_reasons.dtype and np.array_equal(reasons, want_reasons), f"{where}: legal_reason"
    for seats in (state.cur, rng.integers(0, rules.players, state.batch)):  # the mover's and any seat's
        got = observation.observe(rules, state, seats)
        want = observation._observe_numpy(rules, state, seats)
        assert np.array_equal(got, want), f"{where}: observation"
    played = engine.play(rules, state, actions)
    _same_state(played, engine._play_numpy(rules, state, actions), f"{where}: play")
    restart = rng.random(state.batch) < 0.1
    for reset, stop in ((True, None), (False, None), (True, restart)):
        got = engine.advance(rules, played, reset=reset, restart=stop)
        with rules_kernel.use(False):
            want = engine.advance(rules, played, reset=reset, restart=stop)
        _same_state(got, want, f"{where}: advance(reset={reset}, restart={stop is not None})")
    games = np.flatnonzero(rng.random(state.batch) < 0.5)
    if games.size:
        got = engine.play_in(rules, state, games, actions[games])
        sub = engine._play_numpy(rules, state.take(games), actions[games])
        want = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in state._asdict().items()}
        for name, value in sub._asdict().items():
            if isinstance(value, np.ndarray):
                want[name][games] = value
        _same_state(got, engine.State(**want), f"{where}: play_in")


def check_matches(rules: Rules, batch: int, steps: int, seed: int, label: str) -> int:
    """Random legal play of ``batch`` games for ``steps`` steps, every step checked; returns the states checked."""
    assert rules_kernel.ENABLED, "the kernel is switched off (AGURK_JIT=0)"
    rules_kernel.warm_up()  # the engine runs the kernel from now on (not only after LOAD_AFTER_S)
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    for step in range(steps):
        actions = engine.random_legal(engine._legal(engine.tables(rules), state, reasons=False)[0], rng)
        _check_step(rules, state, actions, rng, f"{label}, seed {seed}, step {step}")
        with rules_kernel.use(False):
            state = engine.advance(rules, engine._play_numpy(rules, state, actions))
    return steps * batch


PRESET_CASES = [(preset, players) for preset in PRESETS for players in range(2, 9)]


@pytest.mark.parametrize(("preset", "players"), PRESET_CASES, ids=[f"{p}-{n}p" for p, n in PRESET_CASES])
def test_kernel_agrees_with_numpy_on_every_preset(preset: str, players: int) -> None:
    rules = preset_rules(preset, players)
    assert check_matches(rules, 32, 40, 7 * players + list(PRESETS).index(preset), preset) > 0


@pytest.mark.parametrize("case", range(24))
def test_kernel_agrees_with_numpy_on_random_options(case: int) -> None:
    rules = random_rules(random.Random(case))
    assert check_matches(rules, 32, 60, case, str(rules.to_dict())) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), PRESET_CASES, ids=[f"{p}-{n}p" for p, n in PRESET_CASES])
def test_kernel_agrees_with_numpy_on_millions_of_states(preset: str, players: int) -> None:
    rules = preset_rules(preset, players)
    assert check_matches(rules, 1024, 300, 99 + players, preset) > 0  # about 300k states per case, 36M in all


@pytest.mark.slow
@pytest.mark.parametrize("case", range(200))
def test_kernel_agrees_with_numpy_on_many_random_options(case: int) -> None:
    rules = random_rules(random.Random(10_000 + case))
    assert check_matches(rules, 256, 200, case, str(rules.to_dict())) > 0


@pytest.mark.parametrize("preset", ["standard", "twos", "every_trick", "lives", "second_chance", "quick"])
def test_the_pure_python_kernel_plays_as_the_compiled_one(preset: str) -> None:
    rules_kernel.warm_up()
    rules = Rules.preset(preset, players=5)
    rng = np.random.default_rng(3)
    state = engine.init(rules, 6, seed=5)
    t, sp = engine.rule_array(rules), engine.tables(rules)
    for _ in range(3 * rules.hand_size * rules.players):
        bits = np.empty(state.batch, np.int64)
        reasons = np.empty(state.batch, np.int8)
        legal_args = [getattr(state, k) for k in ("held", "tricks", "trick_no", "cur", "npos", "leader")]
        legal_args += [getattr(state, k) for k in ("top", "prev", "locked")]
        _rules_kernel.legal_all(t, *legal_args, bits, reasons)
        assert np.array_equal(bits, engine.legal_bits(rules, state))
        assert np.array_equal(reasons, engine.legal_reason(rules, state))
        actions = engine.random_legal(bits, rng)
        fields = [v.copy() if isinstance(v, np.ndarray) else v for v in state]
        written = [fields[i] for i in engine._PLAY_FIELDS]
        _rules_kernel.play_games(t, *written, np.arange(state.batch), actions)
        played = engine.State._make(fields)
        _same_state(played, engine.play(rules, state, actions), preset)
        fields = [v.copy() if isinstance(v, np.ndarray) else v for v in played]
        with np.errstate(over="ignore"):  # NumPy's uint64 scalars wrap as the hash needs, with a warning
            restarted = _rules_kernel.advance_games(
                t, sp.deck, *[fields[i] for i in engine._ADVANCE_FIELDS], np.uint64(state.seed), state.next_match, True
            )
        fields[-1] += restarted
        state = engine.advance(rules, played)
        _same_state(engine.State._make(fields), state, f"{preset}: advance")


def test_a_card_out_of_range_or_a_finished_round_is_refused() -> None:
    rules_kernel.warm_up()
    rules = Rules.preset("standard")
    state = engine.init(rules, 2, seed=0)
    with pytest.raises(ValueError, match="out of range"):
        engine.play(rules, state, np.array([0, 13]))
    rng = np.random.default_rng(0)
    while not state.round_over.all():
        state = engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng))
    with pytest.raises(ValueError, match="round is over"):
        engine.play(rules, state, np.zeros(2, np.int64))


def test_the_rule_array_holds_the_kernels_observation_layout() -> None:
    assert list(observation._AT) == list(observation.SLICES)
    assert _rules_kernel.CARD_SLOTS == observation.CARD_SLOTS
    order = list(observation.SLICES)
    for name in ("hand", "played", "trick", "void", "dealer", "players"):
        assert getattr(_rules_kernel, f"O_{name.upper()}") == order.index(name)


def test_a_process_loads_the_kernel_in_a_thread_once_the_engine_has_worked_a_while_on_numpy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = rules_kernel.compiled()
    for name, value in (("_loaded", None), ("_numpy_s", 0.0), ("_loader", None), ("LOAD_AFTER_S", 3600.0)):
        monkeypatch.setattr(rules_kernel, name, value)
    rules = Rules.preset("standard")
    state = engine.init(rules, 4, seed=0)  # NumPy: its time is counted
    assert rules_kernel._numpy_s > 0 and rules_kernel.active() is None and rules_kernel._loader is None
    monkeypatch.setattr(rules_kernel, "LOAD_AFTER_S", 0.0)
    assert rules_kernel.active() is None  # NumPy while the thread loads
    rules_kernel._loader.join(600)
    assert rules_kernel.active() is not None
    assert module.play_games.signatures == rules_kernel.active().play_games.signatures
    engine.legal_bits(rules, state)
    with rules_kernel.use(False):
        assert rules_kernel.active() is None


@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
@pytest.mark.parametrize(("preset", "agents", "matches"), RUNS, ids=[preset for preset, _, _ in RUNS])
def test_simulate_writes_the_recorded_bytes_on_either_path(
    preset: str, agents: str, matches: int, compiled: bool, tmp_path: Path
) -> None:
    """tests/test_simulate_unchanged.py's runs, with the engine held on one path from the first card."""
    out = tmp_path / f"{preset}.jsonl"
    argv = ["simulate", "-q", "--rules", preset, "--agents", agents, "--matches", str(matches), "--seed", "7"]
    with rules_kernel.use(compiled):
        assert main([*argv, "--out", str(out), "--with-legal"]) == 0
    assert hashlib.sha256(out.read_bytes()).hexdigest() == _digests()[out.name]
