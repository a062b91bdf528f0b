"""The docs site's generated reference pages (docs/hooks.py) cover every command, agent kind and rule option."""

from __future__ import annotations

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
