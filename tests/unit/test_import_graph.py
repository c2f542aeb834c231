"""The core's modules, and the bench scripts, import one another without a cycle (issue 21).

A cycle hidden in a function-level import still ties two modules into one: neither can be read,
tested or loaded without the other, and which one finishes loading first depends on who imported
first. So the graph is read from the source with ``ast``, every ``import`` anywhere in a module:
at module level, inside functions and inside ``try`` blocks alike.

A dynamic import by name counts too: ``importlib.import_module("a.b")`` with a literal name, and
a ``"a.b:function"`` string (the registry form ``formats`` dispatches through) naming a module of
the graph; both load that module as surely as an ``import`` statement does.

Not counted: imports under ``if TYPE_CHECKING:``. They never execute, so they cannot make a module
half-loaded or order-dependent; they only let annotations name a type (and mypy would still see a
real cycle through them).

Edges: ``import a.b`` and ``from a import b`` (``b`` a module) point at ``a.b``; ``from a import
name`` (``name`` not a module) points at ``a``, a package meaning its ``__init__``. Python runs a
package's ``__init__`` before any of its submodules, so importing ``a.b`` from outside package
``a`` is an edge to ``a`` too; from inside ``a`` it is not (the importer's own package is already
loading: a package's ``__init__`` importing its own submodules is the ordinary layout).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "layers" / "papersift" / "python" / "papersift"
BENCH = REPO / "bench"
REGISTRY_ENTRY = re.compile(r"[A-Za-z_]\w*(\.\w+)*:\w+")


@dataclass(frozen=True)
class Edge:
    """One import statement: who imports whom, and where (for the failure message)."""

    source: str
    target: str
    line: int


def core_modules() -> dict[str, Path]:
    """Every module of the ``papersift`` package by dotted name; a package by its ``__init__``."""
    modules: dict[str, Path] = {}
    for path in sorted(CORE.rglob("*.py")):
        parts = path.relative_to(CORE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def bench_modules() -> dict[str, Path]:
    """The bench scripts: each imports the others by bare name, bench/ being on its sys.path."""
    return {path.stem: path for path in sorted(BENCH.glob("*.py"))}


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def executed_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import under ``node`` that can run: all of them but the ``if TYPE_CHECKING:`` body.
    A dynamic import by a literal name comes out as the ``import`` statement it amounts to."""
    if isinstance(node, ast.If) and is_type_checking(node.test):
        for child in node.orelse:
            yield from executed_imports(child)
        return
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
        return
    name = dynamic_import(node)
    if name is not None:
        yield ast.copy_location(ast.Import(names=[ast.alias(name=name)]), node)
        return
    for child in ast.iter_child_nodes(node):
        yield from executed_imports(child)


def dynamic_import(node: ast.AST) -> str | None:
    """The module ``importlib.import_module("a.b")`` or a ``"a.b:function"`` registry entry loads."""
    if (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and REGISTRY_ENTRY.fullmatch(node.value):
        return node.value.split(":")[0]
    return None


def resolve(module: str, path: Path, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> Iterator[str]:
    """The modules of ``known`` that one import statement loads, by the rules of the module docstring."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in known:
                yield alias.name
        return
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(package[: len(package) - node.level + 1])
        origin = f"{base}.{node.module}" if node.module else base
    else:
        origin = node.module or ""
    for alias in node.names:
        submodule = f"{origin}.{alias.name}"
        if submodule in known:
            yield submodule
        elif origin in known:
            yield origin


def import_edges(modules: dict[str, Path]) -> list[Edge]:
    edges: dict[Edge, None] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        own_packages = ancestors(module)
        for node in executed_imports(tree):
            for target in resolve(module, path, node, modules):
                loaded = [package for package in ancestors(target)
                          if package in modules and package not in own_packages]
                edges.update((Edge(module, each, node.lineno), None) for each in [*loaded, target] if each != module)
    return list(edges)


def ancestors(module: str) -> list[str]:
    """The packages Python loads before ``module``, outermost first: ``a``, ``a.b`` for ``a.b.c``."""
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def strongly_connected(nodes: list[str], edges: list[Edge]) -> list[list[str]]:
    """Tarjan's components of more than one module: each is one or more import cycles."""
    successors: dict[str, list[str]] = {node: [] for node in nodes}
    for edge in edges:
        successors[edge.source].append(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in successors[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in nodes:
        if node not in index:
            visit(node)
    return sorted(components)


def one_cycle(component: list[str], edges: list[Edge]) -> list[Edge]:
    """A shortest cycle through the component's first module, as the import statements that make it."""
    members = set(component)
    inside = [edge for edge in edges if edge.source in members and edge.target in members]
    start = component[0]
    came_by: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in inside:
                if edge.source != node:
                    continue
                if edge.target == start:
                    path = [edge]
                    while path[0].source != start:
                        path.insert(0, came_by[path[0].source])
                    return path
                if edge.target not in came_by:
                    came_by[edge.target] = edge
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"{component} is not a cycle")


def cycles_report(modules: dict[str, Path]) -> list[str]:
    edges = import_edges(modules)
    lines = []
    for component in strongly_connected(sorted(modules), edges):
        steps = ", ".join(f"{edge.source} -> {edge.target} ({modules[edge.source].name}:{edge.line})"
                          for edge in one_cycle(component, edges))
        lines.append(f"cycle among {', '.join(component)}: {steps}")
    return lines


def test_core_modules_import_one_another_without_a_cycle() -> None:
    assert cycles_report(core_modules()) == []


def test_bench_scripts_import_one_another_without_a_cycle() -> None:
    assert cycles_report(bench_modules()) == []


def test_bench_scripts_share_helpers_through_common_which_imports_no_script() -> None:
    modules = bench_modules()
    edges = import_edges(modules)
    assert [edge for edge in edges if edge.source == "common"] == []
    assert {edge.target for edge in edges} <= {"common"}, "a bench script imports another script, not common"


def test_a_cycle_hidden_in_a_function_level_import_is_found(tmp_path: Path) -> None:
    """The walk sees inside functions and skips TYPE_CHECKING blocks; without this the two tests
    above could pass by reading nothing."""
    (tmp_path / "low.py").write_text("def late():\n    from high import thing\n")
    (tmp_path / "high.py").write_text("import low\nthing = 1\n")
    (tmp_path / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import low\n")
    (tmp_path / "uses.py").write_text("import typed\n")
    modules = {path.stem: path for path in sorted(tmp_path.glob("*.py"))}
    assert cycles_report(modules) == ["cycle among high, low: high -> low (high.py:1), low -> high (low.py:2)"]


def test_relative_and_from_package_imports_resolve_to_the_module_they_load(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .. import helper\nfrom . import leaf\n")
    (package / "sub" / "leaf.py").write_text("from ..helper import x\nfrom pkg.sub import name\n")
    (package / "helper.py").write_text("import pkg.sub.leaf\n")
    modules = {"pkg": package / "__init__.py", "pkg.sub": package / "sub" / "__init__.py",
               "pkg.sub.leaf": package / "sub" / "leaf.py", "pkg.helper": package / "helper.py"}
    assert {(edge.source, edge.target) for edge in import_edges(modules)} == {
        ("pkg.sub", "pkg.helper"), ("pkg.sub", "pkg.sub.leaf"), ("pkg.sub.leaf", "pkg.helper"),
        ("pkg.sub.leaf", "pkg.sub"), ("pkg.helper", "pkg.sub"), ("pkg.helper", "pkg.sub.leaf")}


def test_a_module_loaded_by_name_is_an_edge(tmp_path: Path) -> None:
    """``formats`` dispatches through ``"module:function"`` strings and ``importlib``: a cycle
    through them is as real as one through an ``import`` statement."""
    (tmp_path / "dispatch.py").write_text('import importlib\nTABLE = {"x": "plugin:read"}\n'
                                          'def load():\n    return importlib.import_module("other")\n')
    (tmp_path / "plugin.py").write_text("from dispatch import TABLE\n")
    (tmp_path / "other.py").write_text("")
    modules = {path.stem: path for path in sorted(tmp_path.glob("*.py"))}
    assert {(edge.source, edge.target) for edge in import_edges(modules)} == {
        ("dispatch", "plugin"), ("dispatch", "other"), ("plugin", "dispatch")}
