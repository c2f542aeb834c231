"""The plan step: sniff a file and cut it into page batches, or give it a final status with its
reason (bad input ends here instead of raising, so the workflow records it)."""

from __future__ import annotations

import functools
import time
from dataclasses import asdict
from typing import Any

from papersift import formats
from papersift.errors import EmptyInputError, LimitExceededError, PapersiftError, UnsupportedFormatError
from papersift.isolation import Limits, run_once
from papersift.layout import JSON_CONTENT_TYPE
from papersift.ledger import Invocation, record_usage
from papersift.report import status_for_error
from papersift.settings import OCR_OFF, Settings
from papersift.sniff import sniff
from papersift.steps.contracts import ARCHIVE, PICTURE, READY, Batch, DocumentRef, Plan, manifest_json
from papersift.storage import CountingStore, ObjectStore
from papersift.workfiles import batches_key, outline_key, plan_key, put_json, put_model, read_source


def plan_document(store: ObjectStore, request: DocumentRef, settings: Settings,
                  invocation: Invocation | None = None) -> Plan:
    """Sniff the file and cut it into page batches. Bad input ends here with a final status
    and a reason instead of an exception, so the workflow records it."""
    started = time.perf_counter()
    store = counted = CountingStore(store)
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
            limits = Limits(source.settings.page_seconds, source.settings.unit_memory_mb)
            pages, outline, sound_tree_pages = run_once(functools.partial(
                formats.count_pages_and_outline, source.data, file_type, source.settings), limits)
            if outline:
                put_json(store, outline_key(doc_id), [asdict(entry) for entry in outline])
                found["has_outline"] = True
            found["holds_files"] = formats.holds_files(source.data, file_type, limits, source.settings.passwords)
            if file_type.is_picture and source.settings.ocr_mode != OCR_OFF:
                # no text layer to read: the frames go straight to OCR (plan_ocr lists them)
                found.update(status=PICTURE, page_count=pages or 0)
            else:
                # pages beyond max_pages get no batch (and no work file): the verdict says they exist
                wanted = None if pages is None else min(pages, source.settings.max_pages)
                batches = page_batches(request, file_type.kind, wanted, source.settings, sound_tree_pages)
                found.update(page_count=pages or 0, batches=batches, batch_count=len(batches),
                             use_distributed_map=len(batches) > settings.distributed_map_threshold)
    except PapersiftError as exc:
        found.update(status=status_for_error(exc.code), reason=str(exc), error_code=exc.code, batches=[],
                     batch_count=0, use_distributed_map=False)
    plan = Plan(**request.ref.model_dump(), **found, manifest_key=batches_key(doc_id),
                max_concurrency=settings.max_concurrency, seconds=round(time.perf_counter() - started, 4))
    if plan.use_distributed_map:
        store.put(plan.manifest_key, manifest_json(plan.batches), JSON_CONTENT_TYPE)
    put_model(store, plan_key(doc_id), plan)
    if invocation is not None:
        record_usage(store, doc_id, invocation.usage(plan.seconds, counted))
    if plan.use_distributed_map:
        # the Distributed Map reads batches from the manifest: keep the state small
        plan = plan.model_copy(update={"batches": []})
    return plan


def page_batches(document: DocumentRef, kind: str, pages: int | None, settings: Settings,
                 sound_tree_pages: int = 0) -> list[Batch]:
    """``page_batch_size`` pages per batch; whole-document formats (``pages`` None) are one
    batch whose units are counted on extraction."""
    base: dict[str, Any] = {"doc_id": document.doc_id, "bucket": document.bucket, "key": document.key, "kind": kind,
                            "sound_tree_pages": sound_tree_pages}
    if pages is None:
        return [Batch(**base, first_page=1, last_page=0, batch_index=0)]
    size = settings.page_batch_size
    return [Batch(**base, first_page=first, last_page=min(first + size - 1, pages), batch_index=i)
            for i, first in enumerate(range(1, pages + 1, size))]
