"""A tagged PDF's headings (issue 19): the H, H1..H6 elements of a page's structure tree with the
text they mark, read through pdfium's C API while the page is loaded for its text.

pdfium reads the tree only where the catalog says the document is tagged (``/MarkInfo /Marked
true``, ``FPDFCatalog_IsTagged``), and per page only the elements the page's ``/StructParents``
reach in the parent tree (with their ancestors), custom types mapped through the ``/RoleMap``.
An element's text is its ``/ActualText`` where it has one, else the text of the page objects
its marked-content IDs (MCIDs) mark. Which of these headings document.md shows, and whether the
tags are worth trusting at all, is decided over the whole document (structure.tag_headings).
Cost: pdfium builds a page's elements as it reads them, 0.3 ms a page of a report of a few dozen
(js__chelsea_pdta), 2 ms a page of a spreadsheet's thousands of cells (a batch's first
``PROBE_PAGES`` trees without a heading stop the reading); nothing on an untagged PDF, nor on a
tagged one with an outline (formats/pdf.py: the outline gives its headings)."""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2.raw as pdfium_c

from papersift.structure import MAX_HEADING_LEVEL, MAX_TITLE_CHARS, OutlineEntry

#: structure elements of a page visited at most (a hostile tree may hold millions)
MAX_PAGE_ELEMENTS = 5000
#: page objects walked at most for the text the headings' MCIDs mark
MAX_PAGE_OBJECTS = 20000
#: heading elements of a page read at most
MAX_PAGE_HEADINGS = 200
#: a batch whose first this many pages' trees hold no heading element reads no more of them (a
#: tagged spreadsheet, a form: thousands of cells, no heading, ~2 ms a page for pdfium to build)
PROBE_PAGES = 5
#: the heading types and their level (plain ``H``: 0, its level from the sections around it)
HEADING_TYPES = {"H": 0, **{f"H{n}": n for n in range(1, MAX_HEADING_LEVEL + 1)}}
#: the types that make a section a plain ``H`` heads (its level: how many enclose it)
SECTION_TYPES = frozenset({"Part", "Art", "Sect"})
#: types that hold no heading of the document: their subtrees are not walked (a table of
#: contents lists the headings again; a paragraph, a table, a figure hold none)
SKIPPED_TYPES = frozenset({"TOC", "TOCI", "P", "Span", "Table", "TR", "TH", "TD", "THead", "TBody", "TFoot",
                           "Figure", "Formula", "Form", "Link", "Annot", "Note", "Reference", "BibEntry",
                           "Code", "Quote", "Ruby", "Warichu", "Artifact"})

_BUFFER_CHARS = 64


class _Strings:
    """pdfium's UTF-16LE string getters read into one reused buffer (grown when a string is longer)."""

    def __init__(self) -> None:
        self._size = 2 * _BUFFER_CHARS
        self._buffer = ctypes.create_string_buffer(self._size)

    def read(self, getter: Any, handle: Any) -> str:
        needed = getter(handle, self._buffer, self._size)
        if needed > self._size:
            self._size = needed
            self._buffer = ctypes.create_string_buffer(needed)
            needed = getter(handle, self._buffer, self._size)
        return self._buffer.raw[: max(needed - 2, 0)].decode("utf-16-le", "replace") if needed > 2 else ""


def is_tagged(document: Any) -> bool:
    """The catalog marks the document as tagged (``/MarkInfo /Marked true``): one pdfium call."""
    return bool(pdfium_c.FPDFCatalog_IsTagged(document))


def page_headings(page: Any, textpage: Any, number: int) -> list[OutlineEntry]:
    """The heading elements of the page's structure tree in tree order, as entries of page
    ``number`` with their level (``H1``..``H6`` as they say; plain ``H`` one deeper than the
    sections around it, at least 1) and their text (ActualText, else what their MCIDs mark;
    empty when neither gives any). None is read past ``MAX_PAGE_ELEMENTS`` elements."""
    c = pdfium_c
    tree = c.FPDF_StructTree_GetForPage(page)
    if not tree:
        return []
    strings = _Strings()
    found: list[tuple[int, str, list[int]]] = []  # level, actual text, MCIDs
    try:
        budget = [MAX_PAGE_ELEMENTS]
        stack: list[tuple[Any, int]] = [
            (c.FPDF_StructTree_GetChildAtIndex(tree, k), 0)
            for k in reversed(range(c.FPDF_StructTree_CountChildren(tree)))]
        while stack and budget[0] > 0 and len(found) < MAX_PAGE_HEADINGS:
            element, sections = stack.pop()
            if not element:
                continue
            budget[0] -= 1
            kind = strings.read(c.FPDF_StructElement_GetType, element)
            if kind in HEADING_TYPES:
                level = HEADING_TYPES[kind] or max(sections, 1)
                actual = strings.read(c.FPDF_StructElement_GetActualText, element)
                found.append((min(level, MAX_HEADING_LEVEL), actual, [] if actual else _mcids(element, budget)))
                continue
            if kind in SKIPPED_TYPES:
                continue
            inner = sections + (kind in SECTION_TYPES)
            count = c.FPDF_StructElement_CountChildren(element)
            stack.extend((c.FPDF_StructElement_GetChildAtIndex(element, k), inner) for k in reversed(range(count)))
    finally:
        c.FPDF_StructTree_Close(tree)
    wanted = {mcid for _, _, mcids in found for mcid in mcids}
    marked = _marked_texts(page, textpage, wanted) if wanted else {}
    out = []
    for level, actual, mcids in found:
        text = actual or "".join(marked.get(mcid, "") for mcid in mcids)
        out.append(OutlineEntry(title=" ".join(text.split())[:MAX_TITLE_CHARS], level=level, page=number))
    return out


def _mcids(element: Any, budget: list[int]) -> list[int]:
    """The marked-content IDs of ``element`` and of the elements under it, in order."""
    c = pdfium_c
    out: list[int] = []
    stack = [element]
    while stack and budget[0] > 0:
        current = stack.pop()
        budget[0] -= 1
        out.extend(c.FPDF_StructElement_GetMarkedContentIdAtIndex(current, k)
                   for k in range(c.FPDF_StructElement_GetMarkedContentIdCount(current)))
        count = c.FPDF_StructElement_CountChildren(current)
        stack.extend(child for k in reversed(range(count))
                     if (child := c.FPDF_StructElement_GetChildAtIndex(current, k)))
    return [mcid for mcid in out if mcid >= 0]


def _marked_texts(page: Any, textpage: Any, wanted: set[int]) -> dict[int, str]:
    """The text of the page's text objects marked with each of the ``wanted`` MCIDs. A marked
    sequence is contiguous in the content stream: once each wanted MCID has been seen and left,
    the walk stops (headings come early on most pages); at most ``MAX_PAGE_OBJECTS`` objects."""
    c = pdfium_c
    out: dict[int, str] = {}
    left = set(wanted)
    current = -1
    size = 2 * _BUFFER_CHARS
    buffer = ctypes.create_string_buffer(size)
    for index in range(min(c.FPDFPage_CountObjects(page), MAX_PAGE_OBJECTS)):
        obj = c.FPDFPage_GetObject(page, index)
        mcid = c.FPDFPageObj_GetMarkedContentID(obj)
        if mcid != current:
            left.discard(current)
            if not left:
                break
            current = mcid
        if mcid not in wanted or c.FPDFPageObj_GetType(obj) != c.FPDF_PAGEOBJ_TEXT:
            continue
        needed = c.FPDFTextObj_GetText(obj, textpage, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)), size)
        if needed > size:
            size = needed
            buffer = ctypes.create_string_buffer(size)
            needed = c.FPDFTextObj_GetText(obj, textpage, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)), size)
        if needed > 2:
            out[mcid] = out.get(mcid, "") + buffer.raw[: needed - 2].decode("utf-16-le", "replace")
    return out
