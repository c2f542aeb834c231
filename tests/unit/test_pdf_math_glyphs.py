"""TeX's math fonts on pages built in code and on real LaTeX papers: their raw glyph codes (big
parentheses that pdfium writes as U+0012) are formulas' delimiters and symbols, read as such;
the page stays trusted from its text layer, and raw codes of any other font are still garbage."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from corpus_cases import BENCH_PDFS, CORPUS
from pdf_factory import math_font_pdf
from pypdf import PdfReader, PdfWriter

from papersift import tex_glyphs
from papersift.formats import pdf
from papersift.pdf_engines import PdfHandle
from papersift.pdf_fonts import RAW_CODE
from papersift.settings import Settings

OCR_OFF = Settings(ocr_mode="off")


def _page(data: bytes, settings: Settings = OCR_OFF) -> pdf.PageContent:
    (page,) = pdf.extract_pages(data, settings, 1, 1)
    return page


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("fixture", [
    pytest.param({}, id="type1-differences-with-tex-names"),
    pytest.param({"differences": None}, id="type1-builtin-encoding-read-by-the-omx-table"),
    pytest.param({"type3": True}, id="type3"),
    pytest.param({"base_font": "CMEX10"}, id="no-subset-tag"),
])
def test_cmex_parentheses_drawn_as_raw_codes_read_as_parentheses_and_the_page_stays_clean(
        fixture: dict[str, object]) -> None:
    page = _page(math_font_pdf(**fixture))  # type: ignore[arg-type]
    assert page.report.status == "clean", page.report.reason
    assert [a.engine for a in page.report.attempts] == ["pdfium"]  # no rung down the ladder
    assert "math_glyphs" in page.report.signals and "glyph_garbage" not in page.report.signals
    assert "CMEX10" in page.report.reason
    assert "( x + y ) = ( a + b )" in _words(page.text)
    assert not RAW_CODE.search(page.text)


def test_a_page_dense_with_formulas_is_read_too() -> None:
    """More raw codes than are looked up one by one (84): the page's fonts are checked for a math
    font first, and it has one."""
    page = _page(math_font_pdf(repeat=3))
    assert page.report.status == "clean" and "math_glyphs" in page.report.signals
    assert "84 glyph codes" in page.report.reason
    assert _words(page.text).count("( x + y ) = ( a + b )") == 21


def test_a_math_font_named_by_tex_glyph_names_raises_no_font_doubt() -> None:
    """/parenleftbigg is no Adobe Glyph List name, but it says what the glyph is: the font's
    dictionary is no evidence of a broken layer (a short page's verdict asks it)."""
    with PdfHandle(math_font_pdf(), ()) as handle:
        evidence = handle.font_evidence(1)
    assert evidence is not None and evidence.kinds == ()


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_a_math_page_shown_turned_reads_its_delimiters_the_same(rotate: int) -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(math_font_pdf())))
    writer.pages[0].rotate(rotate)
    out = io.BytesIO()
    writer.write(out)
    page = _page(out.getvalue())
    assert page.report.status == "clean" and "math_glyphs" in page.report.signals
    assert "( x + y ) = ( a + b )" in _words(page.text) and not RAW_CODE.search(page.text)


def test_raw_codes_of_a_text_font_are_still_glyph_garbage() -> None:
    """The same page with the same glyph names, drawn by a font that is not one of TeX's math
    fonts: pdfium's text is judged as before (its raw codes are a broken layer)."""
    page = _page(math_font_pdf(base_font="ABCDEF+F37"))
    first = page.report.attempts[0]
    assert first.engine == "pdfium" and "glyph_garbage" in first.signals
    assert "math_glyphs" not in page.report.signals
    assert (page.report.status, page.report.engine) != ("clean", "pdfium")


def test_a_renumbered_math_font_is_read_by_its_differences_not_its_familys_codes() -> None:
    """Ghostscript numbers a subset's glyphs anew (code 3 is /prime, where cmsy's own code 3 is
    the asterisk): the font's glyph name decides."""
    page = _page(math_font_pdf(base_font="ABCDEF+CMSY10", delimiters=(b"\x03 ", b" \x03"), differences="3 /prime"))
    assert page.report.status == "clean" and "math_glyphs" in page.report.signals
    assert "′ x + y ′" in _words(page.text) and "∗" not in page.text


def test_an_unknown_symbol_of_a_math_font_is_dropped_and_said() -> None:
    page = _page(math_font_pdf(base_font="wasy10", differences="18 /g18 /g19"))
    assert page.report.status == "clean" and "math_glyphs" in page.report.signals
    assert "28 unknown dropped" in page.report.reason
    assert "x + y = a + b" in _words(page.text) and not RAW_CODE.search(page.text)


def test_a_sound_math_page_is_not_sent_to_ocr() -> None:
    page = _page(math_font_pdf(), Settings())  # OCR on (local-first)
    assert page.report.status == "clean"
    assert not page.ocr_scope


# -- the tables ------------------------------------------------------------------------------


@pytest.mark.parametrize(("font", "code", "name", "expected"), [
    ("CMEX10", 0x12, None, "("),  # parenleftbigg
    ("CMEX10", 0x1B, None, "}"),  # bracerightbigg
    ("LMMathExtension10-Regular", 0x5A, None, "∫"),  # integraldisplay
    ("CMSY10", 0x1C, None, "≪"),  # lessmuch: what the corpus's DPR paper draws
    ("CMBSY10", 0x14, None, "≤"),
    ("CMMI10", 0x0F, None, "ϵ"),  # epsilon1
    ("MSAM10", 0x03, None, "□"),
    ("MSBM10", 0x1C, None, "≁"),
    ("CMSY10", 0x03, "prime", "′"),  # the glyph name wins over the family's code
    ("CMSY10", 0x03, "g3", "∗"),  # a name that says nothing leaves the code to the family
    ("LMMathSymbols10-Regular", 0x06, "bardbl", "‖"),  # TeX names beyond the Adobe Glyph List
    ("CMEX10", 0x75, None, ""),  # a radical's piece: no character of its own
    ("stmary10", 0x05, None, ""),  # a family without a table here: dropped
])
def test_math_glyphs_are_read_by_name_then_by_their_familys_encoding(font: str, code: int, name: str | None,
                                                                      expected: str) -> None:
    assert tex_glyphs.math_glyph(font, code, name) == expected


def test_every_control_code_of_the_tabled_encodings_has_a_reading() -> None:
    for font in ("CMEX10", "CMSY10", "CMMI10", "MSAM10", "MSBM10"):
        encoding = tex_glyphs.encoding_of(font)
        assert encoding is not None and set(range(0x20)) <= encoding.keys(), font


# -- real LaTeX papers -------------------------------------------------------------------------

#: pages whose math fonts draw raw codes, and a symbol each must read as
REAL_MATH_PAGES = [
    # pdfTeX, embedded Type 1 CMSY10/CMEX10 in their own encodings (the DPR paper of MANIFEST-trust)
    pytest.param(CORPUS / "files" / "us__multi-column.pdf", {2: "k ≪ |C|", 7: "("}, id="us__multi-column"),
    # Ghostscript, Latin Modern as CFF subsets renumbered by /Differences, ToUnicode maps lacking those codes
    pytest.param(BENCH_PDFS / "files" / "pd__issue-1061-colour-space-stack.pdf",
                 {3: "‖f(x", 7: "M′ = A", 10: "ϵ"}, id="pd__issue-1061-colour-space-stack"),
]


@pytest.mark.corpus
@pytest.mark.parametrize(("path", "symbols"), REAL_MATH_PAGES)
def test_real_latex_pages_read_their_math_fonts_raw_codes_as_symbols(path: Path, symbols: dict[int, str]) -> None:
    if not path.is_file():
        pytest.skip(f"{path.name} not present")
    data = path.read_bytes()
    pages = pdf.extract_pages(data, OCR_OFF, 1, pdf.page_count(data, OCR_OFF))
    for number, symbol in symbols.items():
        page = pages[number - 1]
        assert page.report.status == "clean" and page.report.engine == "pdfium", (number, page.report.reason)
        assert "math_glyphs" in page.report.signals, number
        assert symbol in page.text, (number, symbol)
    assert not any(RAW_CODE.search(page.text) for page in pages)
