"""Headings from bold type and section numbers in a PDF without outline (issue 19)."""

from __future__ import annotations

from test_structure import BODY, _results

from papersift.structure import MAX_BOLD_SHARE, bold_headings

BOLD = "Helvetica-Bold"
HEIGHTS = 11.7


def _found(pages: list[list[str]], bold: list[list[int]]) -> list[tuple[int, str, int]]:
    heights = [[HEIGHTS] * len(lines) for lines in pages]
    found = bold_headings(pages, heights, bold, [{} for _ in pages])
    return [(page, block.text, block.level) for page, blocks in enumerate(found) for block in blocks]


def test_bold_lines_that_stand_alone_before_body_text_become_headings_nested_by_their_numbers(tmp_path, pdf_factory):
    body = [(line, 10) for line in BODY]
    pages = [[("1 Introduction", 10, BOLD), *body, ("2 Method", 10, BOLD), ("2.1 Sampling", 10, BOLD), *body],
             [("2.2 Analysis", 10, BOLD), *body, ("Acknowledgements", 10, BOLD), *body]]
    text, markdown, page_files = _results(tmp_path, pdf_factory.styled_pdf(pages))
    assert [line for line in markdown.splitlines() if line.startswith("#")] == [
        "# 1 Introduction", "# 2 Method", "## 2.1 Sampling", "## 2.2 Analysis", "# Acknowledgements"]
    assert not any(line.startswith("#") for line in text.splitlines()), "text.txt as read"
    heading = next(b for b in page_files[1]["blocks"] if b["role"] == "heading")
    assert heading.pop("bbox") and heading == {"role": "heading", "text": "2.2 Analysis", "line": 0, "lines": 1,
                                               "level": 2}
    assert page_files[0]["bold_lines"] == [0, 4, 5]


def test_bold_below_the_font_sizes_headings_takes_the_next_levels(tmp_path, pdf_factory):
    body = [(line, 10) for line in BODY]
    pages = [[("A Report on Type", 18), *body, ("1 Introduction", 10, BOLD), *body * 2]]
    _, markdown, _ = _results(tmp_path, pdf_factory.styled_pdf(pages))
    assert [line for line in markdown.splitlines() if line.startswith("#")] == [
        "# A Report on Type", "## 1 Introduction"]


def test_a_bold_label_set_twice_a_caption_and_a_table_header_are_no_headings():
    first = ["TIP", *BODY, "Table 2: Results by region", *BODY, "Region North South East West", "12 14.5 17 19.2 21 23"]
    second = ["TIP", *BODY]
    assert _found([first, second], [[0, 4, 8], [0]]) == []


def test_a_bold_line_inside_a_paragraph_or_before_a_lower_case_line_is_no_heading():
    lines = [BODY[0], "An important result that", BODY[1], *BODY, "Important",
             "set in bold for emphasis only, goes on here"]
    assert _found([lines], [[1, 6]]) == []


def test_a_heading_broken_over_two_lines_is_one_heading():
    lines = [*BODY, "B Alternative Similarity Functions &", "Triplet Loss", *BODY]
    assert _found([lines], [[3, 4]]) == [(0, "B Alternative Similarity Functions & Triplet Loss", 1)]
    assert _found([[*BODY, "Joint Training of Retriever and", *BODY]], [[3]]) == [], "a head that goes on into prose"


def test_a_plain_line_is_a_heading_only_after_a_nested_section_number():
    lines = [*BODY, "Chapter 4 Elsewhere", *BODY, "1. Enter the amount", *BODY, "4.3 Results of the Survey", *BODY]
    assert _found([lines], [[]]) == [(0, "Chapter 4 Elsewhere", 1), (0, "4.3 Results of the Survey", 2)]


def test_bold_is_no_evidence_where_much_of_the_document_is_bold():
    lines = ["Introduction", *BODY, "Method", *BODY]
    assert _found([lines], [[0, 4]]) == [(0, "Introduction", 1), (0, "Method", 1)]
    every = list(range(len(lines)))
    assert len(every) > MAX_BOLD_SHARE * len(lines) and _found([lines], [every]) == []
