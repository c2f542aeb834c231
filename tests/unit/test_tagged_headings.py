"""A tagged PDF's headings from its structure tree in document.md and pages/N.json (issue 19)."""

from __future__ import annotations

from pathlib import Path

from test_structure import BODY, _results

from papersift.pdf_engines import PdfHandle
from papersift.structure import OutlineEntry, page_blocks, tag_headings

PROSE = [("P", line) for line in BODY]


def _report(pdf_factory):  # type: ignore[no-untyped-def]
    """A report tagged as a word processor tags it: H1, H2 and an H4 set in the body's own size."""
    return pdf_factory.tagged_pdf([
        [("H1", "A Report on Tags"), ("H2", "Introduction"), *PROSE, ("H4", "A note in body size"), *PROSE],
        [("H2", "Method"), *PROSE, *PROSE],
    ])


def test_a_tagged_pdfs_heading_elements_become_headings_at_their_tag_levels(tmp_path, pdf_factory):
    text, markdown, pages = _results(tmp_path, _report(pdf_factory))
    assert [line for line in markdown.splitlines() if line.startswith("#")] == [
        "# A Report on Tags", "## Introduction", "#### A note in body size", "## Method"]
    assert not any(line.startswith("#") for line in text.splitlines()), "text.txt as read"
    headings = [b for b in pages[1]["blocks"] if b["role"] == "heading"]
    assert all(heading.pop("bbox") for heading in headings)
    assert headings == [{"role": "heading", "text": "Method", "line": 0, "lines": 1, "level": 2}]
    assert pages[1]["tag_headings"] == [{"title": "Method", "level": 2, "page": 2}]


def test_papersift_extract_writes_a_tagged_pdfs_headings_into_document_md(tmp_path: Path, pdf_factory) -> None:
    from papersift_cli.main import main

    (tmp_path / "report.pdf").write_bytes(_report(pdf_factory))
    assert main(["extract", str(tmp_path / "report.pdf"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    markdown = (tmp_path / "out" / "report.pdf" / "document.md").read_text(encoding="utf-8")
    assert "#### A note in body size" in markdown.splitlines() and "## Method" in markdown.splitlines()


def test_a_plain_h_takes_its_level_from_the_sections_around_it(pdf_factory):
    data = pdf_factory.tagged_pdf([[("H", "Part One", 1), *PROSE, ("H", "A Section", 2), *PROSE, ("H", "Loose", 0)]])
    with PdfHandle(data, ()) as handle:
        handle.text("pdfium", 1)
        assert [(e.title, e.level) for e in handle.tag_headings(1)] == [("Part One", 1), ("A Section", 2), ("Loose", 1)]


def test_a_pdf_whose_catalog_does_not_say_it_is_tagged_has_its_tree_left_unread(pdf_factory):
    data = pdf_factory.tagged_pdf([[("H1", "A Report on Tags"), *PROSE]], marked=False)
    with PdfHandle(data, ()) as handle:
        handle.text("pdfium", 1)
        assert not handle.tagged and handle.tag_headings(1) == []


def test_tags_that_make_every_line_a_heading_leave_the_headings_to_the_font_sizes():
    lines = [["The Title", *BODY], ["Method", *BODY]]
    every = [[OutlineEntry(title=line, level=1, page=n + 1) for line in page] for n, page in enumerate(lines)]
    assert tag_headings(lines, every, [{}, {}]) is None
    heights = [[21.0, 11.7, 11.7, 11.7], [16.4, 11.7, 11.7, 11.7]]
    blocks = page_blocks(lines, [], heights=heights, tagged=every)
    assert [(b.text, b.level) for page in blocks for b in page if b.role == "heading"] == [("The Title", 1)]


def test_tags_whose_texts_are_not_on_their_pages_leave_the_headings_to_the_outline():
    lines = [["Introduction", *BODY], ["Method", *BODY]]
    strays = [[OutlineEntry(title="Kapitel eins", level=1, page=1)], [OutlineEntry(title="Methode", level=2, page=2)]]
    outline = [OutlineEntry(title="Introduction", level=1, page=1), OutlineEntry(title="Method", level=1, page=2)]
    blocks = page_blocks(lines, outline, tagged=strays)
    assert [(b.text, b.level) for page in blocks for b in page if b.role == "heading"] == [
        ("Introduction", 1), ("Method", 1)]


def test_a_paragraph_of_prose_tagged_as_a_heading_is_none():
    sentence = "The municipality must do more to reduce speed on the road, near schools and parks."
    lines = [["Road safety", sentence, *BODY]]
    tagged = [[OutlineEntry(title="Road safety", level=2, page=1), OutlineEntry(title=sentence, level=2, page=1)]]
    found = tag_headings(lines, tagged, [{}])
    assert found is not None and [(b.text, b.level) for b in found[0]] == [("Road safety", 2)]


def test_the_outline_adds_the_titles_a_tagged_pdf_left_untagged():
    lines = [["1. Context", *BODY, "1.1. Why a revision", *BODY], ["2. Method", *BODY]]
    tagged = [[OutlineEntry(title="1. Context", level=1, page=1)], [OutlineEntry(title="2. Method", level=1, page=2)]]
    outline = [OutlineEntry(title="1. Context", level=1, page=1), OutlineEntry(title="1.1. Why a revision", level=2,
                                                                               page=1),
               OutlineEntry(title="2. Method", level=1, page=2)]
    blocks = page_blocks(lines, outline, tagged=tagged)
    assert [[(b.text, b.level) for b in page if b.role == "heading"] for page in blocks] == [
        [("1. Context", 1), ("1.1. Why a revision", 2)], [("2. Method", 1)]], "each once, in line order"


def test_a_paragraph_of_prose_the_outline_lists_is_no_heading():
    from papersift.structure import outline_headings

    sentence = "The municipality must do more to reduce speed on the road, near schools and parks."
    outline = [OutlineEntry(title="Road safety", level=1, page=1), OutlineEntry(title=sentence, level=1, page=1)]
    found = outline_headings([["Road safety", sentence, *BODY]], outline, [{}])
    assert [b.text for b in found[0]] == ["Road safety"]


def test_a_batch_whose_first_trees_hold_no_heading_reads_no_more_of_them(pdf_factory):
    from papersift.pdf_tags import PROBE_PAGES

    pages = [PROSE] * PROBE_PAGES + [[("H1", "A late heading"), *PROSE]]
    with PdfHandle(pdf_factory.tagged_pdf(pages), ()) as handle:
        for number in range(1, PROBE_PAGES + 1):
            assert handle.tag_headings(number) == []
        assert handle.tag_headings(PROBE_PAGES + 1) == [], "a tagged table's cells cost ~2 ms a page to build"
    with PdfHandle(pdf_factory.tagged_pdf(pages[-1:] + pages), ()) as handle:
        assert [e.title for n in range(1, PROBE_PAGES + 3) for e in handle.tag_headings(n)] == [
            "A late heading", "A late heading"], "a batch that found headings reads on"


def test_a_tagged_pdf_with_an_outline_takes_its_headings_from_the_outline_without_reading_its_tags(pdf_factory):
    import io

    from pypdf import PdfReader, PdfWriter

    from papersift.formats import pdf
    from papersift.settings import Settings

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_report(pdf_factory))))
    writer.add_outline_item(title="Introduction", page_number=0)
    out = io.BytesIO()
    writer.write(out)
    pages = pdf.extract_pages(out.getvalue(), Settings(ocr_mode="off"), 1, 2)
    assert [page.tag_headings for page in pages] == [[], []]
    plain = pdf.extract_pages(_report(pdf_factory), Settings(ocr_mode="off"), 1, 2)
    assert [e.title for e in plain[1].tag_headings] == ["Method"]


def test_a_page_tree_is_read_no_further_than_its_element_budget(pdf_factory, monkeypatch):
    from papersift import pdf_tags

    data = pdf_factory.tagged_pdf([[*PROSE, ("H1", "Past the budget")]])
    with PdfHandle(data, ()) as handle:
        assert [e.title for e in handle.tag_headings(1)] == ["Past the budget"]
    monkeypatch.setattr(pdf_tags, "MAX_PAGE_ELEMENTS", len(PROSE) + 1)  # the Document element and the P's
    with PdfHandle(data, ()) as handle:
        assert handle.tag_headings(1) == [], "a hostile tree of millions of elements is cut off"
