"""The docs site's generated reference pages (docs/hooks.py) cover every command, agent kind and rule option."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_marker_names_a_generator(hooks: ModuleType) -> None:
    markers = [m for page in (REPO / "docs").rglob("*.md") for m in hooks.MARKER.findall(page.read_text())]
    assert sorted(markers) == sorted(hooks.GENERATORS)
    page = hooks.on_page_markdown("intro\n\n<!-- generated: agents -->\n\nend")
    assert "<!-- generated" not in page and "## `pimc`" in page and page.endswith("end")


def test_the_cli_page_has_every_command_and_option(hooks: ModuleType) -> None:
    from agurk.cli import build_parser

    page = hooks.cli_reference()
    for name, parser in hooks._commands(build_parser(), ("agurk",)):
        assert f"## {name}\n" in page
        for action in parser._actions:
            for flag in action.option_strings:
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", page), (name, flag)


def test_the_agents_page_has_every_kind_and_option(hooks: ModuleType) -> None:
    from agents.registry import kinds

    page = hooks.agents_reference()
    for kind in kinds():
        assert f"## `{kind['name']}`" in page
        for option in kind["options"]:
            assert f"| `{option['name']}` |" in page


def test_the_rules_page_has_every_option_and_preset(hooks: ModuleType) -> None:
    from agurk_env.rules import OPTION_NAMES, PRESETS

    page = hooks.rules_reference()
    assert all(f"| `{name}` |" in page for name in OPTION_NAMES)
    assert all(f"| `{name}` |" in page for name in PRESETS)


def test_the_config_page_has_every_key(hooks: ModuleType) -> None:
    from agurk_env.options import declared
    from training.config import Config

    page = hooks.config_reference()
    for name, option in declared(Config).items():
        if dataclasses.is_dataclass(option.type):
            assert f"## `{name}`" in page
            assert all(f"| `{name}.{key}` |" in page for key in declared(option.type))
        else:
            assert f"| `{name}` |" in page


def _config_keys() -> set[str]:
    """Every dotted key of a training config (``init``, ``pool.self_play``...)."""
    from agurk_env.options import declared
    from training.config import Config

    sections = {name: o.type for name, o in declared(Config).items() if dataclasses.is_dataclass(o.type)}
    return {f"{name}.{key}" for name, cls in sections.items() for key in declared(cls)}


def test_the_guide_copies_no_declared_option_into_a_table() -> None:
    """Issue 23: every CLI option and config key is documented from its one declaration, the generated pages."""
    keys = _config_keys()
    for page in (REPO / "docs").glob("*.md"):
        for line in page.read_text().splitlines():
            first = re.match(r"^\| `([^`]+)`", line)
            if first:
                cell = first.group(1).split(",")[0].split()[0]
                assert not cell.startswith("-"), (page.name, line)
                assert cell not in keys, (page.name, line)


def test_the_guide_restates_no_usage_synopsis() -> None:
    """Issue 23: a command's options are in its ``--help`` and the generated CLI reference, not copied into a guide."""
    for page in (REPO / "docs").glob("*.md"):
        for line in page.read_text().splitlines():
            assert not re.search(r"\bagurk [^`]*\[--?\w", line), (page.name, line)
