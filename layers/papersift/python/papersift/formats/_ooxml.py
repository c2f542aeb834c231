"""What the OOXML readers (docx, xlsx, pptx) share: opening the zip package within the
size limits, resolving relationships, reading damaged XML parts, and matching elements
by local name so Transitional and Strict (ISO 29500) files take the same path.

Kept apart from ``_package`` (ODF, EPUB): OOXML part names are case-insensitive, parts
are resolved through relationships, and the limits are checked once for the whole
package rather than per part read.
"""

from __future__ import annotations

import io
import posixpath
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from papersift.content import EmbeddedPicture, Table
from papersift.errors import CorruptInputError, DecompressionBombError, EncryptedInputError, LimitExceededError
from papersift.formats._xml import has_doctype, read_xml
from papersift.report import TRUNCATED_SIGNAL, PageReport, PageStatus
from papersift.settings import Settings
from papersift.sniff import sniff

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: part names (lower case) that are never pictures
_NOT_MEDIA = (".xml", ".rels", ".vml", ".bin")
#: parts above this size must not expand more than settings.max_compression_ratio
_RATIO_FLOOR_BYTES = 10 * 1024 * 1024


@dataclass
class Package:
    """An opened OOXML zip with the parts' names, relationship lookup and damage notes."""

    zf: zipfile.ZipFile
    names: dict[str, str]  # lower-case name -> stored name (part names are case-insensitive)
    signals: list[str] = field(default_factory=list)
    #: why some text of a part is not in its tree (an external entity, nesting cut), with its code
    truncated: list[tuple[str, str]] = field(default_factory=list)
    #: part -> its relationships, read once (a slide's are read for its text and for its pictures)
    _rels: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    _media: bool | None = None

    def has(self, part: str) -> bool:
        return part.lower() in self.names

    def read(self, part: str) -> bytes:
        try:
            return self.zf.read(self.names[part.lower()])
        except KeyError as exc:
            raise CorruptInputError(f"package part {part} is missing") from exc
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as exc:
            raise CorruptInputError(f"package part {part} cannot be decompressed: {exc}") from exc
        except RuntimeError as exc:  # zipfile: "File ... is encrypted, password required"
            raise EncryptedInputError(f"package part {part} is encrypted: {exc}") from exc

    def xml(self, part: str, required: bool = True) -> etree._Element | None:
        """Parse a part; damaged XML is recovered where possible and noted in ``signals``."""
        if not self.has(part):
            if required:
                raise CorruptInputError(f"package part {part} is missing")
            return None
        raw = self.read(part)
        try:
            document = read_xml(raw, f"package part {part}")
        except CorruptInputError:
            if required:
                raise
            self.signals.append(f"unreadable_part:{part}")
            return None
        if document.signals:
            self.signals.append(f"recovered_xml:{part}")
        if document.truncated:
            self.truncated.append((document.truncated, document.truncated_code))
        return document.root

    def declares_doctype(self) -> bool:
        """Whether any XML part opens with a DOCTYPE: OOXML has none, so one is hostile or broken, and
        a reader that does not apply papersift's entity policy (openpyxl) must not read the book."""
        for stored in self.names.values():
            if not stored.lower().endswith((".xml", ".rels")):
                continue
            try:
                with self.zf.open(stored) as part:
                    head = part.read(64 * 1024)
            except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError, RuntimeError):
                continue
            if has_doctype(head):
                return True
        return False

    def rels(self, part: str) -> list[tuple[str, str, str]]:
        """(id, type suffix, target part) of a part's internal relationships."""
        if part not in self._rels:
            self._rels[part] = self._read_rels(part)
        return self._rels[part]

    def _read_rels(self, part: str) -> list[tuple[str, str, str]]:
        folder, base = posixpath.split(part)
        rels_part = posixpath.join(folder, "_rels", base + ".rels")
        root = self.xml(rels_part, required=False) if self.has(rels_part) else None
        out: list[tuple[str, str, str]] = []
        if root is None:
            return out
        for rel in root:
            if local_name(rel) != "Relationship" or rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target", "")
            if not target:
                continue
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            out.append((rel.get("Id", ""), rel.get("Type", "").rsplit("/", 1)[-1], path))
        return out

    def pictures(self, parts: Sequence[str]) -> list[EmbeddedPicture]:
        """The pictures ``parts`` show: their image relationships, and those of the drawings they
        hold (a sheet's pictures sit in its drawing part), each part once, in relationship order.
        A part that is missing or cannot be read is left out: the text still reads."""
        if not self._holds_media():
            return []  # no relationship is read: the text layer of a package without pictures pays nothing
        found: dict[str, None] = {}
        pending = list(parts)
        visited: set[str] = set()
        while pending:
            part = pending.pop(0)
            if part in visited:
                continue
            visited.add(part)
            for _, kind, target in self.rels(part):
                if kind == "image":
                    found.setdefault(target)
                elif kind == "drawing":
                    pending.append(target)
        pictures: list[EmbeddedPicture] = []
        for name in found:
            if not self.has(name):
                continue
            try:
                pictures.append(EmbeddedPicture(self.names[name.lower()], self.read(name)))
            except (CorruptInputError, EncryptedInputError):
                self.signals.append(f"unreadable_part:{name}")
        return pictures

    def _holds_media(self) -> bool:
        """Whether any part can be a picture a unit shows: one that is not XML, a relationships part,
        VML or a binary blob (printer settings, VBA, OLE objects), nor the package's thumbnail."""
        if self._media is None:
            self._media = any(not name.endswith(_NOT_MEDIA) and not name.startswith("docprops/")
                              for name in self.names if not name.endswith("/"))
        return self._media

    def main_part(self, fallback: str) -> str:
        for _, kind, target in self.rels(""):
            if kind == "officeDocument" and self.has(target):
                return target
        return fallback


def open_ooxml(data: bytes, what: str, settings: Settings) -> Package:
    if data.startswith(_OLE_MAGIC):
        if sniff(data).kind == "ole-encrypted":
            raise EncryptedInputError(f"{what} is encrypted (OOXML inside an OLE2 EncryptedPackage)")
        raise CorruptInputError(f"{what} is an OLE2 (legacy Office) file, not an OOXML zip")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise CorruptInputError(f"{what} is not a readable zip package: {exc}") from exc
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > _RATIO_FLOOR_BYTES and info.file_size > settings.max_compression_ratio * max(
            info.compress_size, 1
        ):
            raise DecompressionBombError(
                f"{what} part {info.filename} expands {info.file_size} bytes from {info.compress_size}"
                f" (more than max_compression_ratio {settings.max_compression_ratio})"
            )
    if total > settings.max_archive_total_bytes:
        raise LimitExceededError(
            f"{what} parts expand to {total} bytes, above max_archive_total_bytes {settings.max_archive_total_bytes}"
        )
    return Package(zf=zf, names={info.filename.lower(): info.filename for info in infos})


@dataclass
class Block:
    """One piece of a document body in reading order: a paragraph, a note, a table."""

    text: str
    markdown: str
    table: Table | None = None


def local_name(el: Any) -> str:
    tag = el.tag
    if not isinstance(tag, str):  # comments, processing instructions
        return ""
    return tag.rsplit("}", 1)[-1]


def attribute(el: etree._Element, name: str, namespaced: bool = False) -> str | None:
    """An attribute by local name, whatever its namespace (Strict and Transitional differ).

    ``namespaced`` asks for a prefixed one: p:sldId has both ``id`` and ``r:id``.
    """
    for key, value in el.attrib.items():
        key = str(key)
        if key.rsplit("}", 1)[-1] == name and (not namespaced or key.startswith("{")):
            return str(value)
    return None


def find_child(el: etree._Element, name: str) -> etree._Element | None:
    for child in el:
        if local_name(child) == name:
            return child
    return None


def alternate(el: etree._Element) -> etree._Element | None:
    """mc:AlternateContent holds the same content twice; read the first Choice only."""
    return find_child(el, "Choice") if find_child(el, "Choice") is not None else find_child(el, "Fallback")


def unit_report(number: int, text: str, engine: str, reason: str, started: float, signals: list[str],
            tables: int, truncated: Sequence[tuple[str, str]] = ()) -> PageReport:
    """A unit read from the package's own structure: clean, or ``truncated`` when a part's text is
    not all there (``Package.truncated``)."""
    cut = list(dict.fromkeys(truncated))
    extra = [TRUNCATED_SIGNAL, *dict.fromkeys(code for _, code in cut)] if cut else []
    return PageReport(
        number=number,
        status=(PageStatus.TRUNCATED if cut else PageStatus.CLEAN).value,
        engine=engine,
        char_count=len(text),
        confidence=1.0,
        reason="; ".join([*(why for why, _ in cut), reason]),
        seconds=round(time.perf_counter() - started, 4),
        signals=list(signals) + ([] if text.strip() else ["empty"]) + extra,
        tables=tables,
    )


def text_of(el: etree._Element) -> str:
    """An element's text with whatever it holds: an entity left unresolved stays as its reference,
    and the text after it is kept (``el.text`` stops at the first child)."""
    return "".join(el.itertext())


def table_text(rows: list[list[str]]) -> str:
    lines = ("\t".join(" ".join(cell.split()) for cell in row) for row in rows)
    return "\n".join(line for line in lines if line.strip())
