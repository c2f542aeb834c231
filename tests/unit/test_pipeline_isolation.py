"""A pathological page fails alone: the extract step reads pages in a worker process, so a page past
its deadline, past its memory or crashing the library ends failed with that reason while the
rest of the document completes; a Lambda running short of time hands the rest to a retry."""

from __future__ import annotations

import ctypes
import time
from pathlib import Path

import pytest
from pdf_factory import numbered_pdf

from papersift.errors import ContinueBatchError
from papersift.formats.pdf import PdfPages
from papersift.pipeline import extract_batch, plan_document, process_document
from papersift.settings import Settings
from papersift.steps import DocumentRef, document_id
from papersift.storage import LocalDirStore
from papersift.workfiles import page_key


def document(tmp_path: Path, pages: int = 4) -> tuple[LocalDirStore, DocumentRef]:
    store = LocalDirStore(tmp_path / "bucket")
    key = "incoming/report.pdf"
    store.put(key, numbered_pdf(pages))
    return store, DocumentRef(doc_id=document_id("local", key), bucket="local", key=key, source_name="report.pdf")


def misbehave_on_page(monkeypatch: pytest.MonkeyPatch, number: int, how: str) -> None:
    """Page ``number`` hangs, eats memory or crashes the process (the worker inherits the patch)."""
    real = PdfPages.page

    def page(self: PdfPages, n: int):  # type: ignore[no-untyped-def]
        if n == number:
            if how == "hang":
                time.sleep(60)
            elif how == "memory":
                hog = [bytearray(64 * 1024 * 1024) for _ in range(64)]
                del hog
            elif how == "crash":
                ctypes.string_at(0)
        return real(self, n)

    monkeypatch.setattr(PdfPages, "page", page)


@pytest.mark.parametrize(("how", "reason", "code"), [
    ("hang", "page 2 took longer than 1 s", "deadline_exceeded"),
    ("memory", "page 2 could not be read: needed more than the 200 MB", "memory_limit"),
    ("crash", "page 2 could not be read: the engine crashed (SIGSEGV)", "engine_crashed"),
])
def test_a_pathological_page_fails_alone_and_the_rest_of_the_document_completes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, reason: str, code: str) -> None:
    store, ref = document(tmp_path)
    misbehave_on_page(monkeypatch, 2, how)
    started = time.monotonic()
    report = process_document(store, ref, Settings(page_seconds=1, unit_memory_mb=200, ocr_mode="off"))
    assert time.monotonic() - started < 30
    assert [p.status for p in report.pages] == ["clean", "failed", "clean", "clean"]
    failed = report.pages[1]
    assert failed.reason.startswith(reason) and failed.signals == [code]
    assert report.status == "needs_review" and "1 page(s) failed of 4" in report.reason
    assert "page number 4" in store.get(f"results/{ref.doc_id}/text.txt").decode()


def test_a_batch_short_of_time_writes_what_it_read_and_leaves_the_rest_to_its_retry(tmp_path: Path) -> None:
    store, ref = document(tmp_path, pages=5)
    settings = Settings(page_seconds=10, ocr_mode="off")
    (batch,) = plan_document(store, ref, settings).batches
    clock = iter([100.0, 100.0, 12.0])  # seconds left after pages 1, 2, 3
    with pytest.raises(ContinueBatchError, match="rest \\(from page 4\\)"):
        extract_batch(store, batch, settings, time_left=lambda: next(clock))
    assert [store.exists(page_key(ref.doc_id, n)) for n in range(1, 6)] == [True, True, True, False, False]
    assert extract_batch(store, batch, settings, time_left=lambda: 500.0).pages == 2
    assert all(store.exists(page_key(ref.doc_id, n)) for n in range(1, 6))
