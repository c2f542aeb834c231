"""Word (docx): text in reading order, tables as tables.

Read straight from the XML parts by local element names, so text that libraries skip
(text boxes, headers, footnotes, comments, content controls) is not lost.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from lxml import etree

from papersift.content import PageContent, Table
from papersift.formats._ooxml import (
    Block,
    Package,
    alternate,
    attribute,
    find_child,
    local_name,
    open_ooxml,
    table_text,
    text_of,
    unit_report,
)
from papersift.formats._xml import NotStreamable, stream_children
from papersift.markdown import plain_text
from papersift.settings import Settings

_SKIP_IN_PARAGRAPH = frozenset(
    {"pPr", "rPr", "rt", "delText", "instrText", "fldData", "del", "moveFrom", "sectPr", "tblPr"}
)
_NOTE_SKIP_TYPES = frozenset({"separator", "continuationSeparator", "continuationNotice"})
#: a main part of this many bytes is read as a stream of its body's children, never as one tree
#: (a 120 MB word/document.xml made a 270 MB tree beside its text); smaller ones are read whole
STREAM_BYTES = 8 * 1024 * 1024


class _WordReader:
    """Walks WordprocessingML in document order, by local names only."""

    def __init__(self, heading_styles: dict[str, int], comments: dict[str, str],
                 list_styles: frozenset[str] = frozenset()) -> None:
        self.heading_styles = heading_styles
        self.list_styles = list_styles
        self.comments = comments
        self.used_comments: set[str] = set()
        self.tables: list[Table] = []

    def blocks(self, container: etree._Element) -> Iterator[Block]:
        for child in container:
            yield from self.block(child)

    def block(self, child: etree._Element) -> Iterator[Block]:
        """What one child of a body (or of a cell, a box, a note) gives."""
        name = local_name(child)
        if name == "p":
            yield from self._paragraph(child)
        elif name == "tbl":
            yield self._table(child)
        elif name in ("sdt", "customXml", "sdtContent", "ins", "moveTo", "smartTag", "txbxContent"):
            yield from self.blocks(_sdt_content(child) if name == "sdt" else child)
        elif name == "AlternateContent":
            chosen = alternate(child)
            if chosen is not None:
                yield from self.blocks(chosen)

    def _paragraph(self, p: etree._Element) -> Iterator[Block]:
        parts: list[str] = []
        boxes: list[etree._Element] = []
        refs: list[str] = []
        self._runs(p, parts, boxes, refs)
        text = "".join(parts).strip("\n")
        if text.strip():
            yield Block(text=text, markdown=self._paragraph_markdown(p, text))
        for box in boxes:
            yield from self.blocks(box)
        for ref in refs:
            if ref in self.comments and ref not in self.used_comments:
                self.used_comments.add(ref)
                note = f"[comment: {self.comments[ref]}]"
                yield Block(text=note, markdown=f"> {note}")

    def _runs(self, el: etree._Element, out: list[str], boxes: list[etree._Element], refs: list[str]) -> None:
        for child in el:
            name = local_name(child)
            if not name or name in _SKIP_IN_PARAGRAPH:
                continue
            if name == "t":
                out.append(text_of(child))
            elif name == "tab":
                out.append("\t")
            elif name in ("br", "cr"):
                out.append("\n")
            elif name == "noBreakHyphen":
                out.append("-")
            elif name == "txbxContent":
                boxes.append(child)
            elif name == "commentReference":
                refs.append(attribute(child, "id") or "")
            elif name == "AlternateContent":
                chosen = alternate(child)
                if chosen is not None:
                    self._runs(chosen, out, boxes, refs)
            else:
                self._runs(child, out, boxes, refs)

    def _paragraph_markdown(self, p: etree._Element, text: str) -> str:
        ppr = find_child(p, "pPr")
        level = 0
        listed = False
        if ppr is not None:
            style = find_child(ppr, "pStyle")
            if style is not None:
                level = self.heading_styles.get(attribute(style, "val") or "", 0)
                listed = (attribute(style, "val") or "") in self.list_styles
            outline = find_child(ppr, "outlineLvl")
            if outline is not None and not level:
                value = attribute(outline, "val") or ""
                level = int(value) + 1 if value.isdigit() and int(value) < 6 else 0
            listed = listed or find_child(ppr, "numPr") is not None
        line = " ".join(text.split())
        if level:
            return "#" * min(level, 6) + " " + line
        if listed:
            return "- " + line
        return plain_text(text)

    def _table(self, tbl: etree._Element) -> Block:
        rows: list[list[str]] = []
        for tr in _children_through_sdt(tbl, "tr"):
            row: list[str] = []
            for tc in _children_through_sdt(tr, "tc"):
                cell = "\n".join(block.text for block in self.blocks(tc))
                row.append(cell)
                tcpr = find_child(tc, "tcPr")
                span = find_child(tcpr, "gridSpan") if tcpr is not None else None
                span_value = (attribute(span, "val") or "") if span is not None else ""
                row.extend([""] * (int(span_value) - 1 if span_value.isdigit() else 0))
            rows.append(row)
        table = Table(rows=rows, index=len(self.tables), header_rows=1)
        self.tables.append(table)
        return Block(text=table_text(rows), markdown=table.to_markdown(), table=table)


def _sdt_content(sdt: etree._Element) -> etree._Element:
    content = find_child(sdt, "sdtContent")
    return content if content is not None else sdt


def _children_through_sdt(el: etree._Element, name: str) -> Iterator[etree._Element]:
    for child in el:
        local = local_name(child)
        if local == name:
            yield child
        elif local in ("sdt", "sdtContent", "customXml"):
            yield from _children_through_sdt(_sdt_content(child) if local == "sdt" else child, name)


def _paragraph_styles(pkg: Package, part: str | None) -> tuple[dict[str, int], frozenset[str]]:
    """(styleId -> heading level, list styleIds): headings from style names ('heading 2',
    'Title') or outline levels; lists from numbering defined on the style itself."""
    root = pkg.xml(part, required=False) if part else None
    if root is None:
        return {}, frozenset()
    levels: dict[str, int] = {}
    lists: set[str] = set()
    based: dict[str, str] = {}
    for style in root:
        if local_name(style) != "style":
            continue
        sid = attribute(style, "styleId") or ""
        style_ppr = find_child(style, "pPr")
        if style_ppr is not None and find_child(style_ppr, "numPr") is not None:
            lists.add(sid)
        name_el = find_child(style, "name")
        name = (attribute(name_el, "val") or "").lower() if name_el is not None else ""
        match = re.fullmatch(r"heading\s*(\d)", name)
        if match:
            levels[sid] = int(match.group(1))
        elif name in ("title",):
            levels[sid] = 1
        elif name == "subtitle":
            levels[sid] = 2
        else:
            ppr = find_child(style, "pPr")
            outline = find_child(ppr, "outlineLvl") if ppr is not None else None
            value = (attribute(outline, "val") or "") if outline is not None else ""
            if value.isdigit() and int(value) < 6:
                levels[sid] = int(value) + 1
        parent = find_child(style, "basedOn")
        if parent is not None:
            based[sid] = attribute(parent, "val") or ""
    for sid, parent in based.items():
        seen = 0
        while sid not in levels and parent in based and seen < 10:
            parent, seen = based[parent], seen + 1
        if sid not in levels and parent in levels:
            levels[sid] = levels[parent]
    return levels, frozenset(lists)


def _notes(reader: _WordReader, root: etree._Element, kind: str) -> Iterator[Block]:
    """Footnotes or endnotes, without the separator pseudo-notes Word stores with them."""
    for note in root:
        if local_name(note) != kind or (attribute(note, "type") or "") in _NOTE_SKIP_TYPES:
            continue
        text = " ".join(" ".join(b.text for b in reader.blocks(note)).split())
        if text:
            note_id = attribute(note, "id") or ""
            yield Block(text=f"[{kind} {note_id}: {text}]", markdown=f"[^{note_id}]: {text}")


def _streamed_body(reader: _WordReader, raw: bytes) -> list[Block] | None:
    """The body's blocks from the stream of its children (``stream_children``); None, with the
    reader as it was, when the part must be read whole."""
    tables, used = len(reader.tables), set(reader.used_comments)
    body: list[Block] = []
    try:
        for child in stream_children(raw, "body"):
            body.extend(reader.block(child))
    except NotStreamable:
        del reader.tables[tables:]
        reader.used_comments = used
        return None
    return body


def extract_docx(data: bytes, settings: Settings) -> list[PageContent]:
    started = time.perf_counter()
    pkg = open_ooxml(data, "Word document", settings)
    main = pkg.main_part("word/document.xml")
    raw_main = pkg.read(main) if pkg.has(main) else b""
    streamed = len(raw_main) >= STREAM_BYTES
    document = None if streamed else pkg.xml(main)
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
            if local_name(comment) == "comment":
                text = " ".join(" ".join(b.text for b in plain.blocks(comment)).split())
                if text:
                    comments[attribute(comment, "id") or str(len(comments))] = text
    styles = by_type.get("styles", [None])[0]
    headings, lists = _paragraph_styles(pkg, styles)
    reader = _WordReader(headings, comments, lists)

    def part_blocks(kinds: tuple[str, ...]) -> list[Block]:
        out: list[Block] = []
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
    body = _streamed_body(reader, raw_main) if streamed else None
    if body is None:
        if document is None:  # the stream gave up: the part read whole, its notes where they would be
            signals, truncated = len(pkg.signals), len(pkg.truncated)
            document = pkg.xml(main)
            pkg.signals[:] = pkg.signals[signals:] + pkg.signals[:signals]
            pkg.truncated[:] = pkg.truncated[truncated:] + pkg.truncated[:truncated]
        assert document is not None
        body_el = find_child(document, "body")
        body = list(reader.blocks(body_el if body_el is not None else document))
    del raw_main, document
    tail = part_blocks(("footnotes", "endnotes", "footer"))
    leftover = [
        Block(text=f"[comment: {text}]", markdown=f"> [comment: {text}]")
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
    pictures = pkg.pictures([main, *(part for kind in ("header", "footer", "footnotes", "endnotes", "comments")
                                      for part in sorted(set(by_type.get(kind, []))))])
    report = unit_report(1, text, "ooxml:docx", reason, started, pkg.signals, len(tables), pkg.truncated)
    return [PageContent(number=1, text=text, report=report, tables=tables, markdown=markdown, embedded=pictures)]
