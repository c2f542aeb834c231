"""Paragraphs, list items and end-of-line hyphenation in PDFs' document.md (issue 19): lines joined
on evidence, words mended only where the document or the word lists say so, text.txt untouched."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_pipeline import _store_with

from papersift.formats.pdf import extract_pages, page_count
from papersift.layout import page_file
from papersift.lexicon import lexicon
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.structure import (
    LINES,
    LIST_ITEM,
    PARAGRAPH,
    Block,
    DocumentWords,
    hyphenated,
    join_lines,
    markdown_body,
    paragraphs,
)

ROOT = Path(__file__).resolve().parents[3] / "shared"
FOLDERS = (ROOT / "corpus" / "files", ROOT / "bench-pdfs" / "files")
PROSE = ["The lecture opens with the plane and its lines, drawn as they are",
         "in the model, and goes on to the distances between its points, which",
         "it measures along the geodesics."]


def _never(word: str) -> bool:
    return False


def _words(*lines: str) -> DocumentWords:
    return DocumentWords([list(lines)])


def test_a_word_broken_over_a_line_is_mended_where_the_word_lists_know_it():
    assert join_lines("a good exam-", "ple of it", _words(), lambda w: w == "example") == "a good example of it"


def test_a_word_broken_over_a_line_is_mended_where_the_document_prints_it_whole():
    words = _words("the Poincaré disc model", "and the discmodel")
    assert join_lines("the disc-", "model again", words, _never) == "the discmodel again"


def test_a_hyphen_stays_where_nothing_says_the_word_is_one():
    assert join_lines("a well-", "known proof", _words(), _never) == "a well-known proof"


def test_a_hyphen_stays_where_the_document_prints_the_compound_even_if_the_word_lists_know_the_whole():
    words = _words("a data-base of the results")
    assert join_lines("the data-", "base grows", words, lambda w: True) == "the data-base grows"


def test_a_prefix_left_hanging_before_a_conjunction_keeps_its_hyphen_and_a_space():
    assert join_lines("both pre-", "and post-conditions", _words(), lambda w: True) == "both pre- and post-conditions"


def test_numbers_and_capitals_after_a_hyphen_are_never_joined_into_a_word():
    assert join_lines("the years 1990-", "2000 and after", _words(), lambda w: True) == "the years 1990-2000 and after"
    assert join_lines("das Poincaré-", "Modell", _words(), lambda w: True) == "das Poincaré-Modell"


def test_a_dash_at_the_end_of_a_line_is_punctuation_and_the_lines_join_with_a_space():
    assert join_lines("as the author said -", "then left", _words(), lambda w: True) == "as the author said - then left"
    assert join_lines("as the author said –", "then left", _words(), lambda w: True) == "as the author said – then left"


def test_a_word_the_text_layer_joined_over_a_hyphen_counts_as_printed_whole_only_elsewhere():
    joined = DocumentWords([["a wellknown proof"]], [[["well", "known"]]])
    assert hyphenated("well", "known", joined, _never) == "well-known"
    printed = DocumentWords([["a wellknown proof", "wellknown again"]], [[["well", "known"]]])
    assert hyphenated("well", "known", printed, _never) == "wellknown"


def test_lines_of_a_paragraph_join_until_a_short_line_ends_a_sentence():
    lines = [*PROSE, "A second paragraph starts here and runs on for about as long as the",
             "first did."]
    found = paragraphs(lines, set(), typical=70, words=_words(*lines), known=_never)
    assert [(b.role, b.line, b.lines) for b in found] == [(PARAGRAPH, 0, 3), (PARAGRAPH, 3, 2)]
    assert found[0].text == " ".join(PROSE)


def test_a_full_line_ending_a_sentence_does_not_end_its_paragraph():
    lines = ["The first sentence of the paragraph ends right at the end of line one.",
             "and the paragraph goes on."]
    assert len(paragraphs(lines, set(), typical=70, words=_words(*lines), known=_never)) == 1


def test_blank_lines_and_lines_taken_by_headings_break_paragraphs():
    lines = [PROSE[0], "", PROSE[1], "Heading", PROSE[1]]
    found = paragraphs(lines, {3}, typical=70, words=_words(*lines), known=_never)
    assert [(b.line, b.lines) for b in found] == [(0, 1), (2, 1), (4, 1)]


def test_bullets_and_enumerators_open_list_items_and_their_next_lines_go_on_in_them():
    lines = ["Three rules hold for every model of the plane, listed here in order:",
             "• the first rule, which holds for every pair of points and lines",
             "in the plane;", "- the second;", "1. the third;", "2) the fourth;", "a) the fifth;",
             "(iv) the sixth;", "1990. The year was a long one, and it went on and on for all of us."]
    found = paragraphs(lines, set(), typical=70, words=_words(*lines), known=_never)
    assert [b.role for b in found] == [PARAGRAPH] + [LIST_ITEM] * 6 + [PARAGRAPH]
    assert found[1].text == "• the first rule, which holds for every pair of points and lines in the plane;"
    body = markdown_body(lines, found).splitlines()
    assert body[2:8] == ["- the first rule, which holds for every pair of points and lines in the plane;",
                         "- the second;", "1. the third;", "2) the fourth;", "- a) the fifth;", "- (iv) the sixth;"]


def test_a_page_of_short_lines_keeps_its_lines_each_in_a_block_so_a_block_export_has_them_all():
    lines = ["Page 3", "Notice Date", "06/22/2015", "", "07/01/2015", "Layoff Permanent"]
    blocks = paragraphs(lines, {0}, typical=12, words=_words(*lines), known=_never)
    assert [(b.role, b.text, b.line, b.lines) for b in blocks] == [
        (LINES, "Notice Date\n06/22/2015", 1, 2), (LINES, "07/01/2015\nLayoff Permanent", 4, 2)]
    header = Block(role="header", text="Page 3", line=0)
    assert markdown_body(lines, [header, *blocks]) == markdown_body(lines, [header]) \
        == "Notice Date\n06/22/2015\n\n07/01/2015\nLayoff Permanent"


def test_rows_ending_in_figures_are_not_run_together():
    lines = ["07/17/2015 07/13/2015 American Management Services LLC Monterey 56",
             "09/18/2015 07/20/2015 Actavis, Inc. Corona 45 Layoff Permanent"]
    assert len(paragraphs(lines, set(), typical=60, words=_words(*lines), known=_never)) == 2


def test_markdown_sets_paragraphs_apart_and_leaves_lines_no_block_covers():
    lines = ["first line", "of one", "a line of its own"]
    blocks = [Block(role=PARAGRAPH, text="first line of one", line=0, lines=2)]
    assert markdown_body(lines, blocks) == "first line of one\n\na line of its own"


def test_a_pdf_gets_paragraphs_with_its_hyphenation_mended_and_text_txt_as_read(tmp_path, pdf_factory):
    lines = ["The lecture begins with an exam-", "ple of a well-", "known proof about pre-",
             "and post-conditions, and the years 1990-", "2000 matter to it."]
    store, document = _store_with(tmp_path, "notes.pdf", pdf_factory.text_pdf([lines, lines]))
    report = process_document(store, document, Settings(ocr_mode="off"))
    prefix = f"results/{report.doc_id}/"
    text = store.get(prefix + "text.txt").decode()
    markdown = store.get(prefix + "document.md").decode()
    assert "an example of a wellknown proof about preand post-conditions" in text, "text.txt as pdfium reads it"
    assert markdown.count("The lecture begins with an example of a well-known proof about pre- and "
                          "post-conditions, and the years 1990-2000 matter to it.") == 2
    page = json.loads(store.get(prefix + page_file(1)))
    assert [b["role"] for b in page["blocks"]] == [PARAGRAPH]
    assert page["hyphen_breaks"] == [["exam", "ple"], ["well", "known"], ["pre", "and"]]


def _pdfs() -> list[Path]:
    return [path for folder in FOLDERS if folder.is_dir() for path in sorted(folder.glob("*.pdf"))]


@pytest.mark.skipif(not _pdfs(), reason="neither the corpus nor bench-pdfs is here")
def test_hyphen_repairs_over_the_corpus_and_bench_pdfs_never_join_two_words_printed_as_a_compound():
    """Every join made is listed (``-s`` shows them); none joins two dictionary words that the
    document also prints hyphenated as a compound."""
    known = lexicon().knows
    settings = Settings(ocr_mode="off")
    joins, wrong = [], []
    for path in _pdfs():
        data = path.read_bytes()
        try:
            pages = extract_pages(data, settings, 1, min(page_count(data, settings), 60))
        except Exception:  # a corpus file that is no readable PDF has no text layer to judge
            continue
        text = "\n".join(page.text for page in pages).casefold()
        words = DocumentWords([page.body_lines() for page in pages], [page.hyphen_breaks for page in pages])
        for page in pages:
            for head, tail in page.hyphen_breaks:
                if hyphenated(head, tail, words, known) != head + tail:
                    continue
                joins.append(f"{path.name} p{page.number}: {head}-{tail} -> {head + tail}")
                compound = re.escape(f"{head}-{tail}".casefold())
                if known(head.casefold()) and known(tail.casefold()) and re.search(rf"\b{compound}\b", text):
                    wrong.append(joins[-1])
    print("\n".join(joins))
    assert joins, "the corpus holds words broken over lines"
    assert not wrong, wrong


def test_a_word_printed_whole_is_counted_between_non_word_characters_however_many_are_asked():
    from papersift.structure import MAX_WORDS_FOUND

    lines = [["uplinks _uplink uplink2 and (uplink)", "uplink é-uplink"], ["welldone"]]
    words = DocumentWords(lines, [[["well", "done"]]])
    assert words._count("uplink") == 3 and words._count("uplinks") == 1 and words._count("link") == 0
    assert not words.prints_whole("welldone"), "joined by the text layer: no evidence"
    for k in range(MAX_WORDS_FOUND):
        words.prints_whole(f"never{k}")
    assert words._count("uplink2") == 1 and words._count("upl") == 0, "the one count of all words agrees"
