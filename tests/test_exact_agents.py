"""The agents on the exact solver: the exact oracle and ``pimc:eval=exact`` (agents/pimc.py).

- The oracle plays a card of least solver value on the true deal (the solver's own best card with
  ``tie=lowest``), and played out with the engine no other legal card leaves its seat fewer points.
- With every hidden card known (two players and the whole deck dealt), ``pimc:eval=exact`` sees
  the true deal in every world and plays the oracle's card.
- Positions with too many tricks left fall back to the rollouts, exactly as the rollout agents play.
- The registry builds them from specs and refuses bad options with one-line errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import pimc
from agents.pimc import exact_tricks, sample_worlds
from agents.registry import AgentSpecError, describe, make_agent
from agents.search import PIMC, Oracle
from agurk_env import engine, solver
from agurk_env.agent import Decision, act_seats, decide
from agurk_env.rules import PRESETS, Rules


def _positions(rules: Rules, batch: int, plies: int, seed: int = 0) -> engine.State:
    """``batch`` games of round 1 after ``plies`` random legal plays (still in the round)."""
    assert plies < rules.players * rules.hand_size
    rng = np.random.default_rng(seed)
    state = engine.init(rules, batch, seed)
    for _ in range(plies):
        state = engine.play(rules, state, engine.random_legal(engine.legal_bits(rules, state), rng))
    return state


def _decide(agent: PIMC, rules: Rules, state: engine.State) -> np.ndarray:
    """``agent``'s card in every game of ``state`` (checked legal by the dispatcher)."""
    games = np.arange(state.batch)
    return decide(agent, rules, state, games, engine.legal_bits(rules, state))


def _oracle(tie: str = "rollout", seed: int = 0, **options: object) -> Oracle:
    return Oracle(np.random.default_rng(seed), worlds=4, rollout="mixed", tie=tie, **options)


@pytest.mark.parametrize("preset", ["standard", "lives", "every_trick", "swedish", "jokers"])
@pytest.mark.parametrize("plies", [0, 5, 13, 22])
def test_exact_oracle_plays_the_solvers_best_card_on_the_true_deal(preset: str, plies: int) -> None:
    rules = Rules.preset(preset)
    if rules.scoring == "every_trick":
        plies = max(plies, 8)  # 5 tricks left at most: the exact limit there
    state = _positions(rules, 24, plies, seed=plies)
    lowest = _oracle("lowest")
    answer = solver.solution(rules, state)
    np.testing.assert_array_equal(_decide(lowest, rules, state), answer.best)
    assert lowest.counts == {"exact": 24, "rollout": 0, "tie": 0, "forced": 0}
    chosen = _decide(_oracle("rollout"), rules, state)  # ties settled by rollouts: still least value
    np.testing.assert_array_equal(answer.values[np.arange(24), chosen], answer.values.min(1))


@pytest.mark.parametrize("preset", ["standard", "every_trick", "lives"])
def test_played_out_no_legal_card_beats_the_oracles(preset: str) -> None:
    rules = Rules.preset(preset)
    state = _positions(rules, 12, 4 * 4 + 1, seed=3)  # mid-trick, 3 tricks to go
    rows = np.arange(state.batch)
    mover = state.cur.astype(np.int64)
    chosen = _decide(_oracle("lowest"), rules, state)
    seats = [_oracle("lowest")] * rules.players  # everyone plays the solver's line from there
    game, card = np.nonzero(engine.legal_mask(rules, state))
    st = engine.play(rules, state.take(game), card)
    while not st.round_over.all():
        assert not st.round_over.any()
        st = engine.play(rules, st, act_seats(rules, st, engine.legal_bits(rules, st), seats))
    pen = np.full((state.batch, rules.num_actions), np.inf)
    pen[game, card] = st.round_penalty[np.arange(game.size), mover[game]]
    assert (pen[rows, chosen] <= pen.min(1)).all()
    np.testing.assert_array_equal(pen, solver.solution(rules, state).values)  # the engine scores the solver's line


@pytest.mark.parametrize("preset", ["standard", "every_trick", "lives"])
@pytest.mark.parametrize("tricks_left", [1, 3, 5])
def test_pimc_exact_plays_the_oracles_card_when_every_hidden_card_is_known(preset: str, tricks_left: int) -> None:
    rules = Rules.preset(preset, players=2, hand_size=26)  # the whole deck is dealt: the unseen cards are the other's
    state = _positions(rules, 16, 2 * (26 - tricks_left) + tricks_left % 2, seed=tricks_left)
    d = Decision(rules, state, np.arange(16), engine.legal_bits(rules, state))
    worlds = sample_worlds(rules, d.public, 3, np.random.default_rng(0))
    np.testing.assert_array_equal(worlds.hands, np.repeat(state.hands, 3, axis=0))
    search = PIMC(np.random.default_rng(1), worlds=3, eval="exact", tie="lowest", rollout="shed")
    np.testing.assert_array_equal(_decide(search, rules, state), _decide(_oracle("lowest"), rules, state))
    assert search.counts["exact"] == 16


def test_every_trick_first_lead_falls_back_to_the_rollouts() -> None:
    rules = Rules.preset("every_trick")
    assert exact_tricks(rules) < rules.hand_size
    state = _positions(rules, 16, 2)  # the first trick: more tricks left than the solver takes
    exact = PIMC(np.random.default_rng(5), worlds=4, rollout="mixed", eval="exact")
    rolled = PIMC(np.random.default_rng(5), worlds=4, rollout="mixed")
    np.testing.assert_array_equal(_decide(exact, rules, state), _decide(rolled, rules, state))
    assert exact.counts == {"exact": 0, "rollout": 16, "tie": 0, "forced": 0}
    oracle, old = _oracle(seed=5), _oracle(seed=5, eval="rollout")
    np.testing.assert_array_equal(_decide(oracle, rules, state), _decide(old, rules, state))
    assert oracle.counts["rollout"] == 16


def test_a_batch_splits_between_the_solver_and_the_rollouts() -> None:
    rules = Rules.preset("standard")
    a, b = _positions(rules, 8, 2, seed=1), _positions(rules, 8, 21, seed=2)  # 7 and 2 tricks left
    batched = {name: x for name, x in a._asdict().items() if isinstance(x, np.ndarray) and x.ndim}
    state = a._replace(**{name: np.concatenate([x, getattr(b, name)]) for name, x in batched.items()})
    mixed = PIMC(np.random.default_rng(9), worlds=4, eval="exact", tricks=3, tie="lowest", rollout="shed")
    every = PIMC(np.random.default_rng(9), worlds=4, eval="exact", tricks=7, tie="lowest", rollout="shed")
    got, want = _decide(mixed, rules, state), _decide(every, rules, state)
    assert mixed.counts["exact"] == 8 and mixed.counts["rollout"] == 8
    np.testing.assert_array_equal(got[8:], want[8:])  # the same sampled worlds, solved the same


def test_without_numba_fewer_tricks_are_solved(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = Rules.preset("standard")
    monkeypatch.setattr(solver, "HAS_NUMBA", True)
    assert exact_tricks(rules) == pimc.EXACT_TRICKS["last_trick"]
    monkeypatch.setattr(solver, "HAS_NUMBA", False)
    assert exact_tricks(rules) == pimc.EXACT_TRICKS["last_trick"] - pimc.PYTHON_TRICKS
    assert exact_tricks(rules.replace(scoring="every_trick")) == pimc.EXACT_TRICKS["every_trick"] - pimc.PYTHON_TRICKS


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_exact_agents_play_legally_under_every_preset(preset: str) -> None:
    rules = Rules.preset(preset, players=5, hand_size=5)
    rng = np.random.default_rng(2)
    search = PIMC(rng, worlds=2, eval="exact", tie="rollout", rollout="shed")
    seats = [search, _oracle(), *[make_agent("guard", 0, 0)] * 3]
    state = engine.init(rules, 8, seed=4)
    for _ in range(40):  # two rounds and more; act_seats raises on any illegal card
        bits = engine.legal_bits(rules, state)
        state = engine.advance(rules, engine.play(rules, state, act_seats(rules, state, bits, seats)))
    assert seats[0].counts["exact"] > 0 and seats[1].counts["exact"] > 0


def test_registry_builds_the_exact_agents() -> None:
    oracle = make_agent("oracle", 0, 0)
    assert isinstance(oracle, Oracle) and oracle.sees_all
    o = oracle.options
    assert (o.eval, o.tie, o.tricks, o.worlds, o.rollout) == (
        "exact",
        "rollout",
        None,
        16,
        "mixed",
    )
    old = make_agent("oracle:eval=rollout;worlds=16;rollout=mixed", 0, 0)
    assert (old.options.eval, old.options.worlds, old.options.rollout) == ("rollout", 16, "mixed")
    search = make_agent("pimc:eval=exact;worlds=8;tricks=3;tie=rollout", 0, 0)
    assert isinstance(search, PIMC) and not search.sees_all
    o = search.options
    assert (o.eval, o.worlds, o.tricks, o.tie) == ("exact", 8, 3, "rollout")
    default = make_agent("pimc", 0, 0)
    assert (default.options.eval, default.options.tie, default.options.tricks) == ("rollout", "rollout", None)
    assert make_agent("pimc:eval=exact;tie=lowest", 0, 0).options.tie == "lowest"
    assert make_agent("pimc:tricks=auto", 0, 0).options.tricks is None
    text = "\n".join(describe())
    assert "pimc[:KEY=VALUE;...]" in text and "eval=rollout|exact (default rollout)" in text
    assert "oracle[:KEY=VALUE;...]\n    CHEATING" in text and "eval=rollout|exact (default exact)" in text


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("pimc:eval=solver", "eval must be one of rollout, exact"),
        ("oracle:eval=", "eval must be one of rollout, exact"),
        ("pimc:eval=exact;tricks=0", "tricks"),
        ("pimc:tricks=many", "tricks"),
        ("oracle:tie=first", "tie must be one of rollout, lowest"),
        ("pimc:exact", "bad option"),
        ("oracle:depth=3", "unknown option 'depth'"),
    ],
)
def test_registry_refuses_bad_options_in_one_line(spec: str, words: str) -> None:
    with pytest.raises(AgentSpecError) as err:
        make_agent(spec, 0, 0)
    assert words in str(err.value) and spec in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["standard", "every_trick", "lives", "danish21"])
def test_played_out_no_legal_card_beats_the_oracles_from_the_first_lead(preset: str) -> None:
    rules = Rules.preset(preset)
    tricks = rules.hand_size if rules.scoring == "last_trick" else 5
    state = _positions(rules, 32, (rules.hand_size - tricks) * rules.players, seed=11)
    seats = [_oracle("lowest", tricks=tricks)] * rules.players
    game, card = np.nonzero(engine.legal_mask(rules, state))
    st = engine.play(rules, state.take(game), card)
    while not st.round_over.all():
        st = engine.play(rules, st, act_seats(rules, st, engine.legal_bits(rules, st), seats))
    pen = np.full((state.batch, rules.num_actions), np.inf)
    pen[game, card] = st.round_penalty[np.arange(game.size), state.cur[game]]
    chosen = _decide(seats[0], rules, state)
    assert (pen[np.arange(state.batch), chosen] <= pen.min(1)).all()


def test_bench_measures_both_searches_on_the_same_positions() -> None:
    from agurk.bench.solver import PIMC_SPECS, bench_pimc
    from agurk.cli import main

    result = bench_pimc(decisions=6, worlds=2, seed=3)
    assert set(result) == set(PIMC_SPECS) == {"pimc_exact", "pimc_rollout"}
    assert result["pimc_exact"]["spec"] == "pimc:eval=exact;worlds=2"
    for r in result.values():
        assert r["decisions"] == 6 and r["decisions_per_s"] > 0 and 0 < r["median_ms"] <= r["max_ms"]
    assert main(["bench", "solver", "--decisions", "0"]) == 2
    assert main(["bench", "solver", "--worlds", "-1"]) == 2
