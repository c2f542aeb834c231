"""`papersift export`: every page (or block) of a results folder as JSONL or Parquet records.

The folder is what `papersift run` or `extract` wrote (one folder per input, its archive members
under members/<path>/, or --flat's <name>.txt and <name>.report.json), or a copy of the bucket's
results/ (results/<doc_id>/ with pages/N.json): any folder holding a report.json is a document.
Documents are read one at a time and their records streamed to the writer (JSONL:
:mod:`papersift.export`, Parquet: :mod:`papersift.parquet`), so the memory an export takes
does not grow with the folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from papersift.export import (
    EXPORT_FORMATS,
    DocumentRecords,
    JsonlWriter,
    Origin,
    PageBody,
    RecordWriter,
    document_records,
    split_member_texts,
    split_pages,
)
from papersift.layout import PAGES_FOLDER, REPORT_FILE, TEXT_FILE
from papersift.parquet import ParquetWriter
from papersift_cli.leftovers import is_output_folder

#: --flat's files beside each other: DIR/<stem>.txt and DIR/<stem>.report.json
FLAT_REPORT_SUFFIX = "." + REPORT_FILE
FLAT_TEXT_SUFFIX = ".txt"


@dataclass(frozen=True)
class ExportCount:
    documents: int
    records: int
    #: reports that could not be read (a run killed while writing one): their documents left out
    unreadable: tuple[Path, ...] = ()


@dataclass(frozen=True)
class _Found:
    """A document on disk: its report, and its text as a folder (text.txt, maybe pages/) or as
    --flat's <stem>.txt."""

    report_path: Path
    text_path: Path
    pages_folder: Path | None = None
    flat: bool = False


def export_results(results: Path, out: Path, export_format: str, unit: str = "page",
                   trusted_only: bool = False) -> ExportCount:
    """Write the records of every document under ``results`` to ``out``; a partial file is never
    left under ``out``'s name (written beside it, renamed when complete)."""
    partial = out.with_name(out.name + ".partial")
    documents = records = 0
    unreadable: list[Path] = []
    try:
        with partial.open("wb") as stream:
            writer = record_writer(export_format, stream)
            for document in _documents(results, unit, trusted_only, unreadable):
                documents += 1
                writer.write(document)
            writer.close()
            records = writer.rows
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return ExportCount(documents, records, tuple(unreadable))


def record_writer(export_format: str, stream: IO[bytes]) -> RecordWriter:
    """The writer of ``export_format`` (:data:`EXPORT_FORMATS`) over ``stream``."""
    if export_format == "parquet":
        return ParquetWriter(stream)
    if export_format == "jsonl":
        return JsonlWriter(stream)
    raise ValueError(f"unknown export format {export_format!r}: one of {', '.join(EXPORT_FORMATS)}")


def _documents(results: Path, unit: str, trusted_only: bool, unreadable: list[Path]) -> Iterator[DocumentRecords]:
    """Each document's records, folders in sorted order, an archive before its members. A member
    whose archive is not read yet (the bucket's results/<doc_id>/ come in doc_id order) waits
    until it is, so it is named by its archive's file and its path inside; one whose archive is
    not in the folder at all goes last, under its own name. A report that cannot be read goes on
    ``unreadable``."""
    origins: dict[str, Origin] = {}  # archives' doc_id -> their origin, for their members
    waiting: list[tuple[_Found, str]] = []  # members and their archive's doc_id
    for found in _walk(results):
        report = _read_report(found, unreadable)
        if report is None:
            continue
        parent = str((report.get("source") or {}).get("parent_doc_id") or "")
        if parent and parent not in origins:
            waiting.append((found, parent))
            continue
        yield from _records(found, report, origins, unit, trusted_only)
    while waiting:
        ready = [item for item in waiting if item[1] in origins] or waiting
        waiting = [item for item in waiting if item not in ready]
        for found, _ in ready:
            if (report := _read_report(found, unreadable)) is not None:
                yield from _records(found, report, origins, unit, trusted_only)


def _walk(results: Path) -> Iterator[_Found]:
    for folder, subfolders, files in os.walk(results):
        here = Path(folder)
        # an extract's work folder, a result being written or left by a killed run: not results
        subfolders[:] = sorted(s for s in subfolders if not is_output_folder(here / s))
        if REPORT_FILE in files:
            subfolders[:] = [s for s in subfolders if s != PAGES_FOLDER.rstrip("/")]
            pages = here / PAGES_FOLDER
            yield _Found(here / REPORT_FILE, here / TEXT_FILE, pages if pages.is_dir() else None)
        for name in sorted(files):
            if name.endswith(FLAT_REPORT_SUFFIX) and name != REPORT_FILE:
                stem = name.removesuffix(FLAT_REPORT_SUFFIX)
                yield _Found(here / name, here / (stem + FLAT_TEXT_SUFFIX), flat=True)


def _read_report(found: _Found, unreadable: list[Path]) -> dict[str, Any] | None:
    try:
        report = json.loads(found.report_path.read_bytes())
    except (OSError, ValueError):
        report = None
    if not isinstance(report, dict):
        unreadable.append(found.report_path)
        return None
    return report


def _records(found: _Found, report: dict[str, Any], origins: dict[str, Origin], unit: str,
             trusted_only: bool) -> Iterator[DocumentRecords]:
    """The document's records; in --flat output, its members' after (archive members, embedded
    files, attachments)."""
    source = report.get("source") or {}
    parent, path = str(source.get("parent_doc_id") or ""), source.get("archive_path")
    if parent in origins and path:
        origin = origins[parent].member(str(path))
    else:  # a top-level file, or a member whose archive is not in the folder: its own name
        origin = Origin(str(source.get("name") or found.report_path.parent.name), path)
    members = report.get("members") or []
    if members:
        origins[str(report.get("doc_id") or "")] = origin
    pages = report.get("pages") or []
    bodies: Iterable[PageBody]
    member_texts: dict[str, str] = {}
    if found.pages_folder is not None:
        bodies = _page_files(found.pages_folder)
    else:
        text = _text(found.text_path) if pages or (found.flat and members) else ""
        if members:  # its members' text follows its own pages' in text.txt
            text, member_texts = split_member_texts(text, members)
        bodies = (PageBody(t) for t in split_pages(text, len(pages)))
    yield document_records(report, bodies, origin, unit, trusted_only)
    if found.flat and members:  # --flat keeps members only in the document's report and text
        yield from _flat_members(report, member_texts, origin, unit, trusted_only)


def _page_files(folder: Path) -> Iterator[PageBody]:
    for path in sorted(folder.glob("*.json"), key=lambda p: (len(p.stem), p.stem)):
        yield PageBody.from_page_file(json.loads(path.read_bytes()))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _flat_members(report: dict[str, Any], texts: dict[str, str], origin: Origin, unit: str,
                  trusted_only: bool) -> Iterator[DocumentRecords]:
    """--flat keeps a document's members only as entries of its report and parts of its text
    (``texts``, by path): their pages carry the member's status and text, no page status or engine."""
    for member in report.get("members") or []:
        path = str(member.get("path") or "")
        if path not in texts:
            continue
        count = int(member.get("page_count") or 0)
        member_report = {
            "doc_id": member.get("doc_id"),
            "source": {"parent_doc_id": report.get("doc_id")},
            "detected_type": member.get("detected_type"),
            "status": member.get("status"),
            "pages": [{"number": n, "status": None} for n in range(1, count + 1)],
        }
        bodies = (PageBody(t) for t in split_pages(texts[path], count))
        yield document_records(member_report, bodies, origin.member(path), unit, trusted_only)
