"""Real-world PDFs from ../shared/corpus: expected phrases, encryption and clean failures.

Passwords come from the MANIFEST's ``password`` column verbatim (one is four spaces), and
phrases are matched with the corpus's own scorer so both sides normalise the same way.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from corpus_cases import CORPUS, manifest_rows, phrase_ok

from papersift.errors import CorruptInputError, EmptyInputError, EncryptedInputError
from papersift.formats import count_pages, extract_units
from papersift.ocr import tesseract
from papersift.ocr.routing import RENDERING_CHECK, WHOLE_PAGE
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.sniff import sniff
from papersift.steps.contracts import DocumentRef, document_id
from papersift.steps.ocr import default_engines
from papersift.storage import LocalDirStore

CATEGORIES = {"native_pdf", "encrypted_pdf", "broken_font_pdf", "corrupt"}

#: files whose phrase needs something this layer cannot give (yet), with the reason
KNOWN_GAPS = {
    "dl__right_to_left_02.pdf": "wrong ToUnicode map in the file itself: needs Arabic OCR",
}

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="shared corpus not present"),
]


def _params() -> list[Any]:
    params = []
    for row in manifest_rows(
        lambda r: r["category"] in CATEGORIES and r["out_name"].lower().endswith(".pdf")
    ):
        marks = (
            [pytest.mark.xfail(reason=KNOWN_GAPS[row["out_name"]], strict=False)]
            if row["out_name"] in KNOWN_GAPS
            else []
        )
        params.append(pytest.param(row, id=row["out_name"], marks=marks))
    return params


@pytest.mark.parametrize("row", _params())
def test_corpus_pdf_meets_its_expectation(row: dict[str, str]) -> None:
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    settings = Settings(passwords=(row["password"],) if row["password"] else ())
    file_type = sniff(data, row["out_name"])
    expected = row["expected"]
    if expected == "<ENCRYPTED>":
        with pytest.raises(EncryptedInputError):
            count_pages(data, file_type, settings)
        return
    if expected == "<ERROR>":
        with pytest.raises((CorruptInputError, EmptyInputError)):
            count_pages(data, file_type, settings)
        return
    pages = extract_units(data, file_type, settings)
    text = "\n".join(page.text for page in pages)
    assert phrase_ok(expected, text), f"{expected!r} not in {text[:300]!r}"
    if row["category"] == "native_pdf":
        assert not any(p.report.status == "corrupt_unrecoverable" for p in pages)


def _sound_math_papers() -> list[Any]:
    rows = manifest_rows(lambda r: r["notes"].startswith("E:"), manifest="MANIFEST-trust.tsv")
    return [pytest.param(row, id=row["out_name"]) for row in rows]


@pytest.mark.parametrize("row", _sound_math_papers())
def test_sound_latex_papers_with_math_control_characters_stay_trusted_and_skip_ocr(row: dict[str, str]) -> None:
    """Class E of MANIFEST-trust.tsv: U+0001/U+001C from TeX math fonts and U+0002 hyphen marks
    are formulas and line breaks, not a broken layer: every page from its text layer, none to OCR."""
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    pages = extract_units(data, sniff(data, row["out_name"]), Settings())
    assert phrase_ok(row["expected"], "\n".join(page.text for page in pages))
    assert [p.number for p in pages if p.report.status != "clean"] == []
    assert [p.number for p in pages if p.ocr_scope == WHOLE_PAGE] == []  # figures alone may be read
    assert not any(ch in page.text for page in pages for ch in "\x01\x02\x1c")


#: classes A (CJK and Cyrillic through wrong CMaps) and B (vertical columns) of MANIFEST-trust.tsv whose
#: text layer no engine here reads right: OCR must read them, with the Tesseract model it needs
OCR_READS = {
    "pj__issue2884_reduced.pdf": "jpn",  # every engine, pdftotext too, reads wrong Han through the ToUnicode
    "mu__test_3072.pdf": "chi_sim",  # Identity-H TrueType with no ToUnicode: every engine gives glyph codes
    "pj__issue18117.pdf": "chi_sim",
}
#: ... and those whose phrase nothing here reads, OCR included, with the reason
NOTHING_READS = {
    "pj__issue18117.pdf": "the phrase is CJK Extension B behind a UTF-8 codespace no engine here decodes, and "
                          "Tesseract's models misread its glyphs (the page ends needs_review, untrusted)",
}


def _wrong_maps_and_columns(marked: bool) -> list[Any]:
    rows = manifest_rows(lambda r: r["notes"][:2] in ("A:", "A ", "B:"), manifest="MANIFEST-trust.tsv")
    return [pytest.param(row, id=row["out_name"], marks=[
        pytest.mark.xfail(reason=NOTHING_READS[row["out_name"]], strict=True)]
        if marked and row["out_name"] in NOTHING_READS else []) for row in rows]


def _phrase_page(row: dict[str, str]) -> int:
    found = re.search(r"phrase page=(\d+)", row["notes"])
    assert found, row["notes"]
    return int(found.group(1))


@pytest.mark.parametrize("row", _wrong_maps_and_columns(marked=False))
def test_a_page_read_through_a_wrong_cjk_map_is_never_trusted_with_the_wrong_text(row: dict[str, str]) -> None:
    """Classes A and B of MANIFEST-trust.tsv: the phrase page is either read right (by the engine
    whose script is plausible, or whose column order follows the page) or not trusted, and sent
    to OCR whole (read, or its layer checked against the rendered page): wrong text that looks
    sound is the worst outcome."""
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    pages = extract_units(data, sniff(data, row["out_name"]), Settings())
    page = pages[_phrase_page(row) - 1]
    if phrase_ok(row["expected"], page.text):
        return
    assert page.report.status not in ("clean", "recovered"), (page.report.reason, page.text[:200])
    assert page.ocr_scope in (WHOLE_PAGE, RENDERING_CHECK)


@pytest.mark.parametrize("row", _wrong_maps_and_columns(marked=True))
def test_cjk_and_vertical_files_give_their_phrase_through_the_whole_pipeline(row: dict[str, str],
                                                                              tmp_path: Path) -> None:
    """What `papersift extract` does, OCR included: the reading chosen among the engines (pdftotext's
    Cyrillic where pdfium reads Hangul, the columns right to left where pdfium reads them left to
    right), or Tesseract's where no text layer reads the page, holds the phrase; a page OCR did
    not read is trusted only with its phrase."""
    name = row["out_name"]
    if name in OCR_READS:
        if shutil.which("tesseract") is None:
            pytest.skip("tesseract is not installed")
        if OCR_READS[name] not in tesseract.installed_languages():
            pytest.skip(f"the Tesseract model {OCR_READS[name]} is not installed")
    store = LocalDirStore(tmp_path / "store")
    (tmp_path / name).write_bytes((CORPUS / "files" / name).read_bytes())
    store.upload_file(tmp_path / name, f"incoming/{name}")
    document = DocumentRef(doc_id=document_id("local", f"incoming/{name}"), bucket="local", key=f"incoming/{name}",
                           source_name=name)
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=120))
    text = store.get(f"results/{document.doc_id}/text.txt").decode()
    page = report.pages[_phrase_page(row) - 1]
    assert phrase_ok(row["expected"], text), (page.status, page.reason, text[:300])
    assert page.status in ("clean", "recovered", "ocr")
    assert (page.engine == "tesseract") == (name in OCR_READS)


def test_vertical_columns_take_the_reading_that_follows_the_page_whichever_engine_gives_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """pj__vertical.pdf: pdfium reads the two columns left to right; with pdfminer made to do the
    same (as it does on other files), pdftotext's right-to-left reading wins, judged by pdfium's
    character boxes, not by the engine's name."""
    from papersift import pdf_engines

    if not (CORPUS / "files" / "pj__vertical.pdf").is_file():
        pytest.skip("pj__vertical.pdf not in the corpus")
    monkeypatch.setattr(pdf_engines._Pdfminer, "layout_text", lambda self, number: "日本語\nあいうえお")
    data = (CORPUS / "files" / "pj__vertical.pdf").read_bytes()
    page = extract_units(data, sniff(data, "pj__vertical.pdf"), Settings())[0]
    assert (page.report.engine, page.report.status) == ("pdftotext", "clean")
    assert "column_order" in page.report.signals
    assert "".join(page.text.split()) == "あいうえお日本語"


def test_an_implausible_script_asks_the_engines_that_decode_cmaps_before_pypdf() -> None:
    """pj__issue20232.pdf: pdfium reads the Cyrillic title block as Hangul outside KS X 1001,
    through fonts that carry their own ToUnicode maps: pdftotext (one process, far cheaper than
    pdfminer's interpretation in Python) is asked first and reads the Cyrillic; pdfminer (which
    reads only the dots) and pypdf are never asked."""
    if not (CORPUS / "files" / "pj__issue20232.pdf").is_file():
        pytest.skip("pj__issue20232.pdf not in the corpus")
    data = (CORPUS / "files" / "pj__issue20232.pdf").read_bytes()
    page = extract_units(data, sniff(data, "pj__issue20232.pdf"), Settings())[0]
    assert [a.engine for a in page.report.attempts] == ["pdfium", "pdftotext"]
    assert "implausible_script" in page.report.attempts[0].signals
    assert (page.report.engine, page.report.status) == ("pdftotext", "recovered")


def test_pdfminer_is_still_asked_when_poppler_does_not_read_an_implausible_script(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same page with pdftotext reading nothing: pdfminer comes next, as before poppler led, and
    the page is not trusted with pdfium's Hangul."""
    if not (CORPUS / "files" / "pj__issue20232.pdf").is_file():
        pytest.skip("pj__issue20232.pdf not in the corpus")
    from papersift import pdf_engines

    monkeypatch.setattr(pdf_engines.PdfHandle, "_pdftotext", lambda self, number, *options: "")
    data = (CORPUS / "files" / "pj__issue20232.pdf").read_bytes()
    page = extract_units(data, sniff(data, "pj__issue20232.pdf"), Settings())[0]
    assert [a.engine for a in page.report.attempts][:3] == ["pdfium", "pdftotext", "pdfminer"]
    assert page.report.status != "recovered"


def _rows_of_class(letter: str) -> list[Any]:
    rows = manifest_rows(lambda r: r["notes"][:2] in (f"{letter}:", f"{letter} "), manifest="MANIFEST-trust.tsv")
    return [pytest.param(row, id=row["out_name"]) for row in rows]


@pytest.mark.parametrize("row", _rows_of_class("C"))
def test_a_page_in_fonts_without_a_usable_map_is_never_trusted_with_the_wrong_text(row: dict[str, str]) -> None:
    """Class C of MANIFEST-trust.tsv (shifted or byte-swapped maps, custom encodings, glyph ids): the
    text layer's phrase page is read right or not trusted, and sent to OCR whole."""
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    page = extract_units(data, sniff(data, row["out_name"]), Settings())[_phrase_page(row) - 1]
    if phrase_ok(row["expected"], page.text):
        return
    assert page.report.status not in ("clean", "recovered"), (page.report.reason, page.text[:200])
    assert page.ocr_scope in (WHOLE_PAGE, RENDERING_CHECK)


@pytest.mark.parametrize("row", _rows_of_class("C"))
def test_fonts_without_a_usable_map_give_their_phrase_through_ocr(row: dict[str, str], tmp_path: Path) -> None:
    """Class C through the whole pipeline: Tesseract reads what no text layer maps."""
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract is not installed")
    name = row["out_name"]
    store = LocalDirStore(tmp_path / "store")
    (tmp_path / name).write_bytes((CORPUS / "files" / name).read_bytes())
    store.upload_file(tmp_path / name, f"incoming/{name}")
    document = DocumentRef(doc_id=document_id("local", f"incoming/{name}"), bucket="local", key=f"incoming/{name}",
                           source_name=name)
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=300))
    page = report.pages[_phrase_page(row) - 1]
    assert phrase_ok(row["expected"], store.get(f"results/{document.doc_id}/text.txt").decode()), page.reason
    assert (page.status, page.engine) == ("ocr", "tesseract")


@pytest.mark.parametrize("row", _rows_of_class("D"))
def test_text_one_engine_drops_is_read_from_the_page_it_is_on(row: dict[str, str]) -> None:
    """Class D of MANIFEST-trust.tsv: pj__endchar.pdf's crop box cuts through its one line, which
    pdfium alone reads within the box (only its 'É'); the page's text is the whole line.
    pj__ZapfDingbats.pdf: an annotation's text only pdftotext reads."""
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    pages = extract_units(data, sniff(data, row["out_name"]), Settings(ocr_mode="off"))
    assert phrase_ok(row["expected"], "\n".join(page.text for page in pages))
    assert all(page.report.status in ("clean", "recovered") for page in pages)
