"""The extract step: one batch of pages read in a worker process into ``work/<doc_id>/pages/``,
the pages that need OCR with their OCR input beside them."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator

from papersift import formats
from papersift.content import PageContent
from papersift.errors import ContinueBatchError, DeadlineExceededError, EngineCrashError, InputError, PapersiftError
from papersift.isolation import Limits, UnitFailure, run_once, run_units
from papersift.layout import BINARY_CONTENT_TYPE, PDF_CONTENT_TYPE
from papersift.ledger import Invocation, record_usage
from papersift.ocr.routing import CAPPED_SCOPES
from papersift.report import ErrorRecord, PageReport, PageStatus
from papersift.settings import Settings
from papersift.sniff import FileType
from papersift.steps.contracts import Batch, ExtractResult
from papersift.storage import CountingStore, ObjectStore
from papersift.workfiles import (
    OCR_INPUT_PICTURES,
    Source,
    error_key,
    ocr_input_key,
    ocr_input_kind,
    ocr_pictures_bundle,
    page_key,
    put_json,
    read_source,
)


def extract_batch(store: ObjectStore, batch: Batch, settings: Settings,
                  invocation: Invocation | None = None,
                  time_left: Callable[[], float] | None = None) -> ExtractResult:
    """Extract one batch of pages into ``work/<doc_id>/pages/``. Pages already written by
    an earlier try are skipped, so a retried batch does only the missing work. Pages that need
    OCR get their OCR input under ``work/<doc_id>/ocr/inputs/``.

    The pages are read in a worker process (papersift.isolation): a page past ``page_seconds``,
    past ``unit_memory_mb`` or that crashes the library reading it ends failed with that reason
    and the next page goes on. Each page is written as soon as it is read; when ``time_left``
    (the Lambda's remaining seconds) cannot fit another page, ContinueBatchError hands the rest to
    the workflow's retry, which resumes after the last page written."""
    started = time.perf_counter()
    store = counted = CountingStore(store)
    doc_id, first, last = batch.doc_id, batch.first_page, batch.last_page
    if batch.paged:
        resume = first_unwritten_page(store, doc_id, first, last)
        if resume is None:
            return ExtractResult(batch_index=batch.batch_index, pages=last - first + 1, chars=0, skipped=True)
        first = resume
    source = read_source(store, batch.key, settings)
    file_type = FileType(kind=batch.kind, mime="", detected_by="plan")
    limits = Limits(source.settings.page_seconds, source.settings.unit_memory_mb)
    written: list[PageContent] = []
    wanted = 0
    try:
        if batch.paged:
            for page, ocr_input in _paged_units(source, file_type, limits, first, last, batch.sound_tree_pages):
                if page.ocr_scope:
                    # the OCR input first: a page JSON written means its input is too (a retry resumes after it)
                    _put_ocr_input(store, doc_id, page.number, ocr_input, page.ocr_scope in CAPPED_SCOPES)
                    wanted += 1
                put_json(store, page_key(doc_id, page.number), page.to_dict())
                written.append(page)
                if time_left is not None and page.number < last and time_left() < limits.seconds + TIME_MARGIN:
                    raise ContinueBatchError(f"batch {batch.batch_index}: {len(written)} page(s) written, the "
                                             f"rest (from page {page.number + 1}) needs a fresh invocation")
        else:
            whole = functools.partial(formats.extract_units, source.data, file_type, source.settings)
            for page in run_once(whole, limits):
                if page.ocr_scope:  # its embedded pictures (formats._pictures), before the page: as for a PDF page
                    store.put(ocr_input_key(doc_id, page.number, OCR_INPUT_PICTURES),
                              ocr_pictures_bundle([picture.data for picture in page.embedded]), BINARY_CONTENT_TYPE)
                    wanted += 1
                put_json(store, page_key(doc_id, page.number), page.to_dict())
                written.append(page)
    except (InputError, EngineCrashError) as exc:
        # the file is at fault: record why, the assemble step turns it into the document status
        put_json(store, error_key(doc_id, batch.batch_index),
                 ErrorRecord.from_exception(exc).__dict__)
        return ExtractResult(batch_index=batch.batch_index, pages=len(written), chars=0, error=exc.code)
    if invocation is not None:
        record_usage(store, doc_id, invocation.usage(time.perf_counter() - started, counted), batch.batch_index)
    return ExtractResult(batch_index=batch.batch_index, pages=len(written),
                         chars=sum(p.report.char_count for p in written), ocr_pages=wanted, needs_ocr=wanted > 0)


#: seconds kept in hand after the last page a batch starts: writing it, and the handler's return
TIME_MARGIN = 5.0


def _paged_units(source: Source, file_type: FileType, limits: Limits, first: int, last: int,
                 sound_tree_pages: int = 0) -> Iterator[tuple[PageContent, bytes | None]]:
    """Pages first..last (to the document's end) read in a worker process, each with its OCR input
    when OCR should read it; a page the worker could not finish is a failed page saying why."""
    opened = functools.partial(formats.open_paged, source.data, file_type, source.settings, sound_tree_pages)
    for number, result in run_units(opened, _read_page, range(first, last + 1), limits):
        if result is None:
            return
        if isinstance(result, UnitFailure):
            yield _after_crash(source, file_type, limits, number, result.error)
        else:
            yield result


def _after_crash(source: Source, file_type: FileType, limits: Limits, number: int,
                 error: PapersiftError) -> tuple[PageContent, bytes | None]:
    """A page whose worker died: a PDF's page that crashed its engine is read once more without
    pdfium (the native library the ladder starts with: the other engines are Python or a program
    of their own, and cannot take the worker down), in a fresh worker under the same limits. A page
    a limit stopped, or that the others cannot read either, ends failed with the first reason."""
    if file_type.kind != "pdf" or not isinstance(error, EngineCrashError):
        return _unfinished_page(number, error), None
    read = functools.partial(_read_page_without_pdfium, source.data, source.settings, number,
                             f"pdfium crashed on page {number} ({error})")
    try:
        found = run_once(read, limits)
    except Exception:  # the others failed on it too: the crash is its story
        found = None
    if found is None or found[0].report.status == PageStatus.FAILED:
        return _unfinished_page(number, error), None
    page, cut = found
    page.report.signals.append(error.code)
    page.report.errors.insert(0, ErrorRecord.from_exception(error, engine="pdfium", page=number))
    return page, cut


def _read_page_without_pdfium(data: bytes, settings: Settings, number: int,
                              why: str) -> tuple[PageContent, bytes | None] | None:
    """One page of a PDF read by the ladder without pdfium (module-level: a fork server's worker
    gets it pickled)."""
    from papersift.formats.pdf import PdfPages

    with PdfPages(data, settings, without_pdfium=why) as document:
        return _read_page(document, number)


def _read_page(document: formats.PagedDocument, number: int) -> tuple[PageContent, bytes | None] | None:
    """One page in the worker (module-level: a fork server's worker gets it pickled)."""
    if number > document.count:
        return None
    page = document.page(number)
    return page, document.ocr_input(number) if page.ocr_scope else None


def _unfinished_page(number: int, error: PapersiftError) -> PageContent:
    """A page its worker could not finish (deadline, memory, a crash): failed, with the reason."""
    record = ErrorRecord.from_exception(error, engine="worker", page=number)
    report = PageReport.without_text(number, PageStatus.FAILED,
                                     f"page {number} {error}" if isinstance(error, DeadlineExceededError)
                                     else f"page {number} could not be read: {error}",
                                     signals=[error.code], errors=[record])
    return PageContent(number=number, text="", report=report)


def _put_ocr_input(store: ObjectStore, doc_id: str, number: int, cut: bytes | None, check: bool) -> None:
    """What OCR reads of a page: the page as a one-page PDF (small, and Textract reads it as is),
    or a marker saying to draw the page from the whole file (pdfium could not cut it); ``check``:
    the page is read to check its text layer (its key says so, for plan_ocr's cap)."""
    key = ocr_input_key(doc_id, number, ocr_input_kind(check, cut is not None))
    if cut is not None:
        store.put(key, cut, PDF_CONTENT_TYPE)
    else:
        store.put(key, b"", BINARY_CONTENT_TYPE)


def first_unwritten_page(store: ObjectStore, doc_id: str, first: int, last: int) -> int | None:
    """The first page of ``first..last`` an earlier try did not write (None: all are written).

    Pages are written in order, so the written ones are a prefix of the range: one existence check
    for a fresh batch, a binary search (~log2 of the batch) for a retried one. Listing the pages
    written so far instead made every batch of an N-page document list up to N keys: quadratic.
    """
    if not store.exists(page_key(doc_id, first)):
        return first
    written, unwritten = first, last + 1  # written: known written; unwritten: known not (or past the end)
    while unwritten - written > 1:
        middle = (written + unwritten) // 2
        if store.exists(page_key(doc_id, middle)):
            written = middle
        else:
            unwritten = middle
    return unwritten if unwritten <= last else None


def preload_for_workers() -> None:
    """Load once, in a process about to fork the workers that read pages, what each of them would
    otherwise load for itself on its first page: the PDF reader, the word lists and the page
    records' validators (~20 ms and ~8 ms a worker, one or more a batch)."""
    import codecs

    from papersift.formats import pdf  # noqa: F401
    from papersift.quality import lexicon
    from papersift.report import EngineAttempt, ErrorRecord, OcrDetails, PageReport

    lexicon()
    # built on first use (deferred at import, for cold starts): else built again in every worker
    for record in (PageReport, EngineAttempt, ErrorRecord, OcrDetails):
        record.model_rebuild(force=True)
    codecs.lookup("utf-16-le")  # pdfium's text comes as UTF-16
