"""Real-world PDFs from ../shared/corpus: expected phrases, encryption and clean failures.

Passwords come from the MANIFEST's ``password`` column verbatim (one is four spaces), and
phrases are matched with the corpus's own scorer so both sides normalise the same way.
"""

from __future__ import annotations

from typing import Any

import pytest
from corpus_cases import CORPUS, manifest_rows, phrase_ok

from papersift.errors import CorruptInputError, EmptyInputError, EncryptedInputError
from papersift.formats import count_pages, extract_units
from papersift.ocr.routing import WHOLE_PAGE
from papersift.settings import Settings
from papersift.sniff import sniff

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
