"""A text layer that keeps word shape but maps glyphs to the wrong letters: the case that
gets indexed and trusted when nobody checks it."""

from __future__ import annotations

import pdf_factory

from papersift.formats import pdf
from papersift.settings import Settings

PARAGRAPH = (
    "The quarterly report shows revenue growth in every region of the company",
    "and the board approved the budget for the new warehouse in the north",
    "while the audit committee asked for a review of the travel expenses",
    "before the annual meeting of the shareholders in the spring of next year",
)


def test_cipher_shaped_text_layer_is_never_clean_and_names_the_cipher():
    data = pdf_factory.shifted_font_pdf(PARAGRAPH, shift=3)
    (page,) = pdf.extract_pages(data, Settings(), 1, 1)
    # the font's own /Differences names the wrong glyphs, so every engine reads the same cipher
    assert [(a.engine, "cipher" in a.signals) for a in page.report.attempts] == [
        ("pdfium", True), ("pypdf", True), ("pdfminer", True), ("pdftotext", True)]
    assert page.report.status == "corrupt_unrecoverable", page.report.reason
    assert "cipher" in page.report.signals
    assert page.text.startswith("Wkh txduwhuob uhsruw")  # the layer as stored, never passed off as read
