"""The assemble step: a document's pages (or an archive's members, or both for a PDF or an email
that holds files) joined into its results under
``results/<doc_id>/``, with the report and the document's verdict (``papersift.verdict``)."""

from __future__ import annotations

import functools
import io
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from papersift import __version__, archives, cleaning, formats, structure
from papersift.content import PageContent
from papersift.errors import input_error_code
from papersift.isolation import Limits, run_once
from papersift.layout import (
    CLEAN_TEXT_FILE,
    HTML_CONTENT_TYPE,
    MARKDOWN_CONTENT_TYPE,
    MARKDOWN_FILE,
    PAGE_SEPARATOR,
    REPORT_FILE,
    REPORT_PAGE_FILE,
    TEXT_CONTENT_TYPE,
    TEXT_FILE,
    member_tag,
    page_file,
    results_prefix,
)
from papersift.ledger import Invocation, Usage, cost_ledger, load_usage, merge_ledgers, workflow_transitions
from papersift.report import (
    TRUNCATION_CODES,
    TRUSTED_DOCUMENT_STATUSES,
    DocumentStatus,
    ErrorRecord,
    ExtractionReport,
    MemberReport,
    PageReport,
    PageStatus,
)
from papersift.settings import Settings
from papersift.sniff import PICTURE_KINDS
from papersift.steps.contracts import (
    UNPACK_LEVELS,
    ArchiveListing,
    AssembleRequest,
    DocumentOptions,
    DocumentRef,
    Plan,
    Route,
)
from papersift.storage import CountingStore, ObjectStore, Spool
from papersift.structure import OutlineEntry
from papersift.verdict import archive_verdict, document_verdict, holder_verdict
from papersift.workfiles import (
    errors_prefix,
    get_json,
    members_key,
    ocr_prefix,
    ocr_survey_key,
    outline_key,
    pages_prefix,
    plan_key,
    put_json,
)
from papersift.workfiles import read_ocr_page as read_ocr_page_file

if TYPE_CHECKING:  # the report page (Jinja2) loads when assemble writes it (cold starts)
    from papersift.report_page import Thumbnail


#: where a page is: a text-layer page file, an OCR page file, or a surveyed frame built in memory
PageSource = tuple[str, str] | PageContent


def _number_of(key: str) -> int:
    """A page file's number (``.../pages/00042.json``: 42): known from the listing, unread."""
    return int(key.rsplit("/", 1)[1].removesuffix(".json"))


def page_sources(store: ObjectStore, doc_id: str) -> dict[int, PageSource]:
    """Where each of the document's pages is, by number: the text layer's, with OCR's pages laid
    over them (a picture's pages come from OCR alone). Only keys: the pages are read one at a time
    by :func:`read_page`, so a 100,000-page document is never whole in memory."""
    sources: dict[int, PageSource] = {_number_of(k): ("text", k) for k in store.list_keys(pages_prefix(doc_id))
                                      if k.endswith(".json")}
    ocr = {_number_of(k): k for k in store.list_keys(f"{ocr_prefix(doc_id)}pages/") if k.endswith(".json")}
    sources.update((number, ("ocr", key)) for number, key in ocr.items())
    if store.exists(ocr_survey_key(doc_id)):  # a picture's blank and repeated frames, read by no OCR step
        from papersift.ocr.survey import FrameSurvey, surveyed_pages

        survey = FrameSurvey.from_dict(get_json(store, ocr_survey_key(doc_id)))
        repeated = {number: read_ocr_page_file(store, ocr[number])[0]
                    for number in set(survey.same_as.values()) if number in ocr}
        sources.update((page.number, page) for page in surveyed_pages(survey, repeated) if page.number not in ocr)
    return dict(sorted(sources.items()))


def read_page(store: ObjectStore, source: PageSource) -> PageContent:
    if isinstance(source, PageContent):
        return source
    kind, key = source
    return read_ocr_page_file(store, key)[0] if kind == "ocr" else PageContent.from_dict(get_json(store, key))


def load_pages(store: ObjectStore, doc_id: str) -> list[PageContent]:
    """The document's pages in page order, all at once (for a caller that needs them whole)."""
    return [read_page(store, source) for source in page_sources(store, doc_id).values()]


class _StoredTexts(Mapping[int, str]):
    """The pages' texts by number, each read from the store when asked for: the report page asks
    only for its suspect pages' texts."""

    def __init__(self, store: ObjectStore, sources: dict[int, PageSource]) -> None:
        self._store, self._sources = store, sources

    def __getitem__(self, number: int) -> str:
        return read_page(self._store, self._sources[number]).text

    def __iter__(self) -> Iterator[int]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)


def assemble_document(store: ObjectStore, request: AssembleRequest, settings: Settings,
                      invocation: Invocation | None = None, page_files: bool = True) -> ExtractionReport:
    """Join the pages into text.txt, document.md and report.json under results/<doc_id>/, with
    pages/<n>.json beside them unless ``page_files`` is False (a caller that keeps none of them)."""
    started = time.perf_counter()
    store = counted = CountingStore(store)
    doc_id, failure = request.doc_id, request.error
    plan = request.plan
    if plan is None and store.exists(plan_key(doc_id)):  # a Catch target: the plan step may have finished
        plan = Plan.model_validate_json(store.get(plan_key(doc_id)))
    if plan is not None and plan.route() is Route.UNPACK and failure is None:
        return _assemble_archive(counted, request, plan, settings, started, invocation)
    sources = page_sources(store, doc_id)
    structure_seconds = None
    blocks: Iterator[list[structure.Block]] | None = None
    if plan is not None and plan.kind == "pdf":
        # running heads are told by their repeating over the document: a PDF's pages are read once
        # for that, keeping only what the structure pass needs of each (its lines, not the page);
        # each page is read again as it is written, and given its blocks then
        structure_started = time.perf_counter()
        blocks = structure_blocks((read_page(store, source) for source in sources.values()), _outline(store, plan))
        structure_seconds = round(time.perf_counter() - structure_started, 4)
    with Spool() as text, Spool() as markdown:
        read = _write_pages(store, doc_id, sources, text, markdown, page_files, blocks)
        errors = [ErrorRecord(**get_json(store, k)) for k in store.list_keys(errors_prefix(doc_id))]
        report = _new_report(request, plan, settings)
        report.pages = read.reports + _skipped_pages(plan, read.reports, settings.max_pages)
        report.page_count = len(report.pages)
        report.errors = errors
        report.engines = dict(Counter(p.engine for p in read.reports if p.engine))
        report.char_count = sum(p.char_count for p in read.reports)
        report.status, report.reason = document_verdict(plan, read.reports, errors, failure, settings.max_pages,
                                                        read.has_text)
        if failure is not None:
            report.errors.append(ErrorRecord(code=input_error_code(failure.error) or failure.error,
                                             reason=failure.reason))
        elif plan is not None and plan.error_code and plan.route() is Route.ASSEMBLE:
            report.errors.append(ErrorRecord(code=plan.error_code, reason=plan.reason))
        report.timings = {"plan": plan.seconds if plan else 0.0,
                          "extract_pages": round(sum(p.seconds for p in read.reports), 4)}
        if structure_seconds is not None:
            report.timings["structure"] = structure_seconds
        held = _held_members(store, report, plan, settings) if failure is None else None
        prefix = results_prefix(doc_id)
        if held is not None:
            _append_joined(text, held.text.value())
            _append_joined(markdown, held.markdown.value())
        text.put(store, prefix + TEXT_FILE, TEXT_CONTENT_TYPE)
        markdown.put(store, prefix + MARKDOWN_FILE, MARKDOWN_CONTENT_TYPE)
    if held is not None and held.cleaned is not None:
        own_text = _own_text(store, sources)
        _put_clean_text(store, doc_id, cleaning.join_cleaned(
            [cleaning.clean_text(own_text, remove_stopwords=True, transliterator=settings.clean_text_transliterator),
             *held.cleaned]))
    elif _wants_clean_text(plan, settings):  # cleaning reads the whole text: only when asked for
        _write_clean_text(store, report.doc_id, _own_text(store, sources), plan, settings)
    usage = [*load_usage(store, doc_id), *_ocr_usage(store, doc_id)]
    ocr_items = sum(1 for _ in store.list_keys(f"{ocr_prefix(doc_id)}pages/"))
    transitions = workflow_transitions(plan, request.parent_doc_id is not None, ocr_items, settings.export_parquet)

    def ledger(seconds: float) -> dict[str, Any]:
        own = cost_ledger(report.pages, [*usage, *_own_usage(invocation, seconds, counted)], transitions, settings,
                          tables=plan.extract_tables if plan else False,
                          paged=plan is not None and plan.kind in formats.PAGED_KINDS,
                          member=request.parent_doc_id is not None)
        return merge_ledgers([own, *held.ledgers]) if held is not None and held.ledgers else own

    return _finish(store, report, started, _StoredTexts(store, sources), _thumbnails(store, request, report, settings),
                   ledger=ledger, preview=read.preview)


def _outline(store: ObjectStore, plan: Plan | None) -> list[OutlineEntry]:
    """The outline the plan kept (most PDFs have none: no request then)."""
    if plan is None or not plan.has_outline:
        return []
    return [OutlineEntry(**entry) for entry in get_json(store, outline_key(plan.doc_id))]


def mark_structure(pages: list[PageContent], outline: list[OutlineEntry]) -> None:
    """Give each page its structure blocks (running heads, page numbers, headings from the tags,
    the outline or the font sizes, paragraphs), decided over the whole document; units whose
    Markdown is their own are left alone, and OCR'd pages whose engine gave their layout
    (ocr/blocks.py) keep its blocks, running heads named."""
    for page, blocks in zip(pages, structure_blocks(pages, outline), strict=True):
        set_blocks(page, blocks)


def structure_blocks(pages: Iterable[PageContent], outline: list[OutlineEntry]) -> Iterator[list[structure.Block]]:
    """Per page of ``pages``, the structure blocks :func:`set_blocks` gives it: ``pages`` read
    through at once, keeping of each only what the document-wide decisions need (its body lines,
    hyphen breaks, line heights, tagged headings, bold lines and placed tables), not the page; the
    blocks made page by page as they are asked for."""
    lines: list[list[str]] = []
    breaks: list[list[list[str]]] = []
    heights: list[list[float]] = []
    tagged: list[list[OutlineEntry]] = []
    bold: list[list[int]] = []
    placed: list[list[structure.Block]] = []
    for page in pages:
        own = page.markdown is None
        page_lines = page.body_lines() if own else []
        lines.append(page_lines)
        breaks.append(page.hyphen_breaks)
        heights.append(page.line_heights if own else [])
        tagged.append(page.tag_headings if own else [])
        bold.append(page.bold_lines if own else [])
        placed.append(structure.table_blocks([(t.index, t.bbox, t.to_markdown()) for t in page.tables if t.bbox],
                                             page.line_boxes, page_lines) if page.line_boxes and own else [])
    return structure.iter_page_blocks(lines, outline, breaks, heights, tagged, bold, placed)


def set_blocks(page: PageContent, blocks: list[structure.Block]) -> None:
    """``page``'s structure blocks from :func:`structure_blocks`."""
    if page.picture_text_from is not None:
        structure.mark_picture_text(blocks, page.picture_text_from)
    if page.line_boxes:  # a text layer's lines with their boxes: its blocks boxed by them
        structure.box_blocks(blocks, page.line_boxes)
        page.blocks = blocks
    elif any(block.bbox is not None for block in page.blocks):
        # an OCR'd page keeps the paragraphs its engine's layout gave, with their boxes
        page.blocks = structure.set_apart_boxed(page.blocks, blocks)
    else:
        page.blocks = blocks


#: pages past max_pages listed one by one in the report (a PDF may declare a million)
MAX_SKIPPED_PAGES_LISTED = 10_000


def _skipped_pages(plan: Plan | None, pages: list[PageReport], max_pages: int) -> list[PageReport]:
    """The pages past ``max_pages`` that got no batch, as ``skipped_limit`` entries (the first
    ``MAX_SKIPPED_PAGES_LISTED`` of them): the report lists every page the document has."""
    if plan is None or plan.page_count <= max_pages:
        return []
    read = {page.number for page in pages}
    last = min(plan.page_count, max_pages + MAX_SKIPPED_PAGES_LISTED)
    return [PageReport.without_text(number, PageStatus.SKIPPED_LIMIT, f"beyond max_pages={max_pages}: not read",
                                    signals=["max_pages"])
            for number in range(max_pages + 1, last + 1) if number not in read]


def _ocr_usage(store: ObjectStore, doc_id: str) -> list[Usage]:
    found = (read_ocr_page_file(store, key)[1] for key in store.list_keys(f"{ocr_prefix(doc_id)}pages/"))
    return [usage for usage in found if usage is not None]


def _own_usage(invocation: Invocation | None, seconds: float, counted: CountingStore) -> list[Usage]:
    """Assemble's own, counted before its last writes: report.html and report.json."""
    return [invocation.usage(seconds, counted, puts_to_come=2)] if invocation is not None else []


def _new_report(document: DocumentRef, plan: Plan | None, settings: Settings) -> ExtractionReport:
    source: dict[str, Any] = {"bucket": document.bucket, "key": document.key, "name": document.source_name,
                              "size": plan.size if plan else 0}
    if document.parent_doc_id:
        source.update(parent_doc_id=document.parent_doc_id, archive_path=document.archive_path)
        if document.member_kind:
            source["member_kind"] = document.member_kind
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


def _finish(store: ObjectStore, report: ExtractionReport, started: float,
            page_texts: Mapping[int, str] | None = None, thumbnails: list[Thumbnail] | None = None,
            ledger: Callable[[float], dict[str, Any]] | None = None,
            preview: tuple[str, int] | None = None) -> ExtractionReport:
    report.timings["assemble"] = round(time.perf_counter() - started, 4)
    if ledger is not None:  # last: the ledger counts assemble's own time too
        report.cost = ledger(time.perf_counter() - started)
    from papersift.report_page import render_report_page  # Jinja2: only assemble needs it

    page = render_report_page(report, page_texts or {}, thumbnails or [], preview=preview)
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


def _assemble_archive(store: CountingStore, request: AssembleRequest, plan: Plan, settings: Settings,
                      started: float, invocation: Invocation | None) -> ExtractionReport:
    """An archive's result is its members': their text under tag lines, and one member
    entry per archive member, with the member document's own status where it was processed."""
    doc_id = request.doc_id
    report = _new_report(request, plan, settings)
    listing = ArchiveListing(status=archives.ArchiveStatus.LIMIT_EXCEEDED,
                             reason=f"the archive was not unpacked: it is nested in archive members "
                                    f"deeper than the workflow unpacks ({UNPACK_LEVELS} levels)")
    if store.exists(members_key(doc_id)):
        listing = ArchiveListing.model_validate_json(store.get(members_key(doc_id)))
    gathered = _gather_members(store, listing, report, plan, settings)
    report.page_count = sum(m.page_count for m in report.members)
    report.status, report.reason = archive_verdict(listing, report.members)
    _record_member_codes(report, gathered.codes)
    prefix = results_prefix(doc_id)
    store.put(prefix + TEXT_FILE, gathered.text.value(), TEXT_CONTENT_TYPE)
    store.put(prefix + MARKDOWN_FILE, gathered.markdown.value(), MARKDOWN_CONTENT_TYPE)
    if gathered.cleaned is not None:
        _put_clean_text(store, doc_id, cleaning.join_cleaned(gathered.cleaned))
    usage = load_usage(store, doc_id)
    transitions = workflow_transitions(plan, request.parent_doc_id is not None, 0, settings.export_parquet)

    def ledger(seconds: float) -> dict[str, Any]:
        own = cost_ledger([], [*usage, *_own_usage(invocation, seconds, store)], transitions, settings,
                          member=request.parent_doc_id is not None)
        return merge_ledgers([own, *gathered.ledgers])

    return _finish(store, report, started, ledger=ledger)


@dataclass
class _Members:
    """What a document's members add to its result: their tagged text and Markdown, their cleaned
    text (when asked for), their cost ledgers, and why some were cut or left out (listing order)."""

    text: _Joined = field(default_factory=lambda: _Joined())
    markdown: _Joined = field(default_factory=lambda: _Joined())
    cleaned: list[str] | None = None
    ledgers: list[dict[str, Any]] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)


def _gather_members(store: ObjectStore, listing: ArchiveListing, report: ExtractionReport, plan: Plan,
                    settings: Settings, *, holder: bool = False) -> _Members:
    """One member entry per listed member (an archive's, a PDF's or an email's: the same path for
    every kind), with the member document's own status where it was processed; their text under
    tag lines. Members' text goes straight into one buffer each, and the clean text is cleaned
    member by member: a 20,000-member archive held its text four times over at once otherwise (the
    parts, their join, its bytes, the join again for cleaning). ``holder``: a PDF's or an email's
    listing, for which holding no file is no problem."""
    gathered = _Members(cleaned=[] if _wants_clean_text(plan, settings) else None)
    transliterator = settings.clean_text_transliterator
    codes = gathered.codes
    if listing.status != archives.ArchiveStatus.OK and not (holder and listing.status == archives.ArchiveStatus.EMPTY):
        codes.append(archives.limit_code(listing.reason) if listing.status == archives.ArchiveStatus.LIMIT_EXCEEDED
                     else listing.status)
    for entry in listing.members:
        member = MemberReport(path=entry.path, status=entry.status, kind=entry.kind, reason=entry.reason,
                              size=entry.size, doc_id=entry.doc_id, original_name=entry.original_name)
        member_prefix = results_prefix(member.doc_id) if member.doc_id else ""
        if member.doc_id and store.exists(member_prefix + REPORT_FILE):
            member_report = ExtractionReport.from_dict(get_json(store, member_prefix + REPORT_FILE))
            member.status, member.reason = member_report.status, member_report.reason
            member.detected_type, member.page_count = member_report.detected_type, member_report.page_count
            if member_report.status == DocumentStatus.LIMIT_EXCEEDED:
                codes.append(member_report.error_code or "limit_exceeded")
            report.char_count += member_report.char_count
            gathered.ledgers.append(member_report.cost)
            for engine, count in member_report.engines.items():
                report.engines[engine] = report.engines.get(engine, 0) + count
            if member_report.char_count:  # a member without text adds no tag line, only its entry
                text = member_tag(member.path) + "\n" + store.get(member_prefix + TEXT_FILE).decode("utf-8")
                gathered.text.add(text.encode("utf-8"))
                gathered.markdown.add(f"## {member.path}\n\n".encode() + store.get(member_prefix + MARKDOWN_FILE))
                if gathered.cleaned is not None:
                    gathered.cleaned.append(cleaning.clean_text(text, remove_stopwords=True,
                                                                transliterator=transliterator))
        elif member.doc_id:
            member.status, member.reason = DocumentStatus.FAILED, "member was not processed (no report)"
        elif member.status == archives.MemberStatus.SKIPPED_LIMIT:
            codes.append(archives.limit_code(member.reason))
        report.members.append(member)
    return gathered


def _record_member_codes(report: ExtractionReport, codes: list[str]) -> None:
    """The error record of a result its members made untrusted: a bomb's name over the generic code."""
    if codes and report.status not in TRUSTED_DOCUMENT_STATUSES:
        limit_codes = [c for c in codes if c in TRUNCATION_CODES]
        specific = [c for c in limit_codes if c != "limit_exceeded"]
        code = (specific or limit_codes)[0] if report.status == DocumentStatus.LIMIT_EXCEEDED and limit_codes \
            else codes[0]
        report.errors.append(ErrorRecord(code=code, reason=report.reason))


def _held_members(store: ObjectStore, report: ExtractionReport, plan: Plan | None,
                  settings: Settings) -> _Members | None:
    """The members of a document that holds files (a PDF's embedded files, an email's attachments),
    gathered as an archive's are, and the verdict they leave on the document; None for the rest."""
    if plan is None or not plan.holds_files:
        return None
    listing = ArchiveListing(status=archives.ArchiveStatus.LIMIT_EXCEEDED,
                             reason=f"the document's files were not read: it is nested in members deeper than "
                                    f"the workflow unpacks ({UNPACK_LEVELS} levels)")
    if store.exists(members_key(report.doc_id)):
        listing = ArchiveListing.model_validate_json(store.get(members_key(report.doc_id)))
    held = _gather_members(store, listing, report, plan, settings, holder=True)
    report.status, report.reason = holder_verdict((report.status, report.reason),
                                                  archive_verdict(listing, report.members))
    _record_member_codes(report, held.codes)
    return held


def _write_clean_text(store: ObjectStore, doc_id: str, text: str, plan: Plan | None, settings: Settings) -> None:
    """text.clean.txt for indexing (accents folded, pt/en/es stopwords and noise removed);
    text.txt itself is never altered."""
    if _wants_clean_text(plan, settings):
        _put_clean_text(store, doc_id, cleaning.clean_text(text, remove_stopwords=True,
                                              transliterator=settings.clean_text_transliterator))


def _wants_clean_text(plan: Plan | None, settings: Settings) -> bool:
    return plan.clean_text if plan else settings.clean_text


def _put_clean_text(store: ObjectStore, doc_id: str, cleaned: str) -> None:
    store.put(results_prefix(doc_id) + CLEAN_TEXT_FILE, cleaned.encode("utf-8"), TEXT_CONTENT_TYPE)


class _Joined:
    """Parts joined by a blank line as they come, as UTF-8 bytes."""

    def __init__(self) -> None:
        self._buffer = io.BytesIO()

    def add(self, part: bytes) -> None:
        if not part:
            return
        if self._buffer.tell():
            self._buffer.write(b"\n\n")
        self._buffer.write(part)

    def value(self) -> bytes:
        return self._buffer.getvalue()


@dataclass
class _ReadPages:
    """What assemble keeps of the pages once their text is written: their reports, whether any has
    text, and the report page's preview (not the text itself)."""

    reports: list[PageReport]
    has_text: bool
    preview: tuple[str, int]


def _write_pages(store: ObjectStore, doc_id: str, sources: dict[int, PageSource], text: Spool, markdown: Spool,
                 page_files: bool, blocks: Iterator[list[structure.Block]] | None = None) -> _ReadPages:
    """Read the pages one at a time, in page order (each given its next structure blocks from
    ``blocks``, when given): their text into ``text`` (separated by form
    feeds), their Markdown into ``markdown`` (blank lines between), each page's file under the
    results (unless ``page_files`` is False); memory flat in page count."""
    from papersift.report_page import PageLimits, PreviewOf

    prefix = results_prefix(doc_id)
    separator = PAGE_SEPARATOR.encode("utf-8")
    reports: list[PageReport] = []
    has_text = False
    preview = PreviewOf(PageLimits().preview_chars)
    for index, source in enumerate(sources.values()):
        page = read_page(store, source)
        if blocks is not None:
            set_blocks(page, next(blocks))
        if index:
            text.write(separator)
        text.write(page.text.encode("utf-8"))
        md = page.to_markdown()
        if md:
            _append_joined(markdown, md.encode("utf-8"))
        if page_files:
            put_json(store, prefix + page_file(page.number), _results_page(page))
        reports.append(page.report)
        has_text = has_text or bool(page.text.strip())
        preview.add(page.text)
    return _ReadPages(reports, has_text, preview.value())


def _results_page(page: PageContent) -> dict[str, Any]:
    """pages/<n>.json: the page's JSON, its lines' boxes left in the work file (its blocks carry them)."""
    out = page.to_dict()
    out.pop("line_boxes", None)
    return out


def _append_joined(spool: Spool, part: bytes) -> None:
    """``part`` after what ``spool`` holds, a blank line between (as :class:`_Joined` joins)."""
    if not part:
        return
    if spool.size:
        spool.write(b"\n\n")
    spool.write(part)


def _own_text(store: ObjectStore, sources: dict[int, PageSource]) -> str:
    return PAGE_SEPARATOR.join(read_page(store, source).text for source in sources.values())
