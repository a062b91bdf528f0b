"""A newcomer's first hour (issue 46): the commands and words they meet first do what the README says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest


def test_agurk_train_without_a_config_trains_the_quick_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("torch.utils.tensorboard")
    from agurk.cli import main
    from training import run
    from training.config import ConfigError, load_config, packaged_config

    seen = []

    def execute(cfg, out, *args, **kwargs):  # stop where training would begin
        seen.append((cfg, out))
        raise ConfigError("stopped by the test")

    monkeypatch.setattr(run, "execute", execute)
    monkeypatch.chdir(tmp_path)
    assert main(["train", "-q"]) == 2
    assert "stopped by the test" in capsys.readouterr().err
    ((cfg, out),) = seen
    assert cfg == load_config(packaged_config("quickstart.yaml"))
    assert Path(out).parent == Path("runs") and Path(out).name.startswith("quickstart-")


def _bar_text(width: int, results: list[dict]) -> str:
    """What agurk train's progress bar shows on a terminal ``width`` columns wide after an evaluation."""
    import io

    from rich.console import Console

    from training.progress import Progress

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=True, color_system=None, legacy_windows=False)
    progress = Progress(console, 24_000_000, 0, "bar", time_limit=540)
    progress.begin()
    progress.update(12_345_678, sps=23_456.0, evaluation={"results": results})
    progress.close()
    return buf.getvalue()


@pytest.mark.parametrize("players", [[4], [3, 4, 5]])
def test_the_progress_bar_shows_the_win_rate_whole_at_80_columns(players: list[int]) -> None:
    results = [{"players": p, "win_rate": 0.3125, "win_rate_ci": [0.281, 0.344], "fair_share": 1 / p} for p in players]
    text = _bar_text(80, results)
    last = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text.split("\x1b[2K")[-1])  # the final frame, bare
    assert "…" not in last
    assert "12,345,678/24,000,000 decisions" in last and "23,456/s" in last
    flat = " ".join(last.split())
    for p in players:
        assert f"{p}p 0.312 [0.281,0.344]" in flat
    assert "eta " in flat
    assert all(len(line) <= 80 for line in last.splitlines())


def _variant(preset: str, rank: int) -> dict:
    """A ranked variant as agurk skill-report prints it (every statistic with an interval)."""
    from skill.report_text import STAT_KEYS, ci_key

    row = {"rank": rank, "preset": preset}
    for i, key in enumerate(STAT_KEYS):
        row[key], row[ci_key(key)] = 0.5 + i, [0.25 + i, 0.75 + i]
    return row


def test_the_skill_report_table_is_unwrapped_in_a_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agurk.cli.rich_tables import print_table
    from skill.report_text import ranking_table

    monkeypatch.delenv("COLUMNS", raising=False)
    presets = ["standard", "last_trick_only", "every_trick"]
    print_table(ranking_table([_variant(p, i + 1) for i, p in enumerate(presets)], "variants ranked by relative skill"))
    lines = capsys.readouterr().out.splitlines()
    for i, preset in enumerate(presets):
        (line,) = [line for line in lines if f" {preset} " in line]  # one line per row, no cell wrapped
        assert line.split("│")[1].strip() == str(i + 1)
        assert "0.50 [0.25, 0.75]" in line and line.count("[") == 7


def test_agurk_sweep_prints_its_table_unwrapped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    import yaml

    from agurk.cli import main

    monkeypatch.delenv("COLUMNS", raising=False)
    grid = {"presets": ["standard"], "players": [3], "seeds": [0], "overrides": [{"limit": 10}]}
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({**grid, "agents": ["random", "ducker"], "deals": 8, "resamples": 20}))
    assert main(["sweep", str(config), "--out", str(tmp_path / "out"), "--workers", "1", "-q"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " standard " in line]
    assert [line.split("│")[6].strip() for line in rows] == ["random", "ducker"]
    assert all(line.count("[") == 4 and "limit=10" in line for line in rows)


def test_the_readme_environment_snippet_prints_the_same_on_every_run() -> None:
    import subprocess
    import sys

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    (snippet,) = [b for b in re.findall(r"^```python\n(.*?)^```", readme, flags=re.S | re.M) if "agent_iter" in b]
    runs = [subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, check=True) for _ in "ab"]
    assert runs[0].stdout == runs[1].stdout
    assert "round over" in runs[0].stdout and re.search(r"^\[\d+(, \d+){3}\]$", runs[0].stdout, flags=re.M)
    assert 'import agurk_env` registers it, then `gymnasium.make("Agurk-v0")' in readme


def test_no_test_reads_outside_the_repository() -> None:
    """A clean clone runs every test: none reaches above the checkout (``../shared`` was skipped there)."""
    tests = Path(__file__).resolve().parent
    above = ("parents" + "[2]", '"shared" / ' + '"golden"')  # split: this file does not name them
    for path in tests.glob("*.py"):
        text = path.read_text()
        assert not any(a in text for a in above), path.name


@pytest.mark.parametrize(
    "code",
    [
        "import test_aec_env",  # PettingZoo's conformance tests, without its old creation API's notice
        "import starlette.testclient",  # the TestClient on httpx2 (the test extra), not the deprecated httpx
    ],
)
def test_no_deprecation_warning(code: str) -> None:
    import subprocess
    import sys

    pytest.importorskip("starlette")
    tests = Path(__file__).resolve().parent
    setup = f"import sys; sys.path.insert(0, {str(tests)!r}); "
    run = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", setup + code], capture_output=True)
    assert run.returncode == 0, run.stderr.decode()[-500:]


def test_the_config_reference_names_every_type_in_words() -> None:
    """docs/reference/config.md (docs/hooks.py) reads the options' ``what()``: no raw ``typing.Any``."""
    import dataclasses

    from agurk_env.options import declared
    from agurk_env.rules import Rules
    from training.config import Config

    def options(cls: type) -> list:
        out = []
        for option in declared(cls).values():
            out += options(option.type) if dataclasses.is_dataclass(option.type) else [option]
        return out

    whats = {o.name: o.what() for o in options(Config) + options(Rules)}
    assert whats["rules"] == "a mapping to values of any type"
    assert not [w for w in whats.values() if "typing" in w or "<class" in w]


def test_the_docs_site_wraps_long_code_lines() -> None:
    import yaml

    root = Path(__file__).resolve().parent.parent
    css = yaml.safe_load((root / "mkdocs.yml").read_text())["extra_css"]
    text = "".join((root / "docs" / name).read_text() for name in css)
    assert re.search(r"pre > code \{[^}]*white-space: pre-wrap", text)


def test_agurk_help_and_the_readme_name_every_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from agurk.cli import build_parser, main

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    bench = next(a for a in sub.choices["bench"]._actions if isinstance(a, argparse._SubParsersAction))
    names = list(bench.choices)
    assert "serve" in names and "operator" in names
    assert main(["--help"]) == 0
    helped = " ".join(capsys.readouterr().out.split())
    listed = re.search(r"bench measure beside a reference: ((?:\w+, )*\w+)", helped).group(1).split(", ")
    assert listed == names
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `agurk bench"))
    assert re.findall(r"`(\w+)`", row.split("|")[2]) == names


def _torch_sh(tmp_path: Path, gpu: bool, cpu_index_reachable: bool) -> list[str]:
    """The pip installs scripts/torch.sh asks for, with a stand-in ``python`` (no torch yet) on PATH."""
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "calls"
    fail = "download.pytorch.org" if not cpu_index_reachable else "never"
    (bin_dir / "python").write_text(
        "#!/bin/bash\n"
        '[[ "$1" == -c ]] && exit 1\n'  # import torch: not installed
        f'echo "$*" >> {log}\n'
        f'[[ "$*" == *{fail}* ]] && exit 1\n'
        "exit 0\n"
    )
    if gpu:
        (bin_dir / "nvidia-smi").write_text("#!/bin/bash\nexit 0\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    script = Path(__file__).resolve().parent.parent / "scripts" / "torch.sh"
    bash = "/bin/bash"
    subprocess.run([bash, str(script)], env={"PATH": str(bin_dir)}, check=True, capture_output=True)
    return log.read_text().splitlines()


def test_torch_is_the_cpu_build_where_there_is_no_gpu(tmp_path: Path) -> None:
    (call,) = _torch_sh(tmp_path / "a", gpu=False, cpu_index_reachable=True)
    assert "torch==2.13.0" in call and "--index-url https://download.pytorch.org/whl/cpu" in call
    (call,) = _torch_sh(tmp_path / "b", gpu=True, cpu_index_reachable=True)
    assert call == "-m pip install torch==2.13.0"
    cpu, configured = _torch_sh(tmp_path / "c", gpu=False, cpu_index_reachable=False)  # an offline mirror
    assert "whl/cpu" in cpu and configured == "-m pip install torch==2.13.0"


def test_the_two_commands_set_up_and_run_what_the_readme_says() -> None:
    root = Path(__file__).resolve().parent.parent
    quick = (root / "scripts" / "quickstart.sh").read_text()
    assert '-m venv "$1"' in (root / "scripts" / "venv.sh").read_text()
    steps = ('source scripts/venv.sh "$VENV"', "scripts/torch.sh", 'pip install -e ".[rl]"')
    for step in (
        *steps,
        "agurk train configs/quickstart.yaml",
        'agurk evaluate --agents "ppo:$OUT/checkpoints/best.pt',
    ):
        assert step in quick, step
    test = (root / "scripts" / "test.sh").read_text()
    assert "apt-get install -y -qq chromium chromium-driver" in test and "scripts/torch.sh" in test
    assert 'source scripts/venv.sh "$VENV"' in test
    assert 'FRESH="$(mktemp -d)"' in test and 'VENV="$FRESH/venv"' in test  # outside the checkout
    for path in ("scripts/quickstart.sh", "scripts/test.sh", "scripts/torch.sh", ".ci/run"):
        assert (root / path).stat().st_mode & 0o111, path


@pytest.mark.parametrize("page", ["docs/getting-started.md", "docs/training.md"])
def test_training_another_variant_is_stated(page: str) -> None:
    text = (Path(__file__).resolve().parent.parent / page).read_text()
    assert "agurk train configs/quickstart.yaml --set preset=swedish" in text
    assert "agurk train configs/swedish.yaml" in text


def test_the_readme_says_every_player_holding_the_top_rank_scores() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    five = readme[readme.index("## The game in five lines") : readme.index("## Install")]
    assert "`last_trick_ties=all`, the default" in five and "every other player who played that top rank" in five
