"""Every page (or block) of extracted documents as one record, for search indexes, RAG chunkers
and language-model corpora: the records, their one schema, and the JSONL and Parquet writers.

Pure: records are built from a report (the parsed report.json) and the document's page text
(pages/N.json where they were kept, else text.txt cut at its page separators), handed in by the
caller, which knows where they are (the CLI: a results folder; AWS: the bucket through an
:class:`~papersift.storage.ObjectStore`, :func:`stored_document_records`), a document at a
time, so the memory an export needs is flat however many documents go through it. The JSONL
writer is here; the Parquet one is ``papersift.parquet`` (pyarrow: an optional extra, in the
container image, not in the zip Lambdas' layer), used by the CLI and by the workflow's export step
(``papersift.steps.export``).

The schema is :data:`EXPORT_COLUMNS`, in this order, documented in docs/export.md and pinned by
tests/unit/test_export.py: a column renamed, retyped or moved changes every table built over the
exports.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, Protocol

from papersift.content import FormField
from papersift.layout import PAGE_SEPARATOR, PAGES_FOLDER, REPORT_FILE, TEXT_FILE, member_tag, results_prefix
from papersift.report import TRUSTED_DOCUMENT_STATUSES, TRUSTED_PAGE_STATUSES
from papersift.storage import ObjectStore

EXPORT_FORMATS = ("jsonl", "parquet")
#: page: one record a page; block: one a block where pages/N.json has blocks, else one a page
EXPORT_UNITS = ("page", "block")
#: the role of a record that is a whole page
PAGE_ROLE = "page"
#: the role of a page's filled form field or annotation text, after its blocks
FORM_FIELD_ROLE = "form_field"
#: the role of a block that heads a section (``level`` 1..6 gives its depth)
HEADING_ROLE = "heading"


@dataclass(frozen=True)
class Column:
    """One column of the export: its Arrow type (``string``, ``int32``, ``float64``, ``bool``,
    ``list<string>``, ``list<float64>``), its Athena/Glue type, whether it may be null, and what it holds."""

    name: str
    arrow_type: str
    athena_type: str
    nullable: bool
    description: str


EXPORT_COLUMNS: tuple[Column, ...] = (
    Column("doc_id", "string", "string", False, "the document's id (results/<doc_id>/ in the bucket)"),
    Column("source_name", "string", "string", False,
           "the name of the file given to papersift; for an archive member, its archive's"),
    Column("archive_path", "string", "string", True,
           "the member's path inside the archive or attachment (nested archives joined by /); "
           "null for the file itself"),
    Column("parent_doc_id", "string", "string", True, "the doc_id of the archive a member came out of"),
    Column("detected_type", "string", "string", False, "format family decided from the bytes (pdf, docx, ...)"),
    Column("document_status", "string", "string", False, "the document's status (report.json status)"),
    Column("document_trusted", "bool", "boolean", False, "the document's status is clean or partially_recovered"),
    Column("page", "int32", "int", False, "page (or unit: sheet, slide, chapter) number, from 1"),
    Column("block", "int32", "int", True, "the block's index on its page, from 0; null for a page record"),
    Column("status", "string", "string", True,
           "the page's status; null where the results kept none (an archive member of --flat output)"),
    Column("trusted", "bool", "boolean", False,
           "the page's text can be used without review (clean, recovered, ocr); for a page "
           "without a status, its document's trust"),
    Column("engine", "string", "string", True, "what produced the page's text (pdfium, tesseract, ...)"),
    Column("confidence", "float64", "double", True, "the page's confidence, 0..1"),
    Column("language", "string", "string", True, "the page's language where one was detected"),
    Column("headings", "list<string>", "array<string>", False,
           "the titles of the sections the record is in, outermost first; empty until blocks carry headings"),
    Column("role", "string", "string", False, "page for a page record; a block's role (heading, paragraph, ...)"),
    Column("text", "string", "string", False, "the record's text"),
    Column("bbox", "list<float64>", "array<double>", True,
           "a block's box on its page as displayed: x0, y0, x1, y1, fractions from its top left; null for a "
           "page record and a block without geometry (DOCX, HTML, ... blocks; a PDF line pdfium did not place)"),
)
COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in EXPORT_COLUMNS)

Record = dict[str, Any]


@dataclass(frozen=True)
class Origin:
    """Where a document came from, as the export names it: the file given to papersift, and for
    an archive member its path inside that file (nested archives joined by /)."""

    source_name: str
    archive_path: str | None = None

    def member(self, path: str) -> Origin:
        """A member of this document, at ``path`` inside it."""
        return Origin(self.source_name, f"{self.archive_path}/{path}" if self.archive_path else path)


@dataclass(frozen=True)
class PageBody:
    """A page's content as the results kept it: its text, and its blocks where pages/N.json has
    them (each a mapping with ``role`` and ``text``, a heading's ``level``, maybe ``headings``)."""

    text: str
    blocks: Sequence[Mapping[str, Any]] | None = None

    @classmethod
    def from_page_file(cls, page: Mapping[str, Any]) -> PageBody:
        """The page's blocks, then its form fields (kept beside the blocks, which cover its body
        lines only) as blocks of role ``form_field``: a block export leaves no filled value out."""
        blocks = page.get("blocks")
        if not isinstance(blocks, list):
            return cls(str(page.get("text") or ""))
        fields = [FormField(**found) for found in page.get("form_fields") or () if isinstance(found, Mapping)]
        return cls(str(page.get("text") or ""),
                   [*blocks, *({"role": FORM_FIELD_ROLE, "text": found.line()} for found in fields)])


def split_pages(text: str, count: int) -> list[str]:
    """text.txt cut back into ``count`` pages at its page separators. A page whose own text held
    a form feed (a plain-text file can) makes more pieces than pages: a one-page document keeps
    its whole text; otherwise the surplus stays with the last page, so no text is lost."""
    if count <= 0:
        return []
    if count == 1:
        return [text]
    pieces = text.split(PAGE_SEPARATOR)
    if len(pieces) > count:
        pieces[count - 1:] = [PAGE_SEPARATOR.join(pieces[count - 1:])]
    return pieces + [""] * (count - len(pieces))


def split_member_texts(text: str, members: Sequence[Mapping[str, Any]]) -> tuple[str, dict[str, str]]:
    """text.txt of a document with members (an archive; a PDF with embedded files, an email with
    attachments) cut into its own pages' text, before the first member's tag line, and each
    member's text (members in report order, each under its tag line, parts joined by a blank
    line): the own text goes to the document's pages, and --flat output keeps its members only so."""
    found: list[tuple[str, int, int]] = []  # path, tag start, text start
    position = 0
    for member in members:
        path = str(member.get("path") or "")
        if not member.get("doc_id") or not path:
            continue
        marker = member_tag(path) + "\n"
        if not found and text.startswith(marker):
            start = 0
        else:
            start = text.find("\n\n" + marker, position)
            if start < 0:
                continue  # a member without text has no tag line
            start += 2
        found.append((path, start, start + len(marker)))
        position = start + len(marker)
    texts = {}
    for index, (path, _, text_start) in enumerate(found):
        end = found[index + 1][1] - 2 if index + 1 < len(found) else len(text)
        texts[path] = text[text_start:end]
    own = text[: max(found[0][1] - 2, 0)] if found else text
    return own, texts


#: the columns each record has of its own; the first seven, the document's, all its records share
OWN_COLUMNS = COLUMN_NAMES[7:]
SHARED_COLUMNS = COLUMN_NAMES[:7]


@dataclass(frozen=True)
class DocumentRecords:
    """One document's records, the columns they share kept once: a writer turns them out a
    document at a time (one JSON prefix, one repeat per shared column) instead of a field at a time."""

    shared: Record
    records: list[Record]

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Record]:
        """Each record whole, its columns in schema order."""
        for record in self.records:
            yield {**self.shared, **record}


def document_records(report: Mapping[str, Any], bodies: Iterable[PageBody], origin: Origin,
                     unit: str = "page", trusted_only: bool = False) -> DocumentRecords:
    """The records of one document: one a page (``unit`` page), or one a block of the pages that
    have blocks (``unit`` block; a page without blocks is one record). ``bodies`` are its pages in
    order, as many as report.json lists; ``trusted_only`` drops the records whose page is not."""
    document_status = str(report.get("status") or "")
    document_trusted = document_status in TRUSTED_DOCUMENT_STATUSES
    source = report.get("source") or {}
    shared = {
        "doc_id": str(report.get("doc_id") or ""),
        "source_name": origin.source_name,
        "archive_path": origin.archive_path,
        "parent_doc_id": source.get("parent_doc_id"),
        "detected_type": str(report.get("detected_type") or ""),
        "document_status": document_status,
        "document_trusted": document_trusted,
    }
    records: list[Record] = []
    headings: list[tuple[int, str]] = []  # the open sections (level, title), carried across pages
    for page, body in zip(report.get("pages") or (), bodies, strict=False):
        status = page.get("status")
        trusted = status in TRUSTED_PAGE_STATUSES if status is not None else document_trusted
        if trusted_only and not trusted:
            continue
        number, engine = int(page.get("number") or 0), page.get("engine")
        confidence, language = page.get("confidence"), page.get("language")
        if unit != "block" or body.blocks is None:
            records.append({"page": number, "block": None, "status": status, "trusted": trusted, "engine": engine,
                            "confidence": confidence, "language": language, "headings": [], "role": PAGE_ROLE,
                            "text": body.text, "bbox": None})
            continue
        for index, block in enumerate(body.blocks):
            role = str(block.get("role") or "")
            text = str(block.get("text") or "")
            records.append({"page": number, "block": index, "status": status, "trusted": trusted, "engine": engine,
                            "confidence": confidence, "language": language,
                            "headings": _headings_path(headings, block, role, text), "role": role, "text": text,
                            "bbox": _bbox(block.get("bbox"))})
    return DocumentRecords(shared, records)


def _bbox(value: Any) -> list[float] | None:
    """A block's ``bbox`` as four floats, or None where it has none (or not a box's four numbers)."""
    if isinstance(value, list) and len(value) == 4 and all(isinstance(v, int | float) for v in value):
        return [float(v) for v in value]
    return None


def _headings_path(open_sections: list[tuple[int, str]], block: Mapping[str, Any], role: str,
                   text: str) -> list[str]:
    """The titles of the sections a block is in: its own ``headings`` where the block carries
    them, else the headings seen so far (a heading closes those at its level and deeper, and is
    in its own section)."""
    if role == HEADING_ROLE:
        level = int(block.get("level") or 1)
        while open_sections and open_sections[-1][0] >= level:
            open_sections.pop()
        open_sections.append((level, text.strip()))
    given = block.get("headings")
    if isinstance(given, list):
        return [str(h) for h in given]
    return [title for _, title in open_sections]


def stored_document_records(store: ObjectStore, doc_id: str, origin: Origin | None = None,
                            unit: str = "page", trusted_only: bool = False) -> DocumentRecords:
    """The records of a document in the bucket (results/<doc_id>/): its pages/N.json where they
    are, else its text.txt. ``origin`` defaults to the report's own source name and archive path."""
    prefix = results_prefix(doc_id)
    report = json.loads(store.get(prefix + REPORT_FILE))
    source = report.get("source") or {}
    origin = origin or Origin(str(source.get("name") or ""), source.get("archive_path"))
    page_keys = sorted(store.list_keys(prefix + PAGES_FOLDER))
    bodies: Iterable[PageBody]
    if page_keys:
        bodies = (PageBody.from_page_file(json.loads(store.get(key))) for key in page_keys)
    else:
        count = len(report.get("pages") or [])
        text = store.get(prefix + TEXT_FILE).decode("utf-8") if count and store.exists(prefix + TEXT_FILE) else ""
        if report.get("members"):  # its members' text follows its own pages' in text.txt
            text, _ = split_member_texts(text, report["members"])
        bodies = (PageBody(t) for t in split_pages(text, count))
    return document_records(report, bodies, origin, unit, trusted_only)


# -- writers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncodedRecords:
    """A document's records in a writer's own form (:data:`Encoder`), the columns they share kept
    apart as in :class:`DocumentRecords`: encoding, most of a writer's work, can run where the
    document is read (a worker process), and what is shared can still be renamed before writing."""

    shared: Record
    rows: int
    #: the records' own columns as the writer takes them (JSONL: each record's JSON after the shared keys)
    payload: Any

    def renamed(self, **shared: Any) -> EncodedRecords:
        """The same records, some of their shared columns given other values."""
        return EncodedRecords({**self.shared, **shared}, self.rows, self.payload)


#: a writer's encoding of a document: a module-level function, so a process pool can run it
Encoder = Callable[[DocumentRecords], EncodedRecords]


class RecordWriter(Protocol):
    rows: int

    @staticmethod
    def encode(document: DocumentRecords) -> EncodedRecords:
        """The document in the writer's own form: the part of its work that can run elsewhere."""
        ...

    def write(self, document: DocumentRecords) -> None: ...

    def write_encoded(self, document: EncodedRecords) -> None: ...

    def close(self) -> None: ...


def encode_jsonl(document: DocumentRecords) -> EncodedRecords:
    """Each record's JSON object without its shared keys' (and its opening brace), for :class:`JsonlWriter`."""
    dumps = json.dumps
    return EncodedRecords(document.shared, len(document.records),
                          [dumps(record)[1:] for record in document.records])


class JsonlWriter:
    """One JSON object a line, keys in schema order; text beyond ASCII as \\u escapes (any JSON
    reader gives the text back; escaping is twice as fast as writing it raw)."""

    @staticmethod
    def encode(document: DocumentRecords) -> EncodedRecords:
        return encode_jsonl(document)

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.rows = 0

    def write(self, document: DocumentRecords) -> None:
        self.write_encoded(encode_jsonl(document))

    def write_encoded(self, document: EncodedRecords) -> None:
        if not document.rows:
            return
        prefix = json.dumps(document.shared)[:-1] + ", "  # without its closing brace
        lines: list[str] = document.payload
        self._stream.write((prefix + ("\n" + prefix).join(lines) + "\n").encode("utf-8"))
        self.rows += document.rows

    def close(self) -> None:
        self._stream.flush()
