"""Reading order the verdict cannot see: every word is right, only the order is wrong."""

from __future__ import annotations

import io

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from papersift.formats import pdf
from papersift.settings import Settings

ROWS = [["2019", "2020", "2021", "2022"], ["851.5", "854.9", "839.3", "837.5"], ["633.6", "727.8", "789.9", "796.2"],
        ["1,485.1", "1,582.7", "1,629.2", "1,633.7"], ["114.2", "121.7", "125.3", "130.7"]]


def _table_drawn_column_by_column() -> bytes:
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    page.setFont("Helvetica", 11)
    for col in range(4):  # the content stream holds the columns one after the other
        for row, cells in enumerate(ROWS):
            page.drawRightString(150 + col * 90, 700 - row * 18, cells[col])
    page.showPage()
    page.save()
    return buffer.getvalue()


def test_numeric_table_stored_by_columns_reads_by_rows():
    (page,) = pdf.extract_pages(_table_drawn_column_by_column(), Settings(), 1, 1)
    assert page.report.status == "clean" and page.report.engine == "pdfium-rows"
    assert "row_order" in page.report.signals
    assert " ".join(page.text.split()).count("1,485.1 1,582.7 1,629.2 1,633.7") == 1


def test_prose_pages_never_pay_for_the_reading_order_check(pdf_factory):
    (page,) = pdf.extract_pages(pdf_factory.text_pdf(["An ordinary sentence of prose on a native page."]),
                                Settings(), 1, 1)
    assert [a.engine for a in page.report.attempts] == ["pdfium"]
