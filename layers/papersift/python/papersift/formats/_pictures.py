"""Pictures embedded in the units of office files, e-books and HTML pages: which of them OCR reads.

A unit's pictures have no text over them (a pasted scan, a screenshot on a slide, a chart), so
they are what a PDF page's pictures with no text layer over them are: OCR reads them after the
unit's own text (``ocr.routing.ocr_need`` with ``embedded``; ``ocr.pages`` reads them in the OCR
stage like a PDF page's picture regions). Here, once per document, after the extractors have
collected each unit's pictures (``PageContent.embedded``): the pictures too small to hold text
and the repeats of bytes seen earlier in the document are set aside unread, at most
``max_pictures_per_document`` are queued for OCR, and every picture is listed in its unit's report.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from papersift.content import EmbeddedPicture, PageContent
from papersift.ocr.routing import ocr_need
from papersift.report import PageStatus, PictureRecord
from papersift.settings import OCR_OFF, Settings

#: a picture narrower or lower than this (pixels) holds no line of text OCR can read: a rule, a bullet
MIN_PICTURE_SIDE = 16
#: ... and one of fewer pixels than this (80 x 75) is an icon or a logo, not text worth a reading
MIN_PICTURE_PIXELS = 6_000
#: pictures listed one by one per picture OCR may read (max_pictures_per_document): those beyond are
#: counted by status (``pictures_not_listed``), so a file of 100,000 tiny pictures keeps a small report
LISTED_PER_PICTURE_READ = 10


def choose_pictures(units: list[PageContent], settings: Settings) -> list[PageContent]:
    """List every unit's pictures in its report and keep in ``embedded`` only those OCR is to read
    (the unit then says so in ``ocr_scope``). With OCR off, a unit whose only content is pictures
    needs OCR: it is never taken for an empty one."""
    seen: dict[bytes, PictureRecord] = {}
    queued = listed = 0
    listing_bound = LISTED_PER_PICTURE_READ * settings.max_pictures_per_document
    for unit in units:
        if not unit.embedded or unit.report.pictures:  # none, or chosen already (a decrypted file's)
            continue
        records: list[PictureRecord] = []
        kept: list[EmbeddedPicture] = []
        for picture in unit.embedded:
            digest = hashlib.sha256(picture.data).digest()
            first = seen.get(digest)
            if first is not None:
                records.append(first.replace(name=picture.name, status="skipped_duplicate", engine=None,
                                             confidence=None, chars=0, reason=f"the same bytes as {first.name}"))
                continue
            record = _measured(picture)
            seen[digest] = record
            if record.status == "queued":
                if queued >= settings.max_pictures_per_document:
                    record = record.replace(status="skipped_limit", reason=(
                        f"beyond max_pictures_per_document ({settings.max_pictures_per_document})"))
                    seen[digest] = record
                else:
                    queued += 1
                    kept.append(picture)
            records.append(record)
        unit.embedded = kept
        shown: list[PictureRecord] = []
        unlisted: Counter[str] = Counter()
        for record in records:  # the pictures OCR reads are always listed; the others up to the bound
            if record.status != "queued":
                listed += 1
                if listed > listing_bound:
                    unlisted[record.status] += 1
                    continue
            shown.append(record)
        unit.report.pictures = shown
        unit.report.pictures_not_listed = dict(unlisted)
        _route(unit, settings)
    return units


def _measured(picture: EmbeddedPicture) -> PictureRecord:
    """The picture's size from its header (no pixel decoded), and whether it can hold text."""
    from papersift.errors import PapersiftError
    from papersift.rendering import picture_size

    try:
        width, height = picture_size(picture.data)
    except PapersiftError as exc:
        return PictureRecord(name=picture.name, bytes=len(picture.data), status="skipped_format",
                             reason=f"not a picture that can be decoded ({exc})")
    record = PictureRecord(name=picture.name, bytes=len(picture.data), width=width, height=height, status="queued")
    if min(width, height) < MIN_PICTURE_SIDE or width * height < MIN_PICTURE_PIXELS:
        return record.replace(status="skipped_small", reason=(
            f"{width} x {height} px is too small to hold text (at least {MIN_PICTURE_SIDE} px a side and "
            f"{MIN_PICTURE_PIXELS} px needed)"))
    return record


def _route(unit: PageContent, settings: Settings) -> None:
    """OCR reads the unit's queued pictures when the one routing decision says so; otherwise they
    are listed as not read, and a unit that holds nothing but them needs OCR."""
    report = unit.report
    need = ocr_need(report.status, 1.0, embedded=len(unit.embedded)) \
        if unit.embedded and settings.ocr_mode != OCR_OFF else None
    if need is not None:
        unit.ocr_scope, unit.ocr_reason = need.scope, need.reason
        return
    if not unit.embedded:
        return
    why = "OCR is off" if settings.ocr_mode == OCR_OFF else f"the unit is {report.status}"
    report.pictures = [r.replace(status="not_read", reason=why) if r.status == "queued" else r
                       for r in report.pictures]
    if not unit.text.strip() and report.status == PageStatus.CLEAN:
        report.status = str(PageStatus.NEEDS_OCR)
        report.reason = (f"the unit holds no text but {len(unit.embedded)} picture(s) that may: OCR needed "
                         f"(ocr_mode={settings.ocr_mode})")
        report.signals = [*report.signals, "image_only"]
    unit.embedded = []
