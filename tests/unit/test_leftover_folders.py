"""The next run removes the temporary folders a killed run left, and only those."""

from __future__ import annotations

import ast
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from papersift.tempfolders import TEMP_KINDS, temp_prefix
from papersift_cli.leftovers import owner_gone, process_state, remove_own, remove_stale

REPO = Path(__file__).resolve().parents[2]
MAKERS = ("mkdtemp", "TemporaryDirectory")


def _gone_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _folder(parent: Path, kind: str, pid: int) -> Path:
    folder = parent / f"papersift-{kind}-{pid}-abcd_f12"
    folder.mkdir()
    (folder / "page.png").write_bytes(b"x")
    return folder


@pytest.mark.parametrize("kind", TEMP_KINDS)
def test_a_folder_of_every_kind_whose_maker_is_gone_is_removed(tmp_path: Path, kind: str) -> None:
    folder = _folder(tmp_path, kind, _gone_pid())
    assert remove_stale(tmp_path) == [folder]
    assert not folder.exists()


def test_a_folder_whose_maker_is_a_zombie_is_removed(tmp_path: Path) -> None:
    # where pid 1 reaps no orphans (a container's), a killed run's page workers stay zombies
    child = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 10
        while process_state(child.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process_state(child.pid) == "Z"
        folder = _folder(tmp_path, "unit", child.pid)
        assert owner_gone(child.pid, folder.stat().st_mtime)
        assert remove_stale(tmp_path) == [folder]
    finally:
        child.wait()


def test_a_live_makers_folders_and_folders_not_ours_are_kept(tmp_path: Path) -> None:
    live = _folder(tmp_path, "ocr", os.getpid())
    strange_kind = _folder(tmp_path, "cache", _gone_pid())
    strange_name = tmp_path / f"papersift-ocr-{_gone_pid()}-notrandom"
    strange_name.mkdir()
    assert remove_stale(tmp_path) == []
    assert live.exists() and strange_kind.exists() and strange_name.exists()


def test_a_run_removes_its_own_folders_of_every_kind(tmp_path: Path) -> None:
    made = [Path(tempfile.mkdtemp(prefix=temp_prefix(kind), dir=tmp_path)) for kind in TEMP_KINDS]
    other = _folder(tmp_path, "ocr", _gone_pid())
    remove_own(tmp_path)
    assert not any(folder.exists() for folder in made)
    assert other.exists()


def test_a_stopped_run_removes_the_folders_of_the_workers_it_killed(tmp_path: Path) -> None:
    """SIGTERM of `papersift run` mid-OCR: the page worker is SIGKILLed, and its Tesseract folder
    (papersift-ocr-<worker pid>-*) would stay until the next run."""
    killed, bystander = _gone_pid(), _gone_pid() + 1
    worker = _folder(tmp_path, "ocr", killed)
    other = _folder(tmp_path, "ocr", bystander)
    remove_own(tmp_path, killed=[killed])
    assert not worker.exists() and other.exists()


def test_every_temporary_folder_the_core_and_cli_make_is_named_by_its_maker() -> None:
    unnamed = []
    for source in [*(REPO / "layers/papersift/python/papersift").rglob("*.py"), *(REPO / "cli").rglob("*.py")]:
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MAKERS):
                continue
            prefix = next((kw.value for kw in node.keywords if kw.arg == "prefix"), None)
            named = isinstance(prefix, ast.Call) and getattr(prefix.func, "id", "") == "temp_prefix"
            if not named and not any(kw.arg == "dir" for kw in node.keywords):
                unnamed.append(f"{source.relative_to(REPO)}:{node.lineno}")
    assert unnamed == []
