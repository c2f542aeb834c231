"""constraints.txt: the one locked dependency set the dev venv, the layer and the image share.

A pin that no longer satisfies pyproject.toml, or an import nobody declared, installs fine on
the machine where it was written and fails in Lambda or on a colleague's fresh checkout.
"""

from __future__ import annotations

import ast
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "layers" / "papersift" / "python" / "papersift"
FUNCTIONS = REPO / "functions"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt holds an unpinned line: {line!r}"
            pins[canonical(name)] = version.strip()
    return pins


def project_requirements() -> Iterator[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    yield from map(Requirement, project["dependencies"])
    for extra in project["optional-dependencies"].values():
        yield from map(Requirement, extra)
    for requirements in (REPO / "layers" / "requirements.txt", FUNCTIONS / "image-requirements.txt"):
        for line in requirements.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                yield Requirement(line)


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    pins = locked_versions()
    for requirement in project_requirements():
        name = canonical(requirement.name)
        assert name in pins, f"{requirement} is declared but not in constraints.txt: run scripts/lock_dependencies.sh"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {name}=={pins[name]}, outside {requirement}: run scripts/lock_dependencies.sh"
        )


def test_the_dev_venv_runs_the_locked_versions() -> None:
    """bootstrap installs with -c constraints.txt, so the tests run what the layer ships."""
    pins = locked_versions()
    drift = {
        name: (dist.version, pins[name])
        for dist in metadata.distributions()
        if (name := canonical(dist.metadata["Name"])) in pins and dist.version != pins[name]
    }
    assert not drift, f"installed vs locked: {drift}; rerun scripts/bootstrap.sh"


def runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (stubs the runtime never imports)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                yield child
                yield from runtime_nodes(child)
            continue
        yield node
        yield from runtime_nodes(node)


def imported_top_level_modules(root: Path) -> set[str]:
    names: set[str] = set()
    for path in root.rglob("*.py"):
        for node in runtime_nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def test_every_third_party_import_of_the_lambda_code_is_a_runtime_dependency() -> None:
    """What the core or a handler imports must be in [project].dependencies (and so in the layer or
    the image), or the export extra's (pyarrow: papersift.parquet, reached only by the export
    function, in the image; tests/infra/test_layer_build.py keeps the zip functions off it)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {canonical(r.name) for r in map(Requirement, [*project["dependencies"],
                                                                *project["optional-dependencies"]["export"]])}
    providers = metadata.packages_distributions()
    # ours: the core package, handler-local modules, and what the runtime itself provides
    local = {"papersift", "papersift_functions", "app"} | {p.stem for p in FUNCTIONS.rglob("*.py")}
    undeclared = {}
    for module in imported_top_level_modules(CORE) | imported_top_level_modules(FUNCTIONS):
        if module in sys.stdlib_module_names or module in local:
            continue
        distributions = {canonical(d) for d in providers.get(module, [])}
        assert distributions, f"{module} is imported but no installed distribution provides it"
        if not distributions & declared:
            undeclared[module] = sorted(distributions)
    assert not undeclared, f"imported by Lambda code but not declared in pyproject.toml: {undeclared}"


def pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
    except OSError:
        return False
    return True


@pytest.mark.skipif(shutil.which("uv", path=str(REPO / ".venv" / "bin")) is None, reason="uv is not in .venv")
def test_constraints_are_what_pyproject_resolves_to() -> None:
    """A dependency edited in pyproject.toml without relocking fails here, on CI's clean clone."""
    if not pypi_reachable():
        pytest.skip("PyPI is not reachable: the lock cannot be re-resolved here")
    check = subprocess.run(["bash", "scripts/lock_dependencies.sh", "--check"], cwd=REPO,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_deployed_image_runs_the_python_the_image_tests_run() -> None:
    """The image tests build on a debootstrap Debian (scripts/build_image.sh); the deployed image
    builds on the Dockerfile's default base. Both must be the same Debian release, whose python3
    (bookworm: 3.11) is also the Python constraints.txt is resolved for."""
    dockerfile = (REPO / "functions" / "Dockerfile").read_text()
    base = re.search(r"^ARG BASE_IMAGE=(\S+)$", dockerfile, re.M)
    suite = re.search(r"^SUITE=(\w+)$", (REPO / "scripts" / "build_image.sh").read_text(), re.M)
    assert base and suite
    assert re.fullmatch(rf"\S+/debian:{suite.group(1)}(-slim)?", base.group(1)), (base.group(1), suite.group(1))
    debian_python = {"bookworm": "3.11", "trixie": "3.13"}[suite.group(1)]
    assert f"--python-version {debian_python}" in (REPO / "scripts" / "lock_dependencies.sh").read_text()
