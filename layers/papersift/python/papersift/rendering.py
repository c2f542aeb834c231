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

import functools
import io
import math
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from PIL import Image

from papersift.errors import CorruptInputError, EngineError, LimitExceededError, UnsupportedFormatError
from papersift.ocr import pictures
from papersift.pdf_engines import PdfHandle
from papersift.sniff import iso_bmff_picture

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
    renderer: str  # "pdfium" or "poppler" (PDF pages), "pillow" (picture frames)
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
                 max_pixels: int = DEFAULT_MAX_PIXELS, grayscale: bool = True,
                 smooth_images: bool = True) -> Iterator[RenderedPage]:
    """Draw pages ``numbers`` (1-based) of a PDF, opening it once. Raises the PdfHandle
    errors (encrypted, corrupt, empty) for the document and EngineError for a page.
    ``smooth_images=False``: pdfium draws pictures without filtering them (poppler ignores it),
    for a drawing that is scaled down afterwards anyway."""
    with PdfHandle(data, passwords) as handle:
        for number in numbers:
            if not 1 <= number <= handle.page_count:
                raise EngineError(f"page {number} is outside the document's 1..{handle.page_count}")
            if handle.pdfium is not None:
                yield _render_pdfium(handle, number, dpi, max_pixels, grayscale, smooth_images)
            else:
                yield _render_poppler(handle, number, dpi, max_pixels, grayscale)


def render_page(data: bytes, number: int, *, dpi: float = 300, passwords: tuple[str, ...] = (),
                max_pixels: int = DEFAULT_MAX_PIXELS, grayscale: bool = True) -> RenderedPage:
    """Draw one page (1-based) of a PDF; see :func:`render_pages`."""
    return next(render_pages(data, [number], dpi=dpi, passwords=passwords, max_pixels=max_pixels,
                             grayscale=grayscale))


def _render_pdfium(handle: PdfHandle, number: int, dpi: float, max_pixels: int, grayscale: bool,
                   smooth_images: bool = True) -> RenderedPage:
    assert handle.pdfium is not None
    page = handle.pdfium[number - 1]
    try:
        width, height = page.get_size()
        drawn_dpi, capped = capped_dpi(width, height, dpi, max_pixels)
        # the page's /Rotate is applied by pdfium itself: the picture is the page as shown
        bitmap = page.render(scale=drawn_dpi / POINTS_PER_INCH, grayscale=grayscale, may_draw_forms=False,
                             no_smoothimage=not smooth_images)
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


# -- pictures (PNG, JPEG, TIFF, GIF, BMP, WebP, AVIF, HEIC): every frame a page ------------------

#: what a picture may decode to before it is scaled down, in bytes: a 2400-dpi bilevel letter scan
#: (20,400 x 26,400 px) decodes to ~540 MB as one byte a pixel; much beyond that is a bomb
MAX_DECODED_PICTURE_BYTES = 1 << 30
#: resolution assumed for a picture that does not say (a scanner's usual)
DEFAULT_PICTURE_DPI = 300.0


def picture_frame_count(data: bytes) -> int:
    """Frames of a picture document (a multi-page TIFF has several); raises CorruptInputError
    for bytes Pillow cannot read as a picture, LimitExceededError for a decompression bomb."""
    with _open_picture(data) as picture:
        _check_picture_size(picture, 1)
        return max(int(getattr(picture, "n_frames", 1)), 1)


def picture_size(data: bytes) -> tuple[int, int]:
    """Width and height of a picture's first frame, from its header."""
    with _open_picture(data) as picture:
        return picture.size


def render_picture_frames(data: bytes, numbers: Iterable[int], *, max_pixels: int = DEFAULT_MAX_PIXELS,
                          grayscale: bool = True) -> Iterator[RenderedPage]:
    """Frames ``numbers`` (1-based) of a picture as pages, scaled down to ``max_pixels`` at most.
    JPEG decodes straight to the smaller size (its DCT can: no full-size copy in memory)."""
    for frame in picture_frames(data, numbers, max_pixels=max_pixels, grayscale=grayscale):
        yield frame.draw()


@dataclass(frozen=True)
class PictureFrame:
    """One frame of an open picture, not decoded yet: ``draw()`` decodes it (call it before the
    next frame is asked for). ``stored`` says how the file stores it (mode, size, where its data
    lies and how it is coded, colour map, orientation): two frames stored alike are the same
    pixels without decoding either (a TIFF's IFDs pointing at one strip)."""

    number: int
    stored: tuple[object, ...]
    #: what the frame decodes to at full size, in bytes
    decoded_bytes: int
    draw: Callable[[], RenderedPage]


def picture_frames(data: bytes, numbers: Iterable[int], *, max_pixels: int = DEFAULT_MAX_PIXELS,
                   grayscale: bool = True) -> Iterator[PictureFrame]:
    """Frames ``numbers`` of a picture, each to be drawn on demand (see :class:`PictureFrame`)."""
    with _open_picture(data) as picture:
        frames = max(int(getattr(picture, "n_frames", 1)), 1)
        for number in numbers:
            if not 1 <= number <= frames:
                raise EngineError(f"frame {number} is outside the picture's 1..{frames}")
            try:
                picture.seek(number - 1)
                _check_picture_size(picture, number)
                stored = _storage(picture)
            except (EngineError, LimitExceededError):
                raise
            except Exception as exc:
                raise EngineError(f"frame {number} of the picture cannot be decoded: {exc}") from exc
            decoded = picture.width * picture.height * max(len(picture.getbands()), 1)
            yield PictureFrame(number, stored, decoded,
                               functools.partial(_drawn, picture, number, max_pixels, grayscale))


def _drawn(picture: Image.Image, number: int, max_pixels: int, grayscale: bool) -> RenderedPage:
    try:
        return _frame_page(picture, number, max_pixels, grayscale)
    except (EngineError, LimitExceededError):
        raise
    except Exception as exc:
        raise EngineError(f"frame {number} of the picture cannot be decoded: {exc}") from exc


#: TIFF tags that name or date a page but do not change its pixels (NewSubfileType, DocumentName,
#: ImageDescription, Make, Model, PageName, PageNumber, Software, DateTime, Artist, HostComputer,
#: XMP, Copyright, Photoshop, EXIF IFD): frames differing only in them are stored alike
_TIFF_NAMING_TAGS = frozenset({254, 269, 270, 271, 272, 285, 297, 305, 306, 315, 316, 700, 33432, 34377, 34665})


def _storage(picture: Image.Image) -> tuple[object, ...]:
    """What decides a frame's pixels as the file stores it, from its header alone: for a TIFF
    frame its IFD's tags (size, coding, strip offsets and lengths, colour map, orientation...)
    but the naming ones. Frames of other formats never compare equal (a GIF's frame is drawn
    over the ones before it)."""
    tags = getattr(picture, "tag_v2", None)
    if picture.format != "TIFF" or tags is None:
        return ("frame", picture.tell())
    return ("tiff", picture.mode, picture.size,
            tuple(sorted((tag, repr(value)) for tag, value in tags.items() if tag not in _TIFF_NAMING_TAGS)))


#: Pillow's decompression-bomb cap is one process-wide number (179 MP by default, under a 2400-dpi
#: scan); papersift replaces it by its own per-frame byte cap, lifting Pillow's only while it opens
_PILLOW_CAP_LOCK = threading.Lock()


def _open_picture(data: bytes) -> Image.Image:
    _ensure_decoder(data)
    try:
        with _PILLOW_CAP_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            saved, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
            try:
                return Image.open(io.BytesIO(data))
            finally:
                Image.MAX_IMAGE_PIXELS = saved
    except Image.UnidentifiedImageError:
        # Pillow's message names the stream object (<_io.BytesIO object at 0x...>): a reason that
        # differs from run to run
        raise CorruptInputError("not a readable picture: no decoder here recognises its bytes") from None
    except Exception as exc:
        raise CorruptInputError(f"not a readable picture: {exc}") from exc


def _ensure_decoder(data: bytes) -> None:
    """AVIF and HEIC are decoded by Pillow plugins: the one the picture needs is loaded here, and
    when it is missing the picture is unsupported, the reason naming what to install."""
    kind = iso_bmff_picture(data[:4096])
    if kind == "heic" and not _heif_opener():
        raise UnsupportedFormatError("a HEIC picture: decoding it needs the pi-heif plugin, which is not "
                                     "installed here (pip install pi-heif)")
    if kind == "avif" and not _avif_decoder():
        raise UnsupportedFormatError("an AVIF picture: decoding it needs Pillow built with libavif (Pillow 11.3 "
                                     "or later), which this Pillow is not")


@functools.cache
def _heif_opener() -> bool:
    """Whether HEIC can be opened: pi-heif registers its opener with Pillow (once a process)."""
    try:
        import pi_heif
    except ImportError:
        return False
    pi_heif.register_heif_opener()
    return True


def _avif_decoder() -> bool:
    """Whether AVIF can be opened: Pillow's own plugin (Pillow 11.3 and later, built with libavif)."""
    from PIL import features

    return bool(features.check("avif"))


def _check_picture_size(picture: Image.Image, number: int) -> None:
    width, height = picture.size
    bytes_per_pixel = max(len(picture.getbands()), 1)
    if width * height * bytes_per_pixel > MAX_DECODED_PICTURE_BYTES:
        raise LimitExceededError(f"frame {number} is {width} x {height} px: it would decode to more than "
                                 f"{MAX_DECODED_PICTURE_BYTES >> 20} MB")


def _frame_page(picture: Image.Image, number: int, max_pixels: int, grayscale: bool) -> RenderedPage:
    width, height = picture.size
    dpi = _picture_dpi(picture)
    scale = min(1.0, math.sqrt(max_pixels / max(width * height, 1)))
    if scale < 1.0 and picture.format == "JPEG":
        picture.draft("L" if grayscale else "RGB", (int(width * scale), int(height * scale)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        # the one normalisation of pictures: upright, transparency on white, 8-bit grey or RGB
        frame = pictures.as_displayed(picture, colour=not grayscale)
    # the long side is the same however the frame was turned: it measures the scale drawn at
    drawn = max(frame.width, frame.height) / max(width, height, 1)
    if frame.width * frame.height > max_pixels:
        factor = math.sqrt(max_pixels / (frame.width * frame.height))
        frame = frame.resize((max(int(frame.width * factor), 1), max(int(frame.height * factor), 1)),
                             Image.Resampling.LANCZOS)
        drawn *= factor
    return RenderedPage(number=number, image=frame, dpi=dpi * drawn, renderer="pillow", capped=scale < 1.0)


def _picture_dpi(picture: Image.Image) -> float:
    """The resolution the picture declares (a scanner writes it), else DEFAULT_PICTURE_DPI. A
    declared 1 or 72 dpi is a placeholder, not a measurement."""
    declared = picture.info.get("dpi")
    try:
        value = float(declared[0]) if declared else 0.0
    except (TypeError, ValueError, IndexError):
        value = 0.0
    return value if value >= 100 else DEFAULT_PICTURE_DPI
