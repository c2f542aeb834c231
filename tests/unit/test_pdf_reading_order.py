"""Reading order the verdict cannot see: every word is right, only the order is wrong."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader, PdfWriter
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


# -- turned pages -------------------------------------------------------------------------

TURNED_LINES = [f"Line {n:02d} of the turned page says something about topic {n}." for n in range(1, 21)]


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_a_page_shown_turned_reads_its_lines_in_order(rotate, pdf_factory):
    # pdfium orders lines as displayed: under /Rotate 90 they became columns, read last first
    (page,) = pdf.extract_pages(pdf_factory.rotated_pdf(TURNED_LINES, rotate), Settings(), 1, 1)
    assert page.report.status == "clean"
    assert page.text.splitlines() == TURNED_LINES


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_text_drawn_turned_on_an_upright_page_reads_line_by_line_in_order(degrees, pdf_factory):
    # pdfium breaks lines of turned glyphs only now and then (twenty lines came out as two),
    # and ordered the lines of text turned clockwise last first
    (page,) = pdf.extract_pages(pdf_factory.turned_text_pdf(TURNED_LINES, degrees), Settings(), 1, 1)
    assert page.report.status == "clean"
    assert page.text.splitlines() == TURNED_LINES


@pytest.mark.parametrize(("degrees", "rotate"), [(90, 90), (270, 270), (90, 270)])
def test_turned_text_on_a_turned_page_reads_in_order_whatever_the_display(degrees, rotate, pdf_factory):
    # (90, 90): a landscape page as generators write one, its /Rotate standing the text upright
    data = pdf_factory.turned_text_pdf(TURNED_LINES, degrees, rotate=rotate)
    (page,) = pdf.extract_pages(data, Settings(), 1, 1)
    assert page.text.splitlines() == TURNED_LINES


def test_reading_a_turned_page_leaves_its_rotation_as_the_file_has_it(pdf_factory):
    # the text page is built with /Rotate set to 0 and back: the cut for OCR keeps the display
    data = pdf_factory.rotated_pdf(TURNED_LINES, 90)
    two = io.BytesIO()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.add_page(PdfReader(io.BytesIO(data)).pages[0])
    writer.write(two)
    with pdf.PdfPages(two.getvalue(), Settings()) as document:
        assert document.page(1).text.splitlines() == TURNED_LINES
        cut = document.ocr_input(1)
    assert cut is not None and PdfReader(io.BytesIO(cut)).pages[0].rotation == 90


def test_a_turned_margin_stamp_leaves_the_upright_page_as_it_was(pdf_factory):
    # an arXiv-style stamp turned up the margin is outvoted by the page's upright glyphs
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    page.setFont("Helvetica", 11)
    for row, line in enumerate(TURNED_LINES):
        page.drawString(72, 760 - 16 * row, line)
    page.saveState()
    page.translate(40, 300)
    page.rotate(90)
    page.drawString(0, 0, "arXiv:2101.00001v1 [cs.CL] 1 Jan 2021")
    page.restoreState()
    page.showPage()
    page.save()
    (extracted,) = pdf.extract_pages(buffer.getvalue(), Settings(), 1, 1)
    assert extracted.text.splitlines()[:20] == TURNED_LINES
