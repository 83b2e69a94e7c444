"""The shape of ``shared/rules``: its modules' imports form a layered graph, read from the source.

The engine is split by rule family so that each rule is found in one module, and that only
stays true while the modules keep a direction: the rule families below, the engine's entry
points above them, the move generator (``legal``) and its users on top. Three checks, on the
source's syntax tree (every ``import`` statement, at module level or inside a function, so
that an import moved into a function cannot hide a cycle):

1. the import graph of the ``shared.rules`` modules has no cycle;
2. no module imports another one's private name (``from .engine import _frozen_reason``, or
   ``engine._frozen_reason`` through an imported module): what modules share is public;
3. nothing under ``shared/`` imports from ``tests``: the test suite's helpers (such as the
   scenario ``expect`` checker) serve only the tests;
4. no classic module imports a variant (``shared.rules.variants``): the classic modules ask
   the ruleset's hooks (``shared.rules.ruleset``) and each variant builds on them, so the
   arrows between the two run one way only. (The package face, ``__init__``, imports the
   variants so that they register.)

The last test runs the checks on a small tree with one fault of each kind, so a check
that silently stopped finding anything would fail too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
PACKAGE = "shared.rules"


@dataclass(frozen=True, slots=True)
class Use:
    """One module's use of another module of the package."""

    module: str
    """The using module, relative to the package (``"engine"``; ``"__init__"``)."""
    target: str
    """The module it imports from or reaches into."""
    names: tuple[str, ...]
    """The names it takes from ``target`` (empty for a plain module import)."""
    line: int


def _module_name(path: Path, root: Path) -> str:
    """The dotted module name of a file below ``root`` (``shared/rules/engine.py`` ->
    ``shared.rules.engine``; a package's ``__init__.py`` names the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` statement names."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts.pop()
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _python_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts)


@dataclass(frozen=True, slots=True)
class _Package:
    name: str
    modules: frozenset[str]
    """The dotted names of the package and of every module in it."""

    def local(self, absolute: str) -> str | None:
        """A module's name relative to the package, or ``None`` for a module outside it."""
        if absolute == self.name:
            return "__init__"
        if absolute in self.modules:
            return absolute[len(self.name) + 1 :]
        return None

    def reached(self, node: ast.expr, bound: dict[str, str]) -> str | None:
        """The package module that ``engine`` (an imported module) or ``shared.rules.engine``
        (a full dotted path) names in an expression, if any."""
        if isinstance(node, ast.Name):
            return bound.get(node.id)
        dotted: list[str] = []
        while isinstance(node, ast.Attribute):
            dotted.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        target = self.local(".".join([node.id, *reversed(dotted)]))
        return None if target == "__init__" else target  # ``shared.rules`` inside the path


def package_uses(root: Path, package: str = PACKAGE) -> list[Use]:
    """Every use of a ``package`` module by another one, from all import statements and from
    attribute access through an imported module (``engine._x``)."""
    files = _python_files(root.joinpath(*package.split(".")))
    pkg = _Package(package, frozenset(_module_name(p, root) for p in files))
    uses: list[Use] = []
    for path in files:
        name = _module_name(path, root)
        me = pkg.local(name) or name
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        bound: dict[str, str] = {}  # local name -> the package module it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = pkg.local(alias.name)
                    if target is not None:
                        uses.append(Use(me, target, (), node.lineno))
                        if alias.asname:
                            bound[alias.asname] = target
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node, name, path.name == "__init__.py")
                target = pkg.local(source)
                if target is None:
                    continue
                taken: list[str] = []
                for alias in node.names:
                    submodule = pkg.local(f"{source}.{alias.name}")
                    if submodule is not None:  # ``from . import engine``
                        uses.append(Use(me, submodule, (), node.lineno))
                        bound[alias.asname or alias.name] = submodule
                    else:
                        taken.append(alias.name)
                if taken:
                    uses.append(Use(me, target, tuple(taken), node.lineno))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                target = pkg.reached(node.value, bound)
                if target is not None:
                    uses.append(Use(me, target, (node.attr,), node.lineno))
    return [use for use in uses if use.target != use.module]


def import_cycle(uses: list[Use]) -> list[str]:
    """One cycle of the module graph as ``[a, b, ..., a]``, or ``[]`` when there is none."""
    graph: dict[str, set[str]] = {}
    for use in uses:
        graph.setdefault(use.module, set()).add(use.target)
        graph.setdefault(use.target, set())
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return []


def private_uses(uses: list[Use]) -> list[str]:
    """Every private name (leading underscore) one package module takes from another."""
    return [
        f"{use.module}:{use.line} uses {use.target}.{name}"
        for use in uses
        for name in use.names
        if name.startswith("_")
    ]


VARIANTS = "variants"


def classic_uses_of_variants(uses: list[Use]) -> list[str]:
    """Every use of a variant module by a classic one (any module outside ``variants`` but
    the package face, which imports them so that they register)."""
    return [
        f"{use.module}:{use.line} imports {use.target}"
        for use in uses
        if use.module != "__init__" and not _is_variant(use.module) and _is_variant(use.target)
    ]


def _is_variant(module: str) -> bool:
    return module == VARIANTS or module.startswith(VARIANTS + ".")


def imports_of_tests(root: Path) -> list[str]:
    """Every import of the ``tests`` package from a module under ``root/shared``."""
    found = []
    for path in _python_files(root / "shared"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                if name == "tests" or name.startswith("tests."):
                    found.append(f"{path.relative_to(root)}:{node.lineno} imports {name}")
    return found


def test_the_rules_modules_import_one_another_without_a_cycle() -> None:
    uses = package_uses(REPO_ROOT)
    assert len({use.module for use in uses}) > 10, "the checker found no imports to check"
    cycle = import_cycle(uses)
    assert not cycle, "import cycle in shared/rules: " + " -> ".join(cycle)


def test_no_rules_module_takes_a_private_name_from_another() -> None:
    assert private_uses(package_uses(REPO_ROOT)) == []


def test_no_classic_module_imports_a_variant() -> None:
    uses = package_uses(REPO_ROOT)
    assert any(_is_variant(use.module) for use in uses), "the checker found no variant"
    assert classic_uses_of_variants(uses) == []


def test_nothing_in_shared_imports_the_tests() -> None:
    assert imports_of_tests(REPO_ROOT) == []


def test_the_checks_find_each_kind_of_fault(tmp_path: Path) -> None:
    rules = tmp_path / "shared" / "rules"
    rules.mkdir(parents=True)
    (tmp_path / "shared" / "__init__.py").write_text("")
    (rules / "__init__.py").write_text("from .engine import apply\n")
    (rules / "engine.py").write_text(
        "def apply():\n    from .legal import listing  # hidden in a function\n    return listing\n"
    )
    (rules / "legal.py").write_text("from .engine import apply\n\ndef listing():\n    return 1\n")
    (rules / "view.py").write_text(
        "from . import engine\nfrom .engine import _frozen\n\nx = engine._reason\n"
    )
    (rules / "scenario.py").write_text(
        "def check():\n    from tests.shared.rules.expectations import check_expectations\n"
    )
    (rules / "variants").mkdir()
    (rules / "variants" / "__init__.py").write_text("from . import samba\n")
    (rules / "variants" / "samba.py").write_text("from ..engine import apply\n")
    (rules / "pile.py").write_text(
        "def plan():\n    from .variants.samba import apply  # a classic module reaching up\n"
    )
    uses = package_uses(tmp_path)
    assert import_cycle(uses) in (
        ["engine", "legal", "engine"],
        ["legal", "engine", "legal"],
    )
    assert private_uses(uses) == [
        "view:2 uses engine._frozen",
        "view:4 uses engine._reason",
    ]
    assert classic_uses_of_variants(uses) == ["pile:2 imports variants.samba"]
    assert imports_of_tests(tmp_path) == [
        "shared/rules/scenario.py:2 imports tests.shared.rules.expectations"
    ]
