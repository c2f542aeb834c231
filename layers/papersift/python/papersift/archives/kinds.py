"""Archive detection of members on disk by magic bytes, not by name."""

from __future__ import annotations

import zipfile
from pathlib import Path

from papersift.archives.streams import looks_like_tar

#: kinds read by external tools (7z, unar, patool); zip, tar and bare streams are read in-process
TOOL_KINDS = frozenset(
    {"7z", "rar", "cab", "arj", "lzh", "iso", "cpio", "ar", "wim", "rpm", "deb", "xar", "dmg", "chm"}
)


def archive_kind(path: Path) -> str | None:
    """The archive kind of a file on disk by magic bytes, or None.

    Zip-based documents (OOXML, ODF, EPUB) are documents, not archives.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(0x8006)
    except OSError:
        return None
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            if kind == "zip":
                return None if _is_document_zip(path) else "zip"
            return kind
    if len(head) > 7 and head[2:5] == b"-lh" and head[6:7] == b"-":
        return "lzh"
    if head[0x8001:0x8006] == b"CD001":
        return "iso"
    if looks_like_tar(head[:512]):
        return "tar"
    return None


_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"Rar!\x1a\x07", "rar"),
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"LZIP", "lzip"),
    (b"\x1f\x9d", "compress"),
    (b"MSCF", "cab"),
    (b"\x60\xea", "arj"),
    (b"!<arch>\n", "ar"),
    (b"070701", "cpio"),
    (b"070702", "cpio"),
    (b"070707", "cpio"),
    (b"\xc7\x71", "cpio"),
    (b"\x71\xc7", "cpio"),
)


def _is_document_zip(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist()[:2000])
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
    return bool(names & {"[Content_Types].xml", "mimetype", "META-INF/manifest.xml", "AndroidManifest.xml"})
