"""A newcomer's first hour (issue 46): the commands and words they meet first do what the README says."""

from __future__ import annotations

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
    (cfg, out), = seen
    assert cfg == load_config(packaged_config("quickstart.yaml"))
    assert Path(out).parent == Path("runs") and Path(out).name.startswith("quickstart-")
