"""Pictures inside office files, e-books and web pages: each format finds its units' pictures,
the document sets aside the small and repeated ones and caps the rest, and the OCR stage reads
them as it reads a PDF page's pictures (text after the unit's, ``hybrid``, each picture listed)."""

from __future__ import annotations

import io
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import docx
import pytest
from picture_office_factory import (
    SCAN_WORDS,
    epub_with_picture,
    html_with_data_uri,
    many_pictures_docx,
    odt_with_picture,
    pasted_scan_docx,
    scan_png,
    sheet_with_picture_xlsx,
    slide_with_picture_pptx,
    tiny_png,
)
from PIL import Image

from papersift.content import EmbeddedPicture, PageContent
from papersift.formats import extract_units
from papersift.formats._pictures import choose_pictures
from papersift.formats._units import text_unit
from papersift.ocr.pages import OcrEngines, OcrTask, read_page
from papersift.ocr.reading import OcrReading
from papersift.ocr.routing import PICTURES, engine_order
from papersift.rendering import RenderedPage
from papersift.settings import Settings
from papersift.sniff import sniff
from papersift.steps.contracts import DocumentRef, OcrPlanRequest, OcrRequest, StepError, document_id
from papersift.steps.extract import extract_batch
from papersift.steps.ocr import read_ocr_page
from papersift.steps.ocr_plan import plan_ocr
from papersift.steps.plan import plan_document
from papersift.storage import LocalDirStore
from papersift.workfiles import ocr_page_key, ocr_pictures_unbundled

SETTINGS = Settings()


def units_of(data: bytes, settings: Settings = SETTINGS) -> list[PageContent]:
    return extract_units(data, sniff(data), settings)


def statuses(unit: PageContent) -> list[str]:
    return [record.status for record in unit.report.pictures]


# -- each format finds its pictures ---------------------------------------------------------------


def test_a_pasted_scan_in_a_word_document_is_queued_for_ocr_with_its_part_name_and_size() -> None:
    (unit,) = units_of(pasted_scan_docx())
    (record,) = unit.report.pictures
    assert (record.name, record.status, record.width, record.height) == ("word/media/image1.png", "queued", 1100, 234)
    assert unit.ocr_scope == PICTURES and "1 embedded picture" in unit.ocr_reason
    assert [p.data for p in unit.embedded] == [scan_png()]


def test_a_picture_on_a_sheet_belongs_to_that_sheet_through_its_drawing() -> None:
    units = units_of(sheet_with_picture_xlsx())
    assert [statuses(u) for u in units] == [["queued"]]
    assert units[0].report.pictures[0].name.startswith("xl/media/")


def test_a_picture_on_a_slide_belongs_to_that_slide() -> None:
    first, second = units_of(slide_with_picture_pptx())
    assert [(r.name, r.status) for r in first.report.pictures] == [("ppt/media/image1.png", "queued")]
    assert (second.report.pictures, second.ocr_scope) == ([], "")


def test_an_odf_drawing_frame_and_an_epub_image_are_the_package_parts_they_name() -> None:
    (odt,) = units_of(odt_with_picture("Minutes of the meeting."))
    assert [(r.name, r.status) for r in odt.report.pictures] == [("Pictures/scan.png", "queued")]
    (chapter,) = units_of(epub_with_picture())
    assert [(r.name, r.status) for r in chapter.report.pictures] == [("OEBPS/images/scan.png", "queued")]


def test_an_html_data_uri_is_read_and_a_picture_by_url_is_never_fetched() -> None:
    (page,) = units_of(html_with_data_uri())
    assert [(r.name, r.status) for r in page.report.pictures] == [("data: URI 1 (image/png)", "queued")]
    assert [p.data for p in page.embedded] == [scan_png()]


def test_a_document_without_pictures_is_routed_as_before() -> None:
    document = docx.Document()
    document.add_paragraph("The orchard irrigation plan is attached.")
    out = io.BytesIO()
    document.save(out)
    (unit,) = units_of(out.getvalue())
    assert (unit.report.pictures, unit.embedded, unit.ocr_scope) == ([], [], "")


def test_the_page_json_never_carries_the_picture_bytes() -> None:
    (unit,) = units_of(pasted_scan_docx())
    written = unit.to_dict()
    assert "embedded" not in written and PageContent.from_dict(written).report.pictures[0].status == "queued"


# -- which pictures are read, once per document ----------------------------------------------------


def unit_with(number: int, pictures: Sequence[bytes], text: str = "Some words of the unit.") -> PageContent:
    unit = text_unit(number, text, "test", time.perf_counter())
    unit.embedded = [EmbeddedPicture(f"media/{number}-{n}.png", data) for n, data in enumerate(pictures, start=1)]
    return unit


def test_small_pictures_are_skipped_and_a_repeat_anywhere_in_the_document_is_read_once() -> None:
    units = choose_pictures([unit_with(1, [scan_png(), tiny_png(1)]), unit_with(2, [scan_png()])], SETTINGS)
    assert [statuses(u) for u in units] == [["queued", "skipped_small"], ["skipped_duplicate"]]
    assert "media/1-1.png" in units[1].report.pictures[0].reason, "the repeat names the picture it repeats"
    assert (units[0].ocr_scope, units[1].ocr_scope) == (PICTURES, "")


def test_pictures_beyond_max_pictures_per_document_are_listed_as_skipped_limit() -> None:
    scans = [scan_png([f"Line {n} of the scan."]) for n in range(3)]
    units = choose_pictures([unit_with(1, scans[:2]), unit_with(2, scans[2:])], Settings(max_pictures_per_document=1))
    assert [statuses(u) for u in units] == [["queued", "skipped_limit"], ["skipped_limit"]]
    assert len(units[0].embedded) == 1 and units[1].embedded == []


def test_a_vector_picture_is_listed_as_a_format_pillow_does_not_decode() -> None:
    (unit,) = choose_pictures([unit_with(1, [b"\x01\x00\x00\x00 EMF drawing bytes"])], SETTINGS)
    assert statuses(unit) == ["skipped_format"] and unit.ocr_scope == ""


def test_with_ocr_off_a_unit_of_only_pictures_needs_ocr_and_is_never_empty() -> None:
    (unit,) = units_of(pasted_scan_docx(), Settings(ocr_mode="off"))
    assert (unit.report.status, statuses(unit), unit.ocr_scope) == ("needs_ocr", ["not_read"], "")
    assert "OCR needed" in unit.report.reason


def test_ten_thousand_tiny_and_repeated_pictures_are_counted_quickly_and_one_is_queued() -> None:
    data = many_pictures_docx(tiny=5000, copies=4999)
    started = time.perf_counter()
    (unit,) = units_of(data)
    assert time.perf_counter() - started < 30
    listed = Counter(statuses(unit))
    every = listed + Counter(unit.report.pictures_not_listed)
    assert every == {"queued": 1, "skipped_small": 5000, "skipped_duplicate": 4999}
    assert len(unit.report.pictures) == 1 + 10 * SETTINGS.max_pictures_per_document, "the listing is bounded"
    assert len(unit.embedded) == 1


# -- the OCR stage reads them like a PDF page's pictures ------------------------------------------


def reader(texts: dict[int, tuple[str, float]]) -> OcrEngines:
    """Tesseract answering by the picture's width (each test picture has its own)."""

    def read(image: Image.Image, languages: Sequence[str]) -> OcrReading:
        text, confidence = texts.get(image.width, ("", 0.0))
        return OcrReading(engine="tesseract", text=text, confidence=confidence, words=len(text.split()), seconds=0.1)

    return OcrEngines(tesseract=read, textract=None)


def embedded_task(unit: PageContent) -> OcrTask:
    drawn = tuple(RenderedPage(number=index + 1, image=Image.open(io.BytesIO(p.data)).convert("L"), dpi=300.0,
                               renderer="pillow", capped=False)
                  for index, p in zip([i for i, r in enumerate(unit.report.pictures) if r.status == "queued"],
                                      unit.embedded, strict=True))
    return OcrTask(number=unit.number, picture=drawn[0], original=None, text_layer=unit, scope=PICTURES,
                   embedded=drawn, reason=unit.ocr_reason)


def test_the_text_of_a_picture_follows_the_unit_text_and_the_unit_says_hybrid() -> None:
    (unit,) = units_of(pasted_scan_docx(text="Dear committee,"))
    words = "Invoice number 4711 is due on Monday. Please pay the whole amount today."
    page = read_page(embedded_task(unit), engine_order("local-only"), reader({1100: (words, 0.93)}), languages=["eng"])
    assert page.text == f"Dear committee,\n\n{words}"
    assert (page.report.status, page.report.engine) == ("ocr", "ooxml:docx+tesseract")
    assert "hybrid" in page.report.signals and "empty" not in page.report.signals
    (record,) = page.report.pictures
    assert (record.status, record.engine, record.confidence, record.chars) == ("read", "tesseract", 0.93, len(words))


def test_a_unit_of_only_pictures_read_without_confidence_is_low_confidence_not_empty() -> None:
    (unit,) = units_of(pasted_scan_docx())
    page = read_page(embedded_task(unit), engine_order("local-only"),
                     reader({1100: ("lnvoice nurnber 47l1 is dve", 0.41)}), languages=["eng"])
    assert page.report.status == "low_confidence" and page.text == "lnvoice nurnber 47l1 is dve"
    assert page.report.pictures[0].status == "no_text"


def test_words_of_a_real_reading_come_through_tesseract() -> None:
    pytest.importorskip("pytesseract", reason="the real engine")
    from papersift.steps.ocr import default_engines

    engines = default_engines(None, page_seconds=60)
    if engines.tesseract is None:
        pytest.skip("tesseract is not installed")
    (unit,) = units_of(pasted_scan_docx())
    page = read_page(embedded_task(unit), engine_order("local-only"), engines, languages=["eng"])
    assert all(word in page.text for word in SCAN_WORDS), page.text


# -- the workflow's steps over a store ------------------------------------------------------------


def test_extract_writes_the_units_pictures_as_its_ocr_input_and_plan_ocr_lists_it(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path)
    key = "incoming/scan.docx"
    with_text = "Dear committee,"
    store.put(key, pasted_scan_docx(text=with_text))
    document = DocumentRef(doc_id=document_id("local", key), bucket="local", key=key, source_name="scan.docx")
    plan = plan_document(store, document, SETTINGS)
    (batch,) = plan.batches
    assert extract_batch(store, batch, SETTINGS).needs_ocr
    ocr = plan_ocr(store, OcrPlanRequest(**document.ref.model_dump(), plan=plan), SETTINGS)
    (item,) = ocr.items
    assert (item.page, item.input_key.endswith("/ocr/inputs/00001.pictures.zip")) == (1, True)
    assert ocr_pictures_unbundled(store.get(item.input_key)) == [scan_png()]
    failed = OcrRequest(**item.model_dump(), error=StepError.model_validate(
        {"Error": "MemoryError", "Cause": '{"errorMessage": "out of memory"}'}))
    assert read_ocr_page(store, failed, SETTINGS, reader({})).status == "failed"
    page = json.loads(store.get(ocr_page_key(document.doc_id, 1)))["page"]
    assert page["text"] == with_text, "the unit's own text is kept"
    assert [p["status"] for p in page["report"]["pictures"]] == ["failed"]
