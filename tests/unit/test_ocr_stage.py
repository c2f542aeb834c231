"""The OCR stage over a store: which pages it plans, what one page's step writes, and how a retried
or failed page ends; then whole documents through `papersift extract`'s path with the real
Tesseract on small scans built in code."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from pdf_factory import native_and_scanned_pdf, sound_page_with_unmapped_word_pdf, subset_truetype_without_map_pdf
from PIL import Image
from scan_factory import image_bytes, shared_strip_tiff, text_image
from test_ocr_pages import GOOD, FakeEngine, engines, reading

from papersift.errors import OcrThrottledError
from papersift.ocr.reading import TESSERACT, TEXTRACT
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.steps.contracts import DocumentRef, OcrPlanRequest, OcrRequest, StepError, document_id
from papersift.steps.extract import extract_batch
from papersift.steps.ocr import default_engines, read_ocr_page
from papersift.steps.ocr_plan import plan_ocr
from papersift.steps.plan import plan_document
from papersift.storage import LocalDirStore
from papersift.workfiles import ocr_page_key

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")


def drop(store: LocalDirStore, tmp_path: Path, name: str, data: bytes) -> DocumentRef:
    source = tmp_path / name
    source.write_bytes(data)
    key = f"incoming/{name}"
    store.upload_file(source, key)
    return DocumentRef(doc_id=document_id("local", key), bucket="local", key=key, source_name=name)


def planned_after_text_layer(store: LocalDirStore, document: DocumentRef, settings: Settings) -> OcrRequest:
    plan = plan_document(store, document, settings)
    for batch in plan.batches:
        extract_batch(store, batch, settings)
    ocr = plan_ocr(store, OcrPlanRequest(**document.ref.model_dump(), plan=plan), settings)
    assert [item.page for item in ocr.items] == [2]
    return OcrRequest(**ocr.items[0].model_dump())


def test_only_the_pages_the_text_layer_sends_are_planned_each_with_its_one_page_pdf(tmp_path: Path) -> None:
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    request = planned_after_text_layer(store, drop(store, tmp_path, "mixed.pdf", native_and_scanned_pdf()), settings)
    assert request.input_key.endswith("/ocr/inputs/00002.pdf")
    cut = store.get(request.input_key)
    assert cut.startswith(b"%PDF") and len(cut) < len(native_and_scanned_pdf())


def test_a_picture_is_planned_frame_by_frame_straight_from_the_plan(tmp_path: Path) -> None:
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    frames = [text_image(), text_image(["Second frame of the picture."])]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    document = drop(store, tmp_path, "scan.tif", out.getvalue())
    plan = plan_document(store, document, settings)
    assert (plan.status, plan.page_count, plan.batches) == ("picture", 2, [])
    ocr = plan_ocr(store, OcrPlanRequest(**document.ref.model_dump(), plan=plan), settings)
    assert [(item.page, item.input_key) for item in ocr.items] == [(1, document.key), (2, document.key)]


def _letter(lines: list[str] | None = None) -> Image.Image:
    page = Image.new("L", (1700, 2200), 255)
    if lines:
        page.paste(text_image(lines), (100, 100))
    return page


def test_blank_and_repeated_frames_of_a_stack_are_planned_for_no_ocr_step(tmp_path: Path) -> None:
    """A scanned stack: 12 frames, of which frames 3 and 9 hold text, 7 repeats 3 (scanned twice,
    its own strips) and 11 is stored as 3 (its IFD points at the same strip); the rest are blank."""
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    pages = [_letter(), _letter(["Minutes of the board."]), _letter(["Annex two."]), _letter(["Minutes of the board."])]
    order = [0, 0, 1, 0, 0, 0, 3, 0, 2, 0, 1, 0]
    document = drop(store, tmp_path, "stack.tif", shared_strip_tiff(pages, order))
    plan = plan_document(store, document, settings)
    ocr = plan_ocr(store, OcrPlanRequest(**document.ref.model_dump(), plan=plan), settings)
    assert [item.page for item in ocr.items] == [3, 9]


def test_a_stack_with_blank_and_repeated_frames_reads_each_distinct_text_frame_once(tmp_path: Path) -> None:
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    pages = [_letter(), _letter(["Minutes of the board."]), _letter(["Annex two."]), _letter(["Minutes of the board."])]
    document = drop(store, tmp_path, "stack.tif", shared_strip_tiff(pages, [0, 0, 1, 0, 0, 0, 3, 0, 2, 0, 1, 0]))
    tesseract = FakeEngine(reading(TESSERACT, GOOD))
    report = process_document(store, document, settings, engines=engines(tesseract))
    assert len(tesseract.calls) == 2  # frames 3 and 9; 7 and 11 repeat 3
    assert report.page_count == 12 and [p.number for p in report.pages] == list(range(1, 13))
    blank = [p.number for p in report.pages if "blank_page" in p.signals]
    assert blank == [1, 2, 4, 5, 6, 8, 10, 12]
    assert all(report.pages[n - 1].engine is None and report.pages[n - 1].attempts == [] for n in blank)
    repeated = {p.number: p for p in report.pages if "repeated_frame" in p.signals}
    assert sorted(repeated) == [7, 11]
    assert all(p.engine == TESSERACT and "frame 3" in p.reason and not p.attempts for p in repeated.values())
    assert report.status == "partially_recovered" and "8 blank page(s)" in report.reason
    text = (store.root / f"results/{document.doc_id}/text.txt").read_text()
    assert text.count(GOOD) == 4


def test_a_stack_the_survey_cannot_finish_in_time_is_read_frame_by_frame(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from papersift.steps import ocr_plan

    monkeypatch.setattr(ocr_plan, "SURVEY_SECONDS", 0)
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    document = drop(store, tmp_path, "stack.tif", shared_strip_tiff([_letter(), _letter(["Annex."])], [0, 1, 0]))
    plan = plan_document(store, document, settings)
    ocr = plan_ocr(store, OcrPlanRequest(**document.ref.model_dump(), plan=plan), settings)
    assert [item.page for item in ocr.items] == [1, 2, 3]


def test_with_ocr_off_a_picture_is_extracted_as_pages_that_need_ocr(tmp_path: Path) -> None:
    store, settings = LocalDirStore(tmp_path / "store"), Settings(ocr_mode="off")
    document = drop(store, tmp_path, "scan.png", image_bytes(text_image()))
    report = process_document(store, document, settings)
    assert [p.status for p in report.pages] == ["needs_ocr"]
    assert "ocr_mode=off" in report.pages[0].reason and report.status == "needs_review"


def test_a_page_read_once_is_not_read_again_by_a_retried_iteration(tmp_path: Path) -> None:
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    request = planned_after_text_layer(store, drop(store, tmp_path, "mixed.pdf", native_and_scanned_pdf()), settings)
    tesseract = FakeEngine(reading(TESSERACT))
    first = read_ocr_page(store, request, settings, engines(tesseract))
    again = read_ocr_page(store, request, settings, engines(tesseract))
    assert (first.status, first.skipped, again.skipped) == ("ocr", False, True)
    assert len(tesseract.calls) == 1


def test_tesseracts_reading_is_kept_when_textract_is_throttled_so_the_retry_does_not_read_again(
    tmp_path: Path,
) -> None:
    """local-first: Tesseract reads with low confidence, Textract refuses for load; the workflow's
    retry finds Tesseract's reading stored and only calls Textract again."""
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    request = planned_after_text_layer(store, drop(store, tmp_path, "mixed.pdf", native_and_scanned_pdf()), settings)
    tesseract = FakeEngine(reading(TESSERACT, GOOD, confidence=0.5))
    textract = FakeEngine(OcrThrottledError("ThrottlingException: Rate exceeded"))
    with pytest.raises(OcrThrottledError):
        read_ocr_page(store, request, settings, engines(tesseract, textract))
    textract.answer = reading(TEXTRACT, GOOD, confidence=0.99, api="DetectDocumentText")
    result = read_ocr_page(store, request, settings, engines(tesseract, textract))
    assert (result.status, result.engine) == ("ocr", "textract")
    assert len(tesseract.calls) == 1 and len(textract.calls) == 2


def test_a_failed_ocr_step_records_the_page_as_failed_and_keeps_its_text_layer(tmp_path: Path) -> None:
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    request = planned_after_text_layer(store, drop(store, tmp_path, "mixed.pdf", native_and_scanned_pdf()), settings)
    failed = request.model_copy(update={"error": StepError.model_validate(
        {"Error": "MemoryError", "Cause": '{"errorMessage": "out of memory"}'})})
    result = read_ocr_page(store, failed, settings, engines())
    assert result.status == "failed"
    page = json.loads(store.get(ocr_page_key(request.doc_id, 2)))["page"]
    assert "the OCR step failed: MemoryError: out of memory" in page["report"]["reason"]


@needs_tesseract
def test_a_scanned_page_is_read_by_tesseract_and_the_native_page_is_not_ocred(tmp_path: Path) -> None:
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    document = drop(store, tmp_path, "mixed.pdf", native_and_scanned_pdf())
    report = process_document(store, document, settings, engines=default_engines(None, page_seconds=60),
                              memory={"plan": 1024, "extract": 3008, "ocr_plan": 512, "ocr": 3008, "assemble": 2048})
    native, scanned = report.pages
    assert (native.status, native.engine, native.ocr) == ("clean", "pdfium", None)
    assert all(a.engine == "pdfium" for a in native.attempts)
    assert (scanned.status, scanned.engine) == ("ocr", "tesseract")
    assert "quick brown fox" in store.get(f"results/{document.doc_id}/text.txt").decode()
    assert report.status == "partially_recovered"
    cost = report.cost
    assert cost["pages_by_engine"] == {"pdfium": 1, "tesseract": 1} and cost["textract_pages"] == {}
    assert set(cost["lambda_gb_seconds"]) == {"plan", "extract", "ocr_plan", "ocr", "assemble"}
    assert cost["usd_all_textract"] == 2 * settings.price_textract_detect_per_page
    # Plan, RouteByPlanStatus, the batch Map and its one batch, OcrNeeded, PlanOcr, ChooseOcrMap,
    # the OCR Map and its one page, AfterOcr, Assemble
    assert cost["state_transitions"] == 11
    assert cost["usd"]["total"] == pytest.approx(sum(v for k, v in cost["usd"].items() if k != "total"), abs=1e-6)


@needs_tesseract
def test_an_upside_down_picture_is_turned_and_read(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    upside_down = text_image(rotate=180)
    document = drop(store, tmp_path, "photo.png", image_bytes(upside_down))
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    (page,) = report.pages
    assert page.status == "ocr" and page.ocr is not None and page.ocr.orientation == 180
    assert "quick brown fox" in store.get(f"results/{document.doc_id}/text.txt").decode()


def test_a_picture_that_is_no_picture_ends_with_a_specific_reason(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "broken.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    report = process_document(store, document, Settings(), engines=engines())
    # the file is at fault (CorruptInputError): corrupt_unrecoverable, never failed (a failure of ours)
    assert report.status == "corrupt_unrecoverable" and "not a readable picture" in report.reason


def test_a_blank_scan_is_an_empty_document_not_a_clean_one(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "blank.png", image_bytes(Image.new("L", (800, 1000), 255)))
    report = process_document(store, document, Settings(), engines=engines(FakeEngine(
        reading(TESSERACT, "", confidence=None, words=0))))
    assert report.status == "empty" and "blank_page" in report.pages[0].signals


def test_a_doubtful_picture_page_shows_its_thumbnail_in_the_report_page(tmp_path: Path) -> None:
    """A person reviewing a low-confidence frame sees the picture beside the text OCR read."""
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "faded.png", image_bytes(text_image()))
    process_document(store, document, Settings(), engines=engines(FakeEngine(reading(TESSERACT, GOOD,
                                                                                      confidence=0.4))))
    page = store.get(f"results/{document.doc_id}/report.html").decode()
    assert 'pictured" id="page-1"' in page and "data:image/jpeg;base64," in page


@needs_tesseract
def test_a_scanned_annex_pasted_into_a_digital_page_is_read_and_added_after_the_native_text(tmp_path: Path) -> None:
    from pdf_factory import annex_pdf

    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "tender.pdf", annex_pdf())
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    (page,) = report.pages
    assert (page.status, page.engine) == ("ocr", "pdfium+tesseract") and "hybrid" in page.signals
    text = store.get(f"results/{document.doc_id}/text.txt").decode()
    assert text.startswith("Tender notice 12/2026: the signed annex follows.")
    assert "The quick brown fox jumps over the lazy dog." in text
    assert page.ocr is not None and page.ocr.regions == 1
    # in pages/1.json the native lines keep their roles, the annex's text is picture_text
    blocks = json.loads(store.get(f"results/{document.doc_id}/pages/00001.json"))["blocks"]
    roles = {block["text"][:20]: block["role"] for block in blocks}
    assert roles["Tender notice 12/202"] == "paragraph"
    assert next(b for b in blocks if "quick brown fox" in b["text"])["role"] == "picture_text"


@needs_tesseract
def test_an_invisible_ocr_layer_of_sound_quality_is_kept_and_not_read_again(tmp_path: Path) -> None:
    from pdf_factory import SCANNED_PROSE, invisible_layer_pdf

    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "scan-with-layer.pdf", invisible_layer_pdf(SCANNED_PROSE))
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    (page,) = report.pages
    assert (page.status, page.engine) == ("clean", "pdfium") and "invisible_text_layer" in page.signals
    assert all(a.engine == "pdfium" for a in page.attempts)


@needs_tesseract
def test_an_invisible_ocr_layer_of_poor_quality_is_read_again_and_the_better_reading_kept(tmp_path: Path) -> None:
    from pdf_factory import SCANNED_PROSE, invisible_layer_pdf

    misread = [line.replace("e", "c").replace("h", "b").replace("o", "0") for line in SCANNED_PROSE]
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "poor-layer.pdf", invisible_layer_pdf(misread))
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    (page,) = report.pages
    assert (page.status, page.engine) == ("ocr", "tesseract")
    assert "invisible_text_layer" in page.signals and "invisible OCR layer" in page.reason
    assert [a.engine for a in page.attempts] == ["pdfium", "tesseract"]
    text = " ".join(store.get(f"results/{document.doc_id}/text.txt").decode().split())
    assert "The committee recommends that the contract be awarded to it." in text


@needs_tesseract
def test_a_word_no_font_map_can_read_is_read_from_the_rendered_page(tmp_path: Path) -> None:
    """Class C of issue 17 through the pipeline: the text layer says '"7+%-', the page shows
    'Phone'; the rendering check disagrees, and the page is read again by OCR and takes its text."""
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "phone.pdf", subset_truetype_without_map_pdf())
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    (page,) = report.pages
    assert store.get(f"results/{document.doc_id}/text.txt").decode().strip() == "Phone"
    assert (page.status, page.engine) == ("ocr", "tesseract")
    assert "rendering_disagrees" in page.signals and page.rendering_agreement == 0.0
    assert [a.engine for a in page.attempts] == ["pdfium", "tesseract", "tesseract"]  # the check, then at ocr_dpi
    assert report.cost["rendering_checks"] == 1


@needs_tesseract
def test_an_uncertain_layer_the_rendered_page_confirms_stays_trusted_from_the_layer(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "phone.pdf", subset_truetype_without_map_pdf("Phone", b"Phone"))
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    (page,) = report.pages
    assert (report.status, page.status, page.engine) == ("clean", "clean", "pdfium")
    assert "verified_by_rendering" in page.signals and page.rendering_agreement == 1.0


def test_with_ocr_off_an_uncertain_layer_is_never_trusted(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "phone.pdf", subset_truetype_without_map_pdf("Phone", b"Phone"))
    report = process_document(store, document, Settings(ocr_mode="off"), engines=engines())
    assert (report.status, report.trusted, report.pages[0].status) == ("needs_review", False, "needs_ocr")
    # the report names the font that left the page unverified
    assert report.pages[0].fonts == report.fonts_without_map == ["Vera (builtin_encoding)"]


def test_pages_past_the_documents_rendering_checks_stay_untrusted_and_say_why(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "phone.pdf", subset_truetype_without_map_pdf("Phone", b"Phone"))
    tesseract = FakeEngine(reading(TESSERACT, "Phone"))
    report = process_document(store, document, Settings(max_rendering_checks=0), engines=engines(tesseract))
    assert tesseract.calls == []
    (page,) = report.pages
    assert page.status == "needs_ocr" and "max_rendering_checks" in page.reason
    assert report.cost["rendering_checks"] == 0


@needs_tesseract
def test_a_word_a_sound_page_draws_without_unicode_is_read_from_its_region_and_follows_the_text(tmp_path: Path) -> None:
    """A long sound page ends with a word drawn by a subset font that maps none of its glyphs: the
    words vouch for the page, the text layer silently leaves the word out. OCR reads the word's
    region only (Tesseract, never Textract: a few glyphs), and its text follows the page's."""
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "office.pdf", sound_page_with_unmapped_word_pdf("Phone"))
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    (page,) = report.pages
    text = store.get(f"results/{document.doc_id}/text.txt").decode()
    assert text.rstrip().endswith("Phone") and "Call the harbour office by" in text
    assert (page.status, page.engine) == ("ocr", "pdfium+tesseract")
    assert {"unmapped_glyphs", "hybrid"} <= set(page.signals)
    assert "region(s) of glyphs without Unicode" in page.reason
    assert [a.engine for a in page.attempts] == ["pdfium", "tesseract"]


def test_with_ocr_off_the_report_says_a_sound_page_leaves_glyphs_out(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "office.pdf", sound_page_with_unmapped_word_pdf("Phone"))
    report = process_document(store, document, Settings(ocr_mode="off"), engines=engines())
    (page,) = report.pages
    assert page.status == "clean" and "unmapped_glyphs" in page.signals
    assert "glyph(s) drawn with no Unicode map are not in its text (OCR is off)" in page.reason


def test_a_glyph_without_unicode_alone_between_spaces_is_a_symbol_ocr_does_not_read(tmp_path: Path) -> None:
    """A form's checkbox drawn from a pi font with no map (IRS 1040-NR): no word is missing."""
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "form.pdf", sound_page_with_unmapped_word_pdf("o", b"\x03"))
    tesseract = FakeEngine(reading(TESSERACT, "Phone"))
    report = process_document(store, document, Settings(), engines=engines(tesseract))
    (page,) = report.pages
    assert tesseract.calls == [] and page.status == "clean" and "unmapped_glyphs" in page.signals
    assert "each stands alone between spaces: a symbol, no word" in page.reason


def test_the_regions_of_unmapped_glyphs_are_where_the_page_draws_them(pdf_factory) -> None:
    from papersift.pdf_engines import PdfHandle

    with PdfHandle(pdf_factory.sound_page_with_unmapped_word_pdf("Phone"), ()) as handle:
        (box,) = handle.unmapped_regions(1)
    x0, y0, x1, y1 = box
    # the last line (40 lines of 15 pt below y=780 on an A4 page) after "Call the harbour office by "
    assert 0.25 < x0 < x1 < 0.45 and 0.75 < y0 < y1 < 0.80


def _office_page_with_a_word_of_codes() -> bytes:
    from pdf_factory import subset_word_on_sound_page_pdf

    return subset_word_on_sound_page_pdf("Phone", b'"7+%-')


@needs_tesseract
def test_a_word_of_glyph_codes_on_a_sound_page_is_read_from_the_rendered_page(tmp_path: Path) -> None:
    """Class C of issue 17 where the font draws one word of a long sound page: every engine reads
    '"7+%-' for 'Phone', and the page's words vouch for it. The token is doubted because the font
    that draws it maps nothing to Unicode; the rendering check does not read it, and OCR's text is
    the page's."""
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "office.pdf", _office_page_with_a_word_of_codes())
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    (page,) = report.pages
    text = store.get(f"results/{document.doc_id}/text.txt").decode()
    assert '"7+%-' not in text and "Phone" in text and "Call the harbour office by" in text
    assert (page.status, page.engine) == ("ocr", "tesseract")
    assert "rendering_disagrees" in page.signals and "does not show '\"7+%-'" in page.reason


def test_with_ocr_off_a_word_of_glyph_codes_leaves_the_page_untrusted(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "office.pdf", _office_page_with_a_word_of_codes())
    report = process_document(store, document, Settings(ocr_mode="off"), engines=engines())
    (page,) = report.pages
    assert (page.status, report.trusted) == ("needs_ocr", False)
    assert "unverified_font" in page.signals
    assert "'\"7+%-' may be glyph codes, not characters: drawn with Vera (builtin_encoding)" in page.reason


def test_code_on_a_sound_page_whose_fonts_map_to_unicode_stays_trusted(tmp_path: Path, pdf_factory) -> None:
    lines = ["Comments in the grammar run from -- to the end of the line, and every rule",
             "is written name ::= definition; the arrow --> marks a production of the parser.",
             *[f"The parser reads rule number {n} of the grammar and writes its table entry." for n in range(30)]]
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "grammar.pdf", pdf_factory.text_pdf([lines]))
    report = process_document(store, document, Settings(ocr_mode="off"), engines=engines())
    assert report.pages[0].status == "clean" and "unverified_font" not in report.pages[0].signals
