"""Assemble reads a document's pages one at a time (memory flat in page count, issue 20): the
pieces it builds page by page give what the whole join gave."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from papersift.report_page import _cut, preview_of
from papersift.storage import LocalDirStore, Spool
from papersift_cli.leftovers import remove_stale


def test_the_preview_built_page_by_page_is_the_cut_of_the_whole_join() -> None:
    rng = random.Random(20)
    for _ in range(200):
        texts = [rng.choice(["", "  \n", "é" * rng.randint(1, 40), "word " * rng.randint(1, 9)])
                 for _ in range(rng.randint(0, 12))]
        limit = rng.randint(0, 120)
        whole = "\n\n".join(t for t in texts if t.strip())
        assert preview_of(texts, limit) == _cut(whole, limit), (texts, limit)


def test_a_spool_past_its_memory_is_stored_from_its_file_with_the_same_bytes(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    parts = [f"page {n}\f".encode() for n in range(1, 200)]
    with Spool(memory_bytes=64) as spool:
        for part in parts:
            spool.write(part)
        spool.put(store, "results/d/text.txt", "text/plain")
        spilled = Path(spool._file.name)
        assert spilled.exists(), "past its memory the spool is a file"
    assert not spilled.exists(), "the spool's file is removed when it is closed"
    assert store.get("results/d/text.txt") == b"".join(parts)


def test_a_small_spool_is_one_put_and_leaves_no_file(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    with Spool() as spool:
        spool.write("ünïcode text".encode())
        spool.put(store, "results/d/text.txt", "text/plain")
        assert spool._file is None
    assert store.get("results/d/text.txt") == "ünïcode text".encode()


def test_a_spool_past_its_memory_is_in_a_folder_named_with_its_pid_and_closing_removes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with Spool(memory_bytes=8) as spool:
        spool.write(b"more than eight bytes")
        folder = Path(spool._file.name).parent
        assert folder.parent == tmp_path
        assert re.fullmatch(rf"papersift-spool-{os.getpid()}-[a-z0-9_]{{8}}", folder.name)
    assert list(tmp_path.iterdir()) == [], "closed, the spool leaves nothing in the temporary folder"


def test_a_spool_killed_before_closing_leaves_a_folder_the_next_runs_cleanup_removes(tmp_path: Path) -> None:
    """kill -9 of the command while it assembles (`papersift run`, an `extract` without lanes): its
    spool is a papersift-spool-<dead pid>-<random> folder, which the next run's remove_stale removes."""
    spooling = ("import os, signal; from papersift.storage import Spool\n"
                "spool = Spool(memory_bytes=8); spool.write(b'more than eight bytes')\n"
                "os.kill(os.getpid(), signal.SIGKILL)\n")
    child = subprocess.Popen([sys.executable, "-c", spooling], env={**os.environ, "TMPDIR": str(tmp_path)})
    assert child.wait(timeout=60) == -signal.SIGKILL
    (left,) = tmp_path.iterdir()
    assert re.fullmatch(rf"papersift-spool-{child.pid}-[a-z0-9_]{{8}}", left.name) and left.is_dir()
    assert len(list(left.iterdir())) == 1, "the spool's file is inside it"
    assert remove_stale(tmp_path) == [left] and not left.exists()
