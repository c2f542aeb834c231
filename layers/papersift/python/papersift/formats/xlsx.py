"""Excel (xlsx, xlsm): one unit per worksheet, rows as a table and as records.

openpyxl gives typed cell values (cached formula results, dates); books it rejects or
misreads (Strict ISO 29500) are read from the sheet XML instead. Headers and footers
come from the sheet XML either way, since openpyxl's read-only mode hides them.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import time
from collections.abc import Iterator
from typing import Any

from lxml import etree

from papersift.content import PageContent, Table
from papersift.errors import CorruptInputError
from papersift.formats._ooxml import Package, attribute, find_child, local_name, open_ooxml, text_of, unit_report
from papersift.formats.text import MAX_TABLE_ROWS, rows_to_records
from papersift.settings import Settings

_HF_CODE = re.compile(r'&(?:"[^"]*"|K[0-9A-Fa-f]{6}|K\d\d[+-]\d{3}|\d+|[LCRPNDTFAZGBIUESXYOH&])')
_HF_PARTS = re.compile(
    rb"<(?:\w+:)?(odd|even|first)(Header|Footer)(?:\s[^>]*)?>(.*?)</(?:\w+:)?\1\2>", re.DOTALL
)


def _header_footer_text(code: str, sheet: str) -> str:
    """Excel header/footer field codes -> the visible text (&A is the sheet name)."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "&&":
            return "&"
        if token in ("&L", "&C", "&R"):
            return "  "
        if token == "&A":
            return sheet
        return ""

    return " ".join(_HF_CODE.sub(replace, code).split())


def _sheet_parts(pkg: Package, workbook_part: str) -> list[tuple[str, str]]:
    """(sheet name, worksheet part) in workbook order; chart sheets excluded."""
    root = pkg.xml(workbook_part)
    assert root is not None
    targets = {rid: (kind, target) for rid, kind, target in pkg.rels(workbook_part)}
    out: list[tuple[str, str]] = []
    for el in root.iter():
        if local_name(el) == "sheet":
            rid = attribute(el, "id", namespaced=True) or ""
            kind, target = targets.get(rid, ("", ""))
            if kind == "worksheet" and pkg.has(target):
                out.append((attribute(el, "name") or target, target))
    return out


def _headers_footers(pkg: Package, part: str, sheet: str) -> tuple[list[str], list[str]]:
    """Header and footer lines of a sheet (openpyxl's read-only mode does not expose them)."""
    raw = pkg.read(part)
    at = raw.find(b"eaderFooter")
    if at < 0:
        return [], []
    heads: list[str] = []
    foots: list[str] = []
    from html import unescape

    for _kind, which, body in _HF_PARTS.findall(raw[max(0, at - 200) :]):
        line = _header_footer_text(unescape(body.decode("utf-8", "replace")), sheet)
        target = heads if which == b"Header" else foots
        if line and line not in target:
            target.append(line)
    return heads, foots


def _cell_value(value: Any) -> Any:
    """A JSON-safe record value."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time(0):
        return value.date().isoformat()
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


def _trimmed_rows(rows: Iterator[tuple[Any, ...]]) -> Iterator[list[Any]]:
    """Rows without trailing empty cells; wholly empty rows dropped."""
    for row in rows:
        cells = list(row)
        while cells and (cells[-1] is None or cells[-1] == ""):
            cells.pop()
        if cells:
            yield cells


def _rows_openpyxl(data: bytes) -> dict[str, Iterator[list[Any]]] | None:
    """Sheet name -> rows of typed values (cached formula results), or None if openpyxl balks."""
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
        sheets: dict[str, Iterator[list[Any]]] = {}
        for ws in workbook.worksheets:
            # read-only mode pads every row to the width the sheet declares (<dimension>): a lying
            # A1:XFD1048576 made each row 16,384 cells. Rows are read as they are stored instead.
            if hasattr(ws, "reset_dimensions"):
                ws.reset_dimensions()
            sheets[ws.title] = _trimmed_rows(ws.iter_rows(values_only=True))
    except Exception:  # openpyxl raises KeyError/TypeError/ValueError on Strict or odd files
        return None
    return sheets


#: Excel's widest sheet (A..XFD): a cell reference beyond it is not believed
_MAX_COLUMNS = 16_384


def _rows_xml(pkg: Package, part: str, shared: list[str]) -> Iterator[list[Any]]:
    """Cell values straight from sheet XML: the fallback when openpyxl cannot read the book."""
    root = pkg.xml(part)
    assert root is not None
    for row in root.iter():
        if local_name(row) != "row":
            continue
        cells: dict[int, Any] = {}
        for position, c in enumerate(el for el in row if local_name(el) == "c"):
            ref = attribute(c, "r") or ""
            letters = re.match(r"[A-Z]{1,3}(?=[0-9])", ref)
            col = position
            if letters:
                col = 0
                for ch in letters.group(0):
                    col = col * 26 + ord(ch) - 64
                col -= 1
            if not 0 <= col < _MAX_COLUMNS:  # beyond XFD: the reference lies, the cell's place in the row does not
                col = position
            kind = attribute(c, "t") or "n"
            v = find_child(c, "v")
            raw = v.text if v is not None and v.text is not None else None
            value: Any = raw
            if kind == "s" and raw is not None and raw.strip().isdigit():
                index = int(raw)
                value = shared[index] if index < len(shared) else ""
            elif kind == "inlineStr":
                inline = find_child(c, "is")
                value = _rich_text(inline) if inline is not None else ""
            elif kind == "b":
                value = raw == "1"
            elif kind == "n" and raw is not None:
                try:
                    number = float(raw)
                    value = int(number) if number.is_integer() and "E" not in raw.upper() else number
                except ValueError:
                    value = raw
            cells[col] = value
        if cells:
            width = max(cells) + 1
            yield from _trimmed_rows(iter([tuple(cells.get(i) for i in range(width))]))


def _rich_text(el: etree._Element) -> str:
    """Text of a string item, without the phonetic (rPh) runs."""
    parts: list[str] = []
    for child in el:
        name = local_name(child)
        if name == "t":
            parts.append(text_of(child))
        elif name == "r":
            parts.extend(text_of(t) for t in child if local_name(t) == "t")
    return "".join(parts)


def _shared_strings(pkg: Package, workbook_part: str) -> list[str]:
    for _, kind, target in pkg.rels(workbook_part):
        if kind == "sharedStrings":
            root = pkg.xml(target, required=False)
            if root is not None:
                return [_rich_text(si) for si in root if local_name(si) == "si"]
    return []


def _is_strict(pkg: Package, part: str) -> bool:
    """ISO 29500 Strict namespaces: openpyxl opens such books but finds no cells."""
    root = pkg.xml(part)
    assert root is not None
    return "purl.oclc.org/ooxml" in str(root.tag)


def extract_xlsx(data: bytes, settings: Settings) -> list[PageContent]:
    """One unit per worksheet: tab-separated rows, a Table, records keyed by the first row."""
    pkg = open_ooxml(data, "Excel workbook", settings)
    workbook_part = pkg.main_part("xl/workbook.xml")
    parts = _sheet_parts(pkg, workbook_part)
    strict = _is_strict(pkg, workbook_part)
    # openpyxl reads parts with its own parser, which drops what follows an entity it does not
    # know: a book whose parts declare a DOCTYPE (no real one does) is read under papersift's policy
    doctype = pkg.declares_doctype()
    typed = None if strict or doctype else _rows_openpyxl(data)
    if typed is not None and (not parts or set(typed) & {name for name, _ in parts}):
        try:
            return _sheet_units(pkg, parts, typed, "ooxml:xlsx:openpyxl", list(pkg.signals))
        except Exception:
            pass  # read it again from the XML
    shared = _shared_strings(pkg, workbook_part)
    typed = {name: _rows_xml(pkg, part, shared) for name, part in parts}
    signal = "strict_ooxml" if strict else "doctype" if doctype else "openpyxl_failed"
    return _sheet_units(pkg, parts, typed, "ooxml:xlsx:xml", [*pkg.signals, signal])


#: cells (empty ones inside a row included) read per sheet: the text of a sheet beyond it is cut and
#: the unit says so (one cell at XFD on each of a million rows would be 16 billion tabs)
_MAX_CELLS = 2_000_000


def _sheet_units(pkg: Package, parts: list[tuple[str, str]], typed: dict[str, Iterator[list[Any]]], engine: str,
                 signals: list[str]) -> list[PageContent]:
    part_of = dict(parts)
    pages: list[PageContent] = []
    for number, (sheet, rows_iter) in enumerate(typed.items(), start=1):
        sheet_started = time.perf_counter()
        heads, foots = _headers_footers(pkg, part_of[sheet], sheet) if sheet in part_of else ([], [])
        lines: list[str] = list(heads)
        kept: list[list[Any]] = []
        total = cells = 0
        cut: list[tuple[str, str]] = []
        for row in rows_iter:
            cells += len(row)
            if cells > _MAX_CELLS:
                cut.append((f"sheet {sheet!r} cut after {total} rows: more than {_MAX_CELLS} cells", "limit_exceeded"))
                break
            total += 1
            texts = [_cell_text(v) for v in row]
            lines.append("\t".join(" ".join(t.split()) for t in texts))
            if len(kept) <= MAX_TABLE_ROWS:
                kept.append(row)
        lines.extend(foots)
        text = "\n".join(lines)
        page_signals = list(signals)
        table_rows = [[_cell_text(v) for v in row] for row in kept]
        table = Table(rows=table_rows, index=0, header_rows=1, title=sheet)
        md_parts = [f"## {sheet}", *heads]
        table_md = table.to_markdown()
        if table_md:
            md_parts.append(table_md)
        if total > len(kept):
            page_signals.append("table_truncated")
            md_parts.append(f"_(table truncated: first {len(kept) - 1} of {total - 1} data rows)_")
        md_parts += foots
        records = rows_to_records([[_cell_value(v) for v in row] for row in kept])
        report = unit_report(number, text, engine, f"sheet {sheet!r}: {total} rows", sheet_started, page_signals,
                             1 if table_rows else 0, [*pkg.truncated, *cut])
        pages.append(PageContent(number=number, text=text, report=report, tables=[table] if table_rows else [],
                                 markdown="\n\n".join(md_parts), records=records, label=sheet,
                                 embedded=pkg.pictures([part_of[sheet]]) if sheet in part_of else []))
    if not pages:
        raise CorruptInputError("Excel workbook has no readable worksheets")
    return pages
