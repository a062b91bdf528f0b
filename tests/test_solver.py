"""The exact round solver (agurk_env.solver) against a brute force over the engine, and against the engine itself.

- Brute force: every line to the end of the round, played with ``engine.play`` (so the rules are
  the engine's, never the solver kernel's), backed up by maxN written here: each mover keeps the
  first card in card order of least own round penalty. Small deals (2-3 players, 2-4 cards) of
  every preset and of random option combinations, at trick starts and mid-trick, some with seats
  out of the match: the solver's values, choices and line penalties must be the brute force's.
- Engine differential, larger deals: the solver's legal cards are ``engine.legal_mask``; following
  its choices with ``engine.play`` ends the round with the penalties it announced; each card's value
  is the mover's penalty after ``engine.play`` of that card and the solver's line from there.
- The pure-Python and the numba path give the same answers, and so does a new process: loading the
  compiled search from numba's disk cache, or without numba.
"""

from __future__ import annotations

import importlib
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from oracles import preset_rules, random_step
from test_engine_differential import random_rules

from agurk_env import engine, rules_kernel, solver
from agurk_env.rules import PRESETS, Rules

PATHS = [False, pytest.param(True, marks=pytest.mark.skipif(not solver.HAS_NUMBA, reason="numba not installed"))]
JIT = solver.HAS_NUMBA  # the larger differential checks: compiled when possible


def brute_force(rules: Rules, state: engine.State) -> tuple[np.ndarray, int, np.ndarray]:
    """``(values (A,), best, penalties (P,))`` of one game by full enumeration with ``engine.play`` and maxN."""
    levels = []
    frontier = state
    while not frontier.round_over.all():
        assert not frontier.round_over.any(), "every line ends after the same number of plays"
        parent, card = np.nonzero(engine.legal_mask(rules, frontier))
        levels.append((parent, card, frontier.cur[parent]))
        frontier = engine.play(rules, frontier.take(parent), card)
    pen = frontier.round_penalty.astype(np.int64)
    for parent, _, mover in reversed(levels[1:]):
        chosen: dict[int, int] = {}
        for i, p in enumerate(parent.tolist()):
            if p not in chosen or pen[i, mover[i]] < pen[chosen[p], mover[i]]:
                chosen[p] = i
        pen = pen[[chosen[p] for p in range(len(chosen))]]
    _, cards, movers = levels[0]
    values = np.full(rules.num_actions, np.inf)
    values[cards] = pen[np.arange(cards.size), movers]
    first = int(np.argmin(values))
    return values, first, pen[list(cards).index(first)]


def positions(rules: Rules, seed: int, games: int, steps: int, every: int = 1) -> engine.State:
    """Random positions in a round: ``games`` matches of ``seed``, every ``every``-th of ``steps`` random plays."""
    rng = np.random.default_rng(seed)
    state = engine.init(rules, games, seed)
    taken = []
    for step in range(steps):
        if step % every == 0:
            taken.append(state)
        state = random_step(rules, state, rng)
    return _concat(taken)


def _concat(states: list[engine.State]) -> engine.State:
    """One batch of the games of several states (all in a round)."""
    first = states[0]
    arrays = {
        name: np.concatenate([getattr(s, name) for s in states])
        for name, value in first._asdict().items()
        if isinstance(value, np.ndarray)
    }
    return first._replace(**arrays)


def seats_out_positions(rules: Rules, seed: int, want: int) -> engine.State:
    """Positions of matches where some seat is out (random play until then)."""
    rng = np.random.default_rng(seed)
    state = engine.init(rules, 16, seed)
    taken = []
    while len(taken) < want:
        rows = np.flatnonzero(state.n_alive < rules.players)
        if rows.size:
            taken.append(state.take(rows[:1]))
        state = random_step(rules, state, rng)
    return _concat(taken)


def check_brute_force(rules: Rules, state: engine.State, jit: bool) -> None:
    got = solver.solution(rules, state, jit=jit)
    for g in range(state.batch):
        values, best, penalties = brute_force(rules, state.take(np.array([g])))
        where = f"{rules.to_dict()} game {g} trick {int(state.trick_no[g])} npos {int(state.npos[g])}"
        np.testing.assert_array_equal(got.values[g], values, err_msg=where)
        assert int(got.best[g]) == best, where
        np.testing.assert_array_equal(got.penalties[g], penalties, err_msg=where)


SMALL = [(2, 2), (2, 4), (3, 3), (3, 4)]


@pytest.mark.parametrize("jit", PATHS, ids=["python", "numba"])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_matches_brute_force(preset: str, jit: bool) -> None:
    for players, hand_size in SMALL:
        rules = Rules.preset(preset, players=players, hand_size=hand_size)
        steps = players * hand_size
        check_brute_force(rules, positions(rules, players * 10 + hand_size, 2, steps, every=max(1, steps // 3)), jit)


@pytest.mark.parametrize("case", range(12))
def test_random_option_combinations_match_brute_force(case: int) -> None:
    rng = random.Random(f"solver-{case}")
    rules = random_rules(rng).replace(players=rng.randint(2, 3), hand_size=rng.randint(2, 4))
    steps = rules.players * rules.hand_size
    check_brute_force(rules, positions(rules, case, 2, steps, every=max(1, steps // 2)), JIT)


@pytest.mark.parametrize("preset", ["standard", "every_trick", "lives", "jokers"])
def test_seats_out_match_brute_force(preset: str) -> None:
    out = {"lives": 1} if Rules.preset(preset).lives else {"limit": 6}
    rules = Rules.preset(preset, players=4, hand_size=3, **out)
    check_brute_force(rules, seats_out_positions(rules, 3, want=3), JIT)


def follow_solver(rules: Rules, state: engine.State) -> None:
    """Play the solver's choices with the engine to the round's end; check legal sets, values and penalties."""
    announced = solver.solution(rules, state, jit=JIT).penalties
    live = np.arange(state.batch)
    while live.size:
        got = solver.solution(rules, state, jit=JIT)
        legal = engine.legal_mask(rules, state)
        np.testing.assert_array_equal(np.isfinite(got.values), legal)
        np.testing.assert_array_equal(got.best, np.argmin(got.values, axis=1))
        np.testing.assert_array_equal(got.penalties, announced[live], err_msg="the line changed on the way")
        # every card's value: the mover's penalty after playing it and the solver's line from there
        parent, card = np.nonzero(legal)
        child = engine.play(rules, state.take(parent), card)
        after = child.round_penalty.astype(np.int64)
        going = np.flatnonzero(~child.round_over)
        if going.size:
            after[going] = solver.solution(rules, child, going, jit=JIT).penalties
        np.testing.assert_array_equal(got.values[parent, card], after[np.arange(parent.size), state.cur[parent]])
        state = engine.play(rules, state, got.best)
        done = state.round_over
        np.testing.assert_array_equal(state.round_penalty[done], announced[live[done]])
        live = live[~done]
        state = state.take(~done)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_solver_lines_replay_on_the_engine(preset: str) -> None:
    size = 5 if JIT else 3
    rules = Rules.preset(preset, players=4, hand_size=size)
    follow_solver(rules, positions(rules, 5, 2, 4 * size, every=5))


def test_standard_deals_replay_on_the_engine() -> None:
    rules = Rules.preset("standard", hand_size=7 if JIT else 4)
    follow_solver(rules, positions(rules, 11, 4, 9, every=4))


@pytest.mark.skipif(not solver.HAS_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("preset", list(PRESETS))
def test_python_and_numba_agree(preset: str) -> None:
    rules = Rules.preset(preset, players=4, hand_size=4)
    state = positions(rules, 21, 3, 16, every=3)
    python, compiled = solver.solution(rules, state, jit=False), solver.solution(rules, state, jit=True)
    for a, b in zip(python, compiled, strict=True):
        np.testing.assert_array_equal(a, b)


_SOLVE = """
import numpy as np
from agurk_env import engine, solver
from agurk_env.rules import Rules
rules = Rules.preset("twos", players=3, hand_size=3)
print(solver.HAS_NUMBA, *(np.asarray(x).tobytes().hex() for x in solver.solution(rules, engine.init(rules, 4, seed=1))))
"""


def test_a_new_process_solves_alike_from_numbas_disk_cache_and_without_numba() -> None:
    rules = Rules.preset("twos", players=3, hand_size=3)
    expected = [np.asarray(x).tobytes().hex() for x in solver.solution(rules, engine.init(rules, 4, seed=1))]
    hidden = "import sys; sys.modules['numba'] = None\n"  # import numba then raises ImportError
    for head, has_numba in (("", solver.HAS_NUMBA), (hidden, False)):
        # with numba the search loads from the cache written above (a crash there if it was compiled for two
        # signatures of its recursion: numba issue 6061); without numba it runs as plain Python
        run = subprocess.run([sys.executable, "-c", head + _SOLVE], capture_output=True, text=True, check=True)
        assert run.stdout.split() == [str(has_numba), *expected]


def test_solve_deals_is_solve_at_the_deal() -> None:
    rules = Rules.preset("danish21", players=5, hand_size=4)
    state = engine.init(rules, 6, 2)
    values, best = solver.solve(rules, state, jit=JIT)
    deals = solver.solve_deals(rules, state.hands, state.cur, jit=JIT)
    np.testing.assert_array_equal(deals.values, values)
    np.testing.assert_array_equal(deals.best, best)
    assert (deals.penalties.sum(1) > 0).all()  # last-trick scoring: someone always takes the last trick


def test_games_selects_positions() -> None:
    rules = Rules.preset("standard", players=3, hand_size=4)
    state = positions(rules, 8, 3, 6)
    games = np.array([5, 0, 7])
    np.testing.assert_array_equal(solver.solve(rules, state, games)[0], solver.solve(rules, state)[0][games])


def test_refusals() -> None:
    rules = Rules.preset("standard", players=2, hand_size=1)
    state = engine.init(rules, 1, 0)
    for _ in range(2):  # each seat plays its only card: the round is over
        state = engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), np.random.default_rng()))
    with pytest.raises(ValueError, match="in a round"):
        solver.solve(rules, state)
    with pytest.raises(ValueError, match="shape"):
        solver.solve_deals(rules, np.zeros((1, 3, 13)), np.zeros(1))
    with pytest.raises(ValueError, match="hand_size"):
        solver.solve_deals(rules, np.zeros((1, 2, 13)), np.zeros(1))
    with pytest.raises(ValueError, match="65536"):  # each seat's penalty is kept in 16 bits
        solver.solve(Rules.preset("standard", ace_points=10_000), engine.init(Rules.preset("standard"), 1, 0))


@pytest.mark.slow
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_matches_brute_force_slow(preset: str) -> None:
    for players, hand_size in [(2, 5), (3, 4), (4, 3)]:
        rules = Rules.preset(preset, players=players, hand_size=hand_size)
        steps = players * hand_size
        check_brute_force(rules, positions(rules, 100 + players, 3, steps, every=2), JIT)


@pytest.mark.slow
@pytest.mark.parametrize("case", range(100))
def test_random_option_combinations_match_brute_force_slow(case: int) -> None:
    rng = random.Random(f"solver-slow-{case}")
    rules = random_rules(rng).replace(players=rng.randint(2, 4), hand_size=rng.randint(1, 4))
    steps = rules.players * rules.hand_size
    check_brute_force(rules, positions(rules, case, 3, steps, every=max(1, steps // 3)), JIT)


@pytest.mark.slow
@pytest.mark.parametrize("preset", list(PRESETS))
def test_solver_lines_replay_on_the_engine_slow(preset: str) -> None:
    for players in (3, 6, 8):
        rules = preset_rules(preset, players)
        if rules.scoring == "every_trick":  # minutes a deal at 6 and 8 players with 7 cards
            rules = rules.replace(hand_size=5)
        follow_solver(rules, positions(rules, players, 3, players * 3, every=3))


def test_bench_solver_json_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from agurk.cli import main

    assert main(["bench", "solver", "--deals", "1", "--seconds", "0.01", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ("4x7", "6x7", "8x6", "4x7_every_trick", "4x7_python"):
        assert result[key]["deals"] >= 1 and 0 < result[key]["median_ms"] <= result[key]["max_ms"]
    assert main(["bench", "solver", "--deals", "0"]) == 2


def test_a_changed_rules_kernel_forgets_the_caches_compiled_against_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numba checks a cached function against its own file only: a stamp of _rules_kernel.py flushes the rest."""
    pytest.importorskip("numba")
    source = "from agurk_env._rules_kernel import lowest, njit\n\n\n@njit\ndef low(cards):\n"
    source += "    return lowest(cards, 0)\n"
    (tmp_path / "probe_kernel.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))

    def compiled():
        """The probe freshly imported and compiled (saved to its disk cache), and its cache index."""
        sys.modules.pop("probe_kernel", None)
        probe = importlib.import_module("probe_kernel")
        assert probe.low(0b110) == 0b10
        return probe, probe.low._cache._cache_file

    probe, index = compiled()
    stamp = Path(probe.low._cache.cache_path) / "probe_kernel.rules-kernel.sha256"
    assert index._load_index() and not stamp.exists()
    rules_kernel.fresh_cache(probe)  # no stamp: compiled against an unknown kernel
    assert not index._load_index() and stamp.exists()
    probe, index = compiled()
    rules_kernel.fresh_cache(probe)  # the same kernel: kept
    assert index._load_index()
    stamp.write_text("another kernel")
    rules_kernel.fresh_cache(probe)
    assert not index._load_index() and stamp.read_text() != "another kernel"
