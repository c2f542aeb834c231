"""What an extractor yields for one page (or one logical unit: a sheet, a slide deck,
a whole text file): its text, its tables and its verdict.

Pages travel between Lambdas as JSON in S3 (``work/<doc_id>/pages/<n>.json``), so
everything here round-trips through ``to_dict``/``from_dict``.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any

from papersift.report import PageReport


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

    def to_markdown(self) -> str:
        body = self.markdown if self.markdown is not None else self.text
        parts = [body.rstrip()] if body.strip() else []
        if self.markdown is None:
            for table in self.tables:
                md = table.to_markdown()
                if md:
                    parts.append(f"<!-- table page={self.number} index={table.index} -->\n{md}")
        return "\n\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        # not asdict(self): it would convert the report a second time, deep and slowly
        out = dict(vars(self))
        out["report"] = self.report.to_dict()
        out["tables"] = [asdict(table) for table in self.tables]
        out["records"] = [copy.deepcopy(record) for record in self.records]
        out["ocr_regions"] = [list(box) for box in self.ocr_regions]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageContent:
        data = dict(data)
        data["report"] = PageReport.from_dict(data["report"])
        data["tables"] = [Table(**t) for t in data.get("tables", [])]
        return cls(**data)
