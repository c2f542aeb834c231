"""EPUB -> one unit per chapter, in reading (spine) order.

The OPF package file names the chapters and their order; each chapter is XHTML and goes
through the HTML extractor, so headings, lists and tables come out the same as in a web
page. Chapters without text (a cover image, a blank separator) yield no unit.
"""

from __future__ import annotations

import posixpath
import time
from urllib.parse import unquote

from lxml import etree

from papersift.content import PageContent
from papersift.errors import CorruptInputError, EncryptedInputError
from papersift.formats._package import open_package, read_part, read_pictures
from papersift.formats._units import text_unit
from papersift.formats._xml import declares_entities, parse_xml, read_xml
from papersift.formats.markup import HTML_ENGINE, data_uri_pictures, decode_markup, read_html_document
from papersift.settings import Settings

ENGINE = f"papersift-epub+{HTML_ENGINE}"
_CONTAINER_NS = {"c": "urn:oasis:names:tc:opendocument:xmlns:container"}
_OPF_NS = {"opf": "http://www.idpf.org/2007/opf"}
_ENC_NS = {
    "enc": "http://www.w3.org/2001/04/xmlenc#",
}
#: font obfuscation (IDPF, Adobe) uses encryption.xml too, but never for chapters
_FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")
_CHAPTER_TYPES = ("application/xhtml+xml", "text/html", "application/x-dtbook+xml")


def _resolve(base_dir: str, href: str) -> str:
    path = unquote(href.split("#", 1)[0])
    return posixpath.normpath(posixpath.join(base_dir, path)) if base_dir else posixpath.normpath(path)


def spine_paths(data: bytes, settings: Settings) -> list[str]:
    """Zip paths of the chapters, in spine order."""
    what = "EPUB"
    with open_package(data, what) as archive:
        container = parse_xml(read_part(archive, "META-INF/container.xml", settings, what), "EPUB container.xml")
        rootfile = container.find(".//c:rootfile", _CONTAINER_NS)
        opf_path = rootfile.get("full-path") if rootfile is not None else None
        if not opf_path:
            raise CorruptInputError("EPUB container.xml names no package (rootfile full-path)")
        opf = parse_xml(read_part(archive, opf_path, settings, what), "EPUB package document")
    base_dir = posixpath.dirname(opf_path)
    manifest = {
        item.get("id"): (item.get("href", ""), item.get("media-type", ""))
        for item in opf.iterfind(".//opf:manifest/opf:item", _OPF_NS)
    }
    paths: list[str] = []
    for itemref in opf.iterfind(".//opf:spine/opf:itemref", _OPF_NS):
        href, media_type = manifest.get(itemref.get("idref"), ("", ""))
        if href and (media_type in _CHAPTER_TYPES or href.lower().endswith((".xhtml", ".html", ".htm"))):
            paths.append(_resolve(base_dir, href))
    if not paths:
        raise CorruptInputError("EPUB spine lists no XHTML chapters")
    return paths


def _encrypted_parts(data: bytes, settings: Settings) -> set[str]:
    """Parts under DRM (encryption.xml entries that are not font obfuscation)."""
    with open_package(data, "EPUB") as archive:
        if "META-INF/encryption.xml" not in archive.namelist():
            return set()
        root = parse_xml(read_part(archive, "META-INF/encryption.xml", settings, "EPUB"), "EPUB encryption.xml")
    encrypted: set[str] = set()
    for data_el in root.iterfind(".//enc:EncryptedData", _ENC_NS):
        method = data_el.find("enc:EncryptionMethod", _ENC_NS)
        algorithm = method.get("Algorithm", "") if method is not None else ""
        ref = data_el.find(".//enc:CipherReference", _ENC_NS)
        if ref is not None and algorithm not in _FONT_OBFUSCATION:
            encrypted.add(_resolve("", ref.get("URI", "")))
    return encrypted


def extract_epub(data: bytes, settings: Settings) -> list[PageContent]:
    """One unit per spine chapter that holds text; labels are the chapter paths."""
    paths = spine_paths(data, settings)
    locked = _encrypted_parts(data, settings) & set(paths)
    if locked:
        raise EncryptedInputError(f"EPUB chapters are DRM-encrypted ({len(locked)} of {len(paths)})")
    units: list[PageContent] = []
    with open_package(data, "EPUB") as archive:
        names = set(archive.namelist())
        for path in dict.fromkeys(paths):  # a chapter listed twice is read once
            started = time.perf_counter()
            if path not in names:
                continue  # a dangling spine entry: the rest of the book still reads
            raw = read_part(archive, path, settings, "EPUB")
            entity_cut = code = ""
            if declares_entities(raw):
                # the HTML parser ignores a DTD: read the XHTML under the XML entity policy (bombs
                # refused, internal entities expanded, external ones left as written) first
                document = read_xml(raw, f"EPUB chapter {path}")
                raw = etree.tostring(document.root, encoding="utf-8")
                entity_cut, code = document.truncated, document.truncated_code
            markup, _codec = decode_markup(raw)
            read = read_html_document(markup)
            truncated = "; ".join(filter(None, [entity_cut, read.truncated]))
            folder = posixpath.dirname(path)
            parts = [_resolve(folder, source) for source in read.pictures
                     if "://" not in source and not source.startswith(("data:", "/"))]
            pictures = [*read_pictures(archive, parts, settings, "EPUB"), *data_uri_pictures(read.pictures)]
            if not read.text.strip() and not truncated and not pictures:
                continue
            unit = text_unit(len(units) + 1, read.text, ENGINE, started, label=path, tables=read.tables,
                             markdown=read.markdown, truncated=truncated, truncated_code=code or "nesting_too_deep")
            unit.embedded = pictures
            units.append(unit)
    if not units:
        missing = [p for p in paths if p not in names]
        if missing:
            raise CorruptInputError(f"EPUB spine points at chapters missing from the zip: {', '.join(missing[:5])}")
        return [text_unit(1, "", ENGINE, time.perf_counter(), label="empty book")]
    return units
