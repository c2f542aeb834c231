"""The dependency layer: what goes into it, how big it may get, and when it is rebuilt."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest

from infra.deployment import API, FUNCTIONS

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "layers" / "papersift" / "python"
LAYER_REQUIREMENTS = REPO / "layers" / "requirements.txt"
IMAGE_REQUIREMENTS = REPO / "functions" / "image-requirements.txt"
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024
#: the formats registry's "papersift.formats.x:function" entries: imports by name
REGISTRY_ENTRY = re.compile(r"(papersift(?:\.\w+)+):\w+")
#: image packages a function uses other than by an import statement, and the source that uses them
USED_WITHOUT_IMPORT = {
    "patool": ("papersift/archives/tools.py", "import sys, patoolib"),  # a separate process (GPL-3.0)
    "pyspellchecker": ("papersift/lexicon.py", 'resources.files("spellchecker")'),  # word lists, at image build
}


def requirement_names(lines: list[str]) -> set[str]:
    """PEP 503 names, extras and versions dropped."""
    names = set()
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(re.sub(r"[-_.]+", "-", re.split(r"[\[<>=!~; ]", line, maxsplit=1)[0]).lower())
    return names


@pytest.fixture
def build_layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_layers", REPO / "scripts" / "build_layers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layer_names() -> set[str]:
    return requirement_names(LAYER_REQUIREMENTS.read_text().splitlines())


def image_only_names() -> set[str]:
    return requirement_names(IMAGE_REQUIREMENTS.read_text().splitlines())


def module_imports(path: Path) -> Iterator[str]:
    """Every module an import statement anywhere in the file names (function-level and ``try``
    imports too, not those under ``if TYPE_CHECKING:``), relative ones resolved against the core
    package, and the modules the formats registry names."""
    package = ".".join(path.relative_to(CORE).parent.parts) if path.is_relative_to(CORE) else ""

    def walk(node: ast.AST) -> Iterator[str]:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                yield from walk(child)
            return
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(filter(None, [*parts, base]))
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and (match := REGISTRY_ENTRY.fullmatch(node.value))):
            yield match.group(1)
        for child in ast.iter_child_nodes(node):
            yield from walk(child)

    yield from walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))


def core_file(module: str) -> Path | None:
    base = CORE.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def third_party_imports(function_dirs: list[Path]) -> dict[str, str]:
    """Top-level third-party module -> the file that imports it, over everything the functions'
    code can load: their own modules and, transitively, the core modules they reach."""
    todo = [path for directory in function_dirs for path in sorted(directory.glob("*.py"))]
    local = {path.stem for path in todo}
    seen: set[Path] = set()
    found: dict[str, str] = {}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in module_imports(path):
            top = module.split(".")[0]
            if top == "papersift":
                parts = module.split(".")
                todo += [f for end in range(1, len(parts) + 1) if (f := core_file(".".join(parts[:end])))]
            elif top not in local and top not in sys.stdlib_module_names and top != "__future__":
                found.setdefault(top, str(path.relative_to(REPO)))
    return found


def distributions_of(modules: dict[str, str]) -> dict[str, str]:
    """PEP 503 distribution name -> the file importing it, by the installed distributions."""
    providers = metadata.packages_distributions()
    found = {}
    for module, where in modules.items():
        names = providers.get(module)
        assert names, f"{module} (imported in {where}) is provided by no installed distribution"
        found.update(dict.fromkeys(requirement_names(names), where))
    return found


def function_dirs(container: bool) -> list[Path]:
    return [REPO / "functions" / spec.name for spec in (*FUNCTIONS, API) if spec.container is container]


def test_layer_and_image_requirements_make_the_project_dependencies() -> None:
    """A dependency added to pyproject.toml but to neither list imports fine locally and fails in
    Lambda; the image installs both lists, so a package in both would be said twice."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    # the image has the export extra too (pyarrow: the export function, Settings.export_parquet)
    wanted = requirement_names([*project["dependencies"], *project["optional-dependencies"]["export"]])
    assert layer_names() | image_only_names() == wanted
    assert not layer_names() & image_only_names()


def test_the_layer_holds_exactly_what_the_zip_functions_import() -> None:
    """Everything the zip functions and the core modules they reach import is in the layer (or it
    fails in Lambda with ModuleNotFoundError), and nothing else is (a package only the container
    image uses is dead weight in every zip function's 250 MB)."""
    imported = distributions_of(third_party_imports(function_dirs(container=False)))
    missing = {name: where for name, where in imported.items() if name not in layer_names()}
    assert not missing, f"imported by zip-function code but not in layers/requirements.txt: {missing}"
    unused = layer_names() - imported.keys()
    assert not unused, f"in layers/requirements.txt but imported by no zip function: {sorted(unused)}"


def test_every_image_only_package_is_used_by_an_image_function() -> None:
    """functions/image-requirements.txt holds what the layer leaves out; each entry must be imported
    by an image function's code, or used in the named way (a separate process, a build step)."""
    imported = distributions_of(third_party_imports(function_dirs(container=True)))
    for name in image_only_names():
        if name in USED_WITHOUT_IMPORT:
            relative, usage = USED_WITHOUT_IMPORT[name]
            assert usage in (CORE / relative).read_text(), f"{name}: {usage!r} no longer in {relative}"
        else:
            assert name in imported, f"{name} is in functions/image-requirements.txt but no image function imports it"


def test_built_layers_fit_under_the_lambda_unzipped_limit() -> None:
    """Layers plus the largest function must stay under 250 MB unzipped, or the deploy is refused."""
    deps = REPO / "build" / "layers" / "deps" / "python"
    if not deps.is_dir() or not any(deps.iterdir()):
        pytest.skip("dependency layer not built (scripts/build_layers.py)")

    def size(path: Path) -> int:
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)

    functions = max(size(d) for d in (REPO / "functions").iterdir() if d.is_dir())
    total = size(deps) + size(REPO / "layers" / "papersift") + functions
    assert total < LAMBDA_UNZIPPED_LIMIT, f"{total / 1e6:.0f} MB"


def test_the_layer_is_rebuilt_only_when_the_requirements_change(
    build_layers: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cdk.json runs the build before every synth: a current stamp means no pip and no network."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("pypdf>=5.0\n")
    monkeypatch.setattr(build_layers, "REQUIREMENTS", requirements)
    monkeypatch.setattr(build_layers, "STAMP", tmp_path / "deps" / ".requirements.sha256")
    assert not build_layers.is_current()
    build_layers.STAMP.parent.mkdir()
    build_layers.STAMP.write_text(build_layers.fingerprint() + "\n")
    assert build_layers.is_current()
    requirements.write_text("pypdf>=5.0\nlxml>=5.0\n")
    assert not build_layers.is_current()


def test_pip_targets_the_lambda_runtime_without_docker(build_layers: ModuleType, tmp_path: Path) -> None:
    """Wheels only, for CPython 3.12 on manylinux aarch64 (the functions are arm64): never a local build
    for the wrong platform."""
    args = build_layers.pip_arguments(tmp_path)
    assert "--only-binary=:all:" in args
    assert args[args.index("--python-version") + 1] == "3.12"
    platforms = [args[i + 1] for i, arg in enumerate(args) if arg == "--platform"]
    assert platforms and all(p.endswith("_aarch64") and p.startswith("manylinux") for p in platforms)


def test_the_stack_reads_the_stamp_the_script_writes(build_layers: ModuleType) -> None:
    """The stack hashes the layer by the build stamp; both sides must name the same file."""
    pytest.importorskip("aws_cdk")
    from infra.stacks.pipeline_stack import DEPS_LAYER_DIR, LAYER_STAMP

    assert build_layers.STAMP == DEPS_LAYER_DIR / LAYER_STAMP


def test_the_core_layer_carries_current_compiled_word_lists() -> None:
    """The core layer is layers/papersift as it is on disk: its word lists must be built there
    (setup.py's build step and scripts/build_layers.py compile them), or every cold start fails."""
    from papersift import lexicon

    data = REPO / "layers" / "papersift" / "python" / "papersift" / "data"
    assert all((data / name).is_file() for name in lexicon.COMPILED_FILES)
    assert lexicon.is_current(data)
