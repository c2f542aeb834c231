"""A pathological page fails alone: the extract step reads pages in a worker process, so a page past
its deadline, past its memory or crashing the library ends failed with that reason while the
rest of the document completes; a Lambda running short of time hands the rest to a retry.

The misbehaving page is a patched reader, which only a forked worker inherits: each case runs in
a fresh interpreter of its own (one thread, as a Lambda invocation), whatever threads the test
process has."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pdf_factory import numbered_pdf

import papersift
from papersift.errors import ContinueBatchError
from papersift.settings import Settings
from papersift.steps.contracts import DocumentRef, document_id
from papersift.steps.extract import extract_batch
from papersift.steps.plan import plan_document
from papersift.storage import LocalDirStore
from papersift.workfiles import page_key

TESTS = Path(__file__).resolve().parents[1]
#: the papersift under test (a worktree's, not whichever one the venv has installed)
CORE = Path(papersift.__file__).resolve().parents[1]

SCENARIO = """
import ctypes, json, sys, time
from pathlib import Path
from papersift.formats.pdf import PdfPages
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.steps.contracts import DocumentRef
from papersift.storage import LocalDirStore

how = sys.argv[1]
real = PdfPages.page

def page(self, number):
    if number == 2:
        if how == "hang":
            time.sleep(60)
        elif how == "memory":
            hog = [bytearray(64 * 1024 * 1024) for _ in range(64)]
        elif how == "crash":
            ctypes.string_at(0)
        elif how == "pdfium-crash" and self.handle.pdfium is not None:  # only pdfium falls on the page
            ctypes.string_at(0)
    return real(self, number)

PdfPages.page = page
store = LocalDirStore(Path(sys.argv[2]))
ref = DocumentRef(doc_id="d1", bucket="local", key="incoming/report.pdf", source_name="report.pdf")
report = process_document(store, ref, Settings(page_seconds=1, unit_memory_mb=200, ocr_mode="off"))
text = store.get("results/d1/text.txt").decode()
print(json.dumps({"pages": [[p.status, p.reason, p.signals] for p in report.pages], "status": report.status,
                  "reason": report.reason, "page 4 read": "page number 4" in text}))
"""


def run_scenario(tmp_path: Path, how: str) -> dict[str, object]:
    store = tmp_path / "bucket"
    LocalDirStore(store).put("incoming/report.pdf", numbered_pdf(4))
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), str(CORE)]), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SCENARIO), how, str(store)], capture_output=True,
                          text=True, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# a page a limit stopped leaves the document limit_exceeded (raise the limit), a crash needs_review
@pytest.mark.parametrize(("how", "reason", "code", "status", "summary"), [
    ("hang", "page 2 took longer than 1 s", "deadline_exceeded", "limit_exceeded", "1 of 4 page(s) stopped by a limit"),
    ("memory", "page 2 could not be read: needed more than the 200 MB", "memory_limit", "limit_exceeded",
     "1 of 4 page(s) stopped by a limit"),
    ("crash", "page 2 could not be read: the engine crashed (SIGSEGV)", "engine_crashed", "needs_review",
     "1 page(s) failed of 4"),
])
def test_a_pathological_page_fails_alone_and_the_rest_of_the_document_completes(
        tmp_path: Path, how: str, reason: str, code: str, status: str, summary: str) -> None:
    result = run_scenario(tmp_path, how)
    pages = result["pages"]
    assert isinstance(pages, list)
    assert [status for status, _, _ in pages] == ["clean", "failed", "clean", "clean"]
    _, failed_reason, signals = pages[1]
    assert failed_reason.startswith(reason) and signals == [code]
    assert result["status"] == status and summary in str(result["reason"])
    assert result["page 4 read"] is True


def test_a_page_that_crashes_pdfium_is_read_by_the_other_engines_and_says_so(tmp_path: Path) -> None:
    """pdfium takes its worker down on page 2 (SIGSEGV); pypdf, in a fresh worker, reads the page:
    it is recovered, the crash named in its signals, errors and reason; the document is trusted."""
    result = run_scenario(tmp_path, "pdfium-crash")
    pages = result["pages"]
    assert isinstance(pages, list)
    assert [status for status, _, _ in pages] == ["clean", "recovered", "clean", "clean"]
    _, reason, signals = pages[1]
    assert "engine_crashed" in signals and "pdfium crashed on page 2" in reason and "read without pdfium" in reason
    assert result["status"] == "partially_recovered" and result["page 4 read"] is True


def test_a_batch_short_of_time_writes_what_it_read_and_leaves_the_rest_to_its_retry(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "bucket")
    key = "incoming/report.pdf"
    store.put(key, numbered_pdf(5))
    ref = DocumentRef(doc_id=document_id("local", key), bucket="local", key=key, source_name="report.pdf")
    settings = Settings(page_seconds=10, ocr_mode="off")
    (batch,) = plan_document(store, ref, settings).batches
    clock = iter([100.0, 100.0, 12.0])  # seconds left after pages 1, 2, 3
    with pytest.raises(ContinueBatchError, match="rest \\(from page 4\\)"):
        extract_batch(store, batch, settings, time_left=lambda: next(clock))
    assert [store.exists(page_key(ref.doc_id, n)) for n in range(1, 6)] == [True, True, True, False, False]
    assert extract_batch(store, batch, settings, time_left=lambda: 500.0).pages == 2
    assert all(store.exists(page_key(ref.doc_id, n)) for n in range(1, 6))
