"""What an extractor yields for one page (or one logical unit: a sheet, a slide deck,
a whole text file): its text, its tables and its verdict.

Pages travel between Lambdas as JSON in S3 (``work/<doc_id>/pages/<n>.json``), so
everything here round-trips through ``to_dict``/``from_dict``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from papersift.report import PageReport
from papersift.structure import SET_APART, TABLE, Block, OutlineEntry, markdown_body


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", "\\|")


@dataclass
class Table:
    """A table as rows of cell strings; the first ``header_rows`` rows are the header."""

    rows: list[list[str]]
    index: int = 0
    header_rows: int = 1
    title: str = ""
    #: its box on the page as displayed (fractions: x0, y0, x1, y1 from the top left), where known
    #: (a PDF's table): document.md puts it in place of the lines its cells were read as
    bbox: list[float] | None = None

    def to_markdown(self) -> str:
        rows = [[_cell(c) for c in row] for row in self.rows if any(str(c or "").strip() for c in row)]
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        header = rows[0] if self.header_rows else [""] * width
        body = rows[1:] if self.header_rows else rows
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * width) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)


#: how text.txt names an annotation's text (a field's line starts with the field's name)
_ANNOTATION_LABELS = {"note": "Note", "freetext": ""}


@dataclass
class FormField:
    """A value the page shows outside its text layer: a filled form field (text, choice,
    checkbox, radio), the data of an XFA form, or an annotation's text (freetext: a text box
    typed onto the page; note: a sticky note). ``name`` is the field's name (its tooltip when it
    has one), the note's author; ``value`` what was filled in or typed."""

    name: str
    value: str
    kind: str

    def line(self) -> str:
        """The field as text.txt has it: ``name: value``; a text box's text as it is drawn."""
        label = _ANNOTATION_LABELS.get(self.kind, self.name)
        if self.kind == "note" and self.name:
            label = f"{label} ({self.name})"
        return f"{label}: {self.value}" if label else self.value

    def to_markdown(self) -> str:
        label = _ANNOTATION_LABELS.get(self.kind, self.name)
        if self.kind == "note" and self.name:
            label = f"{label} ({self.name})"
        value = self.value.replace("\n", "  \n  ")  # a multi-line value stays in its list item
        return f"- **{label}:** {value}" if label else f"- {value}"


def form_fields_text(fields: list[FormField]) -> str:
    """The lines a page's form fields add after its text."""
    return "\n".join(f.line() for f in fields)


#: kinds whose value is no text the page draws (a check mark stands for "Yes"): never in the layer
_STATE_KINDS = frozenset({"checkbox", "radio"})
#: a value this long (non-space characters) is in the text layer wherever it occurs in it; a
#: shorter one only as words of their own ("1" is inside every page number)
_SUBSTRING_VALUE = 8


def new_fields(fields: list[FormField], text: str) -> list[FormField]:
    """The fields whose value the page's text does not hold already (whitespace aside): a
    flattened form's values are in its text layer, and so are the appearances poppler draws."""
    if not fields:
        return fields
    words = f" {' '.join(text.split())} "
    squeezed = "".join(text.split())
    kept = []
    for found in fields:
        if found.kind not in _STATE_KINDS:
            value = " ".join(found.value.split())
            compact = value.replace(" ", "")
            if f" {value} " in words or (len(compact) >= _SUBSTRING_VALUE and compact in squeezed):
                continue
        kept.append(found)
    return kept


@dataclass(frozen=True)
class EmbeddedPicture:
    """A picture a unit holds: its name in the file (a package part, or "data: URI n") and bytes."""

    name: str
    data: bytes


@dataclass
class PageContent:
    """One extracted unit. ``markdown`` is None when the text itself is the Markdown body."""

    number: int
    text: str
    report: PageReport
    tables: list[Table] = field(default_factory=list)
    markdown: str | None = None
    #: spreadsheet rows as data: one dict per row, keyed by header
    records: list[dict[str, Any]] = field(default_factory=list)
    #: label of the unit when it is not a page ("Sheet1", "slide 3")
    label: str = ""
    #: what OCR should read of this page ("page" or "pictures", papersift.ocr.routing), and why;
    #: empty when the page needs no OCR or OCR is off
    ocr_scope: str = ""
    ocr_reason: str = ""
    #: for "pictures": their boxes as fractions of the page (x0, y0, x1, y1 from the top left)
    ocr_regions: list[list[float]] = field(default_factory=list)
    #: values the page shows outside its text layer (form fields, annotation texts): ``text``
    #: ends with their lines (form_fields_text), document.md lists them under their own marker
    form_fields: list[FormField] = field(default_factory=list)
    #: the pictures OCR is to read of this unit (papersift.formats._pictures), in the order of the
    #: report's ``pictures`` records marked queued: carried from the extractor to the step that writes
    #: them as the unit's OCR input, never written into the page's JSON
    embedded: list[EmbeddedPicture] = field(default_factory=list)
    #: the unit's lines with a role in the document's structure (papersift.structure: running
    #: heads, page numbers, headings), by index into ``body_lines``; document.md follows them
    blocks: list[Block] = field(default_factory=list)
    #: words the text layer joined over a line-end hyphen, as [before, after] (a PDF's pdfium
    #: text): document.md's paragraphs repair them on evidence, text.txt keeps them as read
    hyphen_breaks: list[list[str]] = field(default_factory=list)
    #: per line of ``body_lines``, the height of a character sampled from it (a PDF's pdfium text;
    #: 0 where unknown): document.md's headings of a PDF without outline come from them
    line_heights: list[float] = field(default_factory=list)
    #: per line of ``body_lines``, its box on the page as displayed (fractions: x0, y0, x1, y1 from
    #: the top left; ``[]`` where unknown; a PDF's pdfium text): the work file's, for the blocks'
    #: ``bbox`` (structure.box_blocks); the results' page files carry the boxes on their blocks
    line_boxes: list[list[float]] = field(default_factory=list)
    #: ... and the indices of the lines whose sampled character is set in a bold font
    bold_lines: list[int] = field(default_factory=list)
    #: the first body line of text OCR read from the page's pictures (their text follows the page's
    #: own, ocr.pages): its blocks take role picture_text; None when the page has none
    picture_text_from: int | None = None
    #: tokens of the text that may be a font's glyph codes, not its characters (formats.pdf's
    #: _vouch_for_codes): the rendering check trusts the layer only where OCR reads each of them
    unverified_text: list[str] = field(default_factory=list)
    #: a tagged PDF's page: the heading elements of its structure tree (title, level, page) in
    #: tree order (pdf_tags): document.md's headings when the document's tags hold up
    tag_headings: list[OutlineEntry] = field(default_factory=list)

    def body_lines(self) -> list[str]:
        """The text's lines without the form fields' lines that end it (document.md lists those)."""
        body = self.text
        if self.form_fields:
            tail = form_fields_text(self.form_fields)
            if body.endswith(tail):
                body = body[: len(body) - len(tail)]
        return body.split("\n")

    def to_markdown(self) -> str:
        if self.markdown is not None:
            body = self.markdown
        elif self.blocks:
            body = markdown_body(self.body_lines(), self.blocks, self.number)
        else:
            body = "\n".join(self.body_lines())
        parts = [body.rstrip()] if body.strip() else []
        if self.markdown is None:
            placed = {block.table for block in self.blocks if block.role == TABLE}
            for table in self.tables:
                if table.index in placed:
                    continue  # in its place in the body
                md = table.to_markdown()
                if md:
                    parts.append(f"<!-- table page={self.number} index={table.index} -->\n{md}")
        if self.form_fields:
            listed = "\n".join(f.to_markdown() for f in self.form_fields)
            parts.append(f"<!-- form fields page={self.number} count={len(self.form_fields)} -->\n{listed}")
        return "\n\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        # not asdict(self): it would convert the report a second time, deep and slowly
        out = dict(vars(self))
        out["report"] = self.report.to_dict()
        out["tables"] = [asdict(table) for table in self.tables]
        out["records"] = [copy.deepcopy(record) for record in self.records]
        out["ocr_regions"] = [list(box) for box in self.ocr_regions]
        out["form_fields"] = [asdict(f) for f in self.form_fields]
        del out["embedded"]  # bytes: written as the unit's OCR input, not into its JSON
        # what only some units have is left out where they have none: a unit without structure,
        # hyphen breaks or line geometry reads as it did before those were known
        for name, encoded in _WRITTEN_WHEN_SET.items():
            value = getattr(self, name)
            if value:
                out[name] = encoded(value)
            else:
                del out[name]
        if self.picture_text_from is None:
            del out["picture_text_from"]
        return out

    def set_apart(self) -> list[Block]:
        """The running heads, footers and page numbers kept out of document.md's body."""
        return [block for block in self.blocks if block.role in SET_APART]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageContent:
        data = dict(data)
        data["report"] = PageReport.from_dict(data["report"])
        data["tables"] = [Table(**t) for t in data.get("tables", [])]
        data["form_fields"] = [FormField(**f) for f in data.get("form_fields", [])]
        data["blocks"] = [Block(**b) for b in data.get("blocks", [])]
        data["tag_headings"] = [OutlineEntry(**e) for e in data.get("tag_headings", [])]
        return cls(**data)


def _lists(values: list[Any]) -> list[list[Any]]:
    return [list(value) for value in values]


#: PageContent's fields written into its JSON only where the unit has some, each with its encoding
_WRITTEN_WHEN_SET: dict[str, Callable[[Any], Any]] = {
    "blocks": lambda blocks: [_block_dict(block) for block in blocks],
    "hyphen_breaks": _lists,
    "line_heights": list,
    "line_boxes": _lists,
    "bold_lines": list,
    "unverified_text": list,
    "tag_headings": lambda entries: [asdict(entry) for entry in entries],
}


def _block_dict(block: Block) -> dict[str, Any]:
    """A block's JSON, without a box where it has none (the page files read as before boxes were known)."""
    out = asdict(block)
    if out["bbox"] is None:
        del out["bbox"]
    if out["table"] is None:
        del out["table"]
    return out
