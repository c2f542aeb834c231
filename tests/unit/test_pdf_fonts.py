"""Font evidence on PDFs built in code: the broken layers that used to pass as clean, the rung
that can decode a font, and what a fallback's text must account for to replace pdfium's."""

from __future__ import annotations

import codecs

import pytest
from pdf_factory import (
    broken_page_tree_pdf,
    byte_swapped_map_pdf,
    differences_font_pdf,
    empty_pages_pdf,
    numbered_pdf,
    predefined_cmap_pdf,
    subset_truetype_without_map_pdf,
    text_pdf,
    truetype_without_cmap_pdf,
    vertical_cjk_pdf,
)

from papersift.errors import EmptyInputError
from papersift.formats import pdf
from papersift.ocr.routing import RENDERING_CHECK
from papersift.pdf_engines import LayoutProbe, PdfHandle
from papersift.pdf_fonts import (
    BUILTIN_ENCODING,
    NONSTANDARD_NAMES,
    PREDEFINED_CMAP,
    TRUETYPE_WITHOUT_CMAP,
    is_math_font,
)
from papersift.quality import PageLayout
from papersift.settings import Settings

SETTINGS = Settings()
JAPANESE = "東京都は日本の首都であり、多くの人々が働いています。"


def _page(data: bytes) -> pdf.PageContent:
    (page,) = pdf.extract_pages(data, SETTINGS, 1, 1)
    return page


# -- what the fonts say ---------------------------------------------------------------------


@pytest.mark.parametrize(("data", "kind"), [
    (differences_font_pdf(), NONSTANDARD_NAMES),
    (truetype_without_cmap_pdf(), TRUETYPE_WITHOUT_CMAP),
    (predefined_cmap_pdf(), PREDEFINED_CMAP),
    (subset_truetype_without_map_pdf(), BUILTIN_ENCODING),
])
def test_font_evidence_names_the_doubt_and_the_glyphs_it_covers(data: bytes, kind: str) -> None:
    with PdfHandle(data, ()) as handle:
        evidence = handle.font_evidence(1)
    assert evidence is not None
    assert evidence.kinds == (kind,)
    assert evidence.doubtful_share == 1.0 and evidence.glyphs > 0


def test_fonts_with_a_standard_encoding_raise_no_doubt() -> None:
    with PdfHandle(text_pdf(["An ordinary line in Helvetica, WinAnsi encoded."]), ()) as handle:
        evidence = handle.font_evidence(1)
    assert evidence is not None
    assert (evidence.kinds, evidence.doubtful_glyphs, evidence.unmapped_chars) == ((), 0, 0)
    assert evidence.glyphs > 30


# -- verdicts they change -------------------------------------------------------------------


def test_a_few_punctuation_glyphs_from_truetype_without_cmap_need_ocr() -> None:
    page = _page(truetype_without_cmap_pdf(b'!"#$%'))
    assert page.text == '!"#$%'  # what pdfium reads: the codes, not the drawn letters
    assert page.report.status == "needs_ocr"
    assert "unmapped_font" in page.report.signals
    assert [a.engine for a in page.report.attempts] == ["pdfium"]


@pytest.mark.parametrize("flags", [32, 4], ids=["non-symbolic", "symbolic"])
def test_a_word_from_a_subset_truetype_font_with_no_unicode_map_is_not_trusted(flags: int) -> None:
    """Class C of issue 17: every engine reads '"7+%-' where the page shows 'Phone'; five
    characters are too few for any dictionary, so the fonts judge, and they map nothing."""
    page = pdf.extract_pages(subset_truetype_without_map_pdf(flags=flags), Settings(ocr_mode="off"), 1, 1)[0]
    assert page.text == '"7+%-'
    assert page.report.status == "needs_ocr"
    assert "unverified_font" in page.report.signals
    assert "builtin_encoding" in page.report.reason


def test_an_uncertain_page_is_sent_to_be_checked_against_its_rendering_when_ocr_is_on() -> None:
    page = _page(subset_truetype_without_map_pdf())
    assert page.ocr_scope == RENDERING_CHECK


def test_a_subset_truetype_font_with_a_standard_encoding_stays_trusted() -> None:
    """The file says what its codes mean (WinAnsi): the text is what the codes say."""
    page = _page(subset_truetype_without_map_pdf("Phone", b"Phone", encoding=b"/Encoding /WinAnsiEncoding"))
    assert (page.report.status, page.text, page.ocr_scope) == ("clean", "Phone", "")


def test_a_page_number_alone_is_not_sent_to_ocr() -> None:
    page = _page(text_pdf(["- 12 -"]))
    assert page.report.status == "clean"


def test_cjk_through_a_predefined_cmap_is_corroborated_by_pdfminer() -> None:
    """No dictionary can check Japanese: the engine that carries the collection's CMaps must
    read the same characters before pdfium's text is trusted."""
    page = _page(predefined_cmap_pdf(JAPANESE))
    assert page.report.status == "clean" and page.report.engine == "pdfium"
    assert page.text == JAPANESE
    assert [a.engine for a in page.report.attempts] == ["pdfium", "pdfminer"]


def test_cjk_that_pdfium_misdecodes_through_a_predefined_cmap_is_taken_from_pdfminer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real case decodes to wrong but valid CJK in pdfium (look-alike characters); here
    pdfium's text of a real predefined-CMap font is replaced by such a reading."""
    lookalike = JAPANESE.translate(str.maketrans("東京日本首都人働", "東亰曰夲首郁入動"))
    real_text = PdfHandle.text

    def misreading(self: PdfHandle, engine: str, number: int) -> tuple[str, LayoutProbe | None]:
        text, probe = real_text(self, engine, number)
        return (lookalike, probe) if engine == "pdfium" else (text, probe)

    monkeypatch.setattr(PdfHandle, "text", misreading)
    page = _page(predefined_cmap_pdf(JAPANESE))
    assert (page.report.status, page.report.engine) == ("recovered", "pdfminer")
    assert page.text == JAPANESE
    assert "engines_disagree" in page.report.attempts[0].signals or "pdfminer" in page.report.reason


def test_undecodable_fonts_end_the_ladder_at_pdfium() -> None:
    page = _page(differences_font_pdf())
    assert page.report.status == "needs_ocr"
    assert [a.engine for a in page.report.attempts] == ["pdfium"]


# -- PDFs pdfium and pypdf cannot open ------------------------------------------------------


def test_a_broken_page_tree_is_read_by_pdfminer_and_reported_recovered() -> None:
    data = broken_page_tree_pdf("The quarterly report shows revenue growth in every region of the company.")
    assert pdf.page_count(data, SETTINGS) == 1
    page = _page(data)
    assert page.report.status == "recovered"
    assert page.report.engine == "pdfminer"
    assert "The quarterly report shows revenue growth" in page.text
    assert "pdfium and pypdf cannot open the PDF" in page.report.reason


def test_a_page_tree_of_no_pages_is_still_empty() -> None:
    with pytest.raises(EmptyInputError):
        pdf.page_count(empty_pages_pdf(), SETTINGS)


# -- a fallback must account for the page's glyphs -------------------------------------------


def test_a_fallback_holding_a_fraction_of_the_glyphs_never_replaces_pdfium(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench-pdfs' htmldoc file: pdfminer drops the glyphs it cannot decode and keeps the running
    footer, which reads as clean text; 97% of the page would be lost behind 'recovered'."""
    prose = ("Earth science is the study of the planet on which we live, including its rocks, oceans, atmosphere "
             "and the living things that depend on them. Geologists examine how mountains are built and worn down, "
             "how earthquakes release energy stored in the crust, and how minerals form over millions of years. ")
    damaged = codecs.encode(prose * 6, "rot13")  # word-shaped garbage (a cipher), ~1,700 glyphs
    footer = "Sprouts - http://sprouts.aisnet.org/9-37 and the journal's running footer line"
    probe = LayoutProbe(layout=PageLayout(), text_objects=40)

    def scripted(self: PdfHandle, engine: str, number: int) -> tuple[str, LayoutProbe | None]:
        return (damaged, probe) if engine == "pdfium" else (footer, None)

    monkeypatch.setattr(PdfHandle, "text", scripted)
    page = _page(numbered_pdf(1))
    assert page.report.status in ("needs_ocr", "corrupt_unrecoverable")
    assert page.report.engine == "pdfium"
    assert "sprouts" not in page.text
    later = page.report.attempts[1:]
    assert later and all("partial_coverage" in a.signals for a in later)
    assert "read only" in page.report.reason


# -- vertical writing ------------------------------------------------------------------------


def _pdfium_reads_unembedded_cjk() -> bool:
    """Whether this machine has a CJK font pdfium substitutes for the fixture's unembedded one
    (Debian's fonts-droid-fallback, which ghostscript pulls in): the fixture then reads in pdfium,
    in the content stream's column order, and the case becomes a reading-order fix."""
    with PdfHandle(vertical_cjk_pdf(), ()) as handle:
        return bool(handle.text("pdfium", 1)[0].strip())


def test_vertical_japanese_is_read_in_columns_from_right_to_left() -> None:
    """pypdf (and pdfium, where a system CJK font lets it read the page) keep the content
    stream's column order, left to right: pdfminer, picked for the -V CMap, lays the columns out."""
    columns = ("東京都は日本の", "首都であり多く", "の人々が働く")
    page = _page(vertical_cjk_pdf(columns))
    assert page.report.engine == "pdfminer"
    assert "".join(page.text.split()) == "".join(columns)
    assert "pypdf" not in [a.engine for a in page.report.attempts]
    if _pdfium_reads_unembedded_cjk():  # the same characters, reordered: a reading-order fix
        assert page.report.status == "clean" and "column_order" in page.report.signals
    else:  # pdfium read nothing: another engine recovered the text
        assert page.report.status == "recovered"


def test_column_order_counts_the_steps_that_follow_the_columns_right_to_left() -> None:
    ranks = {"あ": [0], "い": [1], "う": [2], "日": [3], "本": [4], "の": [5, 7], "語": [6]}  # あいう日本の語の
    assert pdf._column_order("あいう\n日本の語の", ranks) == 1.0
    assert pdf._column_order("日本の語の\nあいう", ranks) == pytest.approx(6 / 7)
    assert pdf._column_order("", ranks) == 0.0


def test_text_objects_pdfium_cannot_read_are_not_an_empty_page() -> None:
    if _pdfium_reads_unembedded_cjk():
        pytest.skip("a system CJK font lets pdfium read the fixture: the case needs a machine without one "
                    "(CI's, which bootstrap.sh sets up)")
    page = _page(vertical_cjk_pdf())
    assert page.report.attempts[0].engine == "pdfium"
    assert "unread_text" in page.report.attempts[0].signals
    assert page.report.status == "recovered"


@pytest.mark.parametrize("name", ["ABCDEF+CMEX10", "CMSY7", "CMMI12", "QRSTUV+MSAM10", "MSBM10", "EUFM10", "RSFS10",
                                  "LMMathExtension10-Regular", "txsys", "PXEX", "mathx10", "stmary10", "wasy10",
                                  "lasy10"])
def test_tex_math_fonts_are_recognised_by_their_base_font_name(name: str) -> None:
    assert is_math_font(name)


@pytest.mark.parametrize("name", ["ABCDEF+CMR10", "Helvetica", "TimesNewRomanPSMT", "CMBX12", "Symbol", "Mathilde"])
def test_text_fonts_are_not_taken_for_math_fonts(name: str) -> None:
    assert not is_math_font(name)


def test_a_tounicode_map_in_the_wrong_byte_order_is_read_swapped_back() -> None:
    """om__cmyk.pdf's kind: '䴀甀氀' for 'Mul'; no script has text of that shape, and the swapped
    reading is the page's, recovered."""
    page = _page(byte_swapped_map_pdf())
    assert page.text == "The quarterly report shows revenue growth\nin every region of the company"
    assert page.report.status == "recovered" and "byte_swapped_map" in page.report.signals
    assert page.ocr_scope == ""
