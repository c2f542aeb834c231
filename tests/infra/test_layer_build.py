"""The dependency layer: what goes into it, how big it may get, and when it is rebuilt."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024


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


def test_layer_requirements_match_the_project_dependencies() -> None:
    """A dependency added to pyproject.toml but not to the layer imports fine locally and fails in Lambda."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    layer = (REPO / "layers" / "requirements.txt").read_text().splitlines()
    assert requirement_names(layer) == requirement_names(project)


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
