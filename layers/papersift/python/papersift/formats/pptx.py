"""PowerPoint (pptx): one unit per slide in presentation order, with speaker notes.

Read straight from the slide XML by local element names, so grouped shapes, tables and
SmartArt text are not lost.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from lxml import etree

from papersift.content import PageContent, Table
from papersift.errors import CorruptInputError
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
from papersift.markdown import plain_text
from papersift.settings import Settings

_NOTES_SKIP_PLACEHOLDERS = frozenset({"sldImg", "sldNum", "hdr", "ftr", "dt"})


def _drawing_paragraphs(body: etree._Element) -> list[str]:
    """a:p paragraphs of a text body, runs joined, line breaks kept."""
    paragraphs: list[str] = []
    for p in body.iter():
        if local_name(p) != "p":
            continue
        parts: list[str] = []
        for el in p.iter():
            name = local_name(el)
            if name == "t":
                parts.append(text_of(el))
            elif name == "br":
                parts.append("\n")
        line = "".join(parts)
        if line.strip():
            paragraphs.append(line)
    return paragraphs


class _SlideReader:
    def __init__(self, pkg: Package, part: str) -> None:
        self.pkg = pkg
        self.rels = {rid: (kind, target) for rid, kind, target in pkg.rels(part)}
        self.tables: list[Table] = []

    def items(self, tree: etree._Element) -> Iterator[Block]:
        for shape in tree:
            name = local_name(shape)
            if name == "sp":
                yield from self._shape(shape)
            elif name == "grpSp":
                yield from self.items(shape)
            elif name == "graphicFrame":
                yield from self._frame(shape)
            elif name == "AlternateContent":
                chosen = alternate(shape)
                if chosen is not None:
                    yield from self.items(chosen)

    def _placeholder(self, shape: etree._Element) -> str | None:
        for el in shape.iter():
            if local_name(el) == "ph":
                return attribute(el, "type") or "body"
        return None

    def _shape(self, shape: etree._Element) -> Iterator[Block]:
        body = find_child(shape, "txBody")
        if body is None:
            return
        paragraphs = _drawing_paragraphs(body)
        if not paragraphs:
            return
        text = "\n".join(paragraphs)
        if self._placeholder(shape) in ("title", "ctrTitle"):
            yield Block(text=text, markdown="### " + " ".join(text.split()))
        else:
            yield Block(text=text, markdown=plain_text(text))

    def _frame(self, frame: etree._Element) -> Iterator[Block]:
        for el in frame.iter():
            name = local_name(el)
            if name == "tbl":
                rows: list[list[str]] = []
                for tr in (r for r in el if local_name(r) == "tr"):
                    row = []
                    for tc in (c for c in tr if local_name(c) == "tc"):
                        body = find_child(tc, "txBody")
                        row.append(" ".join(_drawing_paragraphs(body)) if body is not None else "")
                    rows.append(row)
                table = Table(rows=rows, index=len(self.tables), header_rows=1)
                self.tables.append(table)
                yield Block(text=table_text(rows), markdown=table.to_markdown(), table=table)
                return
            if name == "relIds":  # SmartArt: the text lives in the diagram data part
                _kind, target = self.rels.get(attribute(el, "dm") or "", ("", ""))
                root = self.pkg.xml(target, required=False) if target and self.pkg.has(target) else None
                if root is not None:
                    lines = [line for pt in root.iter() if local_name(pt) == "t" and local_name(pt.getparent()) == "pt"
                             for line in _drawing_paragraphs(pt)]
                    if lines:
                        yield Block(text="\n".join(lines), markdown="\n".join(f"- {x}" for x in lines))
                return

    def notes(self) -> str:
        for kind, target in self.rels.values():
            if kind == "notesSlide" and self.pkg.has(target):
                root = self.pkg.xml(target, required=False)
                if root is None:
                    return ""
                texts = []
                for shape in root.iter():
                    if local_name(shape) == "sp" and self._placeholder(shape) not in _NOTES_SKIP_PLACEHOLDERS:
                        body = find_child(shape, "txBody")
                        if body is not None:
                            texts.extend(_drawing_paragraphs(body))
                return "\n".join(texts)
        return ""


def _slide_parts(pkg: Package, presentation: str) -> list[str]:
    root = pkg.xml(presentation, required=False)
    targets = {rid: (kind, target) for rid, kind, target in pkg.rels(presentation)}
    slides: list[str] = []
    if root is not None:
        for el in root.iter():
            if local_name(el) == "sldId":
                kind, target = targets.get(attribute(el, "id", namespaced=True) or "", ("", ""))
                if kind == "slide" and pkg.has(target):
                    slides.append(target)
    if not slides:  # damaged presentation part: fall back to the slide parts by number
        found = [n for n in pkg.names.values() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)]
        slides = sorted(found, key=lambda n: int(re.findall(r"\d+", n)[-1]))
    return slides


def extract_pptx(data: bytes, settings: Settings) -> list[PageContent]:
    """One unit per slide in presentation order: shape text (groups, tables, SmartArt) and notes."""
    pkg = open_ooxml(data, "PowerPoint presentation", settings)
    presentation = pkg.main_part("ppt/presentation.xml")
    slides = _slide_parts(pkg, presentation)
    if not slides:
        raise CorruptInputError("PowerPoint presentation has no slides")
    pages: list[PageContent] = []
    for number, part in enumerate(slides, start=1):
        started = time.perf_counter()
        before, cut_before = len(pkg.signals), len(pkg.truncated)
        root = pkg.xml(part, required=False)
        reader = _SlideReader(pkg, part)
        items: list[Block] = []
        if root is not None:
            for tree in root.iter():
                if local_name(tree) == "spTree":
                    items = list(reader.items(tree))
                    break
        notes = reader.notes()
        text = "\n".join(item.text for item in items)
        md = [f"## Slide {number}"] + [item.markdown for item in items if item.markdown.strip()]
        if notes:
            text += ("\n\n" if text else "") + "Notes:\n" + notes
            md.append("\n".join("> " + line for line in ["Notes:", *notes.splitlines()]))
        report = unit_report(number, text, "ooxml:pptx", f"read {part}" + (" with notes" if notes else ""),
                         started, pkg.signals[before:], len(reader.tables), pkg.truncated[cut_before:])
        pages.append(PageContent(number=number, text=text, report=report, tables=reader.tables,
                                 markdown="\n\n".join(md), label=f"slide {number}", embedded=pkg.pictures([part])))
    return pages
