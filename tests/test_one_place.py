"""One implementation per idea (issue 56): each idea's one place, and every user reading it there.

A text check cannot see an idea coded twice; these tests name the one function each idea lives in and
fail when another module reads what only that function should (a second "takes the trick", a guard
heuristic of its own), or when the one function disagrees with the reference's rules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from agurk_env import _rules_kernel as kernel
from agurk_env import engine
from agurk_env.rules import PRESETS, Rules

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agurk_env", "agents", "training", "skill", "agurk")


def _readers(names: set[str]) -> set[str]:
    """``path:function`` of every function of the library that reads one of ``names`` (as a name or an attribute)."""
    found = set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for function in ast.walk(tree):
                if not isinstance(function, ast.FunctionDef):
                    continue
                for node in ast.walk(function):
                    if getattr(node, "id", None) in names or getattr(node, "attr", None) in names:
                        found.add(f"{path.relative_to(ROOT).as_posix()}:{function.name}")
    return found


def test_takes_the_trick_is_read_in_the_kernel_only() -> None:
    """Whether an equal card beats is read by the kernel's ``need`` alone (``takes`` asks it; rule_array lays out)."""
    assert _readers({"NOT_EQUAL", "not_equal", "not_equal_last"}) == {
        "agurk_env/_rules_kernel.py:need",
        "agurk_env/engine.py:rule_array",
    }


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_kernels_takes_is_the_rule_compiled_and_on_arrays(preset: str) -> None:
    """``takes``, compiled and as plain Python, gives RULES.md's answer for every strength, top, lock and trick."""
    rules = Rules.preset(preset)
    t = engine.rule_array(rules)
    lock = rules.ace_lock != "none"
    s, top, locked, last = (x.ravel() for x in np.meshgrid(np.arange(16), np.arange(16), [0, 1], [0, 1]))
    equal = {"always": last >= 0, "not_last_trick": last == 0, "never": last < 0}[rules.equal_beats]
    want = ((s > top) | ((s == top) & equal)) & ~(lock & (locked == 1))
    rows = [tuple(map(int, row)) for row in zip(s, top, locked, last, strict=True)]
    for takes in {kernel.takes, getattr(kernel.takes, "py_func", kernel.takes)}:
        np.testing.assert_array_equal([bool(takes(t, *row)) for row in rows], want)


def test_the_guard_heuristic_lives_in_heuristics_and_is_asked_not_sniffed() -> None:
    """``guard``'s scores and its compiled loop are in agents/heuristics.py; no agent is chosen by its type or name."""
    from agents.heuristics import STRATEGIES

    assert {place.split(":")[0] for place in _readers({"guard_rows", "ABOVE"})} == {"agents/heuristics.py"}
    source = (ROOT / "agents/heuristics.py").read_text()
    numbers = [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and n.value in (99, 100)]
    assert numbers == [100], "the score step is declared once (ABOVE)"
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Compare):
                    sides = [node.left, *node.comparators]
                    named = {s.value for s in sides if isinstance(s, ast.Constant)} & set(STRATEGIES)
                    sniffed = any(isinstance(s, ast.Call) and getattr(s.func, "id", "") == "type" for s in sides)
                    assert not (named and any(getattr(s, "attr", "") == "name" for s in sides)), path
                    assert not (sniffed and any(getattr(s, "id", "") == "Heuristic" for s in sides)), path


def _salted(node: ast.AST) -> bool:
    """Whether ``node`` mixes an int literal of 100 or more into a seed (``seed + 104_729``, ``[seed, 0x5EA7]`` ...)."""
    big = lambda n: isinstance(n, ast.Constant) and type(n.value) is int and n.value >= 100  # noqa: E731
    seedy = lambda n: "seed" in getattr(n, "id", getattr(n, "attr", "")).lower()  # noqa: E731
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult | ast.BitXor):
        return (big(node.left) and seedy(node.right)) or (big(node.right) and seedy(node.left))
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "default_rng" and node.args:
        arg = node.args[0]
        return big(arg) or (isinstance(arg, ast.List) and any(big(e) for e in arg.elts))
    return False


def test_seed_salts_are_declared_once_in_agurk_env_seeds() -> None:
    """No module mixes a literal salt into a seed: each is a name of agurk_env.seeds, distinct, with its old value."""
    from agurk_env import seeds

    salted = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.name != "seeds.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if _salted(node)
    ]
    assert not salted, "salts belong in agurk_env/seeds.py"
    salts = {k: v for k, v in vars(seeds).items() if k.isupper() and not k.endswith("_STRIDE")}
    assert len(set(salts.values())) == len(salts)
    assert salts == {
        "SEATS": 0x5EA7,
        "STATE_KEYS": 0xF1C7,
        "PPO_DRAWS": 0x9001,
        "PPO_TABLES": 0x7AB1E,
        "PPO_TORCH": 1,
        "EXPERT_DRAWS": 0xE1,
        "EXPERT_TABLES": 0x7AB,
        "EXPERT_TORCH": 2,
        "CV_FIT": 104_729,
        "CV_DEALS": 7001,
        "LOAD_GAMES": 10_000,
        "LOAD_WARM": 99_000,
    }
    assert (seeds.RESAMPLE_STRIDE, seeds.SETTING_STRIDE, seeds.LOAD_WAVE_STRIDE) == (7919, 1000, 1000)
    assert seeds.table_seed(5, 2) == 5 * 1_000_003 + 2 and seeds.table_seed(5, 2, 3) == 5 * 1_000_003 + 3 * 101 + 2


def test_the_install_hint_is_one_function_of_the_extra() -> None:
    """Messages name a missing extra through agurk_env.install.install, and every extra they name is declared."""
    import tomllib

    from agurk_env.install import install

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    named, spelled, skip = set(), [], {"agurk_env/install.py"}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text())
            docs = {
                id(body[0].value)
                for node in ast.walk(tree)
                if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef) and (body := node.body)
                if isinstance(body[0], ast.Expr)
            }
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "install" and node.args:
                    named.add(ast.literal_eval(node.args[0]))
                text = node.value if isinstance(node, ast.Constant) and id(node) not in docs else None
                if isinstance(text, str) and "pip install -e" in text and where not in skip:
                    spelled.append(f"{where}:{node.lineno}")
    assert not spelled, "spell the hint through agurk_env.install.install"
    assert named and named <= extras, named - extras
    assert install("rl") == 'pip install -e ".[rl]"'


def test_the_trainers_credit_a_round_through_one_function() -> None:
    """PPO's games and expert iteration's generations credit a round's end by Config.round_credit alone."""
    readers = {place for place in _readers({"round_rewards"}) if place.startswith("training/")}
    assert readers == {"training/config.py:round_credit"}
    assert {p.split(":")[0] for p in _readers({"round_credit"})} >= {"training/ppo.py", "training/expert.py"}
