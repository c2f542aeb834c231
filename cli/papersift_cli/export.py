"""`papersift export`: every page (or block) of a results folder as JSONL or Parquet records.

The folder is what `papersift run` or `extract` wrote (one folder per input, its archive members
under members/<path>/, or --flat's <name>.txt and <name>.report.json), or a copy of the bucket's
results/ (results/<doc_id>/ with pages/N.json): any folder holding a report.json is a document.
Documents are read, and their records encoded for the writer (JSONL: :mod:`papersift.export`,
Parquet: :mod:`papersift.parquet`), in a pool of worker processes, a few at a time, and written
here in the folder's order, so the memory an export takes does not grow with the folder and the
file is the one a single process writes.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import importlib
import itertools
import json
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from papersift.export import (
    EXPORT_FORMATS,
    DocumentRecords,
    EncodedRecords,
    Encoder,
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


def _json_reader() -> Callable[[bytes], Any]:
    """How reports and page files are parsed: orjson where it is installed (the export-speed extra; 2.3
    times as fast as json on a report, a quarter of an export's work), else json. What orjson
    refuses and json reads (NaN, a lone surrogate escaped in a file's name) is read by json: a
    report either reads the same or is unreadable with both."""
    try:
        orjson = importlib.import_module("orjson")
    except ModuleNotFoundError:
        return json.loads

    def loads(data: bytes) -> Any:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return json.loads(data)

    return loads


_loads = _json_reader()
#: documents read ahead of the one being written, a worker: enough to keep every worker busy,
#: few enough that memory holds only a handful of documents whatever the folder's size
READ_AHEAD = 8
#: documents a worker reads in one task
READ_BATCH = 4
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
                   trusted_only: bool = False, workers: int | None = None) -> ExportCount:
    """Write the records of every document under ``results`` to ``out``; a partial file is never
    left under ``out``'s name (written beside it, renamed when complete). Documents are read by
    ``workers`` processes (default :func:`export_workers`; 0 or 1: in this one), their records
    written in the folder's order."""
    partial = out.with_name(out.name + ".partial")
    documents = records = 0
    unreadable: list[Path] = []
    workers = export_workers() if workers is None else workers
    try:
        with partial.open("wb") as stream, _reading(workers) as pool:
            writer = record_writer(export_format, stream)
            read = functools.partial(_read, encode=writer.encode, unit=unit, trusted_only=trusted_only)
            for document in _documents(results, read, unreadable, pool, READ_AHEAD * workers):
                documents += 1
                writer.write_encoded(document)
            writer.close()
            records = writer.rows
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return ExportCount(documents, records, tuple(unreadable))


def export_workers() -> int:
    """The processes that read documents: one a CPU this process may run on (reading a document,
    parsing its report and cutting its text, is most of an export's work, and parallel by document)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def record_writer(export_format: str, stream: IO[bytes]) -> RecordWriter:
    """The writer of ``export_format`` (:data:`EXPORT_FORMATS`) over ``stream``."""
    if export_format == "parquet":
        return ParquetWriter(stream)
    if export_format == "jsonl":
        return JsonlWriter(stream)
    raise ValueError(f"unknown export format {export_format!r}: one of {', '.join(EXPORT_FORMATS)}")


@contextlib.contextmanager
def _reading(workers: int) -> Iterator[concurrent.futures.Executor | None]:
    """A pool of ``workers`` processes to read documents in, or None (read here) for fewer than
    two. Forked where the system can (the workers start with this process's imports, nothing to
    load again); its work is cancelled when the export stops early."""
    if workers < 2:
        yield None
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context)
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class _Read:
    """A document read (in a worker): what places it (its archive's doc_id, its path inside) and
    its records, each under the member path it has inside the document (None: the document's
    own; --flat members follow it), named by the document's own name until the parent finds the
    archive it came out of."""

    origin: Origin
    parent_doc_id: str
    archive_path: str | None
    has_members: bool
    doc_id: str
    parts: list[tuple[str | None, EncodedRecords]]


def _documents(results: Path, read: Callable[[_Found], _Read | None], unreadable: list[Path],
               pool: concurrent.futures.Executor | None = None, ahead: int = 0) -> Iterator[EncodedRecords]:
    """Each document's records (``read``: encoded for the writer), folders in sorted order, an
    archive before its members. A member whose archive is not read yet (the bucket's
    results/<doc_id>/ come in doc_id order) waits until it is, so it is named by its archive's file
    and its path inside; one whose archive is not in the folder at all goes last, under its own
    name. A report that cannot be read goes on ``unreadable``. Documents are read in ``pool``
    where there is one, ``ahead`` of the one written at most, and placed here, in order."""
    origins: dict[str, Origin] = {}  # archives' doc_id -> their origin, for their members
    waiting: list[tuple[_Found, str]] = []  # members and their archive's doc_id
    for found, document in _in_order(read, _walk(results), pool, ahead):
        if document is None:
            unreadable.append(found.report_path)
        elif document.parent_doc_id and document.parent_doc_id not in origins:
            waiting.append((found, document.parent_doc_id))
        else:
            yield from _placed(document, origins)
    while waiting:
        ready = [item for item in waiting if item[1] in origins] or waiting
        waiting = [item for item in waiting if item not in ready]
        for found, document in _in_order(read, (found for found, _ in ready), pool, ahead):
            if document is None:
                unreadable.append(found.report_path)
            else:
                yield from _placed(document, origins)


def _in_order(read: Callable[[_Found], _Read | None], found: Iterable[_Found],
              pool: concurrent.futures.Executor | None, ahead: int) -> Iterator[tuple[_Found, _Read | None]]:
    """``read`` of each of ``found``, in order: in ``pool``, :data:`READ_BATCH` documents a task
    (a task costs this process about as much as reading a small document), at most ``ahead``
    documents in flight (read or being read, not yet handed on); or here, one at a time."""
    if pool is None:
        for item in found:
            yield item, read(item)
        return
    window = max(ahead // READ_BATCH, 1)
    pending: collections.deque[tuple[list[_Found], concurrent.futures.Future[list[_Read | None]]]]
    pending = collections.deque()
    items = iter(found)
    while batch := list(itertools.islice(items, READ_BATCH)):
        pending.append((batch, pool.submit(_read_each, read, batch)))
        if len(pending) >= window:
            head, future = pending.popleft()
            yield from zip(head, future.result(), strict=True)
    while pending:
        head, future = pending.popleft()
        yield from zip(head, future.result(), strict=True)


def _read_each(read: Callable[[_Found], _Read | None], found: list[_Found]) -> list[_Read | None]:
    return [read(item) for item in found]


def _placed(document: _Read, origins: dict[str, Origin]) -> Iterator[EncodedRecords]:
    """The document's records, named by its archive's file and its path inside where that archive
    was read (``origins``, which an archive joins for its own members)."""
    origin, parts = document.origin, document.parts
    if document.parent_doc_id in origins and document.archive_path:
        origin = origins[document.parent_doc_id].member(document.archive_path)
        parts = [(path, _named(records, origin.member(path) if path else origin)) for path, records in parts]
    if document.has_members:
        origins[document.doc_id] = origin
    for _, records in parts:
        yield records


def _named(document: EncodedRecords, origin: Origin) -> EncodedRecords:
    return document.renamed(source_name=origin.source_name, archive_path=origin.archive_path)


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


def _read(found: _Found, encode: Encoder, unit: str, trusted_only: bool) -> _Read | None:
    """The document's records, named by its own report and encoded for the writer (None: a report
    that cannot be read); in --flat output, its members' after (archive members, embedded files,
    attachments)."""
    try:
        report = _loads(found.report_path.read_bytes())
    except (OSError, ValueError):
        report = None
    if not isinstance(report, dict):
        return None
    source = report.get("source") or {}
    path = source.get("archive_path")
    origin = Origin(str(source.get("name") or found.report_path.parent.name), path)
    members = report.get("members") or []
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
    parts: list[tuple[str | None, EncodedRecords]] = [
        (None, encode(document_records(report, bodies, origin, unit, trusted_only)))]
    if found.flat and members:  # --flat keeps members only in the document's report and text
        parts.extend((path, encode(records))
                     for path, records in _flat_members(report, member_texts, origin, unit, trusted_only))
    return _Read(origin, str(source.get("parent_doc_id") or ""), path, bool(members),
                 str(report.get("doc_id") or ""), parts)


def _page_files(folder: Path) -> Iterator[PageBody]:
    for path in sorted(folder.glob("*.json"), key=lambda p: (len(p.stem), p.stem)):
        yield PageBody.from_page_file(_loads(path.read_bytes()))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _flat_members(report: dict[str, Any], texts: dict[str, str], origin: Origin, unit: str,
                  trusted_only: bool) -> Iterator[tuple[str, DocumentRecords]]:
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
        yield path, document_records(member_report, bodies, origin.member(path), unit, trusted_only)
