"""The workflow's steps as plain functions over an ObjectStore.

Each Lambda handler is one call into here; ``process_document`` chains the same calls for
`papersift extract`, routed by the same ``Plan.route`` the workflow's Choice states mirror.
Steps take and return the models of ``papersift.steps`` (the Step Functions state) and keep
page text in the store under ``work/<doc_id>/``, never in the state.
"""

from __future__ import annotations

import functools
import io
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papersift import __version__, archives, cleaning, formats
from papersift.content import PageContent
from papersift.errors import (
    ContinueBatchError,
    DeadlineExceededError,
    EmptyInputError,
    EngineCrashError,
    InputError,
    LimitExceededError,
    OcrThrottledError,
    PapersiftError,
    UnsupportedFormatError,
    input_error_code,
)
from papersift.isolation import Limits, UnitFailure, run_once, run_units
from papersift.layout import (
    BINARY_CONTENT_TYPE,
    CLEAN_TEXT_FILE,
    HTML_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    MARKDOWN_CONTENT_TYPE,
    MARKDOWN_FILE,
    PDF_CONTENT_TYPE,
    REPORT_FILE,
    REPORT_PAGE_FILE,
    TEXT_CONTENT_TYPE,
    TEXT_FILE,
    members_prefix,
    page_file,
    results_prefix,
)
from papersift.ledger import (
    Invocation,
    Usage,
    cost_ledger,
    load_usage,
    merge_ledgers,
    record_usage,
    workflow_transitions,
)
from papersift.listing import listing_attributes
from papersift.report import (
    TRUNCATION_CODES,
    TRUSTED_DOCUMENT_STATUSES,
    DocumentStatus,
    ErrorRecord,
    ExtractionReport,
    MemberReport,
    PageReport,
    PageStatus,
    limit_code_of,
    status_for_error,
)
from papersift.settings import OCR_OFF, Settings
from papersift.sniff import PICTURE_KINDS, FileType, sniff
from papersift.steps import (
    ARCHIVE,
    PICTURE,
    READY,
    UNPACK_LEVELS,
    ArchiveListing,
    AssembleRequest,
    Batch,
    DocumentOptions,
    DocumentRef,
    ExtractResult,
    MemberEntry,
    OcrItem,
    OcrPlanRequest,
    OcrRequest,
    Plan,
    Route,
    StepError,
    UnpackRequest,
    UnpackResult,
    document_id,
    manifest_json,
    read_manifest,
    source_name_of,
)
from papersift.storage import ObjectStore
from papersift.workfiles import (
    OCR_INPUT_PDF,
    OCR_INPUT_SOURCE,
    Source,
    batches_key,
    error_key,
    errors_prefix,
    get_json,
    member_items_key,
    members_key,
    ocr_input_key,
    ocr_prefix,
    page_key,
    pages_prefix,
    plan_key,
    put_json,
    put_model,
    read_source,
)
from papersift.workfiles import read_ocr_page as read_ocr_page_file

if TYPE_CHECKING:  # the OCR stage and the report page load when a step needs them (cold starts)
    from papersift.ocr.pages import OcrEngines
    from papersift.report_page import Thumbnail

PAGE_SEPARATOR = "\f"


# -- plan ------------------------------------------------------------------------------


def plan_document(store: ObjectStore, request: DocumentRef, settings: Settings,
                  invocation: Invocation | None = None) -> Plan:
    """Sniff the file and cut it into page batches. Bad input ends here with a final status
    and a reason instead of an exception, so the workflow records it."""
    started = time.perf_counter()
    doc_id, key = request.doc_id, request.key
    found: dict[str, Any] = {"status": READY, "clean_text": settings.clean_text}
    try:
        # refuse an oversized drop before reading it: it would not fit the Lambda's memory
        found["size"] = store.size(key)
        if found["size"] > settings.max_file_bytes:
            raise LimitExceededError(f"file is {found['size']} bytes, over max_file_bytes={settings.max_file_bytes}")
        source = read_source(store, key, settings)
        found.update(clean_text=source.settings.clean_text, extract_tables=source.settings.extract_tables)
        file_type = sniff(source.data, request.source_name)
        found.update(kind=file_type.kind, mime=file_type.mime, detected_by=file_type.detected_by)
        if file_type.kind == "empty":
            raise EmptyInputError("the file is empty (0 bytes)")
        if file_type.is_archive:
            found["status"] = ARCHIVE
        elif not formats.is_supported(file_type):
            raise UnsupportedFormatError(f"no extractor for {file_type.kind} ({file_type.mime})")
        else:
            # in a worker: pdfium parses the whole file here, the first reader a hostile PDF meets
            pages = run_once(functools.partial(formats.count_pages, source.data, file_type, source.settings),
                             Limits(source.settings.page_seconds, source.settings.unit_memory_mb))
            if file_type.is_picture and source.settings.ocr_mode != OCR_OFF:
                # no text layer to read: the frames go straight to OCR (plan_ocr lists them)
                found.update(status=PICTURE, page_count=pages or 0)
            else:
                # pages beyond max_pages get no batch (and no work file): the verdict says they exist
                wanted = None if pages is None else min(pages, source.settings.max_pages)
                batches = page_batches(request, file_type.kind, wanted, source.settings)
                found.update(page_count=pages or 0, batches=batches, batch_count=len(batches),
                             use_distributed_map=len(batches) > settings.distributed_map_threshold)
    except PapersiftError as exc:
        found.update(status=str(status_for_error(exc.code)), reason=str(exc), error_code=exc.code, batches=[],
                     batch_count=0, use_distributed_map=False)
    plan = Plan(**request.ref.model_dump(), **found, manifest_key=batches_key(doc_id),
                max_concurrency=settings.max_concurrency, seconds=round(time.perf_counter() - started, 4))
    if plan.use_distributed_map:
        store.put(plan.manifest_key, manifest_json(plan.batches), JSON_CONTENT_TYPE)
    put_model(store, plan_key(doc_id), plan)
    if invocation is not None:
        record_usage(store, doc_id, invocation.usage(plan.seconds))
    if plan.use_distributed_map:
        # the Distributed Map reads batches from the manifest: keep the state small
        plan = plan.model_copy(update={"batches": []})
    return plan


def page_batches(document: DocumentRef, kind: str, pages: int | None, settings: Settings) -> list[Batch]:
    """``page_batch_size`` pages per batch; whole-document formats (``pages`` None) are one
    batch whose units are counted on extraction."""
    base = {"doc_id": document.doc_id, "bucket": document.bucket, "key": document.key, "kind": kind}
    if pages is None:
        return [Batch(**base, first_page=1, last_page=0, batch_index=0)]
    size = settings.page_batch_size
    return [Batch(**base, first_page=first, last_page=min(first + size - 1, pages), batch_index=i)
            for i, first in enumerate(range(1, pages + 1, size))]


# -- unpack (archives) -------------------------------------------------------------------


def unpack_archive(store: ObjectStore, request: UnpackRequest, settings: Settings, scratch: Path,
                   invocation: Invocation | None = None) -> UnpackResult:
    """Unpack an archive (nested ones included) and upload each member as a document of
    its own under ``members/<doc_id>/<n>/<name>`` (``member_object_key``). Every member, processed or
    not, is recorded in ``work/<doc_id>/members.json``; the ones to process are the returned items."""
    started = time.perf_counter()
    doc_id = request.doc_id
    local_copy = scratch / "archive"
    metadata = store.download_file(request.key, local_copy)
    doc_settings = DocumentOptions.from_metadata(metadata).apply(settings)
    result = archives.unpack(local_copy, request.plan.kind, scratch / "members",
                             archives.ArchiveLimits.from_settings(doc_settings), doc_settings.passwords,
                             name=request.source_name)
    members: list[MemberEntry] = []
    items: list[DocumentRef] = []
    for index, member in enumerate(result.members):
        entry = MemberEntry.model_validate(member.to_dict())
        if member.status is archives.MemberStatus.EXTRACTED and member.local_path is not None:
            member_key = member_object_key(doc_id, index, member.path)
            # the upload's options (passwords, tables) apply to its members too
            store.upload_file(member.local_path, member_key, metadata=dict(metadata))
            member.local_path.unlink()
            item = DocumentRef(doc_id=document_id(request.bucket, member_key), bucket=request.bucket, key=member_key,
                               source_name=source_name_of(member.path), parent_doc_id=doc_id,
                               archive_path=member.path)
            entry = entry.model_copy(update={"doc_id": item.doc_id})
            items.append(item)
        members.append(entry)
    listing = ArchiveListing(status=str(result.status), reason=result.reason, unlisted=result.unlisted,
                             members=members)
    put_model(store, members_key(doc_id), listing)
    if invocation is not None:
        record_usage(store, doc_id, invocation.usage(time.perf_counter() - started))
    store.put(member_items_key(doc_id), manifest_json(items), JSON_CONTENT_TYPE)
    # an archive member's members are an inline Map inside its iteration (no Distributed Map there)
    distributed = request.parent_doc_id is None and len(items) > settings.distributed_map_threshold
    return UnpackResult(status=listing.status, reason=listing.reason, unlisted=listing.unlisted,
                        member_count=len(members), item_count=len(items), use_distributed_map=distributed,
                        manifest_key=member_items_key(doc_id), max_concurrency=settings.max_concurrency,
                        items=[] if distributed else items)


def member_object_key(doc_id: str, index: int, path: str) -> str:
    """``members/<archive doc_id>/<n>/<file name>``: the member's place in the listing keeps every key
    unique and short whatever the names (``x.txt`` beside ``x.txt/report.json``, names a local
    directory store cannot nest, paths longer than S3's 1,024 bytes); its path inside the archive
    travels as ``archive_path``, its file name stays readable at the end of the key."""
    return f"{members_prefix(doc_id)}{index:05d}/{source_name_of(path) or 'unnamed'}"


# -- extract ---------------------------------------------------------------------------


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
            for page, ocr_input in _paged_units(source, file_type, limits, first, last):
                if page.ocr_scope:
                    # the OCR input first: a page JSON written means its input is too (a retry resumes after it)
                    _put_ocr_input(store, doc_id, page.number, ocr_input)
                    wanted += 1
                put_json(store, page_key(doc_id, page.number), page.to_dict())
                written.append(page)
                if time_left is not None and page.number < last and time_left() < limits.seconds + TIME_MARGIN:
                    raise ContinueBatchError(f"batch {batch.batch_index}: {len(written)} page(s) written, the "
                                             f"rest (from page {page.number + 1}) needs a fresh invocation")
        else:
            whole = functools.partial(formats.extract_units, source.data, file_type, source.settings)
            for page in run_once(whole, limits):
                put_json(store, page_key(doc_id, page.number), page.to_dict())
                written.append(page)
    except (InputError, EngineCrashError) as exc:
        # the file is at fault: record why, the assemble step turns it into the document status
        put_json(store, error_key(doc_id, batch.batch_index),
                 ErrorRecord.from_exception(exc).__dict__)
        return ExtractResult(batch_index=batch.batch_index, pages=len(written), chars=0, error=exc.code)
    if invocation is not None:
        record_usage(store, doc_id, invocation.usage(time.perf_counter() - started), batch.batch_index)
    return ExtractResult(batch_index=batch.batch_index, pages=len(written),
                         chars=sum(p.report.char_count for p in written), ocr_pages=wanted, needs_ocr=wanted > 0)


#: seconds kept in hand after the last page a batch starts: writing it, and the handler's return
TIME_MARGIN = 5.0


def _paged_units(source: Source, file_type: FileType, limits: Limits, first: int,
                 last: int) -> Iterator[tuple[PageContent, bytes | None]]:
    """Pages first..last (to the document's end) read in a worker process, each with its OCR input
    when OCR should read it; a page the worker could not finish is a failed page saying why."""
    opened = functools.partial(formats.open_paged, source.data, file_type, source.settings)
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
    report = PageReport(number=number, status=PageStatus.FAILED, engine=None, char_count=0, confidence=0.0,
                        reason=f"page {number} {error}" if isinstance(error, DeadlineExceededError)
                        else f"page {number} could not be read: {error}",
                        signals=[error.code], errors=[record])
    return PageContent(number=number, text="", report=report)


def _put_ocr_input(store: ObjectStore, doc_id: str, number: int, cut: bytes | None) -> None:
    """What OCR reads of a page: the page as a one-page PDF (small, and Textract reads it as is),
    or a marker saying to draw the page from the whole file (pdfium could not cut it)."""
    if cut is not None:
        store.put(ocr_input_key(doc_id, number, OCR_INPUT_PDF), cut, PDF_CONTENT_TYPE)
    else:
        store.put(ocr_input_key(doc_id, number, OCR_INPUT_SOURCE), b"", BINARY_CONTENT_TYPE)


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


# -- assemble --------------------------------------------------------------------------


def load_pages(store: ObjectStore, doc_id: str) -> list[PageContent]:
    """The document's pages in page order: the text layer's, with OCR's pages laid over them
    (a picture's pages come from OCR alone)."""
    pages = {page.number: page for page in (PageContent.from_dict(get_json(store, k))
                                             for k in store.list_keys(pages_prefix(doc_id))
                                             if k.endswith(".json"))}
    for key in store.list_keys(f"{ocr_prefix(doc_id)}pages/"):
        if key.endswith(".json"):
            page, _ = read_ocr_page_file(store, key)
            pages[page.number] = page
    return [pages[number] for number in sorted(pages)]


def assemble_document(store: ObjectStore, request: AssembleRequest, settings: Settings,
                      invocation: Invocation | None = None, page_files: bool = True) -> ExtractionReport:
    """Join the pages into text.txt, document.md and report.json under results/<doc_id>/, with
    pages/<n>.json beside them unless ``page_files`` is False (a caller that keeps none of them)."""
    started = time.perf_counter()
    doc_id, failure = request.doc_id, request.error
    plan = request.plan
    if plan is None and store.exists(plan_key(doc_id)):  # a Catch target: the plan step may have finished
        plan = Plan.model_validate_json(store.get(plan_key(doc_id)))
    if plan is not None and plan.route() is Route.UNPACK and failure is None:
        return _assemble_archive(store, request, plan, settings, started, invocation)
    pages = load_pages(store, doc_id)
    errors = [ErrorRecord(**get_json(store, k)) for k in store.list_keys(errors_prefix(doc_id))]
    report = _new_report(request, plan, settings)
    report.pages = [p.report for p in pages] + _skipped_pages(plan, pages, settings.max_pages)
    report.page_count = len(report.pages)
    report.errors = errors
    report.engines = dict(Counter(p.report.engine for p in pages if p.report.engine))
    report.char_count = sum(p.report.char_count for p in pages)
    report.status, report.reason = _document_verdict(plan, pages, errors, failure, settings.max_pages)
    if failure is not None:
        report.errors.append(ErrorRecord(code=input_error_code(failure.error) or failure.error, reason=failure.reason))
    elif plan is not None and plan.error_code and plan.route() is Route.ASSEMBLE:
        report.errors.append(ErrorRecord(code=plan.error_code, reason=plan.reason))
    report.timings = {"plan": plan.seconds if plan else 0.0,
                      "extract_pages": round(sum(p.report.seconds for p in pages), 4)}
    write_results(store, report, pages, page_files)
    _write_clean_text(store, report.doc_id, PAGE_SEPARATOR.join(p.text for p in pages), plan, settings)
    usage = [*load_usage(store, doc_id), *_ocr_usage(store, doc_id)]
    ocr_items = sum(1 for _ in store.list_keys(f"{ocr_prefix(doc_id)}pages/"))
    transitions = workflow_transitions(plan, request.parent_doc_id is not None, ocr_items)
    return _finish(store, report, started, pages, _thumbnails(store, request, report, settings),
                   ledger=lambda seconds: cost_ledger(report.pages, [*usage, *_own_usage(invocation, seconds)],
                                                      transitions, settings,
                                                      tables=plan.extract_tables if plan else False,
                                                      paged=plan is not None and plan.kind in formats.PAGED_KINDS))


def _ocr_usage(store: ObjectStore, doc_id: str) -> list[Usage]:
    found = (read_ocr_page_file(store, key)[1] for key in store.list_keys(f"{ocr_prefix(doc_id)}pages/"))
    return [usage for usage in found if usage is not None]


def _own_usage(invocation: Invocation | None, seconds: float) -> list[Usage]:
    return [invocation.usage(seconds)] if invocation is not None else []


def _new_report(document: DocumentRef, plan: Plan | None, settings: Settings) -> ExtractionReport:
    source: dict[str, Any] = {"bucket": document.bucket, "key": document.key, "name": document.source_name,
                              "size": plan.size if plan else 0}
    if document.parent_doc_id:
        source.update(parent_doc_id=document.parent_doc_id, archive_path=document.archive_path)
    return ExtractionReport(
        doc_id=document.doc_id,
        source=source,
        detected_type=plan.kind if plan else "unknown",
        mime_type=plan.mime if plan else "",
        detected_by=plan.detected_by if plan else "",
        status=DocumentStatus.FAILED,  # until the verdict: the model refuses a status that is none
        reason="",
        page_count=0,
        settings=settings.public_dict(),
        papersift_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _finish(store: ObjectStore, report: ExtractionReport, started: float, pages: list[PageContent] | None = None,
            thumbnails: list[Thumbnail] | None = None,
            ledger: Callable[[float], dict[str, Any]] | None = None) -> ExtractionReport:
    report.timings["assemble"] = round(time.perf_counter() - started, 4)
    if ledger is not None:  # last: the ledger counts assemble's own time too
        report.cost = ledger(time.perf_counter() - started)
    from papersift.report_page import render_report_page  # Jinja2: only assemble needs it

    page = render_report_page(report, {p.number: p.text for p in pages or []}, thumbnails or [])
    store.put(f"{results_prefix(report.doc_id)}{REPORT_PAGE_FILE}", page.encode("utf-8"), HTML_CONTENT_TYPE)
    # last: a report stored means every other result object is there (the table item comes after)
    put_json(store, f"{results_prefix(report.doc_id)}{REPORT_FILE}", report.to_dict())
    return report


def _thumbnails(store: ObjectStore, document: DocumentRef, report: ExtractionReport,
                settings: Settings) -> list[Thumbnail]:
    """report.html's pictures of a PDF's or a picture's suspect pages: the one time assemble reads
    the source, and only when there is a suspect page to show."""
    from papersift.report_page import pdf_thumbnails, picture_thumbnails, thumbnail_pages

    picture = report.detected_type in PICTURE_KINDS
    if (report.detected_type != "pdf" and not picture) or not thumbnail_pages(report):
        return []
    try:
        data, metadata = store.get_with_metadata(document.key)
        limits = Limits(settings.page_seconds, settings.unit_memory_mb)
        if picture:
            return run_once(functools.partial(picture_thumbnails, report, data), limits)
        passwords = DocumentOptions.from_metadata(metadata).apply(settings).passwords
        return run_once(functools.partial(pdf_thumbnails, report, data, passwords), limits)
    except Exception:  # pictures are a courtesy: a source gone or unreadable must never fail the result
        return []


def member_tag(path: str) -> str:
    """The line that precedes each member's text in an archive's text.txt."""
    return f"=== {path} ==="


def _assemble_archive(store: ObjectStore, request: AssembleRequest, plan: Plan, settings: Settings,
                      started: float, invocation: Invocation | None) -> ExtractionReport:
    """An archive's result is its members': their text under tag lines, and one member
    entry per archive member, with the member document's own status where it was processed."""
    doc_id = request.doc_id
    report = _new_report(request, plan, settings)
    listing = ArchiveListing(status="limit_exceeded",
                             reason=f"the archive was not unpacked: it is nested in archive members "
                                    f"deeper than the workflow unpacks ({UNPACK_LEVELS} levels)")
    if store.exists(members_key(doc_id)):
        listing = ArchiveListing.model_validate_json(store.get(members_key(doc_id)))
    # members' text and Markdown go straight into one buffer each, and the clean text is cleaned
    # member by member: a 20,000-member archive held its text four times over at once (the parts,
    # their join, its bytes, the join again for cleaning) and cleaning listed every character
    text_out, markdown_out = _Joined(), _Joined()
    cleaned: list[str] | None = [] if _wants_clean_text(plan, settings) else None
    ledgers: list[dict[str, Any]] = []
    codes: list[str] = []  # why members were cut or left out, in listing order
    if listing.status != str(archives.ArchiveStatus.OK):
        codes.append(archives.limit_code(listing.reason) if listing.status == str(archives.ArchiveStatus.LIMIT_EXCEEDED)
                     else listing.status)
    for entry in listing.members:
        member = MemberReport(path=entry.path, status=entry.status, reason=entry.reason, size=entry.size,
                              doc_id=entry.doc_id, original_name=entry.original_name)
        member_prefix = results_prefix(member.doc_id) if member.doc_id else ""
        if member.doc_id and store.exists(member_prefix + REPORT_FILE):
            member_report = ExtractionReport.from_dict(get_json(store, member_prefix + REPORT_FILE))
            member.status, member.reason = member_report.status, member_report.reason
            member.detected_type, member.page_count = member_report.detected_type, member_report.page_count
            if member_report.status == DocumentStatus.LIMIT_EXCEEDED:
                codes.append(member_report.error_code or "limit_exceeded")
            report.page_count += member_report.page_count
            report.char_count += member_report.char_count
            ledgers.append(member_report.cost)
            for engine, count in member_report.engines.items():
                report.engines[engine] = report.engines.get(engine, 0) + count
            if member_report.char_count:  # a member without text adds no tag line, only its entry
                text = member_tag(member.path) + "\n" + store.get(member_prefix + TEXT_FILE).decode("utf-8")
                text_out.add(text.encode("utf-8"))
                markdown_out.add(f"## {member.path}\n\n".encode() + store.get(member_prefix + MARKDOWN_FILE))
                if cleaned is not None:
                    cleaned.append(cleaning.clean_text(text, remove_stopwords=True))
        elif member.doc_id:
            member.status, member.reason = str(DocumentStatus.FAILED), "member was not processed (no report)"
        elif member.status == str(archives.MemberStatus.SKIPPED_LIMIT):
            codes.append(archives.limit_code(member.reason))
        report.members.append(member)
    report.status, report.reason = _archive_verdict(listing, report.members)
    if codes and report.status not in TRUSTED_DOCUMENT_STATUSES:
        limit_codes = [c for c in codes if c in TRUNCATION_CODES]
        specific = [c for c in limit_codes if c != "limit_exceeded"]  # a bomb's name over the generic code
        code = (specific or limit_codes)[0] if report.status == DocumentStatus.LIMIT_EXCEEDED and limit_codes \
            else codes[0]
        report.errors.append(ErrorRecord(code=code, reason=report.reason))
    prefix = results_prefix(doc_id)
    store.put(prefix + TEXT_FILE, text_out.value(), TEXT_CONTENT_TYPE)
    store.put(prefix + MARKDOWN_FILE, markdown_out.value(), MARKDOWN_CONTENT_TYPE)
    if cleaned is not None:
        _put_clean_text(store, doc_id, cleaning.join_cleaned(cleaned))
    usage = load_usage(store, doc_id)
    transitions = workflow_transitions(plan, request.parent_doc_id is not None, 0)

    def ledger(seconds: float) -> dict[str, Any]:
        own = cost_ledger([], [*usage, *_own_usage(invocation, seconds)], transitions, settings)
        return merge_ledgers([own, *ledgers])

    return _finish(store, report, started, ledger=ledger)


def _write_clean_text(store: ObjectStore, doc_id: str, text: str, plan: Plan | None, settings: Settings) -> None:
    """text.clean.txt for indexing (accents folded, pt/en/es stopwords and noise removed);
    text.txt itself is never altered."""
    if _wants_clean_text(plan, settings):
        _put_clean_text(store, doc_id, cleaning.clean_text(text, remove_stopwords=True))


def _wants_clean_text(plan: Plan | None, settings: Settings) -> bool:
    return plan.clean_text if plan else settings.clean_text


def _put_clean_text(store: ObjectStore, doc_id: str, cleaned: str) -> None:
    store.put(results_prefix(doc_id) + CLEAN_TEXT_FILE, cleaned.encode("utf-8"), TEXT_CONTENT_TYPE)


class _Joined:
    """Parts joined by a blank line as they come, as UTF-8 bytes."""

    def __init__(self) -> None:
        self._buffer = io.BytesIO()

    def add(self, part: bytes) -> None:
        if self._buffer.tell():
            self._buffer.write(b"\n\n")
        self._buffer.write(part)

    def value(self) -> bytes:
        return self._buffer.getvalue()


#: unpack statuses that are no problem: a nested archive whose members are listed on their own
_UNPACK_ONLY = frozenset({str(archives.MemberStatus.EXPANDED)})


def _archive_verdict(listing: ArchiveListing, members: list[MemberReport]) -> tuple[str, str]:
    documents = [m for m in members if m.doc_id]
    archive_ok = listing.status == str(archives.ArchiveStatus.OK)
    if not documents:
        if archive_ok:
            status = DocumentStatus.EMPTY if not members else DocumentStatus.NEEDS_REVIEW
        else:
            status = status_for_error(listing.status)
        return str(status), listing.reason or f"no member could be extracted ({len(members)} listed)"
    untrusted = [m for m in documents if m.status not in TRUSTED_DOCUMENT_STATUSES]
    not_extracted = [m for m in members if not m.doc_id and m.status not in _UNPACK_ONLY]
    if archive_ok and not not_extracted and all(m.status == "empty" for m in documents):
        return str(DocumentStatus.EMPTY), f"every member ({len(documents)}) is empty"
    limits = {str(DocumentStatus.LIMIT_EXCEEDED), str(archives.MemberStatus.SKIPPED_LIMIT)}
    limited = [m for m in (*untrusted, *not_extracted) if m.status in limits]
    problems = list(dict.fromkeys(f"{m.path}: {m.status}" for m in (*limited, *untrusted, *not_extracted)))
    if not archive_ok:
        problems.insert(0, f"archive {listing.status}: {listing.reason}")
    if problems:
        more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        # a member cut short or left out by a limit makes the whole archive's text incomplete
        cut = limited or listing.status == str(archives.ArchiveStatus.LIMIT_EXCEEDED)
        status = DocumentStatus.LIMIT_EXCEEDED if cut else DocumentStatus.NEEDS_REVIEW
        return str(status), "; ".join(problems[:5]) + more
    recovered = any(m.status == "partially_recovered" for m in documents)
    status = DocumentStatus.PARTIALLY_RECOVERED if recovered else DocumentStatus.CLEAN
    return str(status), f"all {len(documents)} member document(s) trusted"


#: pages past max_pages listed one by one in the report (a PDF may declare a million)
MAX_SKIPPED_PAGES_LISTED = 10_000


def _skipped_pages(plan: Plan | None, pages: list[PageContent], max_pages: int) -> list[PageReport]:
    """The pages past ``max_pages`` that got no batch, as ``skipped_limit`` entries (the first
    ``MAX_SKIPPED_PAGES_LISTED`` of them): the report lists every page the document has."""
    if plan is None or plan.page_count <= max_pages:
        return []
    read = {page.number for page in pages}
    last = min(plan.page_count, max_pages + MAX_SKIPPED_PAGES_LISTED)
    return [_skipped_page(number, max_pages) for number in range(max_pages + 1, last + 1) if number not in read]


def _skipped_page(number: int, max_pages: int) -> PageReport:
    return PageReport(number=number, status=PageStatus.SKIPPED_LIMIT, engine=None, char_count=0, confidence=0.0,
                      reason=f"beyond max_pages={max_pages}: not read", signals=["max_pages"])


def _limit_failed(pages: list[PageContent]) -> list[PageContent]:
    """Pages a limit stopped (past unit_memory_mb, past page_seconds): failed, but not damaged."""
    return [p for p in pages if p.report.status == PageStatus.FAILED and limit_code_of(p.report.signals)]


def _limit_verdict(plan: Plan | None, pages: list[PageContent], counts: Counter[str], max_pages: int) -> str:
    """Why the text is cut short (units truncated by a limit or a bomb, pages a limit stopped, pages
    beyond max_pages), or ''."""
    parts: list[str] = []
    truncated = [p for p in pages if p.report.status == PageStatus.TRUNCATED]
    if truncated:
        first = truncated[0].report
        parts.append(f"{len(truncated)} of {len(pages)} unit(s) cut short (unit {first.number}: {first.reason})")
    stopped = _limit_failed(pages)
    if stopped:
        first = stopped[0].report
        parts.append(f"{len(stopped)} of {len(pages)} page(s) stopped by a limit ({first.reason})")
    beyond = (plan.page_count - len(pages)) if plan is not None and plan.page_count > max_pages else 0
    skipped = counts[PageStatus.SKIPPED_LIMIT]
    if beyond > 0 or skipped:
        parts.append(f"the document has {max(plan.page_count if plan else 0, len(pages))} pages; only the first "
                     f"{max_pages} are extracted (max_pages)")
    return "; ".join(parts)


def _document_verdict(plan: Plan | None, pages: list[PageContent], errors: list[ErrorRecord],
                      failure: StepError | None, max_pages: int) -> tuple[str, str]:
    if failure is not None:
        code = input_error_code(failure.error)  # the input's fault, even when a step let it escape
        if code is not None:
            return str(status_for_error(code)), failure.reason
        return str(DocumentStatus.FAILED), "pipeline step failed: " + failure.reason
    if plan is not None and plan.route() is Route.ASSEMBLE:
        return plan.status, plan.reason
    if errors and not pages:
        return str(status_for_error(errors[0].code)), errors[0].reason
    if not pages:
        return str(DocumentStatus.EMPTY), "no text units were extracted"
    counts = Counter(p.report.status for p in pages)
    total = len(pages)
    bad = counts[PageStatus.CORRUPT_UNRECOVERABLE] + counts[PageStatus.FAILED]
    review = bad + counts[PageStatus.NEEDS_OCR] + counts[PageStatus.LOW_CONFIDENCE]
    if bad == total and not _limit_failed(pages):  # a page a limit stopped is not damaged
        return str(DocumentStatus.CORRUPT_UNRECOVERABLE), f"no page of {total} has usable text"
    limited = _limit_verdict(plan, pages, counts, max_pages)
    if limited:
        return str(DocumentStatus.LIMIT_EXCEEDED), limited
    if review:
        parts = [f"{n} page(s) {s}" for s, n in sorted(counts.items()) if s not in ("clean", "recovered", "ocr")]
        return str(DocumentStatus.NEEDS_REVIEW), "; ".join(parts) + f" of {total}"
    if not any(p.text.strip() for p in pages):
        engines = ", ".join(sorted({p.report.engine for p in pages if p.report.engine})) or "no engine"
        return str(DocumentStatus.EMPTY), f"no text found in {total} unit(s) ({engines})"
    if counts[PageStatus.RECOVERED] or counts[PageStatus.OCR]:
        how = [f"{counts[PageStatus.RECOVERED]} page(s) recovered by a fallback engine"] \
            if counts[PageStatus.RECOVERED] else []
        how += [f"{counts[PageStatus.OCR]} page(s) read by OCR"] if counts[PageStatus.OCR] else []
        return str(DocumentStatus.PARTIALLY_RECOVERED), f"{', '.join(how)} of {total}, all trusted"
    return str(DocumentStatus.CLEAN), f"all {total} page(s) have a trusted text layer"


def write_results(store: ObjectStore, report: ExtractionReport, pages: list[PageContent],
                  page_files: bool = True) -> None:
    prefix = results_prefix(report.doc_id)
    text = PAGE_SEPARATOR.join(p.text for p in pages)
    markdown = "\n\n".join(md for md in (p.to_markdown() for p in pages) if md)
    store.put(prefix + TEXT_FILE, text.encode("utf-8"), TEXT_CONTENT_TYPE)
    store.put(prefix + MARKDOWN_FILE, markdown.encode("utf-8"), MARKDOWN_CONTENT_TYPE)
    for page in pages if page_files else ():
        put_json(store, prefix + page_file(page.number), page.to_dict())


# -- the DynamoDB view of a report -------------------------------------------------------


def document_item(report: ExtractionReport) -> dict[str, Any]:
    """One flat item per document: enough to decide "trust" vs "review" without S3."""
    counts = Counter(p.status for p in report.pages)
    prefix = results_prefix(report.doc_id)
    item: dict[str, Any] = {
        "doc_id": report.doc_id,
        "status": report.status,
        "trusted": report.trusted,
        "reason": report.reason[:1000],
        "source_bucket": report.source.get("bucket", ""),
        "source_key": report.source.get("key", ""),
        "source_name": report.source.get("name", ""),
        "detected_type": report.detected_type,
        "page_count": report.page_count,
        "pages_clean": counts[PageStatus.CLEAN],
        "pages_recovered": counts[PageStatus.RECOVERED],
        "pages_needs_ocr": counts[PageStatus.NEEDS_OCR],
        "pages_ocr": counts[PageStatus.OCR],
        "pages_low_confidence": counts[PageStatus.LOW_CONFIDENCE],
        "pages_corrupt": counts[PageStatus.CORRUPT_UNRECOVERABLE],
        "pages_failed": counts[PageStatus.FAILED],
        "pages_truncated": counts[PageStatus.TRUNCATED],
        "error_code": report.error_code,
        "char_count": report.char_count,
        "text_key": prefix + TEXT_FILE,
        "markdown_key": prefix + MARKDOWN_FILE,
        "report_key": prefix + REPORT_FILE,
        "updated_at": report.created_at,
        "member_count": len(report.members),
        # the cost ledger (DynamoDB takes numbers as Decimal)
        "cost": _decimals(report.cost),
        **listing_attributes(report.status, report.source.get("parent_doc_id")),
    }
    for extra in ("parent_doc_id", "archive_path"):
        if report.source.get(extra):
            item[extra] = report.source[extra]
    return item


def _decimals(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {key: _decimals(item) for key, item in value.items()}
    return value


# -- all steps in one process ------------------------------------------------------------


def preload_for_workers() -> None:
    """Load once, in a process about to fork the workers that read pages, what each of them would
    otherwise load for itself on its first page: the PDF reader and the word lists (~20 ms a
    worker, one or more a batch)."""
    import codecs

    from papersift.formats import pdf  # noqa: F401
    from papersift.quality import lexicon

    lexicon()
    codecs.lookup("utf-16-le")  # pdfium's text comes as UTF-16


def process_document(store: ObjectStore, document: DocumentRef, settings: Settings, level: int = 0, *,
                     engines: OcrEngines | None = None, memory: Mapping[str, int] | None = None,
                     page_files: bool = True) -> ExtractionReport:
    """Plan, extract every batch (or unpack and process every member), read the pages that need
    OCR and assemble, in this process: what the workflow does, routed by the same ``Plan.route``
    and the batches' ``needs_ocr``, for `papersift extract`. ``level`` counts the archive steps above the
    document, as the workflow's nesting does. ``engines``: the OCR engines (none: pages that need
    OCR say so); ``memory``: the deployed functions' memory (MB) by name, to estimate Lambda usage;
    ``page_files``: see :func:`assemble_document`."""

    def invocation(function: str) -> Invocation | None:
        return Invocation(function, memory[function]) if memory and function in memory else None

    try:
        plan = plan_document(store, document, settings, invocation("plan"))
        route = plan.route(level)
        extracted: list[ExtractResult] = []
        if route is Route.EXTRACT:
            batches = plan.batches or read_manifest(store.get(plan.manifest_key), Batch)
            extracted = [extract_batch(store, batch, settings, invocation("extract")) for batch in batches]
        elif route is Route.UNPACK:
            with tempfile.TemporaryDirectory(prefix="papersift-unpack-") as scratch:
                unpacked = unpack_archive(store, UnpackRequest(**document.ref.model_dump(), plan=plan), settings,
                                          Path(scratch), invocation("unpack"))
            items = unpacked.items or read_manifest(store.get(unpacked.manifest_key), DocumentRef)
            for item in items:
                process_document(store, item, settings, level + 1, engines=engines, memory=memory,
                                 page_files=page_files)
        if route is Route.OCR or (route is Route.EXTRACT and any(result.needs_ocr for result in extracted)):
            _read_ocr_pages(store, document, plan, settings, engines, invocation)
        return assemble_document(store, AssembleRequest(**document.ref.model_dump(), plan=plan), settings,
                                 invocation("assemble"), page_files)
    except Exception as exc:  # mirror the workflow's Catch: record, never lose the file
        failure = AssembleRequest(**document.ref.model_dump(), error=StepError.from_exception(exc))
        return assemble_document(store, failure, settings, invocation("assemble"), page_files)


def _read_ocr_pages(store: ObjectStore, document: DocumentRef, plan: Plan, settings: Settings,
                    engines: OcrEngines | None, invocation: Callable[[str], Invocation | None]) -> None:
    """The workflow's OCR stage in this process: plan, then each page as the OCR Map iteration
    runs it, with its Catches (throttled past the retries: read without Textract; a failure:
    recorded on the page)."""
    from papersift.ocr.pages import OcrEngines
    from papersift.ocr.stage import plan_ocr, read_ocr_page

    ocr_plan = plan_ocr(store, OcrPlanRequest(**document.ref.model_dump(), plan=plan), settings,
                        invocation("ocr_plan"))
    items = read_manifest(store.get(ocr_plan.manifest_key), OcrItem) if ocr_plan.use_distributed_map \
        else ocr_plan.items
    engines = engines or OcrEngines(tesseract=None, textract=None)
    for item in items:
        request = OcrRequest(**item.model_dump())
        try:
            try:
                read_ocr_page(store, request, settings, engines, invocation("ocr"))
            except OcrThrottledError as exc:
                throttled = request.model_copy(update={"throttled": StepError.from_exception(exc)})
                read_ocr_page(store, throttled, settings, engines, invocation("ocr"))
        except Exception as exc:
            failed = request.model_copy(update={"error": StepError.from_exception(exc)})
            read_ocr_page(store, failed, settings, engines, invocation("ocr"))
