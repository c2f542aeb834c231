"""Running heads, page numbers and outline headings of PDFs in document.md and pages/N.json (issue 19)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from test_pipeline import _store_with

from papersift.content import PageContent
from papersift.layout import page_file
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.structure import (
    _ROMAN,
    OutlineEntry,
    _end_number,
    _find_title,
    _heading_key,
    _prose,
    _reads_as,
    _running_key,
    outline_headings,
    running_lines,
)

SECTIONS = [("4.2. Elliptische Geometrie", ["Das Modell"], 3),
            ("4.3. Hyperbolische Geometrie", ["Das Poincaré-Modell", "Geodäten"], 5)]
BENCH_PDFS = Path(__file__).resolve().parents[3] / "shared" / "bench-pdfs" / "files"


def _results(tmp_path: Path, data: bytes) -> tuple[str, str, list[dict]]:
    store, document = _store_with(tmp_path, "notes.pdf", data)
    report = process_document(store, document, Settings(ocr_mode="off"))
    prefix = f"results/{report.doc_id}/"
    pages = [json.loads(store.get(prefix + page_file(n))) for n in range(1, report.page_count + 1)]
    return store.get(prefix + "text.txt").decode(), store.get(prefix + "document.md").decode(), pages


def test_lecture_notes_running_head_and_page_numbers_stay_out_of_document_md(tmp_path, pdf_factory):
    text, markdown, pages = _results(tmp_path, pdf_factory.lecture_notes_pdf(SECTIONS))
    assert "4.3. HYPERBOLISCHE GEOMETRIE" in text, "text.txt keeps the page text as it is"
    assert "HYPERBOLISCHE GEOMETRIE" not in markdown and "ELLIPTISCHE GEOMETRIE" not in markdown
    assert not any(line.strip().isdigit() for line in markdown.splitlines()), "no page number left in the body"
    for number, page in enumerate(pages, start=1):
        roles = {block["role"]: block["text"] for block in page["blocks"]}
        assert roles["page_number"] == str(number)
        if number not in (1, 4):  # a section's first page opens with its title, not the head
            assert roles["header"].startswith(("4.2. ELLIPTISCHE GEOMETRIE", "4.3. HYPERBOLISCHE GEOMETRIE"))
            assert roles["header"].endswith(str(number))


def test_outline_titles_become_headings_at_their_nesting_level(tmp_path, pdf_factory):
    _, markdown, pages = _results(tmp_path, pdf_factory.lecture_notes_pdf(SECTIONS))
    lines = markdown.splitlines()
    for heading in ("# 4.2. Elliptische Geometrie", "## Das Modell", "# 4.3. Hyperbolische Geometrie",
                    "## Das Poincaré-Modell", "## Geodäten"):
        assert heading in lines
    assert lines.index("# 4.3. Hyperbolische Geometrie") < lines.index("## Geodäten")
    fifth = [b for b in pages[4]["blocks"] if b["role"] == "heading"]
    box = fifth[0].pop("bbox")
    assert fifth == [{"role": "heading", "text": "Geodäten", "line": 1, "lines": 1, "level": 2}]
    assert 0 < box[0] < box[2] < 0.5 and 0 < box[1] < box[3] < 0.3, "the heading's box, near the page's top left"


def test_a_pdf_without_outline_or_running_heads_keeps_its_text_as_paragraphs(tmp_path, pdf_factory):
    _, markdown, pages = _results(tmp_path, pdf_factory.numbered_pdf(5, "This is page number {n} of the document."))
    assert markdown.count("page number") == 5
    for number, page in enumerate(pages, start=1):
        assert [(b["role"], b["text"]) for b in page["blocks"]] == [
            ("paragraph", f"This is page number {number} of the document.")], "nothing set apart, no heading"


def test_a_page_number_on_one_page_is_no_evidence():
    pages = [["Introduction", "Text of the first page."], ["More text", "42"], ["Closing words", "the end"]]
    assert running_lines(pages) == [{}, {}, {}]


def test_a_running_key_marks_the_numbers_the_plain_alternation_marks():
    """_NUMBER_TOKEN is written for speed: it must mark what ``\\d+|\\b[ivxlcdmIVXLCDM]+\\b`` marks."""
    plain = re.compile(r"\d+|\b[ivxlcdmIVXLCDM]+\b")

    def key(line: str) -> str:
        return " ".join(plain.sub(lambda m: "#" if m.group().isdigit() or _ROMAN.match(m.group()) else m.group(),
                                  line).casefold().split())

    rng = random.Random(19)
    lines = ["Chapter IV. civil mix 12iv iv12 _iv iv_ x.iv Scivil", "4.3. HYPERBOLISCHE GEOMETRIE 113", "ⅳ ١٢ vi"]
    lines += ["".join(rng.choice("ivxlcdmIVXM019 ._-aZé") for _ in range(rng.randint(0, 24))) for _ in range(3000)]
    assert [_running_key(line) for line in lines] == [key(line) for line in lines]


def test_a_running_head_number_is_its_first_or_last_word_of_digits():
    assert [_end_number(line) for line in ["12  CHAPTER 4", "4.3. SECTION  13", "123456 SECTION", "SECTION 12a",
                                           "  7 Introduction  ", "12 34", "1 2 3", "Preface", "٣ Intro"]] \
        == [12, 13, None, None, 7, None, None, None, 3]
    searched = re.compile(r"^\s*(\d{1,5})\s+\S|\S\s+(\d{1,5})\s*$")  # what it was read by before

    def by_regex(line: str) -> int | None:
        found = searched.search(line)
        return None if found is None or not any(map(str.isalpha, line)) else int(found.group(1) or found.group(2))

    rng = random.Random(17)
    lines = ["".join(rng.choice("0123456789  \taB.") for _ in range(rng.randint(0, 16))) for _ in range(5000)]
    assert [_end_number(line) for line in lines] == [by_regex(line) for line in lines]


def test_roman_page_numbers_of_front_matter_are_page_numbers():
    pages = [[f"Preface paragraph {word}", "more prose here", roman]
             for word, roman in zip(("one", "two", "three", "four"), ("i", "ii", "iii", "iv"), strict=True)]
    assert [found.get(2) for found in running_lines(pages)] == ["page_number"] * 4


def test_rows_of_figures_at_the_top_of_table_pages_are_kept():
    pages = [[f"{n} {n * 3} {n * 7}", f"{n + 1} {n * 2} {n * 9}", "Row total", "Sum"] for n in range(10, 16)]
    assert all(0 not in found and 1 not in found for found in running_lines(pages))


def _outline(path: Path) -> list[OutlineEntry]:
    from papersift.formats.pdf import page_count_and_outline

    return page_count_and_outline(path.read_bytes(), Settings())[1]


@pytest.mark.skipif(not BENCH_PDFS.is_dir(), reason="../shared/bench-pdfs is absent")
def test_bench_pdfs_outline_titles_are_headings_and_running_heads_leave_the_body(tmp_path):
    with_outline = [p for p in sorted(BENCH_PDFS.glob("*.pdf")) if len(_outline(p)) >= 5]
    assert with_outline, "bench-pdfs holds PDFs with outlines"
    for path in with_outline:
        outline = _outline(path)
        _, markdown, pages = _results(tmp_path / path.stem, path.read_bytes())
        headings = {_heading_key(line.lstrip("#")): len(line) - len(line.lstrip("#"))
                    for line in markdown.splitlines() if line.startswith("#")}
        # an entry that points at no page has no place, and a paragraph of prose the outline
        # lists (js__chelsea_pdta's Word bookmarks of mis-styled paragraphs) is no title
        pointing = [e for e in outline if e.page and not _prose(e.title)]
        found = [e for e in pointing
                 if any(_reads_as(key, _heading_key(e.title)) and level == min(e.level, 6)
                        for key, level in headings.items())]
        assert len(found) >= 0.9 * len(pointing), f"{path.name}: {len(found)} of {len(pointing)} titles"
        left = [page["number"] for page in pages
                if any(block.text in PageContent.from_dict(page).to_markdown().splitlines()
                       for block in PageContent.from_dict(page).set_apart() if block.role != "page_number")]
        assert len(left) <= 0.05 * len(pages), f"{path.name}: running heads left in the body of pages {left}"


def test_a_chapter_title_matches_the_page_that_spells_its_number_out():
    pages = [["CHAPTER TEN: “Property”", "Jack Valenti has been the president", "of the association"],
             ["2. Shorter Terms", "The term of copyright has gone", "from fourteen years"]]
    outline = [OutlineEntry('10: "Property"', 2, 1), OutlineEntry("Shorter Terms", 3, 2),
               OutlineEntry("10: Valenti", 2, 1)]
    found = outline_headings(pages, outline, [{}, {}])
    assert [(b.text, b.level) for b in found[0]] == [("CHAPTER TEN: “Property”", 2)]
    assert [(b.text, b.level) for b in found[1]] == [("2. Shorter Terms", 3)]


def test_a_running_head_of_several_lines_comes_off_line_by_line():
    """Emerald's journals foot each page with "Shift work", "interventions" and the page number."""
    pages = [[f"Shift workers on {word} rosters", f"reported {word} conflicts", f"when {word} training ran",
              "Shift work", "interventions", str(160 + n)]
             for n, word in enumerate(("night", "weekend", "rotating", "split", "early"))]
    assert all(found == {3: "footer", 4: "footer", 5: "page_number"} for found in running_lines(pages))


def test_a_section_head_counts_on_the_pages_it_runs_over_not_the_whole_document():
    words = ("Geodäten", "Kreise", "Dreiecke", "Winkel", "Flächen", "Modelle", "Spiegelungen", "Abstände",
             "Horozyklen", "Isometrien", "Parallelen", "Ebenen", "Kugeln", "Gruppen", "Bahnen", "Pole")
    section = [[f"4.3. HYPERBOLISCHE GEOMETRIE {50 + n}", f"Satz über {w}", f"Beweis mit {w}", f"Folgerung für {w}"]
               for n, w in enumerate(words[:4])]
    other = [[f"{w} im Überblick", f"Wir sehen {w} an", f"und messen {w}", f"{w} zum Schluss"] for w in words[4:]]
    found = running_lines([*other[:6], *section, *other[6:]])
    assert [found[i] for i in range(6, 10)] == [{0: "header"}] * 4
    assert not any(found[i] for i in [*range(6), *range(10, 16)])


def test_the_plan_keeps_an_outline_only_for_a_pdf_that_has_one(tmp_path, pdf_factory):
    from papersift.steps.plan import plan_document
    from papersift.workfiles import get_json, outline_key

    for name, data, expected in (("notes.pdf", pdf_factory.lecture_notes_pdf(SECTIONS[1:]), True),
                                 ("plain.pdf", pdf_factory.numbered_pdf(3), False)):
        store, document = _store_with(tmp_path / name, name, data)
        plan = plan_document(store, document, Settings())
        assert store.exists(outline_key(document.doc_id)) is expected
        assert plan.has_outline is expected, "assemble asks for the outline only when the plan kept one"
    notes_store, notes = _store_with(tmp_path / "again", "notes.pdf", pdf_factory.lecture_notes_pdf(SECTIONS[1:]))
    plan_document(notes_store, notes, Settings())
    assert get_json(notes_store, outline_key(notes.doc_id)) == [
        {"title": "4.3. Hyperbolische Geometrie", "level": 1, "page": 1},
        {"title": "Das Poincaré-Modell", "level": 2, "page": 1},
        {"title": "Geodäten", "level": 2, "page": 2}]


BODY = ["The body of this report runs over several lines of ordinary text, all of it",
        "set in the same size, as the body of any document is, so that its most common",
        "size is plainly the body's and the larger lines stand out from it clearly."]


def test_a_pdf_without_outline_gets_headings_from_its_font_sizes_largest_first(tmp_path, pdf_factory):
    pages = [[("A Report on Sizes", 18), ("Introduction", 14), *[(line, 10) for line in BODY],
              ("Method", 14), *[(line, 10) for line in BODY]],
             [("Results", 14), *[(line, 10) for line in BODY * 2]]]
    text, markdown, page_files = _results(tmp_path, pdf_factory.styled_pdf(pages))
    lines = markdown.splitlines()
    assert [line for line in lines if line.startswith("#")] == [
        "# A Report on Sizes", "## Introduction", "## Method", "## Results"]
    assert not any(line.startswith("#") for line in text.splitlines()), "text.txt as read"
    headings = [b for b in page_files[1]["blocks"] if b["role"] == "heading"]
    assert [{k: v for k, v in b.items() if k != "bbox"} for b in headings] == [
        {"role": "heading", "text": "Results", "line": 0, "lines": 1, "level": 2}]
    body = next(b for b in page_files[1]["blocks"] if b["role"] == "paragraph")
    (hx0, hy0, hx1, hy1), (px0, py0, px1, py1) = headings[0]["bbox"], body["bbox"]
    assert hx0 == px0 and hx1 < px1 and hy1 <= py0, "the heading above its paragraph, the paragraph the wider"
    assert hy1 - hy0 > (py1 - py0) / body["lines"], "a 14-point line stands taller than a 10-point one"
    assert "line_boxes" not in page_files[1], "the lines' boxes stay in the work file: the blocks carry them"


@pytest.mark.parametrize(("rotate", "expected"), [
    (0, [0.121, 0.0732, 0.4219, 0.1075]), (90, [0.8925, 0.121, 0.9268, 0.4219]),
    (180, [0.5781, 0.8925, 0.879, 0.9268]), (270, [0.0732, 0.5781, 0.1075, 0.879])])
def test_text_layer_blocks_are_boxed_by_their_lines_on_the_page_as_displayed(tmp_path, pdf_factory, rotate,
                                                                              expected):
    lines = ["A first line of words on the page here", "and a second one"]
    _, _, page_files = _results(tmp_path, pdf_factory.rotated_pdf(lines, rotate))
    blocks = page_files[0]["blocks"]
    assert [(b["role"], b["lines"]) for b in blocks] == [("paragraph", 2)]
    # text_pdf's lines start 72 pt in from the left of an A4 page (0.121 of its width), 72 pt down,
    # 16 pt apart: shown turned by /Rotate (clockwise), the page's top is on the right at 90, at
    # the bottom at 180, on the left at 270
    assert blocks[0]["bbox"] == pytest.approx(expected, abs=0.002)


def test_blocks_of_glyphs_turned_on_a_page_turned_back_are_boxed_upright(tmp_path, pdf_factory):
    """A landscape table typeset turned and shown upright by /Rotate: its box is the displayed one."""
    lines = ["A first line of words on the page here", "and a second one"]
    _, _, page_files = _results(tmp_path, pdf_factory.turned_text_pdf(lines, 90, rotate=90))
    x0, y0, x1, y1 = page_files[0]["blocks"][0]["bbox"]
    assert x1 - x0 > 3 * (y1 - y0), "two lines of words: wider than tall, as displayed"


def test_a_big_number_in_a_table_is_no_heading(tmp_path, pdf_factory):
    pages = [[*[(line, 10) for line in BODY], ("Region North 1,250", 10), ("42", 24), ("17.5 %", 18),
              *[(line, 10) for line in BODY]]]
    _, markdown, _ = _results(tmp_path, pdf_factory.styled_pdf(pages))
    assert not any(line.startswith("#") for line in markdown.splitlines())
    assert "42" in markdown.splitlines()


def test_a_larger_body_of_prose_makes_no_headings(tmp_path, pdf_factory):
    pages = [[*[(line, 12) for line in BODY * 3], *[(line, 10) for line in BODY * 4]]]
    _, markdown, _ = _results(tmp_path, pdf_factory.styled_pdf(pages))
    assert not any(line.startswith("#") for line in markdown.splitlines()), "an abstract set larger is prose"


def test_a_size_that_made_no_heading_takes_no_level_and_a_sentence_is_no_heading():
    from papersift.structure import font_headings

    lines = ["1,250", "The Title", "A line of body text of its usual length here.", *BODY * 3,
             "Reproduced with permission of the owner."]
    heights = [28.0, 21.0, 11.7, *[11.7] * 9, 16.0]
    found = font_headings([lines], [heights], [{}])
    assert [(b.text, b.level) for b in found[0]] == [("The Title", 1)]


def test_line_heights_are_read_past_characters_beyond_the_crop_box(pdf_factory):
    import io

    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import RectangleObject

    from papersift.pdf_engines import PdfHandle, normalise_text

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_factory.styled_pdf(
        [[("Printer's proof, not part of the page", 8), ("A Report on Sizes", 18), (BODY[0], 10)]]))))
    writer.pages[0].cropbox = RectangleObject((0, 0, 595, 750))  # the proof line lies above it
    out = io.BytesIO()
    writer.write(out)
    with PdfHandle(out.getvalue(), ()) as handle:
        text, _ = handle.text("pdfium", 1)
        lines = normalise_text(text).split("\n")
        heights = handle.line_heights(1, lines)
    assert lines == ["A Report on Sizes", BODY[0]]
    assert heights[0] > 1.6 * heights[1] > 0, "each line's own characters, though the proof line comes first"


def test_a_size_set_once_below_the_title_is_no_heading_but_recurring_section_heads_are():
    from papersift.structure import font_headings

    first = ["The Title", "Ann Author and Bob Author", "Introduction", *BODY * 2]
    second = ["Method", *BODY * 2, "SAMPLE"]
    heights = [[21.0, 15.0, 16.4, *[11.7] * 6], [16.4, *[11.7] * 6, 30.0]]
    found = font_headings([first, second], heights, [{}, {}])
    assert [[(b.text, b.level) for b in page] for page in found] == [
        [("The Title", 1), ("Introduction", 2)], [("Method", 2)]], "the stamp and the author line set once are none"


def test_a_large_line_that_leads_into_no_body_text_is_no_heading():
    from papersift.structure import font_headings

    first = ["The Title", "Introduction", *BODY * 4, "Margin title", "177"]
    second = ["Method", *BODY * 4, "Margin title", "178"]
    heights = [[21.0, 16.4, *[11.7] * 12, 16.4, 16.4], [16.4, *[11.7] * 12, 16.4, 16.4]]
    found = font_headings([first, second], heights, [{}, {}])
    assert [[(b.text, b.level) for b in page] for page in found] == [
        [("The Title", 1), ("Introduction", 2)], [("Method", 2)]], "a head before a page number in its size is none"


def test_a_bare_page_number_on_a_chapters_first_page_and_the_number_in_the_running_head_are_one_series():
    """GNU manuals (texinfo) print the page number alone above a chapter's title on its first page
    and at the end of the running head on the others; a chapter numbered like its page is no head."""
    def body(word: str) -> list[str]:
        return [f"The {word} parser reads a file", f"and writes the {word} array", f"for the {word} tools"]

    pages = [["1", "1 Introduction", *body("first")],
             ["2", "2 Structure handling", "2.1 Syntax", *body("second")],
             ["Chapter 2: Structure handling 3", *body("third")],
             ["Chapter 2: Structure handling 4", *body("fourth")],
             ["5", "3 Utilities", "3.1 Invoking the parser", *body("fifth")],
             ["Chapter 3: Utilities 6", *body("sixth")]]
    found = running_lines(pages)
    assert [page.get(0) for page in found] == ["page_number", "page_number", "header", "header",
                                               "page_number", "header"]
    assert all(1 not in page for page in found), "the chapter titles stay in the body"


def test_an_outline_title_reads_as_the_printed_line_with_its_label_or_hyphen():
    assert _reads_as(_heading_key("2.13. Non-regular files"), _heading_key("2.13. Nonregular files"))
    assert _reads_as(_heading_key("Appendix A Copying Information"), _heading_key("A Copying Information"))
    assert _reads_as(_heading_key("Kapitel 3: Ergebnisse"), _heading_key("Ergebnisse"))
    assert not _reads_as(_heading_key("Our results"), _heading_key("Results")), "a sentence is no label"


def test_a_sentences_end_on_the_line_before_a_title_with_a_colon_is_no_label_of_it():
    """rustdoc's book printed by Chrome (tagged): 'them all.' ends a paragraph above the heading
    '-V/--version: version information'."""
    lines = ["Some flags are unstable; --help will show", "them all.", "-V/--version: version information",
             "Using this flag looks like this:"]
    block = _find_title(lines, _heading_key("-V/--version: version information"), set())
    assert block is not None and (block.line, block.lines) == (2, 1)


def test_a_text_line_that_starts_like_markdown_stays_text_in_document_md(tmp_path, pdf_factory):
    """shared-mime-info's spec prints a config file whose lines start with ``#``: Markdown would
    make each a heading, and a ``---`` line a rule under the line above."""
    pages = [["# This file was automatically generated by the", "# update-mime-database command. DO NOT EDIT!"],
             ["> a line quoted in an e-mail", "the reply below it"]]
    text, markdown, _ = _results(tmp_path, pdf_factory.text_pdf(pages))
    assert "# This file was automatically generated" in text, "text.txt keeps the line as printed"
    assert not [line for line in markdown.splitlines() if line.startswith(("#", ">"))], markdown
    assert "\\# This file was automatically generated" in markdown and "\\> a line quoted" in markdown


def test_a_pdfs_table_stands_in_document_md_where_its_cells_were_read(tmp_path, pdf_factory):
    """document.md had the table's cells as lines of text and the Markdown table again after the
    page; now the table takes its lines' place, boxed, and text.txt keeps the lines as read."""
    store, document = _store_with(tmp_path, "figures.pdf", pdf_factory.table_pdf())
    report = process_document(store, document, Settings(ocr_mode="off", extract_tables=True))
    prefix = f"results/{report.doc_id}/"
    markdown = store.get(prefix + "document.md").decode()
    assert markdown.count("| North | 1,200 | 4% |") == 1 and "North 1,200 4%" not in markdown
    before, table, after = markdown.partition("<!-- table page=1 index=0 -->")
    assert "Table 1: Revenue by region" in before and table and after.lstrip().startswith("| Region |")
    assert "North 1,200 4%" in store.get(prefix + "text.txt").decode()
    blocks = json.loads(store.get(prefix + page_file(1)))["blocks"]
    assert [b["text"] for b in blocks if b["role"] == "caption"] == ["Table 1: Revenue by region"]
    (block,) = [b for b in blocks if b["role"] == "table"]
    assert block["table"] == 0 and block["text"].startswith("| Region | Revenue | Growth |")
    x0, y0, x1, y1 = block["bbox"]
    assert 0 < x0 < x1 < 1 and 0 < y0 < y1 < 0.5


def test_a_table_whose_lines_are_interleaved_with_text_outside_it_follows_the_page():
    from papersift.structure import table_blocks

    boxes = [[0.1, 0.1, 0.4, 0.12], [0.6, 0.1, 0.9, 0.12], [0.1, 0.13, 0.4, 0.15]]  # a column beside the table
    lines = ["a b", "prose beside", "c d"]
    assert table_blocks([(0, [0.05, 0.05, 0.45, 0.2], "| a | b |\n| c | d |")], boxes, lines) == []
    (block,) = table_blocks([(0, [0.05, 0.05, 0.95, 0.2], "| a | b |\n| c | d | prose beside |")], boxes, lines)
    assert (block.line, block.lines, block.table) == (0, 3, 0)


def test_a_table_whose_cells_lack_words_of_its_lines_leaves_them_in_the_text():
    from papersift.structure import table_blocks

    boxes = [[0.1, 0.1, 0.4, 0.12], [0.1, 0.13, 0.4, 0.15]]
    assert table_blocks([(0, [0.05, 0.05, 0.45, 0.2], "| a | b |")], boxes, ["a b", "footnote the cells lost"]) == []


def test_a_label_its_number_and_a_separator_make_a_caption_prose_naming_a_table_does_not():
    from papersift.structure import page_blocks

    lines = ["Figure 3: The harbour at low tide, seen from the breakwater.", "",
             "Table 2 shows how the tonnage grew in every year of the survey, and the text goes on",
             "for a full line of prose as a paragraph does on any page of a report of this kind.", "",
             "Abb. 4 – Der Hafen bei Ebbe", "",
             "Tab. II. Tonnage by year and by quay"]
    roles = [(b.role, b.text[:12]) for b in page_blocks([lines], [])[0]]
    assert roles == [("caption", "Figure 3: Th"), ("paragraph", "Table 2 show"), ("caption", "Abb. 4 – Der"),
                     ("caption", "Tab. II. Ton")]
