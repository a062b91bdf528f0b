"""The layering of the packages: each may import only itself and the layers below it.

agurk_env (the game) < agents < training < skill < agurk (the application). Every ``.py``
module of the five packages is parsed with ``ast`` and every import in it is checked, wherever
it stands (module level, inside functions, classes, ``try`` or ``if TYPE_CHECKING`` blocks):
``import x``, ``from x import y``, relative imports (resolved against the module's package) and
``importlib.import_module(...)`` / ``__import__(...)`` calls whose module name is a string
constant (or a module-level string, or a module-level dict / list / tuple of strings indexed).

No circles inside a package either: no modules of one package import each other in a loop
(:func:`import_cycles` over :func:`import_graph`, the same imports, wherever they stand). What two
modules share goes into the lower one, or a small module below both.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS: tuple[tuple[str, ...], ...] = (("agurk_env",), ("agents",), ("training",), ("skill",), ("agurk",))
"""Bottom to top; packages in one tuple share a rank (and may not import each other)."""
RANK = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}


@dataclass(frozen=True)
class Violation:
    """One import that goes up the layers (or sideways to another package of the same rank)."""

    path: str
    line: int
    importer: str
    imported: str
    sideways: bool = False

    def __str__(self) -> str:
        a, b = self.importer.split(".")[0], self.imported.split(".")[0]
        way = "sideways" if self.sideways else "upward"
        return f"{self.path}:{self.line}: {self.importer} imports {self.imported} ({way}: {a} -> {b})"


def module_name(path: Path, root: Path) -> str:
    """``agurk/cli/__init__.py`` -> ``agurk.cli``; ``agurk/play.py`` -> ``agurk.play``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_of(module: str, is_package: bool) -> str:
    """The package a relative import in ``module`` is resolved against."""
    return module if is_package else module.rpartition(".")[0]


def _resolve(name: str, level: int, package: str) -> str:
    """``from {'.' * level}{name} import ...`` inside ``package``, as an absolute module name."""
    if level == 0:
        return name
    parts = package.split(".") if package else []
    if level - 1 > len(parts) - 1:
        raise ValueError(f"relative import beyond the top-level package: {'.' * level}{name} in {package}")
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _module_constants(tree: ast.Module) -> dict[str, list[str]]:
    """Module-level names bound to a string, or to a dict / list / tuple / set literal: their string constants."""
    found: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            strings = [value.value]
        elif isinstance(value, ast.Dict):
            strings = [v.value for v in value.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        elif isinstance(value, ast.List | ast.Tuple | ast.Set):
            strings = [v.value for v in value.elts if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                found[target.id] = strings
    return found


def _call_names(node: ast.expr, constants: dict[str, list[str]]) -> list[str]:
    """The module names an ``import_module`` / ``__import__`` argument can take (empty when unknown)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in constants and len(constants[node.id]) == 1:
        return constants[node.id]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return constants.get(node.value.id, [])
    return []


def _is_dynamic_import(func: ast.expr) -> str | None:
    """``"import_module"`` or ``"__import__"`` when ``func`` names one of them, else None."""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name if name in ("import_module", "__import__") else None


def imports_of(source: str, module: str, is_package: bool, modules: Collection[str] = ()) -> list[tuple[int, str]]:
    """Every module ``source`` (the module ``module``) imports, with its line, relative imports resolved.

    With ``modules`` (every module name of the tree), ``from X import a`` reads as importing ``X.a``
    where that is a module, else ``X``: the module the name comes from.
    """
    tree = ast.parse(source)
    package = _package_of(module, is_package)
    constants = _module_constants(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module or "", node.level, package)
            if modules:  # each name from its own module: a submodule, or the module (package) X itself
                names = [f"{base}.{alias.name}" if base else alias.name for alias in node.names]
                found += [(node.lineno, n) for n in dict.fromkeys(n if n in modules else base for n in names)]
                continue
            found.append((node.lineno, base))
            if node.level and not node.module:  # from . import x: x is a module of the package (or a name in it)
                found += [(node.lineno, f"{base}.{alias.name}" if base else alias.name) for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and (kind := _is_dynamic_import(node.func)):
            anchor = package
            if kind == "import_module":
                pkg = (
                    node.args[1]
                    if len(node.args) > 1
                    else next((k.value for k in node.keywords if k.arg == "package"), None)
                )
                if isinstance(pkg, ast.Constant) and isinstance(pkg.value, str):
                    anchor = pkg.value
            for name in _call_names(node.args[0], constants):
                if kind == "import_module" and name.startswith("."):
                    level = len(name) - len(name.lstrip("."))
                    found.append((node.lineno, _resolve(name[level:], level, anchor)))
                else:
                    found.append((node.lineno, name))
    return found


def upward_imports(root: Path, packages: dict[str, int] = RANK) -> list[Violation]:
    """Every import in the packages under ``root`` that reaches a package of the same or a higher rank."""
    violations: list[Violation] = []
    for top in packages:
        for path in sorted((root / top).rglob("*.py")):
            module = module_name(path, root)
            own = module.split(".")[0]
            for line, imported in imports_of(path.read_text(), module, path.name == "__init__.py"):
                target = imported.split(".")[0]
                if target in packages and target != own and packages[target] >= packages[own]:
                    sideways = packages[target] == packages[own]
                    violations.append(Violation(str(path.relative_to(root)), line, module, imported, sideways))
    return violations


def test_every_package_exists() -> None:
    for package in RANK:  # a renamed package would leave the scan below nothing to read
        assert (ROOT / package / "__init__.py").is_file(), package


def _imported_packages(package: str) -> set[str]:
    return {
        name.split(".")[0]
        for path in (ROOT / package).rglob("*.py")
        for _, name in imports_of(path.read_text(), module_name(path, ROOT), path.name == "__init__.py")
    }


def test_no_import_goes_up_the_layers() -> None:
    violations = upward_imports(ROOT)
    assert not violations, "imports against the layering:\n" + "\n".join(map(str, violations))
    for package in ("agents", "training", "skill", "agurk"):  # the scan does see the real imports
        assert "agurk_env" in _imported_packages(package), package


APPLICATION_NAMES = ("cli", "play", "replay", "bench")
"""Module / folder name prefixes of the application layer (command line, play, replay, benchmarks)."""


def application_modules(root: Path, package: str = "agurk_env") -> list[str]:
    """The application modules in ``package`` under ``root``, and every argparse import there (``path:line``)."""
    top = root / package
    found = [
        str(path.relative_to(root))
        for path in sorted(top.rglob("*"))
        if "__pycache__" not in path.parts
        and (path.suffix == ".py" or path.is_dir())
        and any(part.startswith(APPLICATION_NAMES) for part in path.relative_to(top).parts)
    ]
    found += [
        f"{path.relative_to(root)}:{line} imports {name}"
        for path in sorted(top.rglob("*.py"))
        for line, name in imports_of(path.read_text(), module_name(path, root), path.name == "__init__.py")
        if name.split(".")[0] == "argparse"
    ]
    return found


def test_the_game_layer_has_no_application_modules() -> None:
    found = application_modules(ROOT)
    assert not found, f"agurk_env holds command-line / play / replay / benchmark code: {found}"


def import_graph(root: Path, packages: Collection[str] = tuple(RANK)) -> dict[str, dict[str, int]]:
    """Each module of ``packages`` under ``root`` -> the modules of its own package it imports, with a line.

    Every import counts, wherever it stands (inside functions and ``if TYPE_CHECKING`` blocks too);
    ``from X import a`` imports the module ``X.a`` when there is one, else ``X``; an import of ``X.Y``
    is an arrow to the module ``X.Y`` (not to the packages above it).
    """
    paths = {module_name(path, root): path for top in packages for path in sorted((root / top).rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for module, path in paths.items():
        arrows = graph.setdefault(module, {})
        for line, name in imports_of(path.read_text(), module, path.name == "__init__.py", paths):
            parts = name.split(".")
            target = next((".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in paths), None)
            if target is not None and target != module and target.split(".")[0] == module.split(".")[0]:
                arrows.setdefault(target, line)
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The modules that import each other in a loop: each strongly connected component of two or more, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:  # Tarjan's algorithm, iterative (no recursion limit on a deep chain)
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, arrows = work[-1]
            target = next(arrows, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph.get(target, {}))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _cycle_text(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    arrows = [f"{a} -> {b} (line {line})" for a in cycle for b, line in graph[a].items() if b in cycle]
    return f"{len(cycle)} modules: " + "; ".join(arrows)


def test_no_package_has_an_import_cycle() -> None:
    graph = import_graph(ROOT)
    cycles = import_cycles(graph)
    assert not cycles, "modules that import each other in a loop:\n" + "\n".join(_cycle_text(graph, c) for c in cycles)
    assert graph["agurk_env.engine"]["agurk_env.rules_kernel"]  # the scan does see the arrows


# ----------------------------------------------------------------------------- the checker itself


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _tree(tmp_path: Path) -> Path:
    """A synthetic tree of the five packages in which every module imports only downward."""
    files = {f"{package}/__init__.py": "" for package in RANK}
    files |= {
        "agents/ok.py": "import numpy\nfrom agurk_env import engine\nimport agurk_env.rules as r\n",
        "agurk/cli/__init__.py": "from .. import play\nfrom ..bench import engine\nfrom skill import report\n",
        "agurk/play.py": "from . import replay\nimport agents, training, skill, agurk_env\n",
        "skill/ok.py": "def f():\n    import training.ppo\n    return __import__('agents')\n",
    }
    _write(tmp_path, files)
    return tmp_path


def test_checker_passes_a_downward_only_tree(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert len(imports_of((root / "agurk/play.py").read_text(), "agurk.play", False)) == 6
    assert upward_imports(root) == []


LAZY = "import importlib\n_LAZY = {'a': 'skill.report'}\ndef f(n):\n    return importlib.import_module(_LAZY[n])\n"


@pytest.mark.parametrize(
    ("name", "source", "imported", "line"),
    [
        ("agurk_env/engine.py", "import agents.heuristics\n", "agents.heuristics", 1),
        ("agurk_env/engine.py", "import numpy\nfrom agurk.cli import main\n", "agurk.cli", 2),
        ("agents/tool.py", "def f():\n    from training import ppo\n    return ppo\n", "training", 2),
        ("agents/tool.py", "class A:\n    def m(self):\n        import skill.stats\n", "skill.stats", 3),
        ("training/run.py", "try:\n    import skill\nexcept ImportError:\n    pass\n", "skill", 2),
        ("agurk_env/x.py", "import importlib\nm = importlib.import_module('agurk.bench')\n", "agurk.bench", 2),
        (
            "agurk_env/x.py",
            "from importlib import import_module\nimport_module('.cli', package='agurk')\n",
            "agurk.cli",
            2,
        ),
        ("agurk_env/x.py", "def f():\n    return __import__('training.ppo')\n", "training.ppo", 2),
        ("agurk_env/x.py", LAZY, "skill.report", 4),
        ("agents/sub/deep.py", "import agurk_env\nif True:\n    import agurk.play as p\n", "agurk.play", 3),
        ("skill/x.py", "import agurk_env, agurk.play\n", "agurk.play", 1),
    ],
)
def test_checker_flags_an_upward_import(tmp_path: Path, name: str, source: str, imported: str, line: int) -> None:
    root = _tree(tmp_path)
    _write(root, {name: source})
    (root / name).parent.joinpath("__init__.py").touch()
    violations = upward_imports(root)
    assert [(v.path, v.line, v.imported) for v in violations] == [(name, line, imported)], violations
    assert "upward" in str(violations[0])


def test_checker_refuses_a_relative_import_above_the_top(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _write(root, {"agents/sub/__init__.py": "", "agents/sub/deep.py": "from ... import skill\n"})
    with pytest.raises(ValueError, match="beyond the top-level package"):
        upward_imports(root)


def test_checker_resolves_relative_imports(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _write(root, {"agents/sub/__init__.py": "", "agents/sub/deep.py": "from .. import heuristics\nfrom ..x import y\n"})
    assert imports_of((root / "agents/sub/deep.py").read_text(), "agents.sub.deep", False) == [
        (1, "agents"),
        (1, "agents.heuristics"),
        (2, "agents.x"),
    ]
    assert imports_of("from . import engine\n", "agurk_env", True) == [(1, "agurk_env"), (1, "agurk_env.engine")]
    assert imports_of("from .b import c\n", "agurk.bench.env", False) == [(1, "agurk.bench.b")]


def test_checker_flags_same_rank_siblings(tmp_path: Path) -> None:
    _write(
        tmp_path, {"a/__init__.py": "import b.x\n", "b/__init__.py": "", "b/x.py": "import a\n", "c/__init__.py": ""}
    )
    violations = upward_imports(tmp_path, {"a": 0, "b": 0, "c": 1})
    assert sorted((v.importer, v.imported) for v in violations) == [("a", "b.x"), ("b.x", "a")]
    assert "sideways" in str(violations[0])


def test_checker_flags_application_modules_in_the_game(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _write(root, {"agurk_env/engine.py": "import numpy\n", "agurk_env/records.py": "import json\n"})
    assert application_modules(root) == []
    _write(
        root,
        {
            "agurk_env/play.py": "",
            "agurk_env/bench/__init__.py": "",
            "agurk_env/cli_tools.py": "",
            "agurk_env/tools.py": "def main():\n    import argparse\n",
        },
    )
    assert application_modules(root) == [
        "agurk_env/bench",
        "agurk_env/bench/__init__.py",
        "agurk_env/cli_tools.py",
        "agurk_env/play.py",
        "agurk_env/tools.py:2 imports argparse",
    ]


@pytest.mark.parametrize(
    ("files", "cycles"),
    [
        ({"agents/a.py": "from agents import b\n", "agents/b.py": "import numpy\n"}, []),
        (
            {"agents/a.py": "from agents import b\n", "agents/b.py": "def f():\n    from agents.a import x\n"},
            [["a", "b"]],
        ),
        (
            {
                "skill/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from skill.c import C\n",
                "skill/b.py": "from . import a\n",
                "skill/c.py": "import skill.b\n",
            },
            [["a", "b", "c"]],
        ),
        ({"agents/a.py": "from agents import heuristics\n", "agents/heuristics.py": "from agents import X\n"}, []),
        ({"agents/__init__.py": "from agents.a import x\n", "agents/a.py": "from agents import X\n"}, [["", "a"]]),
        (
            {
                "agents/a.py": "import agents.b\n",
                "agents/b.py": "import importlib\ndef f():\n    return importlib.import_module('.a', 'agents')\n",
            },
            [["a", "b"]],
        ),
        ({"agents/a.py": "import skill.x\n", "skill/x.py": "import agents.a\n"}, []),  # across packages: layering
    ],
)
def test_cycle_finder(tmp_path: Path, files: dict[str, str], cycles: list[list[str]]) -> None:
    root = _tree(tmp_path)
    _write(root, files)
    top = next(iter(files)).split("/")[0]
    found = import_cycles(import_graph(root))
    assert found == [sorted(f"{top}.{m}" if m else top for m in cycle) for cycle in cycles]


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method of the five packages, with its file."""
    found = []
    for package in RANK:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.append((path.relative_to(ROOT).as_posix(), node))
    return found


def test_the_library_keeps_its_size_budgets() -> None:
    """The command line stays thin (<= 2,500 lines), <= 3 functions over 80 lines, <= 150 ``Any`` in signatures."""
    cli = sum(len(path.read_text().splitlines()) for path in (ROOT / "agurk" / "cli").glob("*.py"))
    assert cli <= 2500, f"agurk/cli/ has {cli} lines: move the work into the library"
    functions = _functions()
    long = [
        f"{where}:{f.name} ({f.end_lineno - f.lineno + 1})" for where, f in functions if f.end_lineno - f.lineno >= 80
    ]
    assert len(long) <= 3, long

    def annotations(f: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
        a = f.args
        args = [
            *a.posonlyargs,
            *a.args,
            *a.kwonlyargs,
            *([a.vararg] if a.vararg else []),
            *([a.kwarg] if a.kwarg else []),
        ]
        return [x.annotation for x in args if x.annotation is not None] + ([f.returns] if f.returns else [])

    anys = sum("Any" in ast.unparse(x) for _, f in functions for x in annotations(f))
    assert anys <= 150, f"{anys} annotations in signatures name Any"
