"""The workflow's steps as plain functions over an ObjectStore.

Each Lambda handler is one call into here; ``process_document`` chains the same calls
for `papersift extract`. Steps exchange small JSON dicts (the Step Functions state) and
keep page text in the store under ``work/<doc_id>/``, never in the state.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from papersift import __version__, archives, cleaning, formats
from papersift.content import PageContent
from papersift.errors import (
    EmptyInputError,
    EncryptedInputError,
    InputError,
    LimitExceededError,
    PapersiftError,
    SettingsError,
    UnsupportedFormatError,
)
from papersift.report import (
    TRUSTED_DOCUMENT_STATUSES,
    DocumentStatus,
    ErrorRecord,
    ExtractionReport,
    MemberReport,
    PageStatus,
)
from papersift.settings import Settings
from papersift.sniff import FileType, sniff
from papersift.storage import ObjectStore

OPTIONS_METADATA_KEY = "papersift-options"
#: per-document options a caller may set on an upload (everything else is deployment-wide)
DOCUMENT_OPTIONS = frozenset({"passwords", "extract_tables", "ocr_mode", "clean_text", "ocr_languages"})
PAGE_SEPARATOR = "\f"


# -- identity and options ----------------------------------------------------------------


def document_id(bucket: str, key: str, version_id: str | None = None, etag: str | None = None) -> str:
    """Stable id of one object version: duplicate notifications map to the same id
    (and so to the same Step Functions execution name)."""
    identity = "\0".join([bucket, key, version_id or "", (etag or "").strip('"')])
    return "d" + hashlib.sha256(identity.encode("utf-8")).hexdigest()[:40]


def encode_options(options: Mapping[str, Any]) -> str:
    """S3 user metadata is ASCII: options (passwords may be non-ASCII) travel as base64 JSON."""
    unknown = set(options) - DOCUMENT_OPTIONS
    if unknown:
        raise SettingsError(f"unknown document option(s): {', '.join(sorted(unknown))}")
    return base64.b64encode(json.dumps(dict(options), ensure_ascii=False).encode("utf-8")).decode("ascii")


def decode_options(metadata: Mapping[str, str]) -> dict[str, Any]:
    raw = metadata.get(OPTIONS_METADATA_KEY)
    if not raw:
        return {}
    try:
        options = json.loads(base64.b64decode(raw, validate=True).decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SettingsError(f"metadata {OPTIONS_METADATA_KEY} is not base64 JSON: {exc}") from exc
    if not isinstance(options, dict):
        raise SettingsError(f"metadata {OPTIONS_METADATA_KEY} must hold a JSON object")
    return {k: v for k, v in options.items() if k in DOCUMENT_OPTIONS}


def settings_for_document(settings: Settings, metadata: Mapping[str, str]) -> Settings:
    """Deployment settings with the upload's own options applied (passwords are added)."""
    options = decode_options(metadata)
    if not options:
        return settings
    passwords = tuple(settings.passwords) + tuple(str(p) for p in options.pop("passwords", []) or [])
    merged = {**settings.public_dict(), **options}
    merged.pop("passwords", None)
    return Settings.from_mapping(merged, source="document options").replace(passwords=passwords)


def work_prefix(doc_id: str) -> str:
    return f"work/{doc_id}/"


def results_prefix(doc_id: str) -> str:
    return f"results/{doc_id}/"


def page_key(doc_id: str, number: int) -> str:
    return f"{work_prefix(doc_id)}pages/{number:05d}.json"


def _put_json(store: ObjectStore, key: str, value: Any) -> None:
    store.put(key, json.dumps(value, ensure_ascii=False).encode("utf-8"), "application/json")


def _get_json(store: ObjectStore, key: str) -> Any:
    return json.loads(store.get(key))


# -- plan ------------------------------------------------------------------------------


def plan_document(store: ObjectStore, request: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """Sniff the file and cut it into page batches. Bad input ends here with a terminal
    status and a reason instead of an exception, so the workflow records it."""
    started = time.perf_counter()
    doc_id, key = request["doc_id"], request["key"]
    plan: dict[str, Any] = {
        "doc_id": doc_id,
        "bucket": request.get("bucket", ""),
        "key": key,
        "source_name": request.get("source_name") or key.rsplit("/", 1)[-1],
        "kind": "unknown",
        "mime": "application/octet-stream",
        "detected_by": "",
        "size": 0,
        "status": "ready",
        "reason": "",
        "error_code": "",
        "page_count": 0,
        "batch_count": 0,
        "batches": [],
        "use_distributed_map": False,
        "manifest_key": f"{work_prefix(doc_id)}batches.json",
        "max_concurrency": settings.max_concurrency,
    }
    for extra in ("parent_doc_id", "archive_path"):
        if request.get(extra):
            plan[extra] = request[extra]
    try:
        # refuse an oversized drop before reading it: it would not fit the Lambda's memory
        plan["size"] = store.size(key)
        if plan["size"] > settings.max_file_bytes:
            raise LimitExceededError(f"file is {plan['size']} bytes, over max_file_bytes={settings.max_file_bytes}")
        data, metadata = store.get_with_metadata(key)
        doc_settings = settings_for_document(settings, metadata)
        plan["clean_text"] = doc_settings.clean_text  # assemble never reads the source again
        file_type = sniff(data, plan["source_name"])
        plan.update(kind=file_type.kind, mime=file_type.mime, detected_by=file_type.detected_by)
        if file_type.kind == "empty":
            raise EmptyInputError("the file is empty (0 bytes)")
        if file_type.is_archive:
            plan["status"] = "archive"
        elif not formats.is_supported(file_type):
            raise UnsupportedFormatError(f"no extractor for {file_type.kind} ({file_type.mime})")
        else:
            pages = formats.count_pages(data, file_type, doc_settings)
            _add_batches(plan, pages, doc_settings)
            if plan["use_distributed_map"]:
                _put_json(store, plan["manifest_key"], plan["batches"])
    except PapersiftError as exc:
        _mark_terminal(plan, exc)
    plan["seconds"] = round(time.perf_counter() - started, 4)
    _put_json(store, f"{work_prefix(doc_id)}plan.json", plan)
    if plan["use_distributed_map"]:
        # the Distributed Map reads batches from the manifest: keep the state small
        plan = {**plan, "batches": []}
    return plan


def _add_batches(plan: dict[str, Any], pages: int | None, settings: Settings) -> None:
    base = {k: plan[k] for k in ("doc_id", "bucket", "key", "kind")}
    if pages is None:  # whole-document formats: one batch, units counted on extraction
        plan["batches"] = [{**base, "first_page": 1, "last_page": 0, "batch_index": 0}]
    else:
        plan["page_count"] = pages
        size = settings.page_batch_size
        plan["batches"] = [
            {**base, "first_page": first, "last_page": min(first + size - 1, pages), "batch_index": i}
            for i, first in enumerate(range(1, pages + 1, size))
        ]
    plan["batch_count"] = len(plan["batches"])
    plan["use_distributed_map"] = plan["batch_count"] > settings.distributed_map_threshold


def _mark_terminal(plan: dict[str, Any], exc: PapersiftError) -> None:
    terminal: dict[type[PapersiftError], DocumentStatus] = {
        EncryptedInputError: DocumentStatus.ENCRYPTED,
        EmptyInputError: DocumentStatus.EMPTY,
        UnsupportedFormatError: DocumentStatus.UNSUPPORTED,
    }
    status = terminal.get(type(exc), DocumentStatus.FAILED)
    plan.update(status=str(status), reason=str(exc), error_code=exc.code, batches=[], batch_count=0)


# -- unpack (archives) -------------------------------------------------------------------


def members_key(doc_id: str) -> str:
    return f"{work_prefix(doc_id)}members.json"


def member_items_key(doc_id: str) -> str:
    return f"{work_prefix(doc_id)}member-items.json"


def unpack_archive(store: ObjectStore, request: Mapping[str, Any], settings: Settings, scratch: Path) -> dict[str, Any]:
    """Unpack an archive (nested ones included) and upload each member as a document of
    its own under ``members/<doc_id>/<path>``. Every member, processed or not, is recorded
    in ``work/<doc_id>/members.json``; the ones to process are the returned items."""
    doc_id, key = request["doc_id"], request["key"]
    plan = request.get("plan") or {}
    bucket = request.get("bucket") or plan.get("bucket", "")
    local_copy = scratch / "archive"
    metadata = store.download_file(key, local_copy)
    doc_settings = settings_for_document(settings, metadata)
    kind = plan.get("kind")
    if not kind:  # called without a plan: archives are typed by their first bytes
        kind = archives.archive_kind(local_copy) or "unknown"
    result = archives.unpack(local_copy, kind, scratch / "members", archives.ArchiveLimits.from_settings(doc_settings),
                             doc_settings.passwords, name=request.get("source_name") or key.rsplit("/", 1)[-1])
    members: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    for member in result.members:
        entry: dict[str, Any] = member.to_dict()
        if member.status is archives.MemberStatus.EXTRACTED and member.local_path is not None:
            member_key = f"members/{doc_id}/{member.path}"
            # the upload's options (passwords, tables) apply to its members too
            store.upload_file(member.local_path, member_key, metadata=dict(metadata))
            member.local_path.unlink()
            entry["doc_id"] = document_id(bucket, member_key)
            items.append({"doc_id": entry["doc_id"], "bucket": bucket, "key": member_key,
                          "source_name": member.path.rsplit("/", 1)[-1], "parent_doc_id": doc_id,
                          "archive_path": member.path})
        members.append(entry)
    summary = {"status": str(result.status), "reason": result.reason, "unlisted": result.unlisted}
    _put_json(store, members_key(doc_id), {**summary, "members": members})
    _put_json(store, member_items_key(doc_id), items)
    distributed = len(items) > settings.distributed_map_threshold
    return {**summary, "member_count": len(members), "item_count": len(items),
            "use_distributed_map": distributed, "manifest_key": member_items_key(doc_id),
            "max_concurrency": settings.max_concurrency, "items": [] if distributed else items}


# -- extract ---------------------------------------------------------------------------


def extract_batch(store: ObjectStore, batch: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """Extract one batch of pages into ``work/<doc_id>/pages/``. Pages already written by
    an earlier try are skipped, so a retried batch does only the missing work."""
    doc_id = batch["doc_id"]
    first, last = int(batch["first_page"]), int(batch["last_page"])
    paged = last > 0
    if paged:
        # pages are written in order: resume at the first one an earlier try did not finish
        done = set(store.list_keys(f"{work_prefix(doc_id)}pages/"))
        missing = [n for n in range(first, last + 1) if page_key(doc_id, n) not in done]
        if not missing:
            return {"batch_index": batch["batch_index"], "pages": last - first + 1, "chars": 0, "skipped": True}
        first = missing[0]
    data, metadata = store.get_with_metadata(batch["key"])
    doc_settings = settings_for_document(settings, metadata)
    file_type = FileType(kind=batch["kind"], mime="", detected_by="plan")
    try:
        pages = formats.extract_units(data, file_type, doc_settings, first, last if paged else None)
    except InputError as exc:
        # the file is at fault: record why, the assemble step turns it into the document status
        _put_json(store, f"{work_prefix(doc_id)}errors/{batch['batch_index']:05d}.json",
                  ErrorRecord.from_exception(exc).__dict__)
        return {"batch_index": batch["batch_index"], "pages": 0, "chars": 0, "error": exc.code}
    for page in pages:
        _put_json(store, page_key(doc_id, page.number), page.to_dict())
    return {
        "batch_index": batch["batch_index"],
        "pages": len(pages),
        "chars": sum(p.report.char_count for p in pages),
    }


# -- assemble --------------------------------------------------------------------------


def load_pages(store: ObjectStore, doc_id: str) -> list[PageContent]:
    keys = store.list_keys(f"{work_prefix(doc_id)}pages/")
    return [PageContent.from_dict(_get_json(store, k)) for k in keys if k.endswith(".json")]


def assemble_document(store: ObjectStore, request: Mapping[str, Any], settings: Settings) -> ExtractionReport:
    """Join the pages into text.txt, document.md and report.json under results/<doc_id>/."""
    started = time.perf_counter()
    doc_id = request["doc_id"]
    plan: dict[str, Any] = dict(request.get("plan") or {})
    if not plan.get("kind"):
        plan_key = f"{work_prefix(doc_id)}plan.json"
        if store.exists(plan_key):
            plan = {**_get_json(store, plan_key), **plan}
    if plan.get("status") == "archive" and not request.get("error"):
        return _assemble_archive(store, request, plan, settings, started)
    pages = load_pages(store, doc_id)
    errors = [ErrorRecord(**_get_json(store, k)) for k in store.list_keys(f"{work_prefix(doc_id)}errors/")]
    failure = request.get("error")
    report = _new_report(doc_id, request, plan, settings)
    report.page_count = len(pages)
    report.pages = [p.report for p in pages]
    report.errors = errors
    report.engines = dict(Counter(p.report.engine for p in pages if p.report.engine))
    report.char_count = sum(p.report.char_count for p in pages)
    report.status, report.reason = _document_verdict(plan, pages, errors, failure)
    if failure:
        report.errors.append(ErrorRecord(code=str(failure.get("Error", "failed")),
                                         reason=_failure_reason(failure)))
    ocr_cost = sum(p.report.ocr_cost_usd for p in pages)
    report.cost = {"ocr_usd": round(ocr_cost, 6)}
    report.timings = {"plan": float(plan.get("seconds", 0.0)),
                      "extract_pages": round(sum(p.report.seconds for p in pages), 4)}
    write_results(store, report, pages)
    _write_clean_text(store, report.doc_id, PAGE_SEPARATOR.join(p.text for p in pages), plan, settings)
    return _finish(store, report, started)


def _new_report(doc_id: str, request: Mapping[str, Any], plan: Mapping[str, Any],
                settings: Settings) -> ExtractionReport:
    return ExtractionReport(
        doc_id=doc_id,
        source={
            "bucket": plan.get("bucket") or request.get("bucket", ""),
            "key": plan.get("key") or request.get("key", ""),
            "name": plan.get("source_name") or request.get("source_name", ""),
            "size": plan.get("size", 0),
            **{k: plan[k] for k in ("parent_doc_id", "archive_path") if plan.get(k)},
        },
        detected_type=plan.get("kind", "unknown"),
        mime_type=plan.get("mime", ""),
        detected_by=plan.get("detected_by", ""),
        status="",
        reason="",
        page_count=0,
        settings=settings.public_dict(),
        papersift_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _finish(store: ObjectStore, report: ExtractionReport, started: float) -> ExtractionReport:
    report.timings["assemble"] = round(time.perf_counter() - started, 4)
    _put_json(store, f"{results_prefix(report.doc_id)}report.json", report.to_dict())
    return report


def member_tag(path: str) -> str:
    """The line that precedes each member's text in an archive's text.txt."""
    return f"=== {path} ==="


def _assemble_archive(store: ObjectStore, request: Mapping[str, Any], plan: Mapping[str, Any], settings: Settings,
                      started: float) -> ExtractionReport:
    """An archive's result is its members': their text under tag lines, and one member
    entry per archive member, with the member document's own status where it was processed."""
    doc_id = request["doc_id"]
    report = _new_report(doc_id, request, plan, settings)
    unpacked: dict[str, Any] = {"status": "corrupt", "reason": "the archive was not unpacked", "members": []}
    if store.exists(members_key(doc_id)):
        unpacked = _get_json(store, members_key(doc_id))
    texts: list[str] = []
    markdown: list[str] = []
    for entry in unpacked["members"]:
        member = MemberReport(path=entry["path"], status=entry["status"], reason=entry.get("reason", ""),
                              size=entry.get("size"), doc_id=entry.get("doc_id"))
        member_prefix = results_prefix(member.doc_id) if member.doc_id else ""
        if member.doc_id and store.exists(member_prefix + "report.json"):
            member_report = ExtractionReport.from_dict(_get_json(store, member_prefix + "report.json"))
            member.status, member.reason = member_report.status, member_report.reason
            member.detected_type, member.page_count = member_report.detected_type, member_report.page_count
            report.page_count += member_report.page_count
            report.char_count += member_report.char_count
            for engine, count in member_report.engines.items():
                report.engines[engine] = report.engines.get(engine, 0) + count
            if member_report.char_count:  # a member without text adds no tag line, only its entry
                texts.append(member_tag(member.path) + "\n" + store.get(member_prefix + "text.txt").decode("utf-8"))
                markdown.append(f"## {member.path}\n\n" + store.get(member_prefix + "document.md").decode("utf-8"))
        elif member.doc_id:
            member.status, member.reason = str(DocumentStatus.FAILED), "member was not processed (no report)"
        report.members.append(member)
    report.status, report.reason = _archive_verdict(unpacked, report.members)
    prefix = results_prefix(doc_id)
    store.put(prefix + "text.txt", "\n\n".join(texts).encode("utf-8"), "text/plain; charset=utf-8")
    store.put(prefix + "document.md", "\n\n".join(markdown).encode("utf-8"), "text/markdown; charset=utf-8")
    _write_clean_text(store, doc_id, "\n\n".join(texts), plan, settings)
    return _finish(store, report, started)


def _write_clean_text(store: ObjectStore, doc_id: str, text: str, plan: Mapping[str, Any], settings: Settings) -> None:
    """text.clean.txt for indexing (accents folded, pt/en/es stopwords and noise removed);
    text.txt itself is never altered."""
    if plan.get("clean_text", settings.clean_text):
        cleaned = cleaning.clean_text(text, remove_stopwords=True)
        store.put(results_prefix(doc_id) + "text.clean.txt", cleaned.encode("utf-8"), "text/plain; charset=utf-8")


#: unpack statuses that are no problem: a nested archive whose members are listed on their own
_UNPACK_ONLY = frozenset({str(archives.MemberStatus.EXPANDED)})


def _archive_verdict(unpacked: Mapping[str, Any], members: list[MemberReport]) -> tuple[str, str]:
    documents = [m for m in members if m.doc_id]
    archive_status, archive_reason = unpacked.get("status", "ok"), unpacked.get("reason", "")
    if not documents:
        status = {"encrypted": DocumentStatus.ENCRYPTED, "empty": DocumentStatus.EMPTY,
                  "unsupported": DocumentStatus.UNSUPPORTED}.get(archive_status, DocumentStatus.FAILED)
        if archive_status == "ok":
            status = DocumentStatus.EMPTY if not members else DocumentStatus.NEEDS_REVIEW
        return str(status), archive_reason or f"no member could be extracted ({len(members)} listed)"
    untrusted = [m for m in documents if m.status not in TRUSTED_DOCUMENT_STATUSES]
    not_extracted = [m for m in members if not m.doc_id and m.status not in _UNPACK_ONLY]
    if archive_status == "ok" and not not_extracted and all(m.status == "empty" for m in documents):
        return str(DocumentStatus.EMPTY), f"every member ({len(documents)}) is empty"
    problems = [f"{m.path}: {m.status}" for m in (*untrusted, *not_extracted)]
    if archive_status != "ok":
        problems.insert(0, f"archive {archive_status}: {archive_reason}")
    if problems:
        more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        return str(DocumentStatus.NEEDS_REVIEW), "; ".join(problems[:5]) + more
    recovered = any(m.status == "partially_recovered" for m in documents)
    status = DocumentStatus.PARTIALLY_RECOVERED if recovered else DocumentStatus.CLEAN
    return str(status), f"all {len(documents)} member document(s) trusted"


def _failure_reason(failure: Mapping[str, Any]) -> str:
    cause = str(failure.get("Cause", ""))
    try:  # Lambda errors arrive as a JSON string with errorMessage
        parsed = json.loads(cause)
        if isinstance(parsed, dict):
            cause = str(parsed.get("errorMessage") or parsed.get("errorType") or cause)
    except json.JSONDecodeError:
        pass
    return f"{failure.get('Error', 'error')}: {cause}".strip(": ")


def _document_verdict(plan: Mapping[str, Any], pages: list[PageContent], errors: list[ErrorRecord],
                      failure: Mapping[str, Any] | None) -> tuple[str, str]:
    if failure:
        return str(DocumentStatus.FAILED), "pipeline step failed: " + _failure_reason(failure)
    if plan.get("status") not in (None, "ready", "archive"):
        return str(plan["status"]), str(plan.get("reason", ""))
    if errors and not pages:
        first = errors[0]
        status = DocumentStatus.ENCRYPTED if first.code == "encrypted" else DocumentStatus.FAILED
        return str(status), first.reason
    if not pages:
        return str(DocumentStatus.EMPTY), "no text units were extracted"
    counts = Counter(p.report.status for p in pages)
    total = len(pages)
    bad = counts[PageStatus.CORRUPT_UNRECOVERABLE] + counts[PageStatus.FAILED]
    review = bad + counts[PageStatus.NEEDS_OCR]
    if bad == total:
        return str(DocumentStatus.CORRUPT_UNRECOVERABLE), f"no page of {total} has usable text"
    if review:
        parts = [f"{n} page(s) {s}" for s, n in sorted(counts.items()) if s not in ("clean", "recovered", "ocr")]
        return str(DocumentStatus.NEEDS_REVIEW), "; ".join(parts) + f" of {total}"
    if not any(p.text.strip() for p in pages):
        engines = ", ".join(sorted({p.report.engine for p in pages if p.report.engine})) or "no engine"
        return str(DocumentStatus.EMPTY), f"no text found in {total} unit(s) ({engines})"
    if counts[PageStatus.RECOVERED] or counts[PageStatus.OCR]:
        return (str(DocumentStatus.PARTIALLY_RECOVERED),
                f"{counts[PageStatus.RECOVERED]} page(s) recovered by a fallback engine, "
                f"{counts[PageStatus.OCR]} by OCR, of {total}")
    return str(DocumentStatus.CLEAN), f"all {total} page(s) have a trusted text layer"


def write_results(store: ObjectStore, report: ExtractionReport, pages: list[PageContent]) -> None:
    prefix = results_prefix(report.doc_id)
    text = PAGE_SEPARATOR.join(p.text for p in pages)
    markdown = "\n\n".join(md for md in (p.to_markdown() for p in pages) if md)
    store.put(prefix + "text.txt", text.encode("utf-8"), "text/plain; charset=utf-8")
    store.put(prefix + "document.md", markdown.encode("utf-8"), "text/markdown; charset=utf-8")
    for page in pages:
        _put_json(store, f"{prefix}pages/{page.number:05d}.json", page.to_dict())


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
        "pages_corrupt": counts[PageStatus.CORRUPT_UNRECOVERABLE],
        "pages_failed": counts[PageStatus.FAILED],
        "char_count": report.char_count,
        "text_key": prefix + "text.txt",
        "markdown_key": prefix + "document.md",
        "report_key": prefix + "report.json",
        "updated_at": report.created_at,
    }
    for extra in ("parent_doc_id", "archive_path"):
        if report.source.get(extra):
            item[extra] = report.source[extra]
    return item


# -- all steps in one process ------------------------------------------------------------


def process_document(store: ObjectStore, key: str, settings: Settings, source_name: str = "",
                     doc_id: str | None = None, **member_of: str) -> ExtractionReport:
    """Plan, extract every batch (or unpack and process every member) and assemble, in
    this process: what the workflow does, for `papersift extract`."""
    request = {"doc_id": doc_id or document_id("local", key), "key": key, "bucket": "local",
               "source_name": source_name or key.rsplit("/", 1)[-1], **member_of}
    try:
        plan = plan_document(store, request, settings)
        if plan["status"] == "ready":
            batches = plan["batches"] or _get_json(store, plan["manifest_key"])
            for batch in batches:
                extract_batch(store, batch, settings)
        elif plan["status"] == "archive":
            with tempfile.TemporaryDirectory(prefix="papersift-unpack-") as scratch:
                unpacked = unpack_archive(store, {**request, "plan": plan}, settings, Path(scratch))
            for item in unpacked["items"] or _get_json(store, unpacked["manifest_key"]):
                process_document(store, item["key"], settings, item["source_name"], item["doc_id"],
                                 parent_doc_id=item["parent_doc_id"], archive_path=item["archive_path"])
        return assemble_document(store, {**request, "plan": plan}, settings)
    except Exception as exc:  # mirror the workflow's Catch: record, never lose the file
        error = {"Error": type(exc).__name__, "Cause": str(exc)}
        return assemble_document(store, {**request, "error": error}, settings)
