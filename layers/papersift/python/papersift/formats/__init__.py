"""Dispatch from a FileType to the extractor of its family.

Two shapes of extractor exist. Paged formats (PDF, and pictures, whose frames are pages) can be
split into batches of pages that run in parallel Lambdas: ``pdf.page_count`` and
``pdf.extract_pages``, ``image.frame_count`` and ``image.extract_frames``. Every other
format is extracted whole in one call, ``extract(data, settings) -> list[PageContent]``,
returning one unit per page-like thing it has (a sheet, a slide, or the whole text).
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import Protocol

from papersift.content import PageContent
from papersift.errors import (
    CorruptInputError,
    DeadlineExceededError,
    EngineCrashError,
    MemoryLimitError,
    NestingTooDeepError,
    UnsupportedFormatError,
)
from papersift.isolation import Limits, run_once
from papersift.settings import Settings
from papersift.sniff import PICTURE_KINDS, FileType, sniff
from papersift.structure import OutlineEntry

WholeExtractor = Callable[[bytes, Settings], list[PageContent]]

#: kind -> "module:function" of a whole-document extractor
WHOLE_DOCUMENT_EXTRACTORS: dict[str, str] = {
    "txt": "papersift.formats.text:extract_plain_text",
    "csv": "papersift.formats.text:extract_delimited",
    "tsv": "papersift.formats.text:extract_delimited",
    "json": "papersift.formats.text:extract_json",
    "docx": "papersift.formats.docx:extract_docx",
    "xlsx": "papersift.formats.xlsx:extract_xlsx",
    "xlsm": "papersift.formats.xlsx:extract_xlsx",
    "pptx": "papersift.formats.pptx:extract_pptx",
    "odt": "papersift.formats.opendocument:extract_odt",
    "ods": "papersift.formats.opendocument:extract_ods",
    "odp": "papersift.formats.opendocument:extract_odp",
    "rtf": "papersift.formats.rtf:extract_rtf",
    "html": "papersift.formats.markup:extract_html",
    "xml": "papersift.formats.markup:extract_xml",
    "epub": "papersift.formats.epub:extract_epub",
    "eml": "papersift.formats.eml:extract_email",
    "msg": "papersift.formats.eml:extract_outlook",
    "doc": "papersift.formats.legacy:extract_doc",
    "xls": "papersift.formats.legacy:extract_xls",
    "ppt": "papersift.formats.legacy:extract_ppt",
    "ole-encrypted": "papersift.formats:extract_encrypted_office",
}

PAGED_KINDS = frozenset({"pdf", *PICTURE_KINDS})


def _resolve(target: str) -> WholeExtractor:
    module_name, func_name = target.split(":")
    func: WholeExtractor = getattr(importlib.import_module(module_name), func_name)
    return func


def is_supported(file_type: FileType) -> bool:
    return file_type.kind in PAGED_KINDS or file_type.kind in WHOLE_DOCUMENT_EXTRACTORS


def holds_files(data: bytes, file_type: FileType, limits: Limits, passwords: tuple[str, ...] = ()) -> bool:
    """The document may hold files to read as its members (``archives.ATTACHMENT_KINDS``); the
    unpack step reads the real list. A PDF's bytes tell when its objects are plain: writers type
    an embedded file's stream ``/EmbeddedFile`` (never inside an object stream) and a FileAttachment
    annotation names itself. When the type is optional and the rest sits compressed in object
    streams (``/ObjStm``), their inflated bytes tell. Only when they cannot (encrypted, other
    filters), or for an email, the parser looks, in a worker under ``limits``: one that does not
    finish answers yes, and the unpack step records why the files could not be read."""
    from papersift.archives.attachments import PDF_FILE_MARKERS, declares_files, object_streams_name_files

    if file_type.kind == "pdf":
        if any(marker in data for marker in PDF_FILE_MARKERS):
            return True
        if b"/ObjStm" not in data:
            return False
        named = object_streams_name_files(data)
        if named is not None:
            return named
    elif file_type.kind not in ("eml", "msg"):
        return False

    try:
        return run_once(functools.partial(declares_files, data, file_type.kind, passwords), limits)
    except (DeadlineExceededError, MemoryLimitError, EngineCrashError):
        return True


def count_pages(data: bytes, file_type: FileType, settings: Settings) -> int | None:
    """Pages of a paged format (raises Encrypted/Corrupt errors); None for the rest."""
    if file_type.kind == "pdf":
        from papersift.formats import pdf

        return pdf.page_count(data, settings)
    if file_type.kind in PICTURE_KINDS:
        from papersift.formats import image

        return image.frame_count(data, settings)
    return None


def count_pages_and_outline(data: bytes, file_type: FileType,
                            settings: Settings) -> tuple[int | None, list[OutlineEntry], int]:
    """``count_pages`` and, for a PDF, its outline (headings for document.md) and the pages of a
    page tree found sound (``Batch.sound_tree_pages``), from the same opening."""
    if file_type.kind == "pdf":
        from papersift.formats import pdf

        return pdf.page_count_and_outline(data, settings)
    return count_pages(data, file_type, settings), [], 0


class PagedDocument(Protocol):
    """A paged document opened for a batch (formats.pdf.PdfPages, formats.image.PicturePages)."""

    @property
    def count(self) -> int: ...

    def page(self, number: int) -> PageContent: ...

    def ocr_input(self, number: int) -> bytes | None: ...


def open_paged(data: bytes, file_type: FileType, settings: Settings, sound_tree_pages: int = 0) -> PagedDocument:
    """Open a paged format for a batch of pages (raises the format's Encrypted/Corrupt errors)."""
    if file_type.kind == "pdf":
        from papersift.formats.pdf import PdfPages

        return PdfPages(data, settings, sound_tree_pages=sound_tree_pages)
    if file_type.kind in PICTURE_KINDS:
        from papersift.formats.image import PicturePages

        return PicturePages(data, settings)
    raise UnsupportedFormatError(f"{file_type.kind} is not a paged format")


def extract_units(
    data: bytes, file_type: FileType, settings: Settings, first: int = 1, last: int | None = None
) -> list[PageContent]:
    """Extract pages first..last (1-based, inclusive) of a paged format, or everything.

    A structure nested past Python's recursion limit (a document of nested tables, groups, lists)
    is the input's doing: it ends ``NestingTooDeepError`` with the format named, never a crash."""
    try:
        return _extract_units(data, file_type, settings, first, last)
    except RecursionError:
        raise NestingTooDeepError(f"the {file_type.kind} document nests deeper than papersift reads "
                                  f"(Python's recursion limit, {sys.getrecursionlimit()})") from None


def _extract_units(data: bytes, file_type: FileType, settings: Settings, first: int, last: int | None
                   ) -> list[PageContent]:
    if file_type.kind == "pdf":
        from papersift.formats import pdf

        return pdf.extract_pages(data, settings, first, last if last is not None else pdf.page_count(data, settings))
    if file_type.kind in PICTURE_KINDS:
        from papersift.formats import image

        frames = last if last is not None else image.frame_count(data, settings)
        return image.extract_frames(data, settings, first, frames)
    target = WHOLE_DOCUMENT_EXTRACTORS.get(file_type.kind)
    if target is None:
        raise UnsupportedFormatError(f"no extractor for {file_type.kind} ({file_type.mime})")
    units = _resolve(target)(data, settings)
    if any(unit.embedded and not unit.report.pictures for unit in units):  # not yet chosen (an encrypted file's are)
        from papersift.formats._pictures import choose_pictures

        units = choose_pictures(units, settings)
    return units


def extract_encrypted_office(data: bytes, settings: Settings) -> list[PageContent]:
    """Decrypt with ``settings.passwords``, type the plain file and extract it as usual.

    Here rather than in ``decryption``: what follows the decrypting is this module's dispatch
    again, and ``decryption`` is imported by the formats, so it cannot import them back.
    msoffcrypto is imported when an encrypted file comes (about 50 ms of the extract cold start)."""
    from papersift.decryption import ENGINE, decrypt_office

    plain = decrypt_office(data, settings.passwords)
    if plain is data:
        raise CorruptInputError("file looked encrypted but holds no encrypted package")
    file_type = sniff(plain)
    if file_type.kind == "ole-encrypted":
        raise CorruptInputError("decrypted package is itself an encrypted container")
    if not is_supported(file_type):
        raise UnsupportedFormatError(f"decrypted file is {file_type.kind} ({file_type.mime}), which has no extractor")
    units = extract_units(plain, file_type, settings)
    for unit in units:
        unit.report.engine = f"{ENGINE}+{unit.report.engine}" if unit.report.engine else ENGINE
    return units
