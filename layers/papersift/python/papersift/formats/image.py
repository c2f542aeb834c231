"""Pictures as documents: PNG, JPEG, TIFF (every frame a page), GIF, BMP, WebP.

A picture has no text layer, so its pages go straight to OCR (the plan routes them there). This
module is what the extract step does with them when OCR is off for the document: every frame
is a page that says it needs OCR, so the report still counts and names each one.
"""

from __future__ import annotations

from papersift.content import PageContent
from papersift.rendering import picture_frame_count
from papersift.report import PageReport, PageStatus
from papersift.settings import Settings

__all__ = ["extract_frames", "frame_count"]


def frame_count(data: bytes, settings: Settings) -> int:
    """Pages of a picture document: its frames."""
    return picture_frame_count(data)


def extract_frames(data: bytes, settings: Settings, first: int, last: int) -> list[PageContent]:
    """Frames first..last as pages without text: only OCR can read a picture."""
    document = PicturePages(data, settings)
    return [document.page(number) for number in range(first, min(last, document.count) + 1)]


class PicturePages:
    """A picture's frames as pages (the shape of formats.pdf.PdfPages): each needs OCR, which
    reads the file itself, so a frame has no OCR input of its own."""

    def __init__(self, data: bytes, settings: Settings) -> None:
        self.settings = settings
        self.count = picture_frame_count(data)

    def page(self, number: int) -> PageContent:
        return PageContent(number=number, text="", report=PageReport.without_text(
            number, PageStatus.NEEDS_OCR, f"a picture: only OCR can read its text (ocr_mode={self.settings.ocr_mode})",
            signals=["image_only"]))

    def ocr_input(self, number: int) -> bytes | None:
        return None

    def __enter__(self) -> PicturePages:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
