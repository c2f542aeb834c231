"""OOXML (docx, xlsx/xlsm, pptx): text in reading order, tables as tables.

Word and PowerPoint are read straight from their XML parts by local element names, so
Transitional and Strict (ISO 29500) files take the same path, and text that libraries
skip (text boxes, headers, comments, grouped shapes, SmartArt) is not lost. Excel goes
through openpyxl for typed cell values, with a plain-XML fallback for files it rejects.
"""

from __future__ import annotations

import datetime as dt
import io
import posixpath
import re
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from papersift.content import PageContent, Table
from papersift.errors import CorruptInputError, EncryptedInputError, LimitExceededError
from papersift.formats.text import MAX_TABLE_ROWS, rows_to_records
from papersift.report import PageReport, PageStatus
from papersift.settings import Settings

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: parts above this size must not expand more than settings.max_compression_ratio
_RATIO_FLOOR_BYTES = 10 * 1024 * 1024
_STRICT_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
_RECOVER_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, recover=True)


# -- package plumbing ------------------------------------------------------------------


@dataclass
class _Package:
    """An opened OOXML zip with the parts' names, relationship lookup and damage notes."""

    zf: zipfile.ZipFile
    names: dict[str, str]  # lower-case name -> stored name (part names are case-insensitive)
    signals: list[str] = field(default_factory=list)

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
            return etree.fromstring(raw, _STRICT_PARSER)
        except etree.XMLSyntaxError as exc:
            try:
                root = etree.fromstring(raw, _RECOVER_PARSER)
            except etree.XMLSyntaxError:
                root = None
            if root is None:
                if required:
                    raise CorruptInputError(f"package part {part} is not well-formed XML: {exc}") from exc
                self.signals.append(f"unreadable_part:{part}")
                return None
            self.signals.append(f"recovered_xml:{part}")
            return root

    def rels(self, part: str) -> list[tuple[str, str, str]]:
        """(id, type suffix, target part) of a part's internal relationships."""
        folder, base = posixpath.split(part)
        rels_part = posixpath.join(folder, "_rels", base + ".rels")
        root = self.xml(rels_part, required=False) if self.has(rels_part) else None
        out: list[tuple[str, str, str]] = []
        if root is None:
            return out
        for rel in root:
            if _local(rel) != "Relationship" or rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target", "")
            if not target:
                continue
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            out.append((rel.get("Id", ""), rel.get("Type", "").rsplit("/", 1)[-1], path))
        return out

    def main_part(self, fallback: str) -> str:
        for _, kind, target in self.rels(""):
            if kind == "officeDocument" and self.has(target):
                return target
        return fallback


def _open_package(data: bytes, what: str, settings: Settings) -> _Package:
    if data.startswith(_OLE_MAGIC):
        from papersift.sniff import sniff

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
            raise LimitExceededError(
                f"{what} part {info.filename} expands {info.file_size} bytes from {info.compress_size}"
                f" (more than max_compression_ratio {settings.max_compression_ratio})"
            )
    if total > settings.max_archive_total_bytes:
        raise LimitExceededError(
            f"{what} parts expand to {total} bytes, above max_archive_total_bytes {settings.max_archive_total_bytes}"
        )
    return _Package(zf=zf, names={info.filename.lower(): info.filename for info in infos})


def _local(el: Any) -> str:
    tag = el.tag
    if not isinstance(tag, str):  # comments, processing instructions
        return ""
    return tag.rsplit("}", 1)[-1]


def _attr(el: etree._Element, name: str, namespaced: bool = False) -> str | None:
    """An attribute by local name, whatever its namespace (Strict and Transitional differ).

    ``namespaced`` asks for a prefixed one: p:sldId has both ``id`` and ``r:id``.
    """
    for key, value in el.attrib.items():
        key = str(key)
        if key.rsplit("}", 1)[-1] == name and (not namespaced or key.startswith("{")):
            return str(value)
    return None


def _child(el: etree._Element, name: str) -> etree._Element | None:
    for child in el:
        if _local(child) == name:
            return child
    return None


def _alternate(el: etree._Element) -> etree._Element | None:
    """mc:AlternateContent holds the same content twice; read the first Choice only."""
    return _child(el, "Choice") if _child(el, "Choice") is not None else _child(el, "Fallback")


def _report(number: int, text: str, engine: str, reason: str, started: float, signals: list[str],
            tables: int) -> PageReport:
    return PageReport(
        number=number,
        status=PageStatus.CLEAN.value,
        engine=engine,
        char_count=len(text),
        confidence=1.0,
        reason=reason,
        seconds=round(time.perf_counter() - started, 4),
        signals=list(signals) + ([] if text.strip() else ["empty"]),
        tables=tables,
    )


def _table_text(rows: list[list[str]]) -> str:
    lines = ("\t".join(" ".join(cell.split()) for cell in row) for row in rows)
    return "\n".join(line for line in lines if line.strip())


# -- Word ----------------------------------------------------------------------------------

_SKIP_IN_PARAGRAPH = frozenset(
    {"pPr", "rPr", "rt", "delText", "instrText", "fldData", "del", "moveFrom", "sectPr", "tblPr"}
)
_NOTE_SKIP_TYPES = frozenset({"separator", "continuationSeparator", "continuationNotice"})


@dataclass
class _Block:
    text: str
    markdown: str
    table: Table | None = None


class _WordReader:
    """Walks WordprocessingML in document order, by local names only."""

    def __init__(self, heading_styles: dict[str, int], comments: dict[str, str],
                 list_styles: frozenset[str] = frozenset()) -> None:
        self.heading_styles = heading_styles
        self.list_styles = list_styles
        self.comments = comments
        self.used_comments: set[str] = set()
        self.tables: list[Table] = []

    def blocks(self, container: etree._Element) -> Iterator[_Block]:
        for child in container:
            name = _local(child)
            if name == "p":
                yield from self._paragraph(child)
            elif name == "tbl":
                yield self._table(child)
            elif name in ("sdt", "customXml", "sdtContent", "ins", "moveTo", "smartTag", "txbxContent"):
                yield from self.blocks(_sdt_content(child) if name == "sdt" else child)
            elif name == "AlternateContent":
                chosen = _alternate(child)
                if chosen is not None:
                    yield from self.blocks(chosen)

    def _paragraph(self, p: etree._Element) -> Iterator[_Block]:
        parts: list[str] = []
        boxes: list[etree._Element] = []
        refs: list[str] = []
        self._runs(p, parts, boxes, refs)
        text = "".join(parts).strip("\n")
        if text.strip():
            yield _Block(text=text, markdown=self._paragraph_markdown(p, text))
        for box in boxes:
            yield from self.blocks(box)
        for ref in refs:
            if ref in self.comments and ref not in self.used_comments:
                self.used_comments.add(ref)
                note = f"[comment: {self.comments[ref]}]"
                yield _Block(text=note, markdown=f"> {note}")

    def _runs(self, el: etree._Element, out: list[str], boxes: list[etree._Element], refs: list[str]) -> None:
        for child in el:
            name = _local(child)
            if not name or name in _SKIP_IN_PARAGRAPH:
                continue
            if name == "t":
                out.append(child.text or "")
            elif name == "tab":
                out.append("\t")
            elif name in ("br", "cr"):
                out.append("\n")
            elif name == "noBreakHyphen":
                out.append("-")
            elif name == "txbxContent":
                boxes.append(child)
            elif name == "commentReference":
                refs.append(_attr(child, "id") or "")
            elif name == "AlternateContent":
                chosen = _alternate(child)
                if chosen is not None:
                    self._runs(chosen, out, boxes, refs)
            else:
                self._runs(child, out, boxes, refs)

    def _paragraph_markdown(self, p: etree._Element, text: str) -> str:
        ppr = _child(p, "pPr")
        level = 0
        listed = False
        if ppr is not None:
            style = _child(ppr, "pStyle")
            if style is not None:
                level = self.heading_styles.get(_attr(style, "val") or "", 0)
                listed = (_attr(style, "val") or "") in self.list_styles
            outline = _child(ppr, "outlineLvl")
            if outline is not None and not level:
                value = _attr(outline, "val") or ""
                level = int(value) + 1 if value.isdigit() and int(value) < 6 else 0
            listed = listed or _child(ppr, "numPr") is not None
        line = " ".join(text.split())
        if level:
            return "#" * min(level, 6) + " " + line
        if listed:
            return "- " + line
        return text

    def _table(self, tbl: etree._Element) -> _Block:
        rows: list[list[str]] = []
        for tr in _children_through_sdt(tbl, "tr"):
            row: list[str] = []
            for tc in _children_through_sdt(tr, "tc"):
                cell = "\n".join(block.text for block in self.blocks(tc))
                row.append(cell)
                tcpr = _child(tc, "tcPr")
                span = _child(tcpr, "gridSpan") if tcpr is not None else None
                span_value = (_attr(span, "val") or "") if span is not None else ""
                row.extend([""] * (int(span_value) - 1 if span_value.isdigit() else 0))
            rows.append(row)
        table = Table(rows=rows, index=len(self.tables), header_rows=1)
        self.tables.append(table)
        return _Block(text=_table_text(rows), markdown=table.to_markdown(), table=table)


def _sdt_content(sdt: etree._Element) -> etree._Element:
    content = _child(sdt, "sdtContent")
    return content if content is not None else sdt


def _children_through_sdt(el: etree._Element, name: str) -> Iterator[etree._Element]:
    for child in el:
        local = _local(child)
        if local == name:
            yield child
        elif local in ("sdt", "sdtContent", "customXml"):
            yield from _children_through_sdt(_sdt_content(child) if local == "sdt" else child, name)


def _paragraph_styles(pkg: _Package, part: str | None) -> tuple[dict[str, int], frozenset[str]]:
    """(styleId -> heading level, list styleIds): headings from style names ('heading 2',
    'Title') or outline levels; lists from numbering defined on the style itself."""
    root = pkg.xml(part, required=False) if part else None
    if root is None:
        return {}, frozenset()
    levels: dict[str, int] = {}
    lists: set[str] = set()
    based: dict[str, str] = {}
    for style in root:
        if _local(style) != "style":
            continue
        sid = _attr(style, "styleId") or ""
        style_ppr = _child(style, "pPr")
        if style_ppr is not None and _child(style_ppr, "numPr") is not None:
            lists.add(sid)
        name_el = _child(style, "name")
        name = (_attr(name_el, "val") or "").lower() if name_el is not None else ""
        match = re.fullmatch(r"heading\s*(\d)", name)
        if match:
            levels[sid] = int(match.group(1))
        elif name in ("title",):
            levels[sid] = 1
        elif name == "subtitle":
            levels[sid] = 2
        else:
            ppr = _child(style, "pPr")
            outline = _child(ppr, "outlineLvl") if ppr is not None else None
            value = (_attr(outline, "val") or "") if outline is not None else ""
            if value.isdigit() and int(value) < 6:
                levels[sid] = int(value) + 1
        parent = _child(style, "basedOn")
        if parent is not None:
            based[sid] = _attr(parent, "val") or ""
    for sid, parent in based.items():
        seen = 0
        while sid not in levels and parent in based and seen < 10:
            parent, seen = based[parent], seen + 1
        if sid not in levels and parent in levels:
            levels[sid] = levels[parent]
    return levels, frozenset(lists)


def _notes(reader: _WordReader, root: etree._Element, kind: str) -> Iterator[_Block]:
    """Footnotes or endnotes, without the separator pseudo-notes Word stores with them."""
    for note in root:
        if _local(note) != kind or (_attr(note, "type") or "") in _NOTE_SKIP_TYPES:
            continue
        text = " ".join(" ".join(b.text for b in reader.blocks(note)).split())
        if text:
            note_id = _attr(note, "id") or ""
            yield _Block(text=f"[{kind} {note_id}: {text}]", markdown=f"[^{note_id}]: {text}")


def extract_docx(data: bytes, settings: Settings) -> list[PageContent]:
    started = time.perf_counter()
    pkg = _open_package(data, "Word document", settings)
    main = pkg.main_part("word/document.xml")
    document = pkg.xml(main)
    assert document is not None
    rels = pkg.rels(main)
    by_type: dict[str, list[str]] = {}
    for _, kind, target in rels:
        by_type.setdefault(kind, []).append(target)
    if not by_type:  # no relationships part: fall back to the conventional names
        for name in pkg.names.values():
            match = re.fullmatch(r"word/(header|footer|footnotes|endnotes|comments|styles)\d*\.xml", name)
            if match:
                by_type.setdefault(match.group(1), []).append(name)

    comments: dict[str, str] = {}
    plain = _WordReader({}, {})
    for part in by_type.get("comments", []):
        root = pkg.xml(part, required=False)
        for comment in root if root is not None else []:
            if _local(comment) == "comment":
                text = " ".join(" ".join(b.text for b in plain.blocks(comment)).split())
                if text:
                    comments[_attr(comment, "id") or str(len(comments))] = text
    styles = by_type.get("styles", [None])[0]
    headings, lists = _paragraph_styles(pkg, styles)
    reader = _WordReader(headings, comments, lists)

    def part_blocks(kinds: tuple[str, ...]) -> list[_Block]:
        out: list[_Block] = []
        seen: set[str] = set()
        for kind in kinds:
            for part in sorted(set(by_type.get(kind, []))):
                root = pkg.xml(part, required=False)
                if root is None:
                    continue
                if kind in ("footnotes", "endnotes"):
                    out.extend(_notes(reader, root, kind[:-1]))
                    continue
                blocks = list(reader.blocks(root))
                key = "\n".join(b.text for b in blocks)
                if key.strip() and key not in seen:  # first/even/default headers often repeat
                    seen.add(key)
                    out.extend(blocks)
        return out

    headers = part_blocks(("header",))
    body_el = _child(document, "body")
    body = list(reader.blocks(body_el if body_el is not None else document))
    tail = part_blocks(("footnotes", "endnotes", "footer"))
    leftover = [
        _Block(text=f"[comment: {text}]", markdown=f"> [comment: {text}]")
        for cid, text in comments.items()
        if cid not in reader.used_comments
    ]
    blocks = headers + body + tail + leftover
    text = "\n".join(b.text for b in blocks)
    markdown = "\n\n".join(b.markdown for b in blocks if b.markdown.strip())
    tables = reader.tables
    reason = f"read {main}: {len(body)} body blocks, {len(tables)} tables"
    if headers or tail:
        reason += ", headers/footers/notes included"
    report = _report(1, text, "ooxml:docx", reason, started, pkg.signals, len(tables))
    return [PageContent(number=1, text=text, report=report, tables=tables, markdown=markdown)]


# -- Excel ---------------------------------------------------------------------------------

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


def _sheet_parts(pkg: _Package, workbook_part: str) -> list[tuple[str, str]]:
    """(sheet name, worksheet part) in workbook order; chart sheets excluded."""
    root = pkg.xml(workbook_part)
    assert root is not None
    targets = {rid: (kind, target) for rid, kind, target in pkg.rels(workbook_part)}
    out: list[tuple[str, str]] = []
    for el in root.iter():
        if _local(el) == "sheet":
            rid = _attr(el, "id", namespaced=True) or ""
            kind, target = targets.get(rid, ("", ""))
            if kind == "worksheet" and pkg.has(target):
                out.append((_attr(el, "name") or target, target))
    return out


def _headers_footers(pkg: _Package, part: str, sheet: str) -> tuple[list[str], list[str]]:
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
        sheets = {ws.title: _trimmed_rows(ws.iter_rows(values_only=True)) for ws in workbook.worksheets}
    except Exception:  # openpyxl raises KeyError/TypeError/ValueError on Strict or odd files
        return None
    return sheets


def _rows_xml(pkg: _Package, part: str, shared: list[str]) -> Iterator[list[Any]]:
    """Cell values straight from sheet XML: the fallback when openpyxl cannot read the book."""
    root = pkg.xml(part)
    assert root is not None
    for row in root.iter():
        if _local(row) != "row":
            continue
        cells: dict[int, Any] = {}
        for position, c in enumerate(el for el in row if _local(el) == "c"):
            ref = _attr(c, "r") or ""
            letters = re.match(r"[A-Z]+", ref)
            col = position
            if letters:
                col = 0
                for ch in letters.group(0):
                    col = col * 26 + ord(ch) - 64
                col -= 1
            kind = _attr(c, "t") or "n"
            v = _child(c, "v")
            raw = v.text if v is not None and v.text is not None else None
            value: Any = raw
            if kind == "s" and raw is not None and raw.strip().isdigit():
                index = int(raw)
                value = shared[index] if index < len(shared) else ""
            elif kind == "inlineStr":
                inline = _child(c, "is")
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
        name = _local(child)
        if name == "t":
            parts.append(child.text or "")
        elif name == "r":
            parts.extend(t.text or "" for t in child if _local(t) == "t")
    return "".join(parts)


def _shared_strings(pkg: _Package, workbook_part: str) -> list[str]:
    for _, kind, target in pkg.rels(workbook_part):
        if kind == "sharedStrings":
            root = pkg.xml(target, required=False)
            if root is not None:
                return [_rich_text(si) for si in root if _local(si) == "si"]
    return []


def _is_strict(pkg: _Package, part: str) -> bool:
    """ISO 29500 Strict namespaces: openpyxl opens such books but finds no cells."""
    root = pkg.xml(part)
    assert root is not None
    return "purl.oclc.org/ooxml" in str(root.tag)


def extract_xlsx(data: bytes, settings: Settings) -> list[PageContent]:
    """One unit per worksheet: tab-separated rows, a Table, records keyed by the first row."""
    pkg = _open_package(data, "Excel workbook", settings)
    workbook_part = pkg.main_part("xl/workbook.xml")
    parts = _sheet_parts(pkg, workbook_part)
    strict = _is_strict(pkg, workbook_part)
    typed = None if strict else _rows_openpyxl(data)
    engine = "ooxml:xlsx:openpyxl"
    signals = list(pkg.signals)
    if typed is None or (parts and not set(typed) & {name for name, _ in parts}):
        shared = _shared_strings(pkg, workbook_part)
        typed = {name: _rows_xml(pkg, part, shared) for name, part in parts}
        engine = "ooxml:xlsx:xml"
        signals.append("strict_ooxml" if strict else "openpyxl_failed")
    part_of = dict(parts)
    pages: list[PageContent] = []
    for number, (sheet, rows_iter) in enumerate(typed.items(), start=1):
        sheet_started = time.perf_counter()
        heads, foots = _headers_footers(pkg, part_of[sheet], sheet) if sheet in part_of else ([], [])
        lines: list[str] = list(heads)
        kept: list[list[Any]] = []
        total = 0
        for row in rows_iter:
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
        report = _report(number, text, engine, f"sheet {sheet!r}: {total} rows", sheet_started, page_signals,
                         1 if table_rows else 0)
        pages.append(PageContent(number=number, text=text, report=report, tables=[table] if table_rows else [],
                                 markdown="\n\n".join(md_parts), records=records, label=sheet))
    if not pages:
        raise CorruptInputError("Excel workbook has no readable worksheets")
    return pages


# -- PowerPoint ----------------------------------------------------------------------------

_NOTES_SKIP_PLACEHOLDERS = frozenset({"sldImg", "sldNum", "hdr", "ftr", "dt"})


@dataclass
class _SlideItem:
    text: str
    markdown: str
    table: Table | None = None


def _drawing_paragraphs(body: etree._Element) -> list[str]:
    """a:p paragraphs of a text body, runs joined, line breaks kept."""
    paragraphs: list[str] = []
    for p in body.iter():
        if _local(p) != "p":
            continue
        parts: list[str] = []
        for el in p.iter():
            name = _local(el)
            if name == "t" and el.text:
                parts.append(el.text)
            elif name == "br":
                parts.append("\n")
        line = "".join(parts)
        if line.strip():
            paragraphs.append(line)
    return paragraphs


class _SlideReader:
    def __init__(self, pkg: _Package, part: str) -> None:
        self.pkg = pkg
        self.rels = {rid: (kind, target) for rid, kind, target in pkg.rels(part)}
        self.tables: list[Table] = []

    def items(self, tree: etree._Element) -> Iterator[_SlideItem]:
        for shape in tree:
            name = _local(shape)
            if name == "sp":
                yield from self._shape(shape)
            elif name == "grpSp":
                yield from self.items(shape)
            elif name == "graphicFrame":
                yield from self._frame(shape)
            elif name == "AlternateContent":
                chosen = _alternate(shape)
                if chosen is not None:
                    yield from self.items(chosen)

    def _placeholder(self, shape: etree._Element) -> str | None:
        for el in shape.iter():
            if _local(el) == "ph":
                return _attr(el, "type") or "body"
        return None

    def _shape(self, shape: etree._Element) -> Iterator[_SlideItem]:
        body = _child(shape, "txBody")
        if body is None:
            return
        paragraphs = _drawing_paragraphs(body)
        if not paragraphs:
            return
        text = "\n".join(paragraphs)
        if self._placeholder(shape) in ("title", "ctrTitle"):
            yield _SlideItem(text=text, markdown="### " + " ".join(text.split()))
        else:
            yield _SlideItem(text=text, markdown=text)

    def _frame(self, frame: etree._Element) -> Iterator[_SlideItem]:
        for el in frame.iter():
            name = _local(el)
            if name == "tbl":
                rows: list[list[str]] = []
                for tr in (r for r in el if _local(r) == "tr"):
                    row = []
                    for tc in (c for c in tr if _local(c) == "tc"):
                        body = _child(tc, "txBody")
                        row.append(" ".join(_drawing_paragraphs(body)) if body is not None else "")
                    rows.append(row)
                table = Table(rows=rows, index=len(self.tables), header_rows=1)
                self.tables.append(table)
                yield _SlideItem(text=_table_text(rows), markdown=table.to_markdown(), table=table)
                return
            if name == "relIds":  # SmartArt: the text lives in the diagram data part
                _kind, target = self.rels.get(_attr(el, "dm") or "", ("", ""))
                root = self.pkg.xml(target, required=False) if target and self.pkg.has(target) else None
                if root is not None:
                    lines = [line for pt in root.iter() if _local(pt) == "t" and _local(pt.getparent()) == "pt"
                             for line in _drawing_paragraphs(pt)]
                    if lines:
                        yield _SlideItem(text="\n".join(lines), markdown="\n".join(f"- {x}" for x in lines))
                return

    def notes(self) -> str:
        for kind, target in self.rels.values():
            if kind == "notesSlide" and self.pkg.has(target):
                root = self.pkg.xml(target, required=False)
                if root is None:
                    return ""
                texts = []
                for shape in root.iter():
                    if _local(shape) == "sp" and self._placeholder(shape) not in _NOTES_SKIP_PLACEHOLDERS:
                        body = _child(shape, "txBody")
                        if body is not None:
                            texts.extend(_drawing_paragraphs(body))
                return "\n".join(texts)
        return ""


def _slide_parts(pkg: _Package, presentation: str) -> list[str]:
    root = pkg.xml(presentation, required=False)
    targets = {rid: (kind, target) for rid, kind, target in pkg.rels(presentation)}
    slides: list[str] = []
    if root is not None:
        for el in root.iter():
            if _local(el) == "sldId":
                kind, target = targets.get(_attr(el, "id", namespaced=True) or "", ("", ""))
                if kind == "slide" and pkg.has(target):
                    slides.append(target)
    if not slides:  # damaged presentation part: fall back to the slide parts by number
        found = [n for n in pkg.names.values() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)]
        slides = sorted(found, key=lambda n: int(re.findall(r"\d+", n)[-1]))
    return slides


def extract_pptx(data: bytes, settings: Settings) -> list[PageContent]:
    """One unit per slide in presentation order: shape text (groups, tables, SmartArt) and notes."""
    pkg = _open_package(data, "PowerPoint presentation", settings)
    presentation = pkg.main_part("ppt/presentation.xml")
    slides = _slide_parts(pkg, presentation)
    if not slides:
        raise CorruptInputError("PowerPoint presentation has no slides")
    pages: list[PageContent] = []
    for number, part in enumerate(slides, start=1):
        started = time.perf_counter()
        before = len(pkg.signals)
        root = pkg.xml(part, required=False)
        reader = _SlideReader(pkg, part)
        items: list[_SlideItem] = []
        if root is not None:
            for tree in root.iter():
                if _local(tree) == "spTree":
                    items = list(reader.items(tree))
                    break
        notes = reader.notes()
        text = "\n".join(item.text for item in items)
        md = [f"## Slide {number}"] + [item.markdown for item in items if item.markdown.strip()]
        if notes:
            text += ("\n\n" if text else "") + "Notes:\n" + notes
            md.append("\n".join("> " + line for line in ["Notes:", *notes.splitlines()]))
        report = _report(number, text, "ooxml:pptx", f"read {part}" + (" with notes" if notes else ""),
                         started, pkg.signals[before:], len(reader.tables))
        pages.append(PageContent(number=number, text=text, report=report, tables=reader.tables,
                                 markdown="\n\n".join(md), label=f"slide {number}"))
    return pages
