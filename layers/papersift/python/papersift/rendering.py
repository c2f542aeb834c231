"""Pages as pictures: what OCR reads, and what a report shows as a thumbnail.

pdfium (pypdfium2) renders every page it can open, with its own decoders for the
image filters scanners write: JBIG2, CCITT fax, JPEG2000 (JPX), DCT and Flate. It is
several times faster than poppler and runs in process.

Poppler (``pdftoppm`` through pdf2image) renders only the documents pdfium cannot open
at all (a damaged cross-reference table pdfium gives up on, an unsupported security
handler): :class:`~papersift.pdf_engines.PdfHandle` then reads their text through pypdf,
and poppler, which rebuilds such files as leniently as pypdf does, draws their pages.

A pixel cap bounds every render: a page is drawn at the asked resolution unless that
would exceed ``max_pixels``, in which case the resolution is lowered to fit (a
2400-dpi scan is drawn at the OCR resolution, never at its own; an oversized page at
less). The rendered resolution is returned so callers can record it.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from PIL import Image

from papersift.errors import EngineError
from papersift.pdf_engines import PdfHandle

#: 40 megapixels: an A0 poster at 150 dpi, a letter page at 660 dpi; 40 MB as 8-bit grey
DEFAULT_MAX_PIXELS = 40_000_000
POINTS_PER_INCH = 72.0
PDFTOPPM_TIMEOUT_SECONDS = 120


@dataclass(frozen=True)
class RenderedPage:
    """One page drawn as a picture (mode ``L``, or ``RGB`` when colour was asked for)."""

    number: int
    image: Image.Image
    #: the resolution actually drawn: below the asked one when the pixel cap lowered it
    dpi: float
    renderer: str  # "pdfium" or "poppler"
    #: the pixel cap lowered the resolution
    capped: bool

    def png(self) -> bytes:
        out = io.BytesIO()
        self.image.save(out, format="PNG", optimize=False)
        return out.getvalue()


def capped_dpi(width_pt: float, height_pt: float, dpi: float, max_pixels: int) -> tuple[float, bool]:
    """The resolution to draw a page of ``width_pt`` x ``height_pt`` points at: ``dpi``, or
    the highest one whose pixel count stays within ``max_pixels``."""
    pixels = (width_pt * dpi / POINTS_PER_INCH) * (height_pt * dpi / POINTS_PER_INCH)
    if pixels <= max_pixels:
        return dpi, False
    return dpi * math.sqrt(max_pixels / pixels), True


def render_pages(data: bytes, numbers: Iterable[int], *, dpi: float = 300, passwords: tuple[str, ...] = (),
                 max_pixels: int = DEFAULT_MAX_PIXELS, grayscale: bool = True) -> Iterator[RenderedPage]:
    """Draw pages ``numbers`` (1-based) of a PDF, opening it once. Raises the PdfHandle
    errors (encrypted, corrupt, empty) for the document and EngineError for a page."""
    with PdfHandle(data, passwords) as handle:
        for number in numbers:
            if not 1 <= number <= handle.page_count:
                raise EngineError(f"page {number} is outside the document's 1..{handle.page_count}")
            if handle.pdfium is not None:
                yield _render_pdfium(handle, number, dpi, max_pixels, grayscale)
            else:
                yield _render_poppler(handle, number, dpi, max_pixels, grayscale)


def render_page(data: bytes, number: int, *, dpi: float = 300, passwords: tuple[str, ...] = (),
                max_pixels: int = DEFAULT_MAX_PIXELS, grayscale: bool = True) -> RenderedPage:
    """Draw one page (1-based) of a PDF; see :func:`render_pages`."""
    return next(render_pages(data, [number], dpi=dpi, passwords=passwords, max_pixels=max_pixels,
                             grayscale=grayscale))


def _render_pdfium(handle: PdfHandle, number: int, dpi: float, max_pixels: int, grayscale: bool) -> RenderedPage:
    assert handle.pdfium is not None
    page = handle.pdfium[number - 1]
    try:
        width, height = page.get_size()
        drawn_dpi, capped = capped_dpi(width, height, dpi, max_pixels)
        # the page's /Rotate is applied by pdfium itself: the picture is the page as shown
        bitmap = page.render(scale=drawn_dpi / POINTS_PER_INCH, grayscale=grayscale, may_draw_forms=False)
        try:
            image = bitmap.to_pil()
            # the PIL image shares pdfium's buffer: copy it out before the bitmap is freed
            image = image.convert("L") if grayscale and image.mode != "L" else image.copy()
        finally:
            bitmap.close()
    except EngineError:
        raise
    except Exception as exc:
        raise EngineError(f"pdfium could not render page {number}: {exc}") from exc
    finally:
        page.close()
    return RenderedPage(number=number, image=image, dpi=drawn_dpi, renderer="pdfium", capped=capped)


def _render_poppler(handle: PdfHandle, number: int, dpi: float, max_pixels: int, grayscale: bool) -> RenderedPage:
    from pdf2image import convert_from_bytes, pdfinfo_from_bytes

    password: Any = handle.password.decode("latin-1") or None  # pdf2image types it str, means str | None
    try:
        info = pdfinfo_from_bytes(handle.data, userpw=password, first_page=number, last_page=number,
                                  timeout=PDFTOPPM_TIMEOUT_SECONDS)
        width, height = _poppler_page_size(info)
        drawn_dpi, capped = capped_dpi(width, height, dpi, max_pixels)
        drawn_dpi = float(max(int(drawn_dpi), 1))  # pdftoppm takes whole dots per inch
        images = convert_from_bytes(handle.data, dpi=int(drawn_dpi), first_page=number, last_page=number,
                                    userpw=password, grayscale=grayscale, timeout=PDFTOPPM_TIMEOUT_SECONDS)
    except Exception as exc:
        raise EngineError(f"poppler could not render page {number}: {exc}") from exc
    if not images:
        raise EngineError(f"poppler rendered nothing for page {number}")
    image = images[0].convert("L") if grayscale else images[0].convert("RGB")
    return RenderedPage(number=number, image=image, dpi=drawn_dpi, renderer="poppler", capped=capped)


def _poppler_page_size(info: dict[str, object]) -> tuple[float, float]:
    """Points from pdfinfo's "Page    3 size: 612 x 792 pts (letter)"; a letter page when it says nothing."""
    raw = next((str(v) for k, v in info.items() if k.startswith("Page") and k.endswith("size")), "")
    try:
        width, _, rest = raw.partition(" x ")
        return float(width), float(rest.split()[0])
    except (ValueError, IndexError):
        return 612.0, 792.0
