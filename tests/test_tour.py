"""A tour of every command the project prints: the README's code blocks and every ``--help`` example.

Each command is taken as printed. ``test_every_printed_command_parses`` (fast) checks that the
command line parses: no missing required option, no unknown one. ``test_the_tour`` (slow) runs
each one in order in one scratch folder (``configs/`` linked in), so a command that needs a
trained run finds the one an earlier command trained, and asserts exit status 0. Only the
commands in ``SHRINK`` are run smaller (each substitution named there), and only those in
``SKIP`` are left out, each with its reason.

Two knobs for working through the slow tour without running it from the start each time:
``AGURK_TOUR_DIR=PATH`` runs it in that folder (made, and kept afterwards) instead of a fresh
temporary one; ``AGURK_TOUR_FROM=N`` runs only the commands from index N on and ``AGURK_TOUR_TO=M``
only those before index M (the index in ``commands()``: ``python tests/test_tour.py`` lists them,
shrunk or skipped), the others skipped as "outside AGURK_TOUR_FROM/TO". Resuming a failed tour at
its failing command in the same folder, e.g. ``AGURK_TOUR_DIR=/tmp/tour AGURK_TOUR_FROM=33 python -m
pytest -m slow tests/test_tour.py -x``. The tour has passed only when it ran whole in a fresh folder.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _joined(lines: list[str]) -> list[str]:
    """Lines with their ``\\`` continuations joined and trailing ``# comments`` dropped."""
    out, held = [], ""
    for line in lines:
        line = held + line.strip()
        if line.endswith("\\"):
            held = line[:-1].rstrip() + " "
            continue
        held = ""
        out.append(re.sub(r"\s+#.*$", "", line).strip())
    return out


def readme_commands() -> list[str]:
    """The ``agurk ...`` lines of the README's bash blocks."""
    blocks = re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(), flags=re.S | re.M)
    return [c for b in blocks for c in _joined(b.splitlines()) if c.startswith("agurk ")]


def help_commands() -> list[str]:
    """The ``agurk ...`` examples of ``agurk --help`` and of every subcommand's ``--help``."""
    from agurk.cli import build_parser

    def walk(parser: argparse.ArgumentParser):
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from walk(sub)

    out = []
    for parser in walk(build_parser()):
        lines = (parser.epilog or "").splitlines()
        out += [c for c in _joined(lines) if c.startswith("agurk ")]
    return out


def commands() -> list[str]:
    """Every printed command once, README first."""
    return list(dict.fromkeys(readme_commands() + help_commands()))


STUDY = (
    "agurk skill-study --selection docs/results/skill-study/selection.json --convergence docs/results/skill-full/"
    "convergence.json --exact docs/results/skill-study/exact.json --out docs/results/skill-study"
)
"""The published study's command (``agurk skill-study --help``)."""
SKIP = {
    "agurk serve": "a server that runs until stopped (tests/test_web.py serves its pages)",
    "agurk serve --port 8080": "a server that runs until stopped",
    "agurk serve --host 0.0.0.0 --max-games 200": "a server that runs until stopped, open to the network",
    "agurk bench serve": "a server under load for a minute (tests/test_bench_operator.py, test_web_load.py)",
    "agurk sweep my_sweep.yaml --out runs/big --backend ray --ray-address auto": "a placeholder config on a cluster",
    "agurk zoo export runs/a.pt --blend runs/b.pt:0.25 --name my-blend": "placeholder checkpoints a.pt and b.pt",
    "agurk zoo export runs/a.pt --ensemble runs/b.pt:0.5 --name my-ensemble": "placeholder checkpoints",
    "agurk curve runs/expert --beside runs/ppo": "placeholder runs (an expert-iteration run beside a PPO run)",
    "agurk skill-report --budget full --policy zoo --cache runs/skill-cache --convergence runs/net/step-8M.pt,"
    "runs/net/step-47M.pt": "placeholder checkpoints of earlier training budgets (test_convergence.py runs small ones)",
    STUDY: "the published study (hours; tests/test_skill_study.py runs a small one, resumed from its cache)",
}
"""Commands not run, with the reason (everything else runs as printed, or shrunk by ``SHRINK``)."""
SKIP_PATTERNS = (
    (r"--ray-address auto", "needs a running Ray cluster"),
    (r"^nohup |&$", "a background job"),
    (r"^agurk zoo export ", "writes into the shipped zoo (tests/test_zoo.py exports into a copy)"),
)
SMALL_TRAIN = " --set total_steps=3000 --set time_limit=0 --set num_envs=32 --set num_steps=8"
SMALL_TRAIN += " --set minibatch_size=128 --set eval.every=0 --set eval.final_deals=20 --set eval.deals=20"
SHRINK = [
    (r"^(agurk train .*)$", r"\1" + SMALL_TRAIN),  # 9 minutes (the time limit) to seconds
    (r"--matches (\d{4,})", "--matches 50"),  # thousands of matches to 50
    (r"--budget (full|small)", "--budget smoke"),
    (r"^(agurk skill-report (?!.*--budget).*)$", r"\1 --budget smoke"),  # no --budget: the default, small
    (r"--deals (\d{3,})", "--deals 10"),
    (r"--decisions (\d{4,})", "--decisions 500"),  # agurk exploit: one update of training
    (r"--seconds \d+", "--seconds 1"),
    (r"^(agurk bench (engine|env|search|train|solver)(?!.*--seconds).*)$", r"\1 --seconds 1"),
    (r"^(agurk bench tournament(?!.*--matches).*)$", r"\1 --matches 200"),  # 10000 matches, 4 ways, to 200
    (r"^(agurk bench operator(?!.*--positions).*)$", r"\1 --positions 50"),  # 2000 positions to 50
    (r"--positions \d+", "--positions 50"),
    (r"--suite report", "--suite tiny"),
    (  # a small study (minutes) to seconds
        r"^(agurk skill-study (?!.*--selection).*)$",
        r"\1 --chunk 10 --floor 20 --ceiling 20 --robust-deals 10 --cv-deals 20 --cv-fit-deals 10 --cv-check 200",
    ),  # the report's table (hours) to the CI test's game
]
"""Substitutions that make a long command short, each matched on the printed command."""


PLAY_INPUT = "".join(f"#{k}\n" for k in range(1, 8)) + "q\n"
"""``agurk play``'s input: hand entries #1..#7 until one is legal (one always is: a card at least as high as the
trick's, else the lowest), so a card is played and ``--record`` is written, then quit (``q``, or the input's end)."""


def shrunk(command: str) -> str:
    for pattern, replacement in SHRINK:
        command = re.sub(pattern, replacement, command)
    return command


def skipped(command: str) -> str | None:
    if command in SKIP:
        return SKIP[command]
    return next((why for pattern, why in SKIP_PATTERNS if re.search(pattern, command)), None)


def test_the_tour_finds_the_commands() -> None:
    found = commands()
    assert "agurk train configs/quickstart.yaml --out runs/quickstart" in found
    assert any(c.startswith("agurk evaluate --agents ppo:runs/quickstart/checkpoints/best.pt") for c in found)
    assert any(c.startswith("agurk bench operator") for c in found) and len(found) > 50


@pytest.mark.parametrize("command", commands())
def test_every_printed_command_parses(command: str) -> None:
    """As printed, each command line is accepted by the parser (no missing or unknown option)."""
    from agurk.cli import build_parser

    argv = shlex.split(command)[1:]
    try:
        build_parser().parse_args(argv)
    except SystemExit as e:
        pytest.fail(f"{command!r} does not parse (exit {e.code})")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the whole tour (its runs/ shared by the commands in order), configs/ linked in, and the
    checkout's docs/results/ folder made (empty): commands that write the docs' results write there."""
    if os.environ.get("AGURK_TOUR_DIR"):
        folder = Path(os.environ["AGURK_TOUR_DIR"]).resolve()
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("tour")
    if not (folder / "configs").exists():
        (folder / "configs").symlink_to(ROOT / "configs")
    (folder / "docs" / "results").mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("command", commands())
def test_the_tour(command: str, scratch: Path) -> None:
    index = commands().index(command)
    if not int(os.environ.get("AGURK_TOUR_FROM", "0")) <= index < int(os.environ.get("AGURK_TOUR_TO", "1000000")):
        pytest.skip("outside AGURK_TOUR_FROM/TO")
    why = skipped(command)
    if why:
        pytest.skip(why)
    agurk = str(Path(sys.executable).parent / "agurk")
    argv = [agurk, *shlex.split(shrunk(command))[1:]]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    given = PLAY_INPUT if command.startswith("agurk play ") else "q\n"
    run = subprocess.run(argv, cwd=scratch, input=given, capture_output=True, text=True, timeout=900, env=env)
    assert run.returncode == 0, f"{shrunk(command)}\n{run.stderr[-2000:]}"


if __name__ == "__main__":  # the tour's commands with their indexes (for AGURK_TOUR_FROM), shrunk or skipped
    for index, command in enumerate(commands()):
        why = skipped(command)
        print(f"{index:>3}  {command if why else shrunk(command)}" + (f"  [skipped: {why}]" if why else ""))
