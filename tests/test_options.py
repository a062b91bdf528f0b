"""Options declared once (agurk_env/options.py): one converter for YAML values, KEY=VALUE and k=v;k=v text.

- Text and the YAML value of the same option convert to the same typed value.
- A value out of its bounds or of the wrong type is refused in one line naming the key.
- The docs read the declaration: type, default (``auto`` for None, ``on``/``off``) and the field's docstring.
- Every declared option set of the project (rules, agent kinds, config sections) has a doc for every option.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.registry import AGENTS, kinds
from agurk_env.options import OptionError, build, check, declared, option, parse
from agurk_env.rules import Rules
from training.config import Config, EvalConfig, ExpertConfig, PoolConfig


@dataclass(frozen=True)
class Sample:
    """A small option set."""

    worlds: int = option(16, low=1)
    """Worlds per decision."""
    share: float = option(0.5, low=0, below=1)
    """A share in [0, 1)."""
    mode: Literal["fast", "slow"] = "fast"
    """How fast."""
    tricks: int | None = option(None, low=1, none="auto")
    """Tricks solved (auto: by the rules)."""
    belief: bool = option(True, flag=("on", "off"))
    """Weigh the worlds."""
    widths: list[int] = option([8, 8], low=1)
    """Layer widths."""

    def __post_init__(self) -> None:
        check(self)


@given(st.integers(1, 10**9))
def test_text_and_yaml_values_convert_alike(n: int) -> None:
    opt = declared(Sample)["worlds"]
    assert opt.convert(str(n)) == opt.convert(n) == opt.convert(float(n)) == n


def test_parse_reads_the_declared_types_over_the_defaults() -> None:
    got = parse(Sample, "worlds=32; share=2.5e-1;mode=slow;tricks=auto;belief=off")
    assert got == Sample(worlds=32, share=0.25, mode="slow", tricks=None, belief=False)
    assert parse(Sample, None) == Sample() and parse(Sample, "tricks=3").tricks == 3
    assert build(Sample, {"widths": 4}).widths == [4]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("worlds=0", "worlds must be an integer >= 1, not '0'"),
        ("worlds=many", "worlds must be an integer >= 1, not 'many'"),
        ("worlds=2.5", "worlds must be an integer >= 1"),
        ("share=1", r"share must be a number in \[0, 1\), not '1'"),
        ("share=nan", "share must be a number"),
        ("mode=medium", "mode must be one of fast, slow, not 'medium'"),
        ("tricks=0", "tricks must be auto or an integer >= 1"),
        ("belief=maybe", "belief must be on or off"),
        ("depth=3", "unknown option 'depth'; options are: worlds, share"),
        ("worlds", "bad option 'worlds': write key=value"),
    ],
)
def test_bad_values_are_refused_in_one_line_naming_the_key(text: str, words: str) -> None:
    with pytest.raises(OptionError, match=words) as err:
        parse(Sample, text)
    assert "\n" not in str(err.value)


def test_direct_construction_is_checked_by_the_same_declaration() -> None:
    with pytest.raises(OptionError, match="worlds must be an integer >= 1"):
        Sample(worlds=0)
    assert Sample(worlds="4").worlds == 4  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="widths must be a list of integers >= 1"):
        build(Sample, {"widths": [8, 0]})


def test_the_docs_read_the_declaration() -> None:
    options = declared(Sample)
    assert [(o.kind, o.shown_default) for o in options.values()] == [
        ("int", "16"),
        ("float", "0.5"),
        ("fast|slow", "fast"),
        ("auto|int", "auto"),
        ("on|off", "on"),
        ("list of int", "[8, 8]"),
    ]
    assert options["tricks"].doc == "Tricks solved (auto: by the rules)."


@pytest.mark.parametrize(
    "cls",
    [Rules, Config, PoolConfig, EvalConfig, ExpertConfig, *(k.options for k in AGENTS.values() if k.options)],
)
def test_every_declared_option_has_a_doc(cls: type) -> None:
    assert all(o.doc for o in declared(cls).values()), [o.name for o in declared(cls).values() if not o.doc]


def test_kinds_lists_each_kinds_declared_options() -> None:
    by_name = {k["name"]: k for k in kinds()}
    pimc = {o["name"]: o for o in by_name["pimc"]["options"]}
    assert pimc["worlds"]["default"] == "16" and pimc["tricks"]["default"] == "auto"
    assert pimc["eval"]["type"] == "rollout|exact" and pimc["eval"]["doc"]
    assert {o["name"] for o in by_name["guided"]["options"]} >= {"policy", "prior", "top", "out"}
    assert by_name["random"]["options"] == []
