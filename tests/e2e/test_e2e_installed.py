"""`pip install .` then `papersift run` outside a checkout: the handlers (functions/) and the
workflow (infra/) come from the installed package, not from the source tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _source_copy(into: Path) -> Path:
    """The checkout's files as a clean clone has them, so building leaves nothing in the checkout."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard", "-z"],
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, into / name)
    return into


def test_papersift_run_works_from_an_installed_wheel_in_another_directory(tmp_path: Path) -> None:
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    source = _source_copy(tmp_path / "source")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    # the dependencies are in this venv already (--no-deps); the build requirements come through pip
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)], check=True)
    (wheel,) = wheels.glob("papersift-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True)
    env = {**os.environ, "PYTHONPATH": str(target)}  # ahead of the checkout's editable install
    where = subprocess.run(
        [sys.executable, "-c", "import infra, papersift, papersift_functions, papersift_cli; "
         "print(infra.__file__, papersift.__file__, papersift_functions.__file__, papersift_cli.__file__)"],
        cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert all(path.startswith(str(target)) for path in where.stdout.split()), where.stdout
    (elsewhere / "aviso.txt").write_text("Aviso de licitação: abertura das propostas às 9h.\n", encoding="utf-8")
    run = subprocess.run([str(target / "bin" / "papersift"), "run", "aviso.txt", "--out", "out", "--flat", "--quiet"],
                         cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert (elsewhere / "out" / "aviso.txt.status").read_text().strip() == "ok"
    assert "abertura das propostas" in (elsewhere / "out" / "aviso.txt.txt").read_text(encoding="utf-8")
