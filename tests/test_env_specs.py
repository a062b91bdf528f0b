"""Opponents given as agent specs: every entry point takes them and plays exactly as with the agent objects.

``single_agent_env``, ``sb3_vec_env`` and ``gymnasium.make("Agurk-v0")`` take
``opponents="guard,pimc,random"``; the agents come from the agent package that registered
its specs (:mod:`agurk_env.specs`), built from the reset's seed the way ``agents.opponents``
builds them, so a run with the specs is the run with the same agents made by hand.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest

import agurk_env
from agents.registry import make_agent
from agurk_env import sb3_vec_env, single_agent_env, specs
from agurk_env.engine import pack, random_legal

SEED = 5


def _by_hand(spec_string: str, seed: int = SEED) -> list[Any]:
    """The agents that ``spec_string`` names, made by hand for the reset ``seed``: seat ``r`` after the learner."""
    return [make_agent(spec, seed, r + 1) for r, spec in enumerate(spec_string.split(","))]


def _trajectory(env: Any, steps: int) -> list[np.ndarray]:
    """Observations and rewards of ``steps`` random legal learner cards after ``reset(seed=SEED)``."""
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=SEED)
    out = [obs]
    for _ in range(steps):
        action = random_legal(pack(env.unwrapped.action_masks()[None]), rng)[0]
        obs, reward, terminated, _, _ = env.step(action)
        out += [obs, np.float32(reward)]
        if terminated:
            out.append(env.reset()[0])
    return out


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_single_agent_env_takes_one_spec_for_every_seat() -> None:
    with_spec = _trajectory(single_agent_env("standard", opponents="random", seat=0), 40)
    by_hand = _trajectory(single_agent_env("standard", opponents=_by_hand("random")[0], seat=0), 40)
    assert _same(with_spec, by_hand)


def test_gymnasium_make_takes_one_spec_per_seat() -> None:
    make: Callable[..., Any] = gymnasium.make
    spec_string = "guard,pimc,random"
    with_spec = _trajectory(make("Agurk-v0", opponents=spec_string, seat=1), 20)
    by_hand = _trajectory(make("Agurk-v0", opponents=_by_hand(spec_string), seat=1), 20)
    assert _same(with_spec, by_hand)
    again = _trajectory(make("Agurk-v0", opponents=spec_string, seat=1), 20)
    assert _same(with_spec, again)


def test_sb3_vec_env_takes_specs() -> None:
    def run(opponents: Any) -> list[np.ndarray]:
        venv = sb3_vec_env(8, rules="standard", opponents=opponents, seat=2)
        venv.seed(SEED)
        out = [venv.reset()]
        rng = np.random.default_rng(0)
        for _ in range(30):
            obs, rewards, dones, _ = venv.step(random_legal(pack(venv.action_masks()), rng))
            out += [obs, rewards, dones]
        return out

    assert _same(run("guard,random,random"), run(_by_hand("guard,random,random")))


def test_a_bad_spec_is_one_line_naming_it() -> None:
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        single_agent_env(opponents="nobody")
    with pytest.raises(ValueError, match="opponent spec or 3"):
        gymnasium.make("Agurk-v0", opponents="guard,random")


def test_without_an_agent_package_the_spec_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(specs, "_BUILDERS", {})
    monkeypatch.setattr(specs, "entry_points", lambda group: [])  # no installed agent package either
    with pytest.raises(specs.SpecError) as caught:
        single_agent_env(opponents="guard")
    message = str(caught.value)
    assert "'guard'" in message and "no agent package" in message and "\n" not in message


def test_specs_work_in_a_fresh_process_that_imports_only_agurk_env() -> None:
    """The installed ``agents`` package is found through its entry point; no import hook is left behind."""
    code = (
        "import sys, gymnasium, agurk_env\n"
        "assert not [f for f in sys.meta_path if type(f).__module__.startswith('agurk')], sys.meta_path\n"
        "assert 'agents' not in sys.modules\n"
        "env = gymnasium.make('Agurk-v0', opponents='guard,pimc:worlds=2,random', players=4)\n"
        "env.reset(seed=0)\n"
        "print(type(env.unwrapped.games.opponents[0]).__name__, 'agents' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["Heuristic", "True"]


def test_the_id_is_registered_by_importing_agurk_env() -> None:
    code = (
        "import gymnasium\n"
        "env = gymnasium.make('agurk_env:Agurk-v0', rules='lives', players=3)\n"  # gymnasium imports agurk_env
        "print(env.unwrapped.rules.players, env.spec.id)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["3", agurk_env.GYMNASIUM_ID]
