"""The environment examples of the docs run exactly as written; the README's copies and test command match."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "environments.md"
README = ROOT / "README.md"


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), flags=re.S | re.M)


def _bash_lines(path: Path) -> list[str]:
    blocks = re.findall(r"^```bash\n(.*?)^```", path.read_text(), flags=re.S | re.M)
    return [line for block in blocks for line in block.splitlines()]


def test_the_doc_has_its_examples_of_at_most_ten_lines() -> None:
    blocks = _python_blocks(DOC)
    assert len(blocks) == 4
    assert "agent_iter" in blocks[0] and "MaskablePPO" in blocks[1] and "make_vec" in blocks[2]
    assert "AgurkRewardWrapper" in blocks[3]
    for block in blocks:
        code = [line for line in block.splitlines() if line.strip() and not line.startswith(("import", "from"))]
        assert len(code) <= 10


def test_the_readme_examples_are_the_docs_examples() -> None:
    readme = _python_blocks(README)
    assert readme, "the README shows an environment example"
    assert all(block in _python_blocks(DOC) for block in readme)


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "exec scripts/test.sh" in ci  # CI runs the README's second command
    script = (ROOT / "scripts" / "test.sh").read_text().splitlines()
    command = script[script.index("# The tests' command, verbatim:") + 1]
    ci_command = 'pip install -e ".[test,docs]" && ruff check . && mypy && mkdocs build --strict'
    assert command == ci_command + ' && python -m pytest -n 2 -m "not slow"'
    assert "scripts/test.sh" in _bash_lines(README) and "scripts/quickstart.sh" in _bash_lines(README)
    assert command in _bash_lines(ROOT / "docs" / "getting-started.md")
    assert "scripts/test.sh" in _bash_lines(ROOT / "docs" / "getting-started.md")


def test_the_readme_is_a_front_door() -> None:
    assert len(README.read_text().splitlines()) <= 300


@pytest.mark.parametrize(
    "index", [0, 1, 2, 3], ids=["pettingzoo_loop", "maskable_ppo", "gymnasium_vector", "reward_wrapper"]
)
def test_example_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    if index in (1, 3):
        import torch

        torch.set_num_threads(1)
    exec(compile(_python_blocks(DOC)[index], f"{DOC}:block{index}", "exec"), {"__name__": "__doc_example__"})
    out = capsys.readouterr().out
    if index == 0:
        assert "round over" in out and "last trick" in out
    if index == 2:
        assert "rounds ended" in out and not out.startswith("0 ")
