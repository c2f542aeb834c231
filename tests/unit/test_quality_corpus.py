"""The verdict on real engines' text from the development corpus (skipped when it is absent)."""

from __future__ import annotations

import csv
import logging
from pathlib import Path

import pypdf
import pypdfium2 as pdfium
import pytest

from papersift.quality import assess_text

pytestmark = pytest.mark.corpus


def _manifest(corpus_dir: Path, category: str) -> list[str]:
    with (corpus_dir / "MANIFEST.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [r["out_name"] for r in rows if r["category"] == category]


def _pdfium_pages(path: Path) -> list[str]:
    document = pdfium.PdfDocument(str(path))
    try:
        return [document[i].get_textpage().get_text_range() for i in range(len(document))]
    finally:
        document.close()


def _pypdf_pages(path: Path) -> list[str]:
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    return [page.extract_text() or "" for page in pypdf.PdfReader(str(path)).pages]


def test_pdfium_text_of_native_pdfs_is_never_suspect(corpus_dir: Path) -> None:
    names = _manifest(corpus_dir, "native_pdf")
    assert names
    for name in names:
        for number, text in enumerate(_pdfium_pages(corpus_dir / "files" / name), start=1):
            verdict = assess_text(text)
            assert not verdict.corrupt, (name, number, verdict)
            assert not verdict.suspect, (name, number, verdict)


def test_pypdf_shifted_type1_garbage_is_corrupt_and_pdfium_wins(corpus_dir: Path) -> None:
    # pj__issue10640.pdf: pypdf yields ',A4%8SuPPORTFOR/PEN3ANS', 'IntROdUCtIOn', '/one.os'
    path = corpus_dir / "files" / "pj__issue10640.pdf"
    garbage = assess_text(_pypdf_pages(path)[0])
    assert garbage.suspect and garbage.corrupt
    assert "cipher" in garbage.signals
    sound = assess_text(_pdfium_pages(path)[0])
    assert not sound.suspect
    assert sound.score > garbage.score + 0.5


def test_mojibake_of_a_cid_font_without_tounicode_is_caught(corpus_dir: Path) -> None:
    # pm__kampo.pdf: pypdf decodes vertical Japanese as Telugu, Kannada, Greek... one glyph per
    # line; pdfium keeps a header whose digits come out as WinAnsi symbols ('平成 ™— › ™œ 日')
    path = corpus_dir / "files" / "pm__kampo.pdf"
    verdict = assess_text(_pypdf_pages(path)[0])
    assert verdict.corrupt
    assert "script_mix" in verdict.signals
    pdfium_text = _pdfium_pages(path)[0]
    verdict = assess_text(pdfium_text)
    if pdfium_text.count("条") < 3:  # no CJK system font: pdfium keeps only the header, mojibake digits
        assert verdict.suspect
        assert "glyph_garbage" in verdict.signals
    else:  # a system CJK font (fonts-droid-fallback) lets pdfium decode the body: sound Japanese,
        # the header's few mojibake digits drowned in it
        assert not verdict.suspect and verdict.language == "ja"


def test_arabic_with_a_wrong_tounicode_map_is_suspect(corpus_dir: Path) -> None:
    # dl__right_to_left_02.pdf reads 'تكايف السيد رئيس الجماورية' for 'تكليف السيد رئيس الجمهورية':
    # real Arabic letters, wrong ones; only the Arabic word list sees it (36% hits, sound text ~95%)
    for text in (_pdfium_pages(corpus_dir / "files" / "dl__right_to_left_02.pdf")[0],
                 _pypdf_pages(corpus_dir / "files" / "dl__right_to_left_02.pdf")[0]):
        verdict = assess_text(text)
        assert verdict.language == "ar"
        assert verdict.suspect
        assert "cipher" in verdict.signals
