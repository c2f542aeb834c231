"""Page rendering for OCR and thumbnails: resolution, pixel cap, scanner codecs, /Rotate."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from pdf_factory import encrypted_pdf, text_pdf
from scan_factory import scanned_pdf, text_image

from papersift import pdf_engines
from papersift.rendering import capped_dpi, render_page, render_pages


def _dark_share(image: object) -> float:
    histogram = image.convert("L").histogram()  # type: ignore[attr-defined]
    return sum(histogram[:128]) / sum(histogram)


def test_a4_page_is_drawn_in_grey_at_the_asked_resolution() -> None:
    page = render_page(text_pdf(["Hello"]), 1, dpi=150)
    assert page.image.mode == "L"
    width, height = page.image.size
    assert abs(width - 595.27 * 150 / 72) <= 1 and abs(height - 841.89 * 150 / 72) <= 1
    assert (page.dpi, page.renderer, page.capped) == (150, "pdfium", False)


def test_a_2400_dpi_request_is_capped_to_the_pixel_budget() -> None:
    page = render_page(text_pdf(["Hello"]), 1, dpi=2400, max_pixels=4_000_000)
    assert page.capped and page.dpi < 2400
    assert page.image.width * page.image.height <= 4_000_000 * 1.01


def test_capped_dpi_keeps_small_pages_at_the_asked_resolution() -> None:
    assert capped_dpi(612, 792, 300, 40_000_000) == (300, False)
    dpi, capped = capped_dpi(612 * 10, 792 * 10, 300, 40_000_000)
    assert capped and 65 < dpi < 66  # 25,500 x 33,000 px at 300 dpi: 841 MP


def test_a_scanned_page_renders_its_picture() -> None:
    page = render_page(scanned_pdf([text_image()]), 1, dpi=100)
    assert 0.005 < _dark_share(page.image) < 0.5


def test_pages_of_one_document_render_in_the_asked_order() -> None:
    numbers = [page.number for page in render_pages(text_pdf(["a", "b", "c"]), [3, 1], dpi=30)]
    assert numbers == [3, 1]


def test_an_encrypted_pdf_renders_with_its_password() -> None:
    page = render_page(encrypted_pdf(text_pdf(["Hello"]), user_password="secret"), 1, dpi=50, passwords=("secret",))
    assert page.image.size[0] > 0


def test_a_document_pdfium_cannot_open_is_drawn_by_poppler(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(data: bytes, password: bytes) -> None:
        raise pdfium.PdfiumError("PDFium: Data format error", err_code=pdfium_c.FPDF_ERR_FORMAT)

    monkeypatch.setattr(pdf_engines, "_open_pdfium", refuse)
    page = render_page(scanned_pdf([text_image()]), 1, dpi=100)
    assert page.renderer == "poppler"
    assert 0.005 < _dark_share(page.image) < 0.5


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["om__jbig2_baddevicen.pdf", "dl__sample_with_rotation_mismatch.pdf",
                                  "tk__testPDF_jpeg2000.pdf", "tk__testPDF_JBIG2.pdf"])
def test_scanner_codecs_jbig2_ccitt_and_jpeg2000_render(corpus_dir: Path, name: str) -> None:
    page = render_page((corpus_dir / "files" / name).read_bytes(), 1, dpi=100)
    assert _dark_share(page.image) > 0.001, name


@pytest.mark.corpus
def test_the_page_rotation_is_applied_when_drawing(corpus_dir: Path) -> None:
    data = (corpus_dir / "files" / "dl__nemotron_multipage.pdf").read_bytes()
    portrait, landscape = (render_page(data, n, dpi=50).image.size for n in (1, 3))
    assert portrait[0] < portrait[1] and landscape[0] > landscape[1]
