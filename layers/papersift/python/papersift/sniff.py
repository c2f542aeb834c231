"""Bytes -> file type: the one detector, for dropped files (``sniff``) and for archive members
on disk (``sniff_file``, ``archive_kind``). Magic bytes and container structure decide; the
extension is only a tiebreaker (plain text vs CSV, say), so misnamed and extensionless files
are typed by what they are.

Why the signatures are kept here rather than in a signature library (bench/signature_libraries.py:
one sample per kind we read, typed from its bytes; the numbers are in docs/benchmarks.md):
puremagic 1.30 finds no LZMA-alone stream and no cpio, ranks an ISO 9660 image below an
embroidery format (0.8 vs 0.5) and guesses an Office type for zips (a plain zip and an odt as
docx, a docx as xlsx); filetype 1.2 finds none of LZMA-alone, cpio, arj, lzh, ISO or BigTIFF; both
take text that starts with "BM" or "BZh" for a bitmap or a bzip2 stream. Either would still need
the structural checks below (tar checksums, bzip2 block headers, BMP header sizes, the parts of a
zip or OLE2 container), for 2-4 ms more import. python-magic identifies the most (44 of 48
samples; not xlsm, tsv or an ISO descriptor at 0x8801), but it binds libmagic, a C library (with
an 8 MB compiled magic database) that the zip functions' Lambda runtime does not have: the plan
function, a zip function, types every dropped file, and plan and unpack must type alike, so it
would mean building and shipping libmagic in a layer. The bottom of the graph: of papersift
it imports only ``plaintext`` (the encoding and delimiter rules text is typed and read by, a leaf
too), never a format extractor, so every format can import the FileType it dispatches on.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from papersift.plaintext import bom_encoding, detect_delimiter, guess_encoding, wide_encoding


@dataclass(frozen=True)
class FileType:
    #: short family name used for dispatch: pdf, docx, xlsx, xlsm, pptx, odt, ods, odp, epub,
    #: rtf, html, xml, json, csv, tsv, txt, png, jpeg, tiff, gif, bmp, webp, avif, heic, zip, 7z, rar, tar,
    #: gzip, bzip2, xz, zstd, lzma, lzip, compress, cab, arj, lzh, iso, cpio, ar, doc, xls, ppt,
    #: eml, msg, ole (other OLE2 storage), ole-encrypted (encrypted OOXML), empty, unknown
    kind: str
    mime: str
    #: how it was decided: "magic", "container", "content", "extension", "empty"
    detected_by: str

    @property
    def is_archive(self) -> bool:
        return self.kind in ARCHIVE_KINDS

    @property
    def is_picture(self) -> bool:
        """A picture document: each frame is a page, and only OCR can read it."""
        return self.kind in PICTURE_KINDS


#: picture documents (PNG, JPEG, TIFF, GIF, BMP, WebP, AVIF, HEIC): every frame a page
PICTURE_KINDS = frozenset({"png", "jpeg", "tiff", "gif", "bmp", "webp", "avif", "heic"})

ARCHIVE_KINDS = frozenset(
    {"zip", "7z", "rar", "tar", "gzip", "bzip2", "xz", "zstd", "lzma", "cab", "arj", "lzh", "iso", "cpio", "ar",
     "lzip", "compress"}
)

MIME_TYPES: dict[str, str] = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "xlsm": "application/vnd.ms-excel.sheet.macroEnabled.12",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "odt": "application/vnd.oasis.opendocument.text",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
    "odp": "application/vnd.oasis.opendocument.presentation",
    "epub": "application/epub+zip",
    "rtf": "application/rtf",
    "html": "text/html",
    "xml": "application/xml",
    "json": "application/json",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "txt": "text/plain",
    "png": "image/png",
    "jpeg": "image/jpeg",
    "tiff": "image/tiff",
    "gif": "image/gif",
    "bmp": "image/bmp",
    "webp": "image/webp",
    "avif": "image/avif",
    "heic": "image/heic",
    "zip": "application/zip",
    "7z": "application/x-7z-compressed",
    "rar": "application/vnd.rar",
    "tar": "application/x-tar",
    "gzip": "application/gzip",
    "bzip2": "application/x-bzip2",
    "xz": "application/x-xz",
    "zstd": "application/zstd",
    "lzma": "application/x-lzma",
    "lzip": "application/x-lzip",
    "compress": "application/x-compress",
    "cab": "application/vnd.ms-cab-compressed",
    "arj": "application/x-arj",
    "lzh": "application/x-lzh-compressed",
    "iso": "application/x-iso9660-image",
    "cpio": "application/x-cpio",
    "ar": "application/x-archive",
    "doc": "application/msword",
    "xls": "application/vnd.ms-excel",
    "ppt": "application/vnd.ms-powerpoint",
    "msg": "application/vnd.ms-outlook",
    "eml": "message/rfc822",
    "ole": "application/x-ole-storage",
    "ole-encrypted": "application/x-ole-storage",
    "empty": "application/x-empty",
    "unknown": "application/octet-stream",
}

#: simple prefixes, checked in order; longer/more specific first where they share bytes
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"{\\rtf", "rtf"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"Rar!\x1a\x07\x01\x00", "rar"),
    (b"Rar!\x1a\x07\x00", "rar"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"LZIP", "lzip"),
    (b"MSCF\x00\x00\x00\x00", "cab"),
    (b"!<arch>\n", "ar"),
    (b"070707", "cpio"),
    (b"070701", "cpio"),
    (b"070702", "cpio"),
    (b"\xc7\x71", "cpio"),  # binary cpio, little-endian 0o070707
    (b"\x71\xc7", "cpio"),  # binary cpio, big-endian
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"II+\x00", "tiff"),  # BigTIFF
    (b"MM\x00+", "tiff"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
)

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")

#: OOXML main-part content types -> kind (Transitional and Strict share these)
_OOXML_CONTENT_TYPES: tuple[tuple[str, str], ...] = (
    ("application/vnd.ms-excel.sheet.macroenabled.main+xml", "xlsm"),
    ("application/vnd.ms-excel.template.macroenabled.main+xml", "xlsm"),
    ("spreadsheetml.sheet.main+xml", "xlsx"),
    ("spreadsheetml.template.main+xml", "xlsx"),
    ("wordprocessingml.document.main+xml", "docx"),
    ("wordprocessingml.template.main+xml", "docx"),
    ("application/vnd.ms-word.document.macroenabled.main+xml", "docx"),
    ("application/vnd.ms-word.template.macroenabledtemplate.main+xml", "docx"),
    ("presentationml.presentation.main+xml", "pptx"),
    ("presentationml.slideshow.main+xml", "pptx"),
    ("presentationml.template.main+xml", "pptx"),
    ("application/vnd.ms-powerpoint.presentation.macroenabled.main+xml", "pptx"),
    ("application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml", "pptx"),
)
_OOXML_MAIN_PARTS = (("word/document.xml", "docx"), ("xl/workbook.xml", "xlsx"), ("ppt/presentation.xml", "pptx"))
_ODF_MIMETYPES = {
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.text-template": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.spreadsheet-template": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
    "application/vnd.oasis.opendocument.presentation-template": "odp",
    "application/epub+zip": "epub",
}

#: bytes looked at for text classification
_TEXT_PREFIX = 64 * 1024
_CONTROL_BYTES = frozenset(range(0x00, 0x09)) | frozenset(range(0x0E, 0x1B)) | frozenset(range(0x1C, 0x20)) | {0x7F}
_HTML_START = re.compile(rb"<(!doctype\s+html|html|head|body|meta|title|frameset)\b", re.IGNORECASE)
_XML_HTML = re.compile(rb"<!doctype\s+html|<html[\s>]", re.IGNORECASE)
#: an RFC 822 header line (a field name, a colon) and a folded continuation line
_HEADER_FIELD = re.compile(r"^[!-9;-~]{1,76}:")
_HEADER_CONTINUATION = re.compile(r"^[ \t]+\S")
#: fields only a message's header carries: a note that starts "Subject: ..." is no email by itself
_MAIL_FIELDS = frozenset({"from", "received", "mime-version", "message-id", "return-path", "delivered-to"})


def _ft(kind: str, detected_by: str) -> FileType:
    return FileType(kind=kind, mime=MIME_TYPES[kind], detected_by=detected_by)


def _extension(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return base.rsplit(".", 1)[-1] if "." in base else ""


#: bytes of a file looked at: the text classification's prefix, which also covers every
#: signature offset (ISO 9660's last one ends at 0x9006)
_HEAD = 64 * 1024


def sniff(data: bytes, name: str = "") -> FileType:
    """Type ``data``; ``name`` (file name or key) only breaks ties."""
    return _detect(data[:_HEAD], len(data), lambda: io.BytesIO(data), name)


def sniff_file(path: Path, name: str = "") -> FileType:
    """Type a file on disk (an archive member) by the same rules, reading only its head unless it
    is a zip or OLE2 container, whose parts are looked at in place."""
    with open(path, "rb") as fh:
        head = fh.read(_HEAD)
    return _detect(head, path.stat().st_size, lambda: open(path, "rb"), name or path.name)


def archive_kind(path: Path) -> str | None:
    """The archive kind of a file on disk, or None for anything else (zipped documents such as
    OOXML, ODF and EPUB are documents). The same rules as ``sniff``, without the text
    classification (an archive is never text), so every member of a large archive is cheap."""
    with open(path, "rb") as fh:
        head = fh.read(_HEAD)
    if head.startswith(_OLE_MAGIC):  # an Office document, never an archive: no need to open it
        return None
    file_type = _binary_kind(head, lambda: open(path, "rb"), "")  # noqa: SIM115 - the caller closes it
    return file_type.kind if file_type is not None and file_type.is_archive else None


def _detect(head: bytes, size: int, container: Callable[[], IO[bytes]], name: str) -> FileType:
    if not size:
        return _ft("empty", "empty")
    ext = _extension(name)
    return _binary_kind(head, container, ext) or _text_kind(head, size, ext)


def _binary_kind(head: bytes, container: Callable[[], IO[bytes]], ext: str) -> FileType | None:
    if head.startswith(b"%PDF"):
        return _ft("pdf", "magic")
    if head.startswith(_ZIP_MAGICS):
        return _zip_kind(container)
    if head.startswith(_OLE_MAGIC):
        return _ole_kind(container, ext)
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return _ft(kind, "magic")
    found = _weak_magic(head)
    # a PDF may carry junk before its header, but an archive holding a PDF also shows
    # "%PDF" early: only after every container magic has had its say is it a PDF
    if not found and b"%PDF" in head[:1024]:
        return _ft("pdf", "magic")
    return _ft(found, "magic") if found else None


def _weak_magic(data: bytes) -> str | None:
    """Signatures too short or too far in to trust without a second check."""
    if data.startswith(b"\x1f\x8b\x08"):
        return "gzip"
    if data.startswith(b"\x1f\x9d"):
        return "compress"
    if data[:3] == b"BZh" and data[3:4] in b"123456789" and len(data) >= 4 and data[4:10] in (
        b"\x31\x41\x59\x26\x53\x59",  # block header
        b"\x17\x72\x45\x38\x50\x90",  # end of stream: an empty file
    ):
        return "bzip2"
    if data[:2] == b"\x60\xea" and len(data) > 10:
        return "arj"
    if len(data) >= 7 and data[2:5] in (b"-lh", b"-lz") and data[6:7] == b"-":
        return "lzh"
    for offset in (0x8001, 0x8801, 0x9001):
        if data[offset : offset + 5] == b"CD001":
            return "iso"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    picture = iso_bmff_picture(data)
    if picture:
        return picture
    if data[:2] == b"BM" and len(data) >= 18 and struct.unpack_from("<I", data, 14)[0] in _BMP_HEADER_SIZES:
        return "bmp"
    if is_tar_header(data[:512]):
        return "tar"
    if _is_lzma_alone(data):
        return "lzma"
    return None


_BMP_HEADER_SIZES = (12, 40, 52, 56, 64, 108, 124)

#: ISO-BMFF ``ftyp`` brands of still pictures (ISO/IEC 23008-12 HEIF, AV1 Image File Format);
#: the same box starts MP4, QuickTime and 3GP files, whose brands are none of these
_AVIF_BRANDS = frozenset({b"avif", b"avis"})
_HEIC_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1"})


def iso_bmff_picture(data: bytes) -> str | None:
    """"avif" or "heic" from an ISO-BMFF ``ftyp`` box (size, "ftyp", major brand, minor version,
    compatible brands), None for other ISO-BMFF files (video, audio). AVIF files also name the
    generic HEIF brand ``mif1``, so an AV1 brand anywhere wins."""
    if len(data) < 16 or data[4:8] != b"ftyp":
        return None
    size = struct.unpack_from(">I", data, 0)[0]
    if size < 16 or size > min(len(data), 4096):
        return None
    brands = {data[8:12], *(data[offset:offset + 4] for offset in range(16, size - 3, 4))}
    if brands & _AVIF_BRANDS:
        return "avif"
    return "heic" if brands & _HEIC_BRANDS else None


def is_tar_header(block: bytes) -> bool:
    """A tar header block: ustar magic, or (old V7 tars have none) a name and a checksum that adds up."""
    if len(block) < 512:
        return False
    if block[257:262] == b"ustar":
        return True
    block = block[:512]
    if not block[0] or block[0] in _CONTROL_BYTES:  # a name must start the block
        return False
    field = block[148:156].replace(b"\x00", b" ").strip()
    if not field or any(c not in b"01234567" for c in field):
        return False
    stored = int(field, 8)
    computed = sum(block[:148]) + 8 * 32 + sum(block[156:])
    signed = sum((b - 256 if b > 127 else b) for b in block[:148]) + 8 * 32 + sum(
        (b - 256 if b > 127 else b) for b in block[156:]
    )
    return stored in (computed, signed)


def _is_lzma_alone(data: bytes) -> bool:
    """.lzma (LZMA-alone): properties byte, power-of-two-ish dictionary, size or -1."""
    if len(data) < 13 or data[0] > 224 or data[0] != 0x5D:
        return False
    dictionary = struct.unpack_from("<I", data, 1)[0]
    if dictionary < 4096 or (dictionary & (dictionary - 1) and dictionary not in (3 << n for n in range(12, 30))):
        return False
    size = struct.unpack_from("<Q", data, 5)[0]
    return size == 0xFFFFFFFFFFFFFFFF or size < 1 << 40


def _zip_kind(container: Callable[[], IO[bytes]]) -> FileType:
    """OOXML, ODF and EPUB are zips; their parts say which one (never the name). Any other zip is an
    archive, whatever it holds (a stray ``mimetype`` entry, an APK's AndroidManifest.xml)."""
    with container() as raw:
        return _zip_parts_kind(raw)


def _zip_parts_kind(raw: IO[bytes]) -> FileType:
    try:
        archive = zipfile.ZipFile(raw)
        infos = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        return _ft("zip", "magic")
    try:
        mimetype = infos.get("mimetype")
        if mimetype is not None and mimetype.file_size < 200:
            declared = archive.read(mimetype).decode("ascii", "replace").strip().lower()
            if declared in _ODF_MIMETYPES:
                return _ft(_ODF_MIMETYPES[declared], "container")
        types = infos.get("[Content_Types].xml")
        if types is not None and types.file_size < 4 * 1024 * 1024:
            declared = archive.read(types).decode("utf-8", "replace").lower()
            for content_type, kind in _OOXML_CONTENT_TYPES:
                if content_type in declared:
                    return _ft(kind, "container")
        for part, kind in _OOXML_MAIN_PARTS:
            if part in infos:
                return _ft(kind, "container")
        if mimetype is not None and "META-INF/container.xml" in infos:
            return _ft("epub", "container")
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError, KeyError):
        pass  # an encrypted or damaged member: still a zip, the archive step reports the damage
    return _ft("zip", "container")


def _ole_kind(container: Callable[[], IO[bytes]], ext: str) -> FileType:
    """OLE2 storage: the stream names tell Word from Excel from encrypted OOXML."""
    import olefile  # only OLE2 input pays for the import

    try:
        with container() as raw, olefile.OleFileIO(raw) as ole:
            streams = {"/".join(entry).lower() for entry in ole.listdir(streams=True, storages=True)}
    except Exception:  # olefile raises bare OSError/struct errors on damage
        legacy = {"doc": "doc", "dot": "doc", "xls": "xls", "xlt": "xls", "ppt": "ppt", "pot": "ppt", "msg": "msg"}
        return _ft(legacy[ext], "extension") if ext in legacy else _ft("ole", "magic")
    if "encryptioninfo" in streams and "encryptedpackage" in streams:
        return _ft("ole-encrypted", "container")
    if "worddocument" in streams:
        return _ft("doc", "container")
    if "workbook" in streams or "book" in streams:
        return _ft("xls", "container")
    if "powerpoint document" in streams:
        return _ft("ppt", "container")
    if any(s.startswith("__substg1.0_") for s in streams):
        return _ft("msg", "container")
    return _ft("ole", "container")


def is_mail_header(text: str) -> bool:
    """``text`` starts with an email's header: every line up to the first blank one is a header
    field or its continuation, at least two fields, one of them one only mail has (From,
    Received, MIME-Version, Message-ID, Return-Path, Delivered-To)."""
    fields: set[str] = set()
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if not line.strip():
            return number > 0 and len(fields) >= 2 and bool(fields & _MAIL_FIELDS)
        if _HEADER_FIELD.match(line):
            fields.add(line.split(":", 1)[0].lower())
        elif number == 0 or not _HEADER_CONTINUATION.match(line):
            return False
    # no blank line in the head: a header longer than what is looked at still counts
    return len(lines) > 50 and len(fields) >= 2 and bool(fields & _MAIL_FIELDS)


def _text_kind(head: bytes, size: int, ext: str) -> FileType:
    prefix = head[:_TEXT_PREFIX]
    bom = bom_encoding(prefix)
    wide = bom[0] if bom else wide_encoding(prefix)
    if wide and wide != "utf-8":
        body = prefix[bom[1] :] if bom else prefix
        unit = 4 if "32" in wide else 2
        view = body[: len(body) - len(body) % unit].decode(wide, errors="replace")
    else:
        body = prefix[bom[1] :] if bom else prefix
        # an ASCII-compatible view: enough to see markup and control bytes in any 8-bit encoding
        view = body.decode("latin-1")
    stripped = view.lstrip()
    if not stripped:
        return _ft("txt", "content")  # whitespace only: text, though nothing to index
    start = stripped[:4096].encode("latin-1", errors="replace")
    if start.startswith(b"<?xml"):
        return _ft("html" if _XML_HTML.search(start) else "xml", "content")
    if _HTML_START.match(start) or (start.startswith(b"<!--") and _XML_HTML.search(start)):
        return _ft("html", "content")
    if is_mail_header(stripped[:_TEXT_PREFIX]):
        return _ft("eml", "content")
    controls = sum(1 for ch in view if ord(ch) < 0x100 and ord(ch) in _CONTROL_BYTES) + view.count("\ufffd")
    if controls and not any(ch.isprintable() and not ch.isspace() for ch in view[:4096]):
        return _ft("unknown", "content")  # a few control bytes and nothing else (a one-byte NUL) are no text
    if controls > max(2, 0.02 * len(view)):
        encoding = guess_encoding(prefix)
        if not encoding.startswith(("utf-16", "utf-32")):
            return _ft("unknown", "content")
        view = prefix.decode(encoding, errors="replace")
        if sum(1 for ch in view if ord(ch) < 0x20 and ch not in "\t\n\r\f\v") > 0.02 * len(view):
            return _ft("unknown", "content")
        stripped = view.lstrip()
    if stripped[:1] in ("{", "["):
        complete = len(prefix) == size
        if complete:
            try:
                json.loads(stripped)
                return _ft("json", "content")
            except ValueError:
                pass
        second = stripped[1:].lstrip()[:1]
        if (stripped[0] == "{" and second in ('"', "}")) or (stripped[0] == "[" and second in ('{', '[', '"', "]")):
            return _ft("json", "content")
    delimited = detect_delimiter(stripped)
    if ext in ("csv", "tsv", "tab"):
        if ext == "csv" and (delimited is None or delimited[0] != "\t"):
            return _ft("csv", "extension")
        return _ft("tsv", "extension")
    # prose can show a steady comma count for a few lines; a .txt name asks for more proof
    needed = 10 if ext in ("txt", "text", "log", "md") else 3
    if delimited is not None and delimited[1] >= needed:
        return _ft("tsv" if delimited[0] == "\t" else "csv", "content")
    return _ft("txt", "content")
