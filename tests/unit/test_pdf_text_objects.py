"""Reading a page's text object by object costs objects x characters in pdfium (its
FPDFTextObj_GetText scans the whole text page for each object): a page of thousands of labels
(a map, a hostile file) must not take a worker's minutes. Past pdf_fonts.MAX_OBJECT_TEXT_VISITS
the font evidence is sampled by character and the minority-font judgement is not made."""

from __future__ import annotations

import io

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from reportlab.pdfgen import canvas

from papersift import pdf_fonts
from papersift.pdf_engines import PdfHandle


def _labels_pdf(labels: int) -> bytes:
    """One page of ``labels`` tiny strings, each its own text object, in two fonts."""
    out = io.BytesIO()
    page = canvas.Canvas(out)
    for i in range(labels):
        page.setFont("Helvetica" if i % 2 else "Times-Roman", 2)
        page.drawString(10 + (i % 100) * 5.5, 10 + (i // 100) * 2.5, "ab")
    page.showPage()
    page.save()
    return out.getvalue()


def test_a_page_of_many_objects_is_not_read_object_by_object(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf_fonts, "MAX_OBJECT_TEXT_VISITS", 1_000_000)  # 1,000 objects x 3,000 characters past it

    def per_object(*args: object) -> None:
        raise AssertionError("the page's objects were read one by one")

    monkeypatch.setattr(pdf_fonts, "fonts_in_use", per_object)
    with PdfHandle(_labels_pdf(1000), ()) as handle:
        evidence = handle.font_evidence(1, dictionaries=False)
        assert handle.font_texts(1) == []
    assert evidence is not None and evidence.glyphs > 0, "sampled by character instead"


def test_a_page_within_the_budget_is_read_object_by_object() -> None:
    with PdfHandle(_labels_pdf(300), ()) as handle:
        texts = handle.font_texts(1)
    assert len(texts) == 300 and {font for font, _, _ in texts} == {"Helvetica", "Times-Roman"}


def test_a_page_of_tens_of_thousands_of_labels_is_past_the_budget() -> None:
    document = pdfium.PdfDocument(_labels_pdf(20000))  # 20,000 objects x 60,000 characters: ~4 s one by one
    page = pdfium_c.FPDF_LoadPage(document.raw, 0)
    textpage = pdfium_c.FPDFText_LoadPage(page)
    try:
        assert not pdf_fonts.object_texts_affordable(page, textpage)
        assert pdf_fonts.font_texts(page, textpage) == []
    finally:
        pdfium_c.FPDFText_ClosePage(textpage)
        pdfium_c.FPDF_ClosePage(page)
        document.close()
