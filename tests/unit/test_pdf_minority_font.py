"""Issue 17, trust that holds on files we have never seen: a page whose body is sound but one
minority font of which (headings, italics, a sidebar: ~5-20% of the words) has a ToUnicode map
that gives the wrong letters. The page-wide dictionary rate stays high, so the page verdict alone
trusts it; the ladder judges such a page's words font by font (formats/pdf.py ``_minority_font``).

The probes are real corpus files with ONE font's ToUnicode map rewritten in code
(pdf_factory.remapped_font_pdf): each code maps to the letter after (shifted) or through a fixed
permutation of the alphabet (permuted); the glyphs drawn stay the same."""

from __future__ import annotations

import shutil
from pathlib import Path

import pdf_factory
import pytest
from corpus_cases import CORPUS

from papersift.formats import extract_units
from papersift.ocr.routing import RENDERING_CHECK
from papersift.pipeline import process_document
from papersift.quality import minority_font_garbage
from papersift.settings import Settings
from papersift.sniff import sniff
from papersift.steps.contracts import DocumentRef, document_id
from papersift.steps.ocr import default_engines
from papersift.storage import LocalDirStore

FILES = CORPUS / "files"
SIGNAL = "minority_font_garbage"
MAPPINGS = {"shifted": pdf_factory.shifted_letter, "permuted": pdf_factory.permuted_letter}

#: (file, the minority font rewritten, the page it draws words on, its share of the page's words)
MINORITY_PROBES = [
    ("us__multi-column-2p.pdf", "NimbusRomNo9L-Medi", 1),  # title, authors, headings: 5%
    ("us__multi-column-2p.pdf", "NimbusRomNo9L-ReguItal", 1),  # italic terms: 7%
    ("pl__issue-982-example.pdf", "NimbusRomNo9L-Medi", 1),  # title, headings, bold terms: 11%
    ("pj__issue10640.pdf", "OpenSans-Bold", 1),  # headings: 8% (10 words)
]


def _probe(name: str, font: str, mapping: str) -> bytes:
    if not (FILES / name).is_file():
        pytest.skip(f"{name} not in the corpus")
    return pdf_factory.remapped_font_pdf((FILES / name).read_bytes(), font, MAPPINGS[mapping])


def _pages(data: bytes, name: str, **settings: object) -> list:
    return extract_units(data, sniff(data, name), Settings(**settings))  # type: ignore[arg-type]


@pytest.mark.parametrize("mapping", sorted(MAPPINGS))
@pytest.mark.parametrize(("name", "font", "number"), MINORITY_PROBES)
def test_a_minority_font_with_wrong_letters_makes_its_page_untrusted(name: str, font: str, number: int,
                                                                     mapping: str) -> None:
    data = _probe(name, font, mapping)
    original = _pages((FILES / name).read_bytes(), name, ocr_mode="off")[number - 1]
    page = _pages(data, name, ocr_mode="off")[number - 1]
    # the probe's text layer holds the wrong words (the page verdict alone would trust it) ...
    assert page.text != original.text
    assert original.report.status == "clean" and SIGNAL not in original.report.signals
    # ... and the page is no longer trusted with them, naming the font and a word of it
    assert page.report.status == "needs_ocr", page.report.reason
    assert SIGNAL in page.report.signals
    assert font in page.report.reason
    assert page.unverified_text and all(token in page.text for token in page.unverified_text)
    assert not any(token in original.text for token in page.unverified_text)


@pytest.mark.parametrize("mapping", sorted(MAPPINGS))
def test_a_minority_font_page_goes_to_the_rendering_check_when_ocr_is_on(mapping: str) -> None:
    page = _pages(_probe("us__multi-column-2p.pdf", "NimbusRomNo9L-Medi", mapping), "p.pdf")[0]
    assert (page.report.status, page.ocr_scope) == ("needs_ocr", RENDERING_CHECK)


@pytest.mark.parametrize("mapping", sorted(MAPPINGS))
def test_the_majority_font_with_wrong_letters_is_caught_by_the_page_verdict(mapping: str) -> None:
    """The body font broken: the page-wide rates fire (as before this rule), not the minority rule."""
    pages = _pages(_probe("us__multi-column-2p.pdf", "NimbusRomNo9L-Regu", mapping), "p.pdf", ocr_mode="off")
    for page in pages:
        assert page.report.status not in ("clean", "recovered"), page.report.reason
        assert "cipher" in page.report.signals


@pytest.mark.xfail(strict=True, reason="below the evidence floor: page 2's headings are 6 words (1% of the "
                   "page), and none of them is among the verdict's implausible sampled words (160 words sampled"
                   " of ~570), so the gate (3 distinct implausible words of one font) does not open")
def test_a_few_headings_outside_the_sample_are_caught() -> None:
    page = _pages(_probe("us__multi-column-2p.pdf", "NimbusRomNo9L-Medi", "shifted"), "p.pdf", ocr_mode="off")[1]
    assert page.report.status != "clean"


def test_names_and_camel_case_codes_are_no_minority_garbage() -> None:
    """(TeX math, symbol and code fonts are left out by the ladder before this judgement.)"""
    body = " ".join(["the quarterly report shows revenue growth in every region of the company"] * 3)
    names = "Przybylski Szczepanski Wojciechowski Grzegorz Krzysztof Zbigniew Brzezinski Chrzanowski"
    garbage = "Efotf Qbttbhf Sfusjfwbm gps Pqfo Epnbjo Rvftujpo Botxfsjoh Jouspevdujpo Cbdlhspvoe"
    assert minority_font_garbage([("Body", body), ("Heading", garbage)]) is not None
    assert minority_font_garbage([("Body", body), ("Names", names)]) is None
    # identifiers with capitals inside are codes, not judged (crc-doc's CMR8 figure of functions)
    camel = "CrcByteByByte MulByXpowD MulByXPowD CrcByteWord XpowN CrcWordByWord ShiftXpowD GfMulXpow"
    assert minority_font_garbage([("Body", body), ("Figure", camel)]) is None
    # the rest of the page must read as words: a page of two garbage fonts is the page verdict's
    assert minority_font_garbage([("Body", garbage), ("Heading", garbage + " Bopuifs")]) is None


def test_the_corpus_files_the_probes_come_from_stay_clean() -> None:
    for name in sorted({name for name, _, _ in MINORITY_PROBES}):
        if not (FILES / name).is_file():
            pytest.skip(f"{name} not in the corpus")
        for page in _pages((FILES / name).read_bytes(), name, ocr_mode="off"):
            assert SIGNAL not in page.report.signals, (name, page.number, page.report.reason)


@pytest.mark.parametrize("mapping", sorted(MAPPINGS))
def test_with_ocr_on_the_rendered_page_replaces_the_wrong_words(mapping: str, tmp_path: Path) -> None:
    """Through the whole pipeline with Tesseract: the rendering check does not find the font's
    words, so OCR's reading of the page is its text: the title reads as drawn."""
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract is not installed")
    data = _probe("us__multi-column-2p.pdf", "NimbusRomNo9L-Medi", mapping)
    name = f"probe-{mapping}.pdf"
    store = LocalDirStore(tmp_path / "store")
    (tmp_path / name).write_bytes(data)
    store.upload_file(tmp_path / name, f"incoming/{name}")
    document = DocumentRef(doc_id=document_id("local", f"incoming/{name}"), bucket="local", key=f"incoming/{name}",
                           source_name=name)
    layer = _pages(data, name, ocr_mode="off")[0]
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=120))
    text = store.get(f"results/{document.doc_id}/text.txt").decode()
    page = report.pages[0]
    assert page.status == "ocr", page.reason
    assert "Dense Passage Retrieval" in text
    assert not any(token in text for token in layer.unverified_text)
