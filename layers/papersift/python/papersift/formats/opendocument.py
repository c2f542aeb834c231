"""OpenDocument text, spreadsheet and presentation -> units, parsing content.xml directly.

odfpy would load the whole DOM through its own element classes for no gain: content.xml
is plain namespaced XML, and walking it ourselves keeps the rules (spaces from
``text:s``, repeated rows and columns, notes) visible and cheap. ODT is one unit with
Markdown headings; ODS one unit per sheet with records; ODP one unit per slide with notes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from papersift.content import EmbeddedPicture, PageContent, Table
from papersift.errors import CorruptInputError, EncryptedInputError
from papersift.formats._package import open_package, read_part, read_pictures
from papersift.formats._units import text_unit
from papersift.formats._xml import XmlDocument, read_xml
from papersift.formats.markup import Block, render_blocks
from papersift.formats.text import rows_to_records
from papersift.settings import Settings

ENGINE = "papersift-odf"

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
}
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


def _q(prefixed: str) -> str:
    prefix, local = prefixed.split(":")
    return f"{{{_NS[prefix]}}}{local}"


T_P, T_H, T_LIST, T_ITEM, T_HEADER = (
    _q("text:p"),
    _q("text:h"),
    _q("text:list"),
    _q("text:list-item"),
    _q("text:list-header"),
)
T_S, T_TAB, T_BREAK, T_NOTE, T_NOTE_BODY = (
    _q("text:s"),
    _q("text:tab"),
    _q("text:line-break"),
    _q("text:note"),
    _q("text:note-body"),
)
T_NOTE_CITATION, T_TRACKED, T_SECTION = _q("text:note-citation"), _q("text:tracked-changes"), _q("text:section")
TABLE, ROW, CELL, COVERED = (
    _q("table:table"),
    _q("table:table-row"),
    _q("table:table-cell"),
    _q("table:covered-table-cell"),
)
ROW_GROUPS = {_q("table:table-header-rows"), _q("table:table-rows"), _q("table:table-row-group")}
ANNOTATION, DRAW_PAGE, NOTES = _q("office:annotation"), _q("draw:page"), _q("presentation:notes")
REPEAT_ROWS, REPEAT_COLS = _q("table:number-rows-repeated"), _q("table:number-columns-repeated")
SPAN_COLS = _q("table:number-columns-spanned")

#: repeats beyond this are formatting (a style applied to a million empty rows), not data
_MAX_REPEAT = 1000
#: cells materialised per sheet; a sheet beyond it is cut and the report says so
_MAX_CELLS = 2_000_000


# -- package ----------------------------------------------------------------------------


def _content_xml(data: bytes, settings: Settings) -> bytes:
    with open_package(data, "OpenDocument package") as archive:
        names = set(archive.namelist())
        if "META-INF/manifest.xml" in names:
            manifest = read_part(archive, "META-INF/manifest.xml", settings, "OpenDocument package")
            if b"encryption-data" in manifest:
                raise EncryptedInputError("OpenDocument file is password-protected (content.xml is encrypted)")
        return read_part(archive, "content.xml", settings, "OpenDocument package")


def _pictures(data: bytes, element: Any, settings: Settings) -> list[EmbeddedPicture]:
    """The pictures an element shows (draw:image parts of the package; never a linked file or URL)."""
    names = [href.removeprefix("./") for image in element.iter(_q("draw:image"))
             if (href := image.get(_XLINK_HREF, "")) and "://" not in href and not href.startswith("/")]
    if not names:
        return []
    with open_package(data, "OpenDocument package") as archive:
        return read_pictures(archive, names, settings, "OpenDocument package")


def _body(data: bytes, settings: Settings, part: str) -> tuple[Any, XmlDocument]:
    """office:body/office:<part> of content.xml, and the document read (for what it could not read)."""
    document = read_xml(_content_xml(data, settings), "OpenDocument content.xml")
    body = document.root.find(f"office:body/office:{part}", _NS)
    if body is None:
        kinds = [child.tag.rsplit("}", 1)[-1] for child in document.root.iterfind("office:body/*", _NS)]
        raise CorruptInputError(f"OpenDocument content.xml has no office:{part} (it holds {kinds or 'nothing'})")
    return body, document


# -- inline text ------------------------------------------------------------------------


@dataclass
class _Notes:
    """Footnote bodies, moved out of the sentence they interrupt to the end of the unit."""

    texts: list[str] = field(default_factory=list)


def _inline(element: Any, notes: _Notes | None) -> str:
    """Text of a paragraph: text:s spaces, tabs and line breaks as written."""
    parts: list[str] = [element.text or ""]
    for child in element:
        tag = child.tag
        if tag == T_S:
            parts.append(" " * min(_int(child.get(_q("text:c")), 1), 1000))
        elif tag == T_TAB:
            parts.append("\t")
        elif tag == T_BREAK:
            parts.append("\n")
        elif tag == T_NOTE:
            citation = child.find(T_NOTE_CITATION)
            mark = (citation.text or "").strip() if citation is not None else ""
            parts.append(f"[{mark}]" if mark else "")
            body = child.find(T_NOTE_BODY)
            if body is not None and notes is not None:
                text = " ".join(_inline(p, None) for p in body.iter(T_P, T_H)).strip()
                notes.texts.append(f"[{mark}] {text}" if mark else text)
        elif tag == ANNOTATION:
            pass
        elif tag is etree.Entity:  # an entity left unresolved stays in the text as written (&name;)
            parts.append(child.text or "")
        elif tag in (T_P, T_H):  # paragraphs inside frames and text boxes anchored in this one
            parts.append(" " + _inline(child, notes) + " ")
        elif isinstance(tag, str):
            parts.append(_inline(child, notes))
        parts.append(child.tail or "")
    return "".join(parts)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _clean(text: str) -> str:
    """Collapse whitespace runs the way a renderer would, keeping line breaks and tabs."""
    lines = [" ".join(part.split(" ")).strip(" ") for part in text.split("\n")]
    return "\n".join(line for line in lines)


# -- tables -----------------------------------------------------------------------------


@dataclass
class _Sheet:
    rows: list[list[str]]
    values: list[list[Any]]
    truncated: bool = False


def _cell_value(cell: Any, text: str) -> Any:
    kind = cell.get(_q("office:value-type"))
    if kind in ("float", "percentage", "currency"):
        raw = cell.get(_q("office:value"))
        try:
            number = float(raw) if raw is not None else None
        except ValueError:
            return text
        if number is None:
            return text
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if kind == "boolean":
        return cell.get(_q("office:boolean-value")) == "true"
    if kind == "date":
        return cell.get(_q("office:date-value")) or text
    if kind == "time":
        return cell.get(_q("office:time-value")) or text
    return text


def _table_rows(table: Any) -> Iterator[Any]:
    for child in table:
        if child.tag == ROW:
            yield child
        elif child.tag in ROW_GROUPS:
            yield from _table_rows(child)


def _read_table(table: Any) -> _Sheet:
    """Rows of cell text (and typed values); repeated empties are trimmed, not expanded."""
    rows: list[list[str]] = []
    values: list[list[Any]] = []
    cells_seen = 0
    truncated = False
    pending_empty_rows = 0
    for row in _table_rows(table):
        texts: list[str] = []
        typed: list[Any] = []
        pending_empty_cells = 0
        for cell in row:
            if cell.tag not in (CELL, COVERED):
                continue
            text = _clean("\n".join(_inline(p, None) for p in cell.iter(T_P, T_H))).strip()
            repeat = _int(cell.get(REPEAT_COLS), 1)
            if not text:
                pending_empty_cells += repeat
                continue
            texts.extend([""] * pending_empty_cells)
            typed.extend([None] * pending_empty_cells)
            pending_empty_cells = 0
            value = _cell_value(cell, text)
            count = min(repeat, _MAX_REPEAT)
            texts.extend([text] * count)
            typed.extend([value] * count)
        row_repeat = _int(row.get(REPEAT_ROWS), 1)
        if not texts:
            pending_empty_rows += row_repeat
            continue
        count = min(row_repeat, _MAX_REPEAT)
        if cells_seen + len(texts) * (pending_empty_rows + count) > _MAX_CELLS:
            truncated = True
            break
        for _ in range(min(pending_empty_rows, _MAX_REPEAT)):
            rows.append([])
            values.append([])
        pending_empty_rows = 0
        for _ in range(count):
            rows.append(list(texts))
            values.append(list(typed))
        cells_seen += len(texts) * count
    # a sheet laid out from column B or C: drop the empty leading columns
    offset = min((next(i for i, t in enumerate(row) if t) for row in rows if any(row)), default=0)
    if offset:
        rows = [row[offset:] for row in rows]
        values = [row[offset:] for row in values]
    return _Sheet(rows=rows, values=values, truncated=truncated)


def _records(sheet: _Sheet) -> list[dict[str, Any]]:
    """Rows after the header, keyed by its cells; the header is the first row with two or
    more filled cells, so a title line above a table is not taken for it."""
    filled = [i for i, row in enumerate(sheet.rows) if any(row)]
    if not filled:
        return []
    start = next((i for i in filled if sum(1 for t in sheet.rows[i] if t) >= 2), filled[0])
    return rows_to_records([sheet.rows[start], *sheet.values[start + 1 :]])


def _table_block(table: Any, index: int) -> Block | None:
    sheet = _read_table(table)
    rows = [row for row in sheet.rows if any(row)]
    if not rows:
        return None
    return Block("table", table=Table(rows=rows, index=index, header_rows=1, title=table.get(_q("table:name"), "")))


# -- flow text (ODT and slide bodies) ---------------------------------------------------


def _flow_blocks(container: Any, notes: _Notes, blocks: list[Block], tables: list[int], depth: int = 0) -> None:
    """Paragraphs, headings, lists and tables in document order."""
    for child in container:
        tag = child.tag
        if tag == T_H:
            text = _clean(_inline(child, notes)).strip()
            if text:
                level = min(max(_int(child.get(_q("text:outline-level")), 1), 1), 6)
                blocks.append(Block("heading", text, level))
        elif tag == T_P:
            text = _clean(_inline(child, notes)).strip()
            if text:
                blocks.append(Block("para", text))
        elif tag == T_LIST:
            _list_blocks(child, notes, blocks, tables, depth)
        elif tag == TABLE:
            block = _table_block(child, len(tables))
            if block is not None:
                tables.append(1)
                blocks.append(block)
        elif tag in (T_TRACKED, ANNOTATION, NOTES) or not isinstance(tag, str):
            continue
        else:  # sections, frames, text boxes, shapes, index bodies: their paragraphs count
            _flow_blocks(child, notes, blocks, tables, depth)


def _list_blocks(lst: Any, notes: _Notes, blocks: list[Block], tables: list[int], depth: int) -> None:
    for item in lst:
        if item.tag not in (T_ITEM, T_HEADER):
            continue
        for child in item:
            if child.tag in (T_P, T_H):
                text = _clean(_inline(child, notes)).strip()
                if text:
                    blocks.append(Block("item", text, depth))
            elif child.tag == T_LIST:
                _list_blocks(child, notes, blocks, tables, depth + 1)
            else:
                _flow_blocks(child, notes, blocks, tables, depth)


def _with_notes(blocks: list[Block], notes: _Notes) -> list[Block]:
    return blocks + [Block("para", text) for text in notes.texts if text.strip()]


# -- extractors -------------------------------------------------------------------------


def extract_odt(data: bytes, settings: Settings) -> list[PageContent]:
    """The text document as one unit: headings as Markdown, lists, tables, footnotes last."""
    started = time.perf_counter()
    body, document = _body(data, settings, "text")
    notes = _Notes()
    blocks: list[Block] = []
    _flow_blocks(body, notes, blocks, [])
    text, markdown, tables = render_blocks(_with_notes(blocks, notes))
    unit = text_unit(1, text, ENGINE, started, tables=tables, markdown=markdown, truncated=document.truncated,
                     truncated_code=document.truncated_code)
    unit.embedded = _pictures(data, body, settings)
    return [unit]


def extract_ods(data: bytes, settings: Settings) -> list[PageContent]:
    """One unit per sheet, with its table and its rows as records keyed by the first row."""
    started = time.perf_counter()
    body, document = _body(data, settings, "spreadsheet")
    units: list[PageContent] = []
    for number, table in enumerate(body.iterfind("table:table", _NS), start=1):
        name = table.get(_q("table:name")) or f"Sheet{number}"
        sheet = _read_table(table)
        rows = [row for row in sheet.rows if any(row)]
        text = "\n".join("\t".join(row).rstrip("\t") for row in rows)
        tables = [Table(rows=rows, index=0, header_rows=1, title=name)] if rows else []
        markdown = f"## {name}\n\n{tables[0].to_markdown()}" if tables else f"## {name}"
        cut = [document.truncated] if document.truncated else []
        if sheet.truncated:
            cut.append(f"sheet cut at {_MAX_CELLS} cells")
        unit = text_unit(
            number, text, ENGINE, started, label=name, tables=tables, records=_records(sheet), markdown=markdown,
            truncated="; ".join(cut), truncated_code=document.truncated_code or "limit_exceeded",
        )
        unit.embedded = _pictures(data, table, settings)
        units.append(unit)
        started = time.perf_counter()
    if not units:
        raise CorruptInputError("OpenDocument spreadsheet has no sheets")
    return units


def extract_odp(data: bytes, settings: Settings) -> list[PageContent]:
    """One unit per slide (draw:page): its text boxes and tables, then its speaker notes."""
    started = time.perf_counter()
    body, document = _body(data, settings, "presentation")
    units: list[PageContent] = []
    for number, page in enumerate(body.iterfind("draw:page", _NS), start=1):
        notes = _Notes()
        blocks: list[Block] = []
        _flow_blocks(page, notes, blocks, [])
        speaker: list[Block] = []
        for notes_part in page.iterfind("presentation:notes", _NS):
            _flow_blocks(notes_part, notes, speaker, [])
        if speaker:
            blocks.append(Block("heading", "Notes", 3))
            blocks.extend(speaker)
        text, markdown, tables = render_blocks(_with_notes(blocks, notes))
        label = page.get(_q("draw:name")) or f"slide {number}"
        unit = text_unit(number, text, ENGINE, started, label=label, tables=tables, markdown=markdown,
                         truncated=document.truncated, truncated_code=document.truncated_code)
        unit.embedded = _pictures(data, page, settings)
        units.append(unit)
        started = time.perf_counter()
    if not units:
        raise CorruptInputError("OpenDocument presentation has no slides (draw:page)")
    return units
