"""``best`` on a base install (no torch): it plays the search, and says so once, in one line on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CODE = """
import sys
sys.modules["torch"] = None  # as if not installed
from agurk.cli import main
sys.exit(main(["simulate", "--agents", "best,random", "--set", "players=2", "--set", "hand_size=3",
               "--set", "limit=5", "--matches", "2", "--seed", "0", "--out", sys.argv[1]]))
"""


def test_best_without_torch_warns_once_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    done = subprocess.run([sys.executable, "-c", CODE, str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "torch" in line]
    assert len(said) == 1 and said[0].startswith("best: torch is not installed"), done.stderr
    assert "Traceback" not in done.stderr and len(out.read_text().splitlines()) == 2
