"""HTML and XML -> text, with a charset decision that distrusts declarations.

Pages in the wild declare one charset and are written in another (a meta saying UTF-8
over windows-1256 Arabic), so a declared charset is used only when it decodes the bytes
cleanly; otherwise the bytes themselves decide. HTML becomes paragraphs, Markdown
headings and lists, and tables (as ``Table`` and Markdown); XML becomes the text of its
elements, one line per element that holds text.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import quopri
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_to_bytes

from lxml import etree
from lxml import html as lxml_html

from papersift.content import EmbeddedPicture, PageContent, Table
from papersift.errors import CorruptInputError
from papersift.formats._units import text_unit
from papersift.formats._xml import read_xml
from papersift.markdown import plain_text
from papersift.plaintext import collapse_whitespace, decode_text
from papersift.settings import Settings

HTML_ENGINE = "lxml-html"
XML_ENGINE = "lxml-xml"

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_XML_DECL = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_XML_DECL_TEXT = re.compile(r"^\s*<\?xml[^>]*\?>")
#: C0 controls other than tab and newline: stray binary bytes, never text
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

#: labels browsers treat as a superset (WHATWG Encoding), and stricter Python codecs widened
_CHARSET_ALIASES: dict[str, str] = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "iso-8859-9": "cp1254",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "big5": "cp950",
    "tis-620": "cp874",
    "iso-8859-11": "cp874",
    "windows-874": "cp874",
}
#: a declared charset may fail on at most this share of the non-ASCII bytes (stray binary
#: bytes in a mail part) before the bytes are re-detected
_DECLARED_ERROR_SHARE = 0.25

_BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "br",
        "hr",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "section",
        "article",
        "header",
        "footer",
        "nav",
        "aside",
        "main",
        "blockquote",
        "form",
        "fieldset",
        "figure",
        "figcaption",
        "address",
        "caption",
        "details",
        "summary",
        "center",
        "body",
        "html",
        "tr",
        "td",
        "th",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "pre",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "legend",
        "option",
    ]
)
_DROP_TAGS = frozenset({"script", "style", "head", "template", "noscript", "svg", "iframe", "object", "embed"})
_HEADINGS = {f"h{i}": i for i in range(1, 7)}


# -- charset ----------------------------------------------------------------------------


def _codec(label: bytes | str) -> str | None:
    name = label.decode("ascii", "ignore") if isinstance(label, bytes) else label
    name = _CHARSET_ALIASES.get(name.strip().lower(), name.strip().lower())
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _utf16_without_bom(data: bytes) -> str | None:
    """Markup is mostly ASCII, so UTF-16 shows as NUL in every other byte."""
    sample = data[:4096]
    if len(sample) < 8:
        return None
    even_nuls = sample[0::2].count(0) / (len(sample) / 2)
    odd_nuls = sample[1::2].count(0) / (len(sample) / 2)
    if odd_nuls > 0.4 and even_nuls < 0.05:
        return "utf-16-le"
    if even_nuls > 0.4 and odd_nuls < 0.05:
        return "utf-16-be"
    return None


def declared_charset(data: bytes) -> str | None:
    """The codec the document says it uses (XML declaration or HTML meta), if Python knows it."""
    head = data[:8192]
    match = _XML_DECL.match(head) or _META_CHARSET.search(head)
    return _codec(match.group(1)) if match else None


def decode_markup(data: bytes) -> tuple[str, str]:
    """(text, codec): BOM, then UTF-16 shape, then a declaration that decodes cleanly, then detection."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(codec, errors="replace"), codec
    utf16 = _utf16_without_bom(data)
    if utf16:
        return data.decode(utf16, errors="replace"), utf16
    non_ascii = sum(1 for byte in data if byte > 0x7F)
    if non_ascii:
        try:
            # real single-byte text is virtually never valid UTF-8; a wrong "latin-1" label is common
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    declared = declared_charset(data)
    if declared and not declared.startswith(("utf-16", "utf-32")):
        text = data.decode(declared, errors="replace")
        errors = text.count("\ufffd")
        if errors == 0 or errors <= _DECLARED_ERROR_SHARE * non_ascii:
            return text, declared
    if not non_ascii:
        return data.decode("ascii"), "ascii"
    return decode_text(data)


def _maybe_quoted_printable(data: bytes) -> bytes:
    """HTML saved straight from a mail part is quoted-printable: '=3D' in every attribute."""
    if data.count(b"=3D") >= 3 and re.search(rb"=\r?\n", data):
        return quopri.decodestring(data)
    return data


# -- HTML -------------------------------------------------------------------------------


@dataclass
class Block:
    kind: str  # "para", "heading", "item", "pre", "table"
    text: str = ""
    level: int = 0
    table: Table | None = None


@dataclass
class _HtmlWalker:
    blocks: list[Block] = field(default_factory=list)
    inline: list[str] = field(default_factory=list)
    tables: int = 0
    list_depth: int = 0
    open: list[str] = field(default_factory=list)

    def flush(self, kind: str = "para", level: int = 0) -> None:
        text = collapse_whitespace("".join(self.inline))
        self.inline.clear()
        if text:
            self.blocks.append(Block(kind, text, level))

    def flush_open(self) -> None:
        """Flush pending inline text as what the innermost open block makes it."""
        innermost = self.open[-1] if self.open else ""
        if innermost in _HEADINGS:
            self.flush("heading", _HEADINGS[innermost])
        elif innermost == "li":
            self.flush("item", max(0, self.list_depth - 1))
        else:
            self.flush()

    def walk(self, root: Any) -> None:
        """Every element in document order, with an explicit stack: HTML nests as deep as libxml2
        lets it (2,048 levels), far past Python's recursion limit."""
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            element, closing = stack.pop()
            if closing:
                self._close(element)
                continue
            tag = element.tag if isinstance(element.tag, str) else ""
            tag = tag.rsplit("}", 1)[-1].lower()
            if not tag or tag in _DROP_TAGS:  # comments, processing instructions, scripts: only the tail is text
                if element.tail:
                    self.inline.append(element.tail)
                continue
            if tag == "table":
                self.flush_open()
                self.table(element)
            elif tag == "pre":
                self.flush_open()
                text = "".join(element.itertext()).strip("\n")
                if text.strip():
                    self.blocks.append(Block("pre", text))
            elif tag == "br":
                self.flush_open()
            else:
                if tag in _BLOCK_TAGS:
                    self.flush_open()
                    nested = tag in ("ul", "ol")
                    self.list_depth += nested
                    self.open.append(tag)
                if element.text:
                    self.inline.append(element.text)
                stack.append((element, True))
                stack.extend((child, False) for child in reversed(element))
                continue
            if element.tail:
                self.inline.append(element.tail)

    def _close(self, element: Any) -> None:
        """After an element's children: close its block, then its tail is inline text again."""
        tag = element.tag.rsplit("}", 1)[-1].lower()
        if tag in _BLOCK_TAGS:
            self.flush_open()
            self.open.pop()
            self.list_depth -= tag in ("ul", "ol")
        if element.tail:
            self.inline.append(element.tail)

    def table(self, element: Any) -> None:
        rows: list[list[str]] = []
        header_rows = 0
        for row in _own_rows(element):
            cells: list[str] = []
            for cell in row:
                if not isinstance(cell.tag, str) or cell.tag.rsplit("}", 1)[-1].lower() not in ("td", "th"):
                    continue
                cells.append(_cell_text(cell))
                span = _int_attr(cell, "colspan")
                cells.extend([""] * (min(span, 100) - 1))
            if not cells:
                continue
            in_thead = row.getparent() is not None and _local(row.getparent()) == "thead"
            if not rows and (in_thead or all(_local(c) == "th" for c in row if isinstance(c.tag, str))):
                header_rows = 1
            rows.append(cells)
        if rows and max(len(row) for row in rows) == 1:
            # a one-column table is page layout, not data
            self.blocks.extend(Block("para", row[0]) for row in rows if row[0])
        elif rows:
            self.blocks.append(Block("table", table=Table(rows=rows, index=self.tables, header_rows=header_rows)))
            self.tables += 1


def _local(element: Any) -> str:
    return str(element.tag).rsplit("}", 1)[-1].lower() if isinstance(element.tag, str) else ""


def _int_attr(element: Any, name: str) -> int:
    try:
        return max(1, int(str(element.get(name, "1")).strip() or 1))
    except ValueError:
        return 1


def _own_rows(table: Any) -> Iterator[Any]:
    """Rows of this table, not of tables nested in its cells."""
    for child in table:
        name = _local(child)
        if name == "tr":
            yield child
        elif name in ("thead", "tbody", "tfoot"):
            yield from (row for row in child if _local(row) == "tr")


def _cell_text(cell: Any) -> str:
    parts = [] if cell.text is None else [cell.text]
    for child in cell:
        if _local(child) not in _DROP_TAGS and isinstance(child.tag, str):
            parts.append(" ".join(child.itertext()))
        if child.tail:
            parts.append(child.tail)
    return collapse_whitespace("".join(parts))


def render_blocks(blocks: list[Block]) -> tuple[str, str, list[Table]]:
    """(text, markdown, tables): text keeps tables as tab-separated rows, Markdown as tables."""
    text_parts: list[str] = []
    md_parts: list[str] = []
    tables: list[Table] = []
    previous = ""
    for block in blocks:
        if block.kind == "item" and previous == "item":
            # list items stay together in Markdown: one item per line
            md_parts[-1] += "\n" + "  " * block.level + "- " + block.text
            text_parts.append("  " * block.level + "- " + block.text)
            continue
        previous = block.kind
        if block.kind == "table" and block.table is not None:
            tables.append(block.table)
            text_parts.append("\n".join("\t".join(row) for row in block.table.rows))
            md_parts.append(block.table.to_markdown())
        elif block.kind == "heading":
            text_parts.append(block.text)
            md_parts.append("#" * block.level + " " + block.text)
        elif block.kind == "item":
            text_parts.append("  " * block.level + "- " + block.text)
            md_parts.append("  " * block.level + "- " + block.text)
        elif block.kind == "pre":
            text_parts.append(block.text)
            md_parts.append("```\n" + block.text + "\n```")
        else:
            text_parts.append(block.text)
            md_parts.append(plain_text(block.text))
    return "\n".join(text_parts), "\n\n".join(md_parts), tables


@dataclass
class HtmlRead:
    """What an HTML or XHTML document gives: its text and Markdown, its tables, why its text stops
    short ('' when it does not), and the sources of the pictures it shows, in document order."""

    text: str
    markdown: str
    tables: list[Table]
    truncated: str
    pictures: list[str] = field(default_factory=list)


def read_html(markup: str) -> tuple[str, str, list[Table], str]:
    """(text, markdown, tables, truncated) of an HTML or XHTML document given as text (see read_html_document)."""
    read = read_html_document(markup)
    return read.text, read.markdown, read.tables, read.truncated


def read_html_document(markup: str) -> HtmlRead:
    """An HTML or XHTML document given as text. Text nodes beyond libxml2's 10 MB default are read
    (huge_tree: 100 MB of words on one line is text, not nothing); what libxml2 still refuses
    (nesting beyond 2,048 levels) ends the read there, and ``truncated`` says so."""
    markup = _XML_DECL_TEXT.sub("", markup, count=1).replace("\x00", "")
    if not markup.strip():
        return HtmlRead("", "", [], "")
    parser = lxml_html.HTMLParser(huge_tree=True)
    try:
        root = lxml_html.document_fromstring(markup, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise CorruptInputError(f"HTML could not be parsed: {exc}") from exc
    cut = [e for e in parser.error_log if e.level_name == "FATAL" and e.type_name == "ERR_RESOURCE_LIMIT"]
    truncated = (f"the HTML is read up to line {cut[0].line}, column {cut[0].column} only "
                 f"({cut[0].message.strip()})") if cut else ""
    walker = _HtmlWalker()
    walker.walk(root)
    walker.flush()
    text, markdown, tables = render_blocks(walker.blocks)
    return HtmlRead(_CONTROL.sub("", text), _CONTROL.sub("", markdown), tables, truncated, _picture_sources(root))


def _picture_sources(root: Any) -> list[str]:
    """The src of every <img> and the href of every SVG <image>, in document order."""
    sources: list[str] = []
    for element in root.iter("img", "image", "{*}img", "{*}image"):
        source = element.get("src") or element.get("href") or element.get("{http://www.w3.org/1999/xlink}href")
        if source and source.strip():
            sources.append(source.strip())
    return sources


#: a data: URI of a picture: its media type, whether it is base64, and its payload
_DATA_URI = re.compile(r"data:(image/[\w.+-]+)?((?:;[^,;]*)*?)(;base64)?,(.*)", re.DOTALL | re.IGNORECASE)


def data_uri_pictures(sources: list[str]) -> list[EmbeddedPicture]:
    """The pictures given inline as data: URIs, named "data: URI n" by their place among the page's
    pictures. Nothing else is read: a URL is never fetched, and a local file is none of papersift's."""
    pictures: list[EmbeddedPicture] = []
    for index, source in enumerate(sources, start=1):
        match = _DATA_URI.fullmatch(source)
        if match is None or not match.group(1):
            continue
        payload = match.group(4)
        try:
            data = base64.b64decode("".join(payload.split()), validate=False) if match.group(3) \
                else unquote_to_bytes(payload)
        except (binascii.Error, ValueError):
            continue
        if data:
            pictures.append(EmbeddedPicture(f"data: URI {index} ({match.group(1).lower()})", data))
    return pictures


def _depth_code(truncated: str) -> str:
    return "nesting_too_deep" if "depth" in truncated.lower() else "limit_exceeded"


def extract_html(data: bytes, settings: Settings) -> list[PageContent]:
    """The whole HTML page as one unit, tables kept as Table and Markdown."""
    started = time.perf_counter()
    markup, _codec_used = decode_markup(_maybe_quoted_printable(data))
    read = read_html_document(markup)
    unit = text_unit(1, read.text, HTML_ENGINE, started, tables=read.tables, markdown=read.markdown,
                     truncated=read.truncated, truncated_code=_depth_code(read.truncated))
    unit.embedded = data_uri_pictures(read.pictures)
    return [unit]


# -- XML --------------------------------------------------------------------------------


def _xml_lines(root: Any) -> list[str]:
    """One line per element with text; mixed content (text between children) stays one line.
    Depth first with an explicit stack (XML nests up to 2,048 levels under huge_tree)."""
    lines: list[str] = []
    stack = [root]
    while stack:
        element = stack.pop()
        if not isinstance(element.tag, str):
            continue
        children = [child for child in element if isinstance(child.tag, str)]
        mixed = bool((element.text or "").strip()) or any((child.tail or "").strip() for child in element)
        if not children or mixed:
            line = collapse_whitespace(" ".join(element.itertext()))
            if line:
                lines.append(line)
            continue
        stack.extend(reversed(children))
    return lines


def extract_xml(data: bytes, settings: Settings) -> list[PageContent]:
    """Text content of the elements of an XML document (XHTML goes through the HTML path)."""
    started = time.perf_counter()
    markup, _codec_used = decode_markup(data)
    document = read_xml(markup)
    if _local(document.root) == "html":
        text, markdown, tables, truncated = read_html(markup)
        truncated = "; ".join(filter(None, [document.truncated, truncated]))
        return [text_unit(1, text, HTML_ENGINE, started, tables=tables, markdown=markdown, truncated=truncated,
                          truncated_code=document.truncated_code or _depth_code(truncated))]
    text = "\n".join(_xml_lines(document.root))
    return [text_unit(1, text, XML_ENGINE, started, truncated=document.truncated,
                      truncated_code=document.truncated_code)]
