"""The environment examples of the README run exactly as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def test_the_doc_has_its_examples_of_at_most_ten_lines() -> None:
    blocks = _python_blocks()
    assert len(blocks) == 3
    assert "agent_iter" in blocks[0] and "MaskablePPO" in blocks[1] and "AgurkRewardWrapper" in blocks[2]
    for block in blocks:
        code = [line for line in block.splitlines() if line.strip() and not line.startswith(("import", "from"))]
        assert len(code) <= 10


@pytest.mark.parametrize("index", [0, 1, 2], ids=["pettingzoo_loop", "maskable_ppo", "reward_wrapper"])
def test_example_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    if index >= 1:
        import torch

        torch.set_num_threads(1)
    exec(compile(_python_blocks()[index], f"{DOC}:block{index}", "exec"), {"__name__": "__doc_example__"})
    if index == 0:
        out = capsys.readouterr().out
        assert "round over" in out and "last trick" in out
