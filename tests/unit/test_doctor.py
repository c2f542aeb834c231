"""`papersift doctor` through the real command: what a newcomer sees when a tool is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_doctor(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-c", "import sys; from papersift_cli.main import main; sys.exit(main())",
                           "doctor", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=False)


def test_doctor_without_tesseract_on_path_exits_1_and_names_the_apt_package(tmp_path: Path) -> None:
    proc = run_doctor("--out", str(tmp_path), path=str(tmp_path))  # an empty PATH: no tool at all
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL tesseract: missing: apt install tesseract-ocr" in proc.stdout
    assert "apt install p7zip-full" in proc.stdout and "apt install antiword" in proc.stdout
    assert "GiB free in" in proc.stdout


def test_doctor_with_ocr_off_does_not_need_tesseract(tmp_path: Path) -> None:
    config = tmp_path / "papersift.toml"
    config.write_text('ocr_mode = "off"\n')
    proc = run_doctor("--config", str(config), "--out", str(tmp_path), path=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARN tesseract: missing: apt install tesseract-ocr" in proc.stdout


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs tesseract")
def test_doctor_names_the_language_package_of_a_configured_language_tesseract_lacks(tmp_path: Path) -> None:
    config = tmp_path / "papersift.toml"
    config.write_text('ocr_languages = ["eng", "zzz"]\n')
    proc = run_doctor("--config", str(config), "--out", str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL ocr_languages: missing zzz: apt install tesseract-ocr-zzz" in proc.stdout


def test_doctor_on_a_complete_machine_says_ok_for_python_and_tesseract(tmp_path: Path) -> None:
    proc = run_doctor("--out", str(tmp_path))
    assert "OK   python:" in proc.stdout and "OK   pypdf:" in proc.stdout
    if shutil.which("tesseract"):
        assert "OK   tesseract: languages" in proc.stdout


@pytest.mark.parametrize(("version", "verdict"), [("v20.20.2", "past its end of life"), ("v22.23.3", "(Node 22)")])
def test_doctor_judges_the_node_the_cdk_cli_runs_on(tmp_path: Path, version: str, verdict: str) -> None:
    """The project's own node (npm ci puts Node 22 in node_modules/.bin) before the machine's."""
    from papersift.settings import Settings
    from papersift_cli.doctor import checks

    node = tmp_path / "node_modules" / ".bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text(f"#!/bin/sh\necho {version}\n")
    node.chmod(0o755)
    (found,) = [check for check in checks(Settings(), tmp_path, tmp_path) if check.name == "node"]
    assert verdict in found.detail and found.ok == version.startswith("v22"), found
