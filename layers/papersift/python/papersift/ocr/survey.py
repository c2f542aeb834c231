"""Looking at a picture's frames before OCR (the OCR plan step does, in a worker): which are blank
and which repeat an earlier frame, so that neither takes an OCR step; and, for assemble, the pages
those frames then are. Pure: no store, no clients.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace
from typing import Any

from papersift.content import PageContent
from papersift.errors import PapersiftError
from papersift.ocr import pictures
from papersift.ocr.pages import blank_page
from papersift.rendering import picture_frames

#: seconds the OCR plan step spends looking at a picture's frames (in a worker, well inside the OCR plan
#: step's 120 s): frames it did not reach are read as they come (a blank one still costs no engine
#: call, only an OCR step). Distinct frames decode in ~20 ms (a 200-dpi letter page); frames stored
#: alike (a TIFF's IFDs sharing a strip) are not decoded again
SURVEY_SECONDS = 60
#: what the survey's worker may take beyond the step's memory (the OCR plan function has 1,024 MB)
SURVEY_MEMORY_MB = 640
#: frames decoding to more than this are left to the OCR step, which has the memory for them
SURVEY_MAX_FRAME_BYTES = 256 << 20


@dataclass(frozen=True)
class FrameSurvey:
    """What looking at a picture's frames before OCR found: ``blank`` frames (number -> square
    inches marked), read by no engine, and frames whose pixels repeat an earlier one's
    (``same_as``: number -> the first), read once. ``surveyed``: frames 1..surveyed were looked at."""

    blank: dict[int, float] = field(default_factory=dict)
    same_as: dict[int, int] = field(default_factory=dict)
    surveyed: int = 0

    def to_read(self, number: int) -> bool:
        return number not in self.blank and number not in self.same_as

    def to_dict(self) -> dict[str, Any]:
        return {"blank": {str(n): v for n, v in self.blank.items()},
                "same_as": {str(n): v for n, v in self.same_as.items()}, "surveyed": self.surveyed}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FrameSurvey:
        return cls(blank={int(n): float(v) for n, v in data.get("blank", {}).items()},
                   same_as={int(n): int(v) for n, v in data.get("same_as", {}).items()},
                   surveyed=int(data.get("surveyed", 0)))


def survey_frames(data: bytes, frames: int, max_pixels: int, seconds: float) -> FrameSurvey:
    """Look at frames 1..``frames`` of a picture as OCR would draw them (within ``max_pixels``) for
    ``seconds`` at most: which are blank (``pictures.is_blank``, the one test), which repeat an
    earlier frame's pixels (same storage in the file, or the same pixel digest). Pure: runs in a
    worker."""
    deadline = time.monotonic() + seconds
    blank: dict[int, float] = {}
    same_as: dict[int, int] = {}
    first_stored: dict[tuple[object, ...], int] = {}
    first_pixels: dict[bytes, int] = {}
    surveyed = 0
    try:
        for frame in picture_frames(data, range(1, frames + 1), max_pixels=max_pixels):
            if time.monotonic() > deadline:
                break
            number = frame.number
            earlier = first_stored.get(frame.stored)
            if earlier is None and frame.decoded_bytes <= SURVEY_MAX_FRAME_BYTES:
                first_stored[frame.stored] = number
                page = frame.draw()
                if pictures.is_blank(page.image, page.dpi):
                    blank[number] = round(pictures.marked_square_inches(page.image, page.dpi), 6)
                else:
                    digest = hashlib.blake2b(page.image.tobytes(), digest_size=20,
                                             person=page.image.mode.encode()).digest() + repr(page.image.size).encode()
                    earlier = first_pixels.setdefault(digest, number)
                    if earlier != number:
                        same_as[number] = earlier
            elif earlier is not None:
                if earlier in blank:
                    blank[number] = blank[earlier]
                else:
                    same_as[number] = same_as.get(earlier, earlier)
            surveyed = number
    except PapersiftError:
        pass  # a frame that cannot be drawn: it and the rest are the OCR step's to fail or read
    return FrameSurvey(blank=blank, same_as=same_as, surveyed=surveyed)


def surveyed_pages(survey: FrameSurvey, read: dict[int, PageContent]) -> list[PageContent]:
    """The pages the survey decided without reading them, for assemble: each blank frame as
    ``blank_page``, each repeated frame as the reading of the frame it repeats (``read``: the pages
    OCR wrote), its attempts left out so that nothing is billed twice."""
    pages = [blank_page(number, marked) for number, marked in survey.blank.items() if number not in read]
    for number, first in survey.same_as.items():
        original = read.get(first)
        if original is not None and number not in read:
            report = original.report.replace(
                number=number, attempts=[], seconds=0.0, ocr_cost_usd=0.0,
                signals=[*original.report.signals, "repeated_frame"],
                reason=f"the same pixels as frame {first}, read once: {original.report.reason}")
            pages.append(replace(original, number=number, report=report))
    return pages
