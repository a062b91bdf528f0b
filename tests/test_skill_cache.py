"""The skill report's result cache (`--cache DIR`): the same files, no table played twice, only changes replayed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from tiny_nets import count_tables, tiny_checkpoint

from skill import budget as B
from skill.report import skill_report

PLAN = dataclasses.replace(
    B.Budget("tiny", ("standard",), deals=2, train_steps=0, worlds=(1, 2), resamples=40), policy="train"
)
FILES = ("report.json", "report.csv", "ladder.csv", "report.md")


@pytest.fixture
def played(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return count_tables(monkeypatch)


def report(out: Path, checkpoint: Path, cache: Path | None) -> dict:
    return skill_report(
        ["standard"], 3, PLAN, 5, out, {"standard": str(checkpoint)}, workers=1, command="x", hand_size=5, cache=cache
    )


def test_a_cached_report_is_the_same_and_plays_nothing_twice(tmp_path: Path, played: list[str]) -> None:
    net = tiny_checkpoint(tmp_path / "net.pt", 0)
    cache = tmp_path / "cache"
    report(tmp_path / "plain", net, None)
    tables = len(played)
    assert tables == 10 * 3 + 1  # a table per seat rotation (guard, the field's own agent, sits once)
    report(tmp_path / "first", net, cache)
    captures = 2  # the best real agent's matches for the control variates: on the fitting deals and its own
    assert len(played) == 2 * tables and len(list(cache.rglob("*.npz"))) == tables + captures
    assert not list(cache.rglob("*.tmp"))  # every entry renamed into place
    played.clear()
    report(tmp_path / "again", net, cache)
    assert played == []  # every table read from the cache
    for name in FILES:
        plain = (tmp_path / "plain" / name).read_bytes()
        assert plain == (tmp_path / "first" / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name

    before = set(cache.rglob("*.npz"))
    tiny_checkpoint(net, 1)  # the same path, another network: only the agent that plays it replays
    report(tmp_path / "retrained", net, cache)
    fresh = sorted(set(cache.rglob("*.npz")) - before)
    assert len(fresh) == 3
    assert played == [f"ppo:{net}"] * 3
    played.clear()
    report(tmp_path / "retrained-again", net, cache)
    assert played == []
    for name in FILES:
        assert (tmp_path / "retrained" / name).read_bytes() == (tmp_path / "retrained-again" / name).read_bytes()

    entry = fresh[0]  # an entry this report reads (the first network's entries are stale now)
    entry.write_bytes(b"not an archive")  # a damaged entry is played again and stored anew
    report(tmp_path / "mended", net, cache)
    assert len(played) == 1
    assert (tmp_path / "mended" / "report.json").read_bytes() == (tmp_path / "retrained" / "report.json").read_bytes()


def test_the_key_covers_rules_agents_files_deals_and_seeds(tmp_path: Path) -> None:
    from skill.cache import FORMAT, TaskCache, spec_files
    from skill.variant import VariantJob, agent_plan

    net = tiny_checkpoint(tmp_path / "net.pt", 0)
    cache = TaskCache(tmp_path / "cache")
    job = VariantJob("standard", 3, PLAN, 5, {}, checkpoint=str(net), hand_size=5)
    learned = B.ladder(PLAN).index("ppo")

    def key(job: VariantJob, index: int = learned, table: int = 0) -> str:
        plan = agent_plan(job, index)
        return cache.material(plan.tasks[table], plan.labels)

    material = key(job)
    assert f'"format": {FORMAT}' in material and cache.file_hash(net) in material
    others = [
        key(job, table=1),
        key(job, index=learned - 1),
        key(dataclasses.replace(job, seed=6)),
        key(dataclasses.replace(job, hand_size=6)),
        key(dataclasses.replace(job, preset="swedish")),
        key(dataclasses.replace(job, budget=dataclasses.replace(PLAN, deals=3))),
    ]
    assert len({material, *others}) == 7
    assert key(dataclasses.replace(job, budget=dataclasses.replace(PLAN, resamples=7))) == material  # statistics only
    assert spec_files("pimc:worlds=4") == [] and spec_files(f"ppo:{net};sample") == [net]
    assert spec_files("zoo")[0].name == "universal.pt"
