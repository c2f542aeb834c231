"""Bytes -> file type. Magic bytes and container structure decide; the extension is
only a tiebreaker (plain text vs CSV, say), so misnamed and extensionless files are
typed by what they are."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileType:
    #: short family name used for dispatch: pdf, docx, xlsx, xlsm, pptx, odt, ods, odp, epub,
    #: rtf, html, xml, json, csv, tsv, txt, png, jpeg, tiff, gif, bmp, webp, zip, 7z, rar, tar,
    #: gzip, bzip2, xz, zstd, cab, arj, lzh, iso, cpio, ar, doc, xls, ppt, ole-encrypted,
    #: empty, unknown
    kind: str
    mime: str
    #: how it was decided: "magic", "container", "content", "extension", "empty"
    detected_by: str

    @property
    def is_archive(self) -> bool:
        return self.kind in ARCHIVE_KINDS


ARCHIVE_KINDS = frozenset(
    {"zip", "7z", "rar", "tar", "gzip", "bzip2", "xz", "zstd", "lzma", "cab", "arj", "lzh", "iso", "cpio", "ar", "lzip", "compress"}
)


def sniff(data: bytes, name: str = "") -> FileType:
    """Type ``data``; ``name`` (file name or key) only breaks ties."""
    raise NotImplementedError  # filled in by the sniffing work
