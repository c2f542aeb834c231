"""The page report's font summary (PageReport.font_summary, issue 17): for each font a PDF page's
text uses, what the file says about it, so a person can see why the page was or was not trusted.
PDFs built in code; the summary never changes a verdict or a text."""

from __future__ import annotations

from pdf_factory import (
    byte_swapped_map_pdf,
    predefined_cmap_pdf,
    raw_pdf,
    subset_truetype_without_map_pdf,
    text_pdf,
    vertical_cjk_pdf,
)

from papersift.formats import pdf
from papersift.pdf_engines import PdfHandle
from papersift.report import PageFont, PageReport
from papersift.settings import Settings

SETTINGS = Settings(ocr_mode="off")


def _type3_pdf(word: bytes = b"ABBA ABBA ABBA") -> bytes:
    """``word`` drawn with a Type 3 font (glyphs as content streams) named by /Differences."""
    glyph = b"500 0 0 0 500 700 d1 0 0 m 500 700 l S"
    font = (b"<< /Type /Font /Subtype /Type3 /Name /Hand /FontBBox [0 0 500 700] /FontMatrix [0.001 0 0 0.001 0 0] "
            b"/CharProcs << /A 6 0 R /B 6 0 R /space 6 0 R >> /Encoding << /Type /Encoding /Differences "
            b"[32 /space 65 /A /B] >> /FirstChar 32 /LastChar 66 /Widths [" + b" 500" * 35 + b"] /Resources << >> >>")
    stream = b"<< /Length %d >>\nstream\n" % len(glyph) + glyph + b"\nendstream"
    return raw_pdf(b"BT /F1 24 Tf 72 700 Td (" + word + b") Tj ET", font, [stream])


def _summary(data: bytes) -> list[PageFont]:
    (page,) = pdf.extract_pages(data, SETTINGS, 1, 1)
    return page.report.font_summary


def _uses(data: bytes, dictionaries: bool) -> dict[str, tuple[object, ...]]:
    with PdfHandle(data, ()) as handle:
        if dictionaries:
            assert handle.pypdf is not None  # open for the batch, as the ladder opens it
        return {use.program.name: (use.program, use.dictionary) for use in handle.font_uses(1)}


def test_a_type3_font_is_listed_embedded_and_type3() -> None:
    (font,) = _summary(_type3_pdf())
    assert font.type3 and font.embedded and not font.math
    assert font.sampled_chars > 0


def test_a_standard_font_is_listed_neither_embedded_nor_type3() -> None:
    (font,) = _summary(text_pdf(["An ordinary line in Helvetica, WinAnsi encoded, with enough words."]))
    assert font.name == "Helvetica"
    assert not font.embedded and not font.type3 and not font.subset and font.unmapped_chars == 0


def test_an_untrusted_subset_truetype_page_shows_its_font_has_no_unicode_map() -> None:
    # '"7+%-' for 'Phone': the verdict read the font dictionaries, and the summary shows why
    (page,) = pdf.extract_pages(subset_truetype_without_map_pdf(), SETTINGS, 1, 1)
    assert page.report.status != "clean"
    (font,) = page.report.font_summary
    assert (font.name, font.subset, font.embedded, font.subtype) == ("Vera", True, True, "TrueType")
    assert font.to_unicode is False and font.encoding == "builtin" and not font.symbolic


def test_the_dictionaries_say_whether_a_font_carries_a_tounicode_map() -> None:
    (_, with_map), = _uses(byte_swapped_map_pdf(), dictionaries=True).values()
    assert with_map is not None and with_map.to_unicode and with_map.encoding == "standard"
    assert with_map.cmap == "WinAnsiEncoding"
    (_, without_map), = _uses(subset_truetype_without_map_pdf(), dictionaries=True).values()
    assert without_map is not None and not without_map.to_unicode and without_map.encoding == "builtin"


def test_predefined_and_vertical_cmaps_are_named() -> None:
    (_, horizontal), = _uses(predefined_cmap_pdf(), dictionaries=True).values()
    assert horizontal is not None and (horizontal.encoding, horizontal.cmap) == ("predefined_cmap", "90ms-RKSJ-H")
    assert not horizontal.vertical and horizontal.subtype == "Type0"
    (program, vertical), = _uses(vertical_cjk_pdf(), dictionaries=True).values()
    assert vertical is not None and vertical.vertical and vertical.cmap == "UniJIS-UCS2-V"
    assert program.symbolic  # /Flags 4


def test_without_pypdf_open_the_summary_keeps_pdfiums_facts_and_leaves_the_dictionarys_unread() -> None:
    (program, dictionary), = _uses(byte_swapped_map_pdf(), dictionaries=False).values()
    assert dictionary is None and program.name == "Helvetica"


def test_a_report_written_before_the_summary_still_validates() -> None:
    (page,) = pdf.extract_pages(text_pdf(["An ordinary line in Helvetica, WinAnsi encoded, with enough words."]),
                                SETTINGS, 1, 1)
    data = page.report.model_dump(mode="json")
    assert data["font_summary"]
    del data["font_summary"]
    assert PageReport.model_validate(data).font_summary == []


def test_report_html_lists_a_suspect_pages_fonts_with_what_sets_them_apart() -> None:
    from papersift.report import ExtractionReport
    from papersift.report_page import render_report_page

    (page,) = pdf.extract_pages(subset_truetype_without_map_pdf(), SETTINGS, 1, 1)
    report = ExtractionReport(
        doc_id="d" + "0" * 40, source={"bucket": "b", "key": "incoming/phone.pdf", "name": "phone.pdf"},
        detected_type="pdf", mime_type="application/pdf", detected_by="magic", status="needs_review",
        reason="1 page to review", page_count=1, pages=[page.report], created_at="2026-12-01T09:00:00+00:00",
        papersift_version="0.1.0")
    assert "<dt>fonts</dt><dd>Vera (subset, embedded, no ToUnicode, builtin)</dd>" in render_report_page(report)
