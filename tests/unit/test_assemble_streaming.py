"""Assemble reads a document's pages one at a time (memory flat in page count, issue 20): the
pieces it builds page by page give what the whole join gave."""

from __future__ import annotations

import gc
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from papersift.content import PageContent
from papersift.report import PageReport, PageStatus
from papersift.report_page import _cut, preview_of
from papersift.steps.assemble import mark_structure, set_blocks, structure_blocks
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


def _long_pdf_pages(count: int) -> list[PageContent]:
    """Text-layer pages with a running head, a page number and paragraphs, each line boxed."""
    rng = random.Random(count)
    pages = []
    for number in range(1, count + 1):
        lines = ["Journal of Streamed Tests", f"Section {number}. On pages"]
        lines += [" ".join(rng.choice(["alpha", "beta", "gamma", "delta", "epsi-"]) for _ in range(12))
                  for _ in range(rng.randint(6, 14))]
        lines.append(str(number))
        boxes = [[0.1, 0.05 + i * 0.02, 0.9, 0.06 + i * 0.02] for i in range(len(lines))]
        heights = [9.0] + [14.0] + [10.0] * (len(lines) - 3) + [9.0]
        report = PageReport.without_text(number, PageStatus.CLEAN, "sound text layer", signals=[])
        pages.append(PageContent(number=number, text="\n".join(lines), report=report, line_boxes=boxes,
                                 line_heights=heights, hyphen_breaks=[["epsi", "lon"]] if number % 3 else []))
    return pages


def test_the_structure_pass_keeps_no_page_and_gives_each_page_its_blocks_of_the_whole_document() -> None:
    """A PDF's assemble reads every page once for the document-wide decisions (running heads,
    headings) and keeps only their lines: the pages it read are gone before the first is written,
    and the blocks it then gives page by page are those of the whole document at once."""
    whole = _long_pdf_pages(40)
    mark_structure(whole, [])
    assert any(b.role != "paragraph" for page in whole for b in page.blocks), "running heads or headings are found"
    read: list[weakref.ref[PageContent]] = []

    def pages_read_from_the_store() -> Iterator[PageContent]:
        for page in _long_pdf_pages(40):
            read.append(weakref.ref(page))
            yield page

    blocks = structure_blocks(pages_read_from_the_store(), [])
    gc.collect()
    assert len(read) == 40 and all(ref() is None for ref in read), "no page is held by the structure pass"
    for again, expected in zip(_long_pdf_pages(40), whole, strict=True):
        set_blocks(again, next(blocks))
        assert again.blocks == expected.blocks and again.to_markdown() == expected.to_markdown()
    assert next(blocks, None) is None
