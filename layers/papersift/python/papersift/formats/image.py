"""Pictures as documents: PNG, JPEG, TIFF (every frame a page), GIF, BMP, WebP.

A picture has no text layer, so its pages go straight to OCR (the plan routes them there). This
module is what the extract step does with them when OCR is off for the document: every frame
is a page that says it needs OCR, so the report still counts and names each one.
"""

from __future__ import annotations

import time

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
    started = time.perf_counter()
    last = min(last, picture_frame_count(data))
    return [PageContent(number=number, text="", report=PageReport(
        number=number,
        status=PageStatus.NEEDS_OCR,
        engine=None,
        char_count=0,
        confidence=0.0,
        reason=f"a picture: only OCR can read its text (ocr_mode={settings.ocr_mode})",
        seconds=round(time.perf_counter() - started, 6),
        signals=["image_only"],
    )) for number in range(first, last + 1)]
