"""Page text through the recovery ladder: order, statuses, engine failures, spacing, limits."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pdf_factory import (
    cropped_pdf,
    differences_font_pdf,
    image_only_pdf,
    mixed_pdf,
    numbered_pdf,
    raw_pdf,
    text_pdf,
)

from papersift.errors import EngineError
from papersift.formats import pdf
from papersift.pdf_engines import ENGINE_ORDER, LayoutProbe, PdfHandle, normalise_text
from papersift.quality import PageLayout, TextVerdict
from papersift.settings import Settings

SETTINGS = Settings()


def test_every_page_text_comes_back_in_order() -> None:
    pages = pdf.extract_pages(numbered_pdf(6), SETTINGS, 1, 6)
    assert [p.number for p in pages] == [1, 2, 3, 4, 5, 6]
    assert [p.text for p in pages] == [f"This is page number {n} of the document." for n in range(1, 7)]
    assert all(p.report.status == "clean" and p.report.engine == "pdfium" for p in pages)


def test_a_batch_in_the_middle_returns_only_its_pages() -> None:
    pages = pdf.extract_pages(numbered_pdf(6), SETTINGS, 3, 4)
    assert [p.text for p in pages] == [
        "This is page number 3 of the document.",
        "This is page number 4 of the document.",
    ]


def test_clean_pages_use_pdfium_only_and_fill_the_report() -> None:
    page = pdf.extract_pages(numbered_pdf(1), SETTINGS, 1, 1)[0]
    report = page.report
    assert [a.engine for a in report.attempts] == ["pdfium"]
    assert report.char_count == len(page.text) > 0
    assert report.confidence > 0 and report.reason and report.seconds >= 0
    assert report.errors == [] and report.tables == 0


def test_text_has_unix_newlines_and_no_trailing_spaces_or_form_feeds() -> None:
    page = pdf.extract_pages(text_pdf([["First line   ", "Second line"]]), SETTINGS, 1, 1)[0]
    assert page.text == "First line\nSecond line"
    assert normalise_text("a  \r\nb\x02c\fd\r\n") == "a\nbc\nd"


def test_pages_beyond_max_pages_are_skipped_with_a_reason() -> None:
    pages = pdf.extract_pages(numbered_pdf(5), Settings(max_pages=3), 1, 5)
    assert [p.report.status for p in pages] == ["clean"] * 3 + ["skipped_limit"] * 2
    assert pages[4].text == "" and "max_pages=3" in pages[4].report.reason


def test_image_only_page_needs_ocr_and_is_not_sent_down_the_ladder() -> None:
    page = pdf.extract_pages(image_only_pdf(), SETTINGS, 1, 1)[0]
    assert page.report.status == "needs_ocr"
    assert "image_only" in page.report.signals
    # no text objects at all: no other engine can find a text layer, so none is asked
    assert [a.engine for a in page.report.attempts] == ["pdfium"]


def test_mixed_document_keeps_native_page_clean_and_flags_the_scan() -> None:
    pages = pdf.extract_pages(mixed_pdf(), SETTINGS, 1, 2)
    assert [p.report.status for p in pages] == ["clean", "needs_ocr"]
    assert "native first page" in pages[0].text


def test_differences_font_without_tounicode_needs_ocr_without_climbing_the_ladder() -> None:
    page = pdf.extract_pages(differences_font_pdf(), SETTINGS, 1, 1)[0]
    assert page.report.status == "needs_ocr"
    assert "unmapped_font" in page.report.signals
    assert "no Unicode map" in page.report.reason
    assert "quarterly" not in page.text.lower()
    # the font's glyph names (/g1, /g2 ...) map to no Unicode: no other text engine can do better
    assert [a.engine for a in page.report.attempts] == ["pdfium"]


def test_blank_page_without_drawings_is_clean_and_empty() -> None:
    data = raw_pdf(b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    page = pdf.extract_pages(data, SETTINGS, 1, 1)[0]
    assert page.text == "" and page.report.status == "clean"
    assert "empty" in page.report.signals


# -- the ladder with scripted engines -----------------------------------------------------

Script = dict[str, Callable[[int], str]]


def _script_engines(monkeypatch: pytest.MonkeyPatch, script: Script, layout: PageLayout | None = None) -> None:
    """Replace each engine's text with a function of the page number (raise to fail)."""
    probe = LayoutProbe(layout=layout or PageLayout(), text_objects=10)

    def fake_text(self: PdfHandle, engine: str, number: int) -> tuple[str, LayoutProbe | None]:
        if engine not in script:
            raise EngineError(f"{engine} not scripted")
        return script[engine](number), probe if engine == "pdfium" else None

    monkeypatch.setattr(PdfHandle, "text", fake_text)


def _fake_verdicts(monkeypatch: pytest.MonkeyPatch, verdicts: dict[str, TextVerdict]) -> None:
    def fake_assess(text: str, layout: PageLayout | None = None, nonspace: int | None = None) -> TextVerdict:
        return verdicts[text]

    monkeypatch.setattr(pdf, "assess_text", fake_assess)


GOOD = TextVerdict(score=0.95, suspect=False, corrupt=False, reason="fine")


def test_an_engine_failing_on_one_page_loses_neither_that_page_nor_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_text = PdfHandle.text

    def flaky(self: PdfHandle, engine: str, number: int) -> tuple[str, LayoutProbe | None]:
        if engine == "pdfium" and number == 2:
            raise RuntimeError("pdfium crashed on this page")
        return real_text(self, engine, number)

    monkeypatch.setattr(PdfHandle, "text", flaky)
    pages = pdf.extract_pages(numbered_pdf(3), SETTINGS, 1, 3)
    assert [p.report.status for p in pages] == ["clean", "recovered", "clean"]
    assert pages[1].text == "This is page number 2 of the document."
    assert pages[1].report.engine == "pypdf"
    [error] = pages[1].report.errors
    assert (error.engine, error.page, error.reason) == ("pdfium", 2, "pdfium crashed on this page")
    assert pages[1].report.attempts[0].error == "pdfium crashed on this page"


def test_page_where_every_engine_raises_is_failed_and_the_rest_survive(monkeypatch: pytest.MonkeyPatch) -> None:
    def page_two_fails(n: int) -> str:
        if n == 2:
            raise RuntimeError(f"broken page {n}")
        return f"page {n} text"

    script: Script = dict.fromkeys(ENGINE_ORDER, page_two_fails)
    _script_engines(monkeypatch, script)
    _fake_verdicts(monkeypatch, {"page 1 text": GOOD, "page 3 text": GOOD})
    pages = pdf.extract_pages(numbered_pdf(3), SETTINGS, 1, 3)
    assert [p.report.status for p in pages] == ["clean", "failed", "clean"]
    assert pages[1].text == "" and pages[1].report.engine is None
    assert {e.engine for e in pages[1].report.errors} == set(ENGINE_ORDER) & {
        a.engine for a in pages[1].report.attempts
    }
    assert len(pages[1].report.errors) >= 3


def test_spacing_damage_tries_the_next_engine_and_keeps_the_better_text(monkeypatch: pytest.MonkeyPatch) -> None:
    _script_engines(
        monkeypatch, {"pdfium": lambda n: "WhatisEarthScience?", "pypdf": lambda n: "What is Earth Science?"}
    )
    damaged = TextVerdict(score=0.6, suspect=False, corrupt=False, signals=("spacing_damage",), reason="run together")
    _fake_verdicts(monkeypatch, {"WhatisEarthScience?": damaged, "What is Earth Science?": GOOD})
    page = pdf.extract_pages(numbered_pdf(1), SETTINGS, 1, 1)[0]
    assert page.text == "What is Earth Science?"
    assert (page.report.status, page.report.engine) == ("recovered", "pypdf")
    assert [a.engine for a in page.report.attempts] == ["pdfium", "pypdf"]


def test_spacing_damage_with_no_better_engine_keeps_the_first_text(monkeypatch: pytest.MonkeyPatch) -> None:
    _script_engines(monkeypatch, {"pdfium": lambda n: "Mit arbei terinnen", "pypdf": lambda n: "M i t"})
    damaged = TextVerdict(score=0.6, suspect=False, corrupt=False, signals=("spacing_damage",), reason="split")
    worse = TextVerdict(score=0.3, suspect=False, corrupt=False, signals=("spacing_damage",), reason="split")
    _fake_verdicts(monkeypatch, {"Mit arbei terinnen": damaged, "M i t": worse})
    page = pdf.extract_pages(numbered_pdf(1), SETTINGS, 1, 1)[0]
    assert (page.text, page.report.status, page.report.engine) == ("Mit arbei terinnen", "clean", "pdfium")


def test_good_text_is_never_replaced_by_a_worse_one_and_partial_text_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _script_engines(
        monkeypatch,
        {"pdfium": lambda n: "Partly readable ■■■ text", "pypdf": lambda n: "■■■■■■", "pdftotext": lambda n: ""},
    )
    partial = TextVerdict(score=0.5, suspect=True, corrupt=False, signals=("low_letter_ratio",), reason="odd")
    garbage = TextVerdict(score=0.1, suspect=True, corrupt=True, signals=("glyph_garbage",), reason="junk")
    empty = TextVerdict(score=0.0, suspect=False, corrupt=False, signals=("empty",), reason="nothing")
    _fake_verdicts(monkeypatch, {"Partly readable ■■■ text": partial, "■■■■■■": garbage, "": empty})
    page = pdf.extract_pages(numbered_pdf(1), SETTINGS, 1, 1)[0]
    # an empty "sound" text does not beat readable words
    assert page.text == "Partly readable ■■■ text"
    assert page.report.engine == "pdfium"
    assert page.report.status == "needs_ocr"
    assert any(e.engine == "pdfminer" for e in page.report.errors)


def test_recovery_stops_climbing_once_an_engine_is_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    _script_engines(monkeypatch, {"pdfium": lambda n: "(cid:3)(cid:4)", "pypdf": lambda n: "Readable words"})
    cid = TextVerdict(score=0.0, suspect=True, corrupt=True, signals=("cid_garbage",), reason="cids")
    _fake_verdicts(monkeypatch, {"(cid:3)(cid:4)": cid, "Readable words": GOOD})
    page = pdf.extract_pages(numbered_pdf(1), SETTINGS, 1, 1)[0]
    assert (page.text, page.report.status, page.report.engine) == ("Readable words", "recovered", "pypdf")
    assert [a.engine for a in page.report.attempts] == ["pdfium", "pypdf"]


def test_suspect_text_on_a_page_with_images_needs_ocr(monkeypatch: pytest.MonkeyPatch) -> None:
    _script_engines(
        monkeypatch, dict.fromkeys(ENGINE_ORDER, lambda n: "zz"), layout=PageLayout(image_count=1, image_area_ratio=0.9)
    )
    bad = TextVerdict(score=0.1, suspect=True, corrupt=True, signals=("glyph_garbage",), reason="junk")
    _fake_verdicts(monkeypatch, {"zz": bad})
    page = pdf.extract_pages(numbered_pdf(1), SETTINGS, 1, 1)[0]
    assert page.report.status == "needs_ocr"


def test_page_dicts_are_what_asdict_gives_only_built_flat() -> None:
    """PageContent.to_dict skips asdict's deep recursion for speed; the JSON must stay the same
    (the report's own dicts: tests/unit/test_report_models.py)."""
    import dataclasses

    from papersift.content import PageContent, Table
    from papersift.structure import Block, OutlineEntry

    page = pdf.extract_pages(differences_font_pdf(), SETTINGS, 1, 1)[0]
    page.tables.append(Table(rows=[["a", "b"], ["1", "2"]], title="t"))
    page.records.append({"a": [1, 2]})
    assert page.report.attempts and page.report.signals
    # a unit's embedded pictures (bytes) are its OCR input, never in its JSON; a unit without
    # structure blocks, hyphen breaks or line heights is written as before there were any
    page.line_heights, page.line_boxes, page.bold_lines = [], [], []
    expected = {name: value for name, value in dataclasses.asdict(page).items()
                if name not in ("embedded", "blocks", "hyphen_breaks", "line_heights", "line_boxes", "tag_headings",
                                "bold_lines", "unverified_text", "picture_text_from")}
    assert page.to_dict() == {**expected, "report": page.report.to_dict()}
    # a block without a box (a text-layer block) is written without one
    page.blocks.append(Block(role="header", text="4.3. HYPERBOLISCHE GEOMETRIE 57", line=0))
    page.blocks.append(Block(role="paragraph", text="read by OCR", line=1, bbox=[0.1, 0.2, 0.9, 0.3]))
    blocks = [{key: value for key, value in block.items() if not (key in ("bbox", "table") and value is None)}
              for block in dataclasses.asdict(page)["blocks"]]
    assert page.to_dict() == {**expected, "report": page.report.to_dict(), "blocks": blocks}
    assert "bbox" not in blocks[0] and blocks[1]["bbox"] == [0.1, 0.2, 0.9, 0.3]
    page.hyphen_breaks.append(["exam", "ple"])
    assert page.to_dict()["hyphen_breaks"] == [["exam", "ple"]]
    page.line_heights = [11.7, 0.0]
    assert page.to_dict()["line_heights"] == [11.7, 0.0]
    page.line_boxes = [[0.1, 0.2, 0.9, 0.22], []]
    assert page.to_dict()["line_boxes"] == [[0.1, 0.2, 0.9, 0.22], []]
    page.tag_headings.append(OutlineEntry(title="Introduction", level=1, page=1))
    assert page.to_dict()["tag_headings"] == [{"title": "Introduction", "level": 1, "page": 1}]
    assert PageContent.from_dict(page.to_dict()).tag_headings == page.tag_headings


def test_a_crop_box_that_cuts_through_a_line_does_not_cut_the_line_out_of_the_text() -> None:
    """pj__endchar.pdf's kind: the crop box shows one letter of a title; the page's text is the title."""
    title = "The quarterly report shows revenue growth"
    # text_pdf draws the line at x=72 (11 pt Helvetica), its baseline 72 pt below the top of A4
    (page,) = pdf.extract_pages(cropped_pdf([title], (100, 760, 130, 780)), SETTINGS, 1, 1)
    assert page.text == title
    assert page.report.status == "clean" and "text_beyond_page_box" in page.report.signals


def test_text_wholly_outside_the_crop_box_stays_out() -> None:
    """Printer's marks and slug lines beyond the crop box are not the page's text."""
    lines = ["Job 4711 proof, printed 2026-12-03", *[""] * 5, "The page as it is shown to readers holds this line."]
    # the first line's baseline is 770 pt up, the last one's 674 pt: the box shows the last alone
    (page,) = pdf.extract_pages(cropped_pdf(lines, (0, 600, 595, 700)), SETTINGS, 1, 1)
    assert page.text == lines[-1]
    assert "text_beyond_page_box" not in page.report.signals


def test_a_batch_of_a_page_tree_the_plan_found_sound_does_not_walk_the_tree_again(monkeypatch) -> None:
    """The probe walks pdfium's page tree to its last page: every batch of a long document paid it
    (80 ms a batch at 15,000 pages), so batches grew with the document's length."""
    from pdf_factory import numbered_pdf

    from papersift import pdf_engines
    from papersift.formats.pdf import page_count_and_outline

    data = numbered_pdf(30)
    count, _outline, sound = page_count_and_outline(data, SETTINGS)
    assert (count, sound) == (30, 30)
    probes: list[int] = []
    real = pdf_engines._page_tree_doubt
    monkeypatch.setattr(pdf_engines, "_page_tree_doubt", lambda *a: probes.append(1) or real(*a))
    with pdf.PdfPages(data, SETTINGS, sound_tree_pages=sound) as document:
        assert document.page(12).text == "This is page number 12 of the document."
    assert probes == []
    with pdf.PdfPages(data, SETTINGS, sound_tree_pages=29) as document:  # not this tree: checked as before
        document.page(1)
    assert probes == [1]
