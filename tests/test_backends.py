"""The task backends: the same numbers on a local Ray instance as locally, retries, lost workers, one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import faults
import numpy as np
import pytest
import yaml
from tiny_config import TINY as TINY_TRAINING

import agents
from agents import tournament as T
from agents.tasks import Backend, BackendError, TaskError, run_tasks
from agurk.cli import main
from agurk_env.rules import Rules

RAY = Backend("ray")


@pytest.fixture(scope="module")
def ray_instance():
    """One local Ray instance with 2 CPUs for the whole module (it takes seconds to start)."""
    ray = pytest.importorskip("ray")
    for module in (sys.modules[__name__], faults):  # Ray's workers cannot import the test modules
        ray.cloudpickle.register_pickle_by_value(module)
    from agents.tasks.ray_executor import connect

    connect(None, 2)  # as the ray backend starts a local instance
    yield ray
    ray.shutdown()


# ----------------------------------------------------------------------------- tasks of the local pool (no ray)


def _count(path: Path) -> int:
    """Add one to the number in ``path`` (a file); return the number before."""
    n = int(path.read_text()) if path.is_file() else 0
    path.write_text(str(n + 1))
    return n


def square_or_die(progress, x: int, marker: str) -> int:
    """A task: ``x * x``; with a marker file, its worker process dies the first time (a lost worker)."""
    progress(1.0, x)
    if marker and _count(Path(marker)) == 0:
        os._exit(3)
    return x * x


def always_fails(progress, x: int) -> int:
    """A task that raises every time."""
    raise ValueError(f"no good\n{x}")


def test_a_lost_local_worker_is_replaced_and_its_task_retried(tmp_path: Path) -> None:
    marker = tmp_path / "died"
    seen: list[tuple[list[float], list[int]]] = []
    done: list[int] = []
    results = run_tasks(
        square_or_die,
        [(x, str(marker) if x == 2 else "") for x in range(5)],
        workers=2,
        on_progress=lambda units, stages: seen.append((units, stages)),
        on_result=lambda i, r: done.append(i),
    )
    assert results == [0, 1, 4, 9, 16] and marker.read_text() == "2"  # task 2 ran twice: died, then succeeded
    assert sorted(done) == [0, 1, 2, 3, 4]
    assert seen[-1] == ([1.0] * 5, [0, 1, 2, 3, 4])


def test_a_task_that_keeps_failing_is_one_line(tmp_path: Path) -> None:
    for workers in (1, 2):
        with pytest.raises(TaskError) as info:
            run_tasks(always_fails, [(7,)], workers=workers, names=["the task"])
        assert str(info.value) == "the task failed 3 times; the last time: ValueError: no good 7"
        assert isinstance(info.value.__cause__, ValueError)


def test_the_local_backend_never_imports_ray() -> None:
    code = (
        "import sys; from agents import tournament as T; from agurk_env.rules import Rules; "
        "T.PARALLEL_MIN_MATCHES = 0; "
        "T.tournament(Rules.preset('standard', players=3), ['guard', 'random', 'random'], 20, 0, resamples=10, "
        "workers=2); assert 'ray' not in sys.modules, 'ray imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def test_the_task_runner_has_no_import_cycle() -> None:
    """The ray executor and the local executors import only the shared types; the runner imports them, not back."""
    import ast

    ours = {}
    for path in (Path(agents.__file__).parent / "tasks").glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        ours[path.stem] = {n.rpartition(".")[2] for n in names if n.startswith("agents.tasks.")}
    assert ours["backend"] == set()
    assert ours["local"] <= {"backend"} and ours["ray_executor"] <= {"backend"}
    assert ours["runner"] == {"backend", "local", "ray_executor"}


def test_without_ray_the_ray_backend_is_one_line(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    monkeypatch.delitem(sys.modules, "agents.tasks.ray_executor", raising=False)
    monkeypatch.delattr(agents.tasks, "ray_executor", raising=False)
    with pytest.raises(BackendError, match=r'needs ray, from the ray extra: run pip install -e "\.\[ray\]"'):
        run_tasks(always_fails, [(1,)], backend=RAY)


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--agents", "guard,random,random,random", "--matches", "5", "--ray-address", "auto"],
        ["skill-report", "--variants", "standard", "--ray-address", "auto"],
    ],
)
def test_a_ray_address_needs_the_ray_backend(capsys, argv: list[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == "agurk: error: --ray-address needs --backend ray\n"


def test_a_ray_address_where_nothing_answers_is_one_line_at_once() -> None:
    pytest.importorskip("ray")
    argv = ["evaluate", "--agents", "guard,random,random,random", "--matches", "5", "--backend", "ray"]
    command = [sys.executable, "-m", "agurk.cli", *argv, "--ray-address", "127.0.0.1:1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)  # it hung for minutes before
    assert done.returncode == 2, done.stderr
    assert done.stderr == "agurk: error: cannot reach the Ray cluster at '127.0.0.1:1' (Connection refused)\n"


def test_a_ray_address_that_answers_but_is_no_cluster_gives_up_in_time() -> None:
    pytest.importorskip("ray")
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))  # accepts connections, speaks no Ray
    port = listener.getsockname()[1]
    threading.Thread(target=lambda: [listener.accept() for _ in range(100)], daemon=True).start()
    code = (
        "from agents.tasks import ray_executor as r; r.INIT_SECONDS = 3\n"
        "try:\n"
        f"    r.connect('127.0.0.1:{port}', 1)\n"
        "except r.BackendError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    listener.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"cannot reach the Ray cluster at '127.0.0.1:{port}' (it answers, but no Ray cluster came up within 3 s)\n"
    )


# ----------------------------------------------------------------------------- a local Ray instance


def _evaluate_json(tmp_path: Path, name: str, *extra: str) -> str:
    out = tmp_path / name
    argv = ["evaluate", "--agents", "guard,random,ducker", "--set", "players=3", "--matches", "40", "--seed", "4"]
    assert main([*argv, "--bootstrap", "200", "--json", str(out), "-q", *extra]) == 0
    text, timings = re.subn(r'"seconds": [0-9.]+', '"seconds": 0', out.read_text())
    assert timings == 1  # the one field that is a timing, not a result
    return text


def _niceness() -> int:
    return os.nice(0)


def test_a_local_ray_instance_runs_its_tasks_at_normal_priority(ray_instance) -> None:
    """Ray's default worker niceness (15) would let every other process on a busy machine go first."""
    assert ray_instance.get(ray_instance.remote(_niceness).remote()) == os.nice(0)


def test_evaluate_on_ray_writes_the_same_json(ray_instance, tmp_path: Path) -> None:
    local = _evaluate_json(tmp_path, "local.json")
    on_ray = _evaluate_json(tmp_path, "ray.json", "--backend", "ray", "--workers", "2")
    assert on_ray == local
    assert json.loads(local)["matches_played"] == 240  # 40 deals at the 3! tables of every seat order


def test_tournament_progress_on_ray(ray_instance) -> None:
    rules = Rules.preset("standard", players=3)
    seen: list[int] = []
    one = T.tournament(rules, ["guard", "random", "random"], 30, seed=8, resamples=100)
    specs = ["guard", "random", "random"]
    two = T.tournament(rules, specs, 30, seed=8, resamples=100, backend=RAY, progress=seen.append)
    assert [e.to_dict() for e in two.entries] == [e.to_dict() for e in one.entries]
    assert seen and seen[-1] == 90


def test_a_task_that_keeps_failing_on_ray_is_one_line(ray_instance) -> None:
    with pytest.raises(TaskError, match=r"^task 0 failed 3 times; the last time: ValueError: no good 5$"):
        run_tasks(always_fails, [(5,)], backend=RAY)


def test_a_sweep_on_ray_with_a_failing_task_gives_the_same_table(ray_instance, tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    settings = {k: v for k, v in TINY_TRAINING.items() if k != "total_steps"}
    config = tmp_path / "sweep.yaml"
    sweep = {
        "presets": ["standard"],
        "players": [3],
        "seeds": [0, 1],
        "overrides": [{"limit": 10}],
        "agents": ["random"],
        "deals": 8,
        "resamples": 30,
        "train": {"steps": 300, "settings": settings},
    }
    config.write_text(yaml.safe_dump(sweep))
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert main(["sweep", str(config), "--out", str(local), "--workers", "1", "-q"]) == 0
    counter = tmp_path / "faults"
    faults.fail_task(monkeypatch, "standard-3p-7c-s1-o0", counter)  # fails once, in a Ray worker
    assert main(["sweep", str(config), "--out", str(on_ray), "--backend", "ray", "--workers", "2", "-q"]) == 0
    assert counter.read_text() == "1"
    for name in ("results.json", "results.csv", "results.png"):
        assert (on_ray / name).read_bytes() == (local / name).read_bytes(), name
    rows = json.loads((local / "results.json").read_text())["rows"]
    assert [(r["seed"], r["agent"]) for r in rows] == [(0, "random"), (0, "ppo"), (1, "random"), (1, "ppo")]
    for key in ("standard-3p-7c-s0-o0", "standard-3p-7c-s1-o0"):
        assert (on_ray / "checkpoints" / f"{key}.pt").stat().st_size > 0


def test_expert_generations_on_ray_are_the_same_data(ray_instance) -> None:
    pytest.importorskip("torch")
    from tests.tiny_config import TINY
    from training.config import config_from_dict
    from training.expert import ExpertTrainer

    data = {}
    for backend in ("local", "ray"):
        expert = {"games": 8, "decisions": 80, "shards": 2, "worlds": 2, "workers": 2, "backend": backend}
        cfg = config_from_dict({**TINY, "algo": "expert", "expert": expert})
        data[backend] = ExpertTrainer(cfg).generate()[0]
    for field in ("obs", "legal", "target", "reward"):
        np.testing.assert_array_equal(getattr(data["local"], field), getattr(data["ray"], field))
