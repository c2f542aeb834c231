"""The OCR plan step: which pages OCR reads (after the text layer, or every frame of a picture but
the blank and repeated ones, which ``ocr.survey`` finds and assemble lays in).
States carry page numbers and keys, never text; past the Distributed Map threshold the items go to
an S3 manifest (``work/<doc_id>/ocr/items.json``).
"""

from __future__ import annotations

import functools
import time
from dataclasses import replace

from papersift.content import PageContent
from papersift.errors import PapersiftError
from papersift.isolation import Limits, run_once
from papersift.layout import JSON_CONTENT_TYPE
from papersift.ledger import Invocation, record_usage
from papersift.ocr.survey import SURVEY_MEMORY_MB, SURVEY_SECONDS, FrameSurvey, survey_frames
from papersift.settings import Settings
from papersift.sniff import PICTURE_KINDS
from papersift.steps.contracts import OcrItem, OcrPlan, OcrPlanRequest, manifest_json
from papersift.storage import CountingStore, ObjectStore
from papersift.workfiles import (
    OCR_CHECK_PREFIX,
    OCR_INPUT_PDF,
    OCR_INPUT_PICTURES,
    OCR_INPUT_SOURCE,
    get_json,
    ocr_inputs_prefix,
    ocr_items_key,
    ocr_survey_key,
    page_key,
    put_json,
)


def plan_ocr(store: ObjectStore, request: OcrPlanRequest, settings: Settings,
             invocation: Invocation | None = None) -> OcrPlan:
    """The pages OCR reads: every frame of a picture, else the pages the text layer sent (their
    inputs under ``work/<doc_id>/ocr/inputs/``). Past the Distributed Map threshold the items
    go to an S3 manifest instead of the state (a member's OCR Map is inline: always in the state)."""
    started = time.perf_counter()
    store = counted = CountingStore(store)
    plan, doc_id = request.plan, request.doc_id
    items: list[OcrItem] = []
    base = {"doc_id": doc_id, "bucket": request.bucket, "key": request.key, "kind": plan.kind}
    if plan.kind in PICTURE_KINDS:
        frames = min(plan.page_count, settings.max_pages)
        survey = _survey(store, request.key, frames, settings) if frames > 1 else FrameSurvey()
        if survey.surveyed:
            put_json(store, ocr_survey_key(doc_id), survey.to_dict())
        items = [OcrItem(**base, page=n, input_key=request.key) for n in range(1, frames + 1) if survey.to_read(n)]
    else:
        checks: list[OcrItem] = []
        for key in store.list_keys(ocr_inputs_prefix(doc_id)):
            stem, _, kind = key.rsplit("/", 1)[-1].partition(".")
            check = kind.startswith(OCR_CHECK_PREFIX)
            kind = kind.removeprefix(OCR_CHECK_PREFIX)
            if stem.isdigit() and kind in (OCR_INPUT_PDF, OCR_INPUT_SOURCE, OCR_INPUT_PICTURES):
                item = OcrItem(**base, page=int(stem), input_key=request.key if kind == OCR_INPUT_SOURCE else key)
                (checks if check else items).append(item)
        # pages whose uncertain text layer is checked against their rendering: the first ones, up to the cap
        checks.sort(key=lambda item: item.page)
        items += checks[: settings.max_rendering_checks]
        for item in checks[settings.max_rendering_checks:]:
            _not_checked(store, doc_id, item.page, settings.max_rendering_checks)
    items.sort(key=lambda item: item.page)
    distributed = request.parent_doc_id is None and len(items) > settings.distributed_map_threshold
    if distributed:
        store.put(ocr_items_key(doc_id), manifest_json(items), JSON_CONTENT_TYPE)
    if invocation is not None:
        record_usage(store, doc_id, invocation.usage(time.perf_counter() - started, counted))
    return OcrPlan(page_count=len(items), use_distributed_map=distributed, manifest_key=ocr_items_key(doc_id),
                   max_concurrency=settings.ocr_max_concurrency, items=[] if distributed else items)


def _survey(store: ObjectStore, key: str, frames: int, settings: Settings) -> FrameSurvey:
    """The picture's blank and repeated frames (``ocr.survey``), looked at in a worker bounded in
    time and memory; when the worker cannot finish, none: every frame is read as it comes."""
    data = store.get(key)
    try:
        return run_once(functools.partial(survey_frames, data, frames, settings.ocr_max_pixels, SURVEY_SECONDS),
                        Limits(SURVEY_SECONDS + 15, SURVEY_MEMORY_MB))
    except PapersiftError:
        return FrameSurvey()


def _not_checked(store: ObjectStore, doc_id: str, number: int, cap: int) -> None:
    """A page past the document's rendering checks keeps its uncertain text layer, untrusted, and
    says why OCR did not judge it."""
    key = page_key(doc_id, number)
    if not store.exists(key):
        return
    layer = PageContent.from_dict(get_json(store, key))
    if not layer.ocr_scope:
        return  # said already (plan_ocr retried)
    note = f"not checked against the rendered page: the document's {cap} rendering checks (max_rendering_checks) " \
           "went to earlier pages"
    report = layer.report.replace(reason=f"{layer.report.reason.rstrip('.')}; {note}")
    put_json(store, key, replace(layer, report=report, ocr_scope="", ocr_reason="").to_dict())
