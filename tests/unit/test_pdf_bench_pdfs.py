"""Page verdicts on ../shared/bench-pdfs (real native PDFs, skipped when absent): the one truly
broken layer flagged on every page, and no clean page flagged."""

from __future__ import annotations

import csv
import logging
from functools import cache

import pytest
from corpus_cases import BENCH_BROKEN_PAGES, BENCH_PDFS, BENCH_PICTURE_PAGES, phrase_ok

from papersift.content import PageContent
from papersift.formats import pdf
from papersift.settings import Settings

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not (BENCH_PDFS / "MANIFEST.tsv").exists(), reason="shared bench-pdfs not present"),
]



@cache
def _pages(name: str) -> tuple[PageContent, ...]:
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    data = (BENCH_PDFS / "files" / name).read_bytes()
    settings = Settings(ocr_mode="off")
    return tuple(pdf.extract_pages(data, settings, 1, pdf.page_count(data, settings)))


def _manifest() -> list[dict[str, str]]:
    with (BENCH_PDFS / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_every_broken_page_of_the_htmldoc_file_needs_ocr_and_none_is_recovered_from_its_footer() -> None:
    pages = _pages("mo__TAMReview.pdf")
    flagged = {p.number for p in pages if p.report.status == "needs_ocr"}
    assert flagged == BENCH_BROKEN_PAGES["mo__TAMReview.pdf"]
    assert all("unmapped_font" in pages[n - 1].report.signals for n in flagged)
    assert [pages[0].report.status, pages[-1].report.status] == ["clean", "clean"]


def test_printers_proof_part_title_pages_are_clean() -> None:
    """One title word, crop-mark glyphs ('❚❘❙❚❘❙ ❚❘❙'): their text is right."""
    pages = _pages("mo__freeculture.pdf")
    for number in (3, 5, 8, 16, 30, 94, 186, 218, 280):
        assert pages[number - 1].report.status == "clean", (number, pages[number - 1].report.reason)
    assert "FREE CULTURE" in pages[2].text


@pytest.mark.slow
@pytest.mark.parametrize("row", _manifest() if (BENCH_PDFS / "MANIFEST.tsv").exists() else [], ids=lambda r: r["file"])
def test_no_clean_page_of_bench_pdfs_is_flagged(row: dict[str, str]) -> None:
    pages = _pages(row["file"])
    assert len(pages) == int(row["pages"])
    name = row["file"]
    expected_flags = BENCH_BROKEN_PAGES.get(name, frozenset()) | BENCH_PICTURE_PAGES.get(name, frozenset())
    false_alarms = [(p.number, p.report.status, p.report.reason) for p in pages
                    if p.number not in expected_flags and p.report.status not in ("clean", "recovered")]
    assert false_alarms == []
    assert phrase_ok(row["expected"], "\n".join(p.text for p in pages))
