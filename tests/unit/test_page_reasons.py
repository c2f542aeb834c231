"""A page's signals and reason describe the state it ended in (issue 22): a trusted page carries
no signal named after an untrusted status, and no reason says the opposite of the status, for
every path a page can take through the whole pipeline (text layer, a later engine, OCR of the
whole page or of its pictures, the rendering check, OCR off)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pdf_factory import (
    SCANNED_PROSE,
    annex_pdf,
    byte_swapped_map_pdf,
    invisible_layer_pdf,
    native_and_scanned_pdf,
    subset_truetype_without_map_pdf,
    text_pdf,
)
from test_ocr_pages import GOOD, FakeEngine, engines, reading

from papersift.ocr.reading import TESSERACT
from papersift.pipeline import process_document
from papersift.report import PageReport, PageStatus
from papersift.settings import Settings
from papersift.steps.contracts import DocumentRef, document_id
from papersift.storage import LocalDirStore

TRUSTED = frozenset({PageStatus.CLEAN, PageStatus.RECOVERED, PageStatus.OCR})
UNTRUSTED = frozenset(PageStatus) - TRUSTED

#: phrases a reason must not hold beside each status: each says the opposite of that status
CONTRADICTIONS = {
    PageStatus.CLEAN: ("cannot be used", "could not read", "OCR needed", "doubtful", "no engine did better"),
    PageStatus.RECOVERED: ("cannot be used", "could not read", "OCR needed", "doubtful", "no engine did better"),
    PageStatus.OCR: ("text layer looks sound", "could not read", "OCR needed"),
    PageStatus.LOW_CONFIDENCE: ("looks sound", "read the same text", "the text layer stands"),
    PageStatus.NEEDS_OCR: ("looks sound", "recovered the text", "read the page:"),
}
#: a sound text layer whose pictures OCR read (signal hybrid): the layer is sound, and kept
HYBRID_CONTRADICTIONS = ("cannot be used", "could not read", "OCR needed", "doubtful")

#: a page of figures: sound, trusted, with few words to judge it by
FIGURES = ["Revenue Cost Margin Total", *(f"{n},{n * 7 % 1000:03d}.{n % 10} {n * 13 % 97}% {n * 31 % 999}.{n % 89:02d}"
                                         for n in range(11, 51))]
MISREAD = [line.replace("e", "c").replace("h", "b").replace("o", "0") for line in SCANNED_PROSE]


def _pages(tmp_path: Path, name: str, data: bytes, answer: str = GOOD, confidence: float = 0.93,
           ocr_mode: str = Settings().ocr_mode) -> list[PageReport]:
    """The pages of the document through the whole pipeline, OCR answering ``answer``."""
    store = LocalDirStore(tmp_path / "store")
    key = f"incoming/{name}"
    store.put(key, data)
    document = DocumentRef(doc_id=document_id("local", key), bucket="local", key=key, source_name=name)
    ocr = FakeEngine(reading(TESSERACT, answer, confidence=confidence))
    return process_document(store, document, Settings(ocr_mode=ocr_mode), engines=engines(ocr)).pages


CASES: dict[str, tuple[bytes, dict[str, Any], list[str]]] = {
    "clean text layer": (text_pdf(["A plain page of ordinary English words that any reader would trust."]), {},
                         ["clean"]),
    "table of figures": (text_pdf([FIGURES]), {}, ["clean"]),
    "recovered by a later reading": (byte_swapped_map_pdf(), {}, ["recovered"]),
    "scan read by OCR": (native_and_scanned_pdf(), {}, ["clean", "ocr"]),
    "scan read with low confidence": (native_and_scanned_pdf(), {"confidence": 0.4}, ["clean", "low_confidence"]),
    "scan with OCR off": (native_and_scanned_pdf(), {"ocr_mode": "off"}, ["clean", "needs_ocr"]),
    "picture pasted into a native page": (annex_pdf(), {}, ["ocr"]),
    "poor invisible OCR layer read again": (invisible_layer_pdf(MISREAD), {}, ["ocr"]),
    "uncertain layer the rendering confirms": (subset_truetype_without_map_pdf("Phone", b"Phone"),
                                               {"answer": "Phone"}, ["clean"]),
    "uncertain layer the rendering contradicts": (subset_truetype_without_map_pdf(), {"answer": "Phone"}, ["ocr"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_pages_signals_and_reason_agree_with_its_status(tmp_path: Path, case: str) -> None:
    data, options, expected = CASES[case]
    pages = _pages(tmp_path, f"{case.replace(' ', '-')}.pdf", data, **options)
    assert [page.status for page in pages] == expected, [(p.status, p.reason) for p in pages]
    for page in pages:
        status = PageStatus(page.status)
        if status in TRUSTED:
            assert UNTRUSTED.isdisjoint(page.signals), (page.status, page.signals)
        whole_page_ocr = status is PageStatus.OCR and "hybrid" not in page.signals
        phrases = CONTRADICTIONS.get(status, ()) if "hybrid" not in page.signals else HYBRID_CONTRADICTIONS
        said = [phrase for phrase in phrases if phrase.lower() in page.reason.lower()]
        assert not said, (page.status, page.reason)
        if whole_page_ocr:
            assert page.reason.startswith(page.engine), page.reason  # the text came from OCR: it says so first


def test_a_trusted_page_of_figures_names_what_was_seen_never_a_status(tmp_path: Path) -> None:
    (page,) = _pages(tmp_path, "figures.pdf", text_pdf([FIGURES]))
    assert page.status == "clean" and "mostly_numbers" in page.signals
