"""Tables from native PDF pages: opt-in, Markdown output, and the quality filters."""

from __future__ import annotations

from pdf_factory import table_pdf

from papersift.formats import pdf
from papersift.settings import Settings


def test_tables_are_off_by_default() -> None:
    page = pdf.extract_pages(table_pdf(), Settings(), 1, 1)[0]
    assert page.tables == [] and page.report.tables == 0
    assert "<!-- table" not in page.to_markdown()


def test_opt_in_tables_come_out_as_markdown_after_the_page_text() -> None:
    page = pdf.extract_pages(table_pdf(boxed_note="Note: figures are unaudited."), Settings(extract_tables=True), 1, 1)[
        0
    ]
    [table] = page.tables  # the framed one-cell note is a text box, not a table
    assert table.rows[0] == ["Region", "Revenue", "Growth"]
    assert table.rows[1:] == [["North", "1,200", "4%"], ["South", "950", "2%"], ["East", "1,430", "7%"]]
    assert table.title == "Table 1: Revenue by region"
    assert page.report.tables == 1
    markdown = page.to_markdown()
    assert markdown.index("Quarterly figures") < markdown.index("<!-- table page=1 index=0 -->")
    assert "| Region | Revenue | Growth |\n|---|---|---|\n| North | 1,200 | 4% |" in markdown


def test_split_header_is_collapsed_when_the_second_row_fills_the_blanks() -> None:
    rows = pdf.clean_table_rows(
        [["Region", None, "Growth"], ["", "Revenue (USD)", ""], ["North", "1,200", "4%"], ["South", "950", "2%"]]
    )
    assert rows is not None
    merged, header_rows = pdf.collapse_split_header(rows)
    assert header_rows == 1
    assert merged == [["Region", "Revenue (USD)", "Growth"], ["North", "1,200", "4%"], ["South", "950", "2%"]]


def test_a_data_row_with_blanks_is_not_mistaken_for_a_header_continuation() -> None:
    rows = [["Item", "Q1", "Q2"], ["", "100", ""], ["Pens", "3", "4"]]
    assert pdf.collapse_split_header(rows) == (rows, 1)


def test_row_with_empty_first_cell_continues_the_row_above() -> None:
    rows = [
        ["Name", "Description"],
        ["Widget", "A small part used in"],
        ["", "assembly lines"],
        ["Gadget", "A tool"],
    ]
    assert pdf.merge_continuation_rows(rows, 1) == [
        ["Name", "Description"],
        ["Widget", "A small part used in assembly lines"],
        ["Gadget", "A tool"],
    ]


def test_one_column_and_one_row_boxes_are_not_tables() -> None:
    assert pdf.clean_table_rows([["A framed paragraph"], ["that spans lines"]]) is None
    assert pdf.clean_table_rows([["Label", "Value"]]) is None
    assert pdf.clean_table_rows([[None, None], ["", ""]]) is None


def test_empty_columns_and_rows_are_dropped_and_cells_normalised() -> None:
    rows = pdf.clean_table_rows([["A", None, "B"], [None, None, None], ["1\n2", "", " 3 "]])
    assert rows == [["A", "B"], ["1 2", "3"]]
