"""All steps in one process: ``process_document`` chains the steps of ``papersift.steps`` for
`papersift extract`, routed by the same ``Plan.route`` the workflow's Choice states mirror, and
with the same Catches (a failure is assembled with the error, never lost). Each Lambda handler
calls its own step module instead; the steps keep page text in the store under
``work/<doc_id>/``, never in the state."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from papersift.errors import OcrThrottledError
from papersift.ledger import Invocation
from papersift.report import ExtractionReport
from papersift.settings import Settings
from papersift.steps.assemble import assemble_document
from papersift.steps.contracts import (
    AssembleRequest,
    Batch,
    DocumentRef,
    ExtractResult,
    OcrItem,
    OcrPlanRequest,
    OcrRequest,
    Plan,
    Route,
    StepError,
    UnpackRequest,
    UnpackResult,
    read_manifest,
)
from papersift.steps.extract import extract_batch
from papersift.steps.plan import plan_document
from papersift.steps.unpack import unpack_archive
from papersift.storage import ObjectStore
from papersift.tempfolders import temp_prefix

if TYPE_CHECKING:  # the OCR stage loads when a document needs it (cold starts)
    from papersift.ocr.pages import OcrEngines


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
            with tempfile.TemporaryDirectory(prefix=temp_prefix("unpack")) as scratch:
                unpacked = unpack_archive(store, UnpackRequest(**document.ref.model_dump(), plan=plan), settings,
                                          Path(scratch), invocation("unpack"))
            _process_members(store, unpacked, settings, level, engines, memory, page_files)
        if route is Route.OCR or (route is Route.EXTRACT and any(result.needs_ocr for result in extracted)):
            _read_ocr_pages(store, document, plan, settings, engines, invocation)
        if plan.unpacks_after(level):  # a PDF's or an email's files, after its own text, as the workflow does
            with tempfile.TemporaryDirectory(prefix=temp_prefix("unpack")) as scratch:
                unpacked = unpack_archive(store, UnpackRequest(**document.ref.model_dump(), plan=plan), settings,
                                          Path(scratch), invocation("unpack"))
            _process_members(store, unpacked, settings, level, engines, memory, page_files)
        return assemble_document(store, AssembleRequest(**document.ref.model_dump(), plan=plan), settings,
                                 invocation("assemble"), page_files)
    except Exception as exc:  # mirror the workflow's Catch: record, never lose the file
        failure = AssembleRequest(**document.ref.model_dump(), error=StepError.from_exception(exc))
        return assemble_document(store, failure, settings, invocation("assemble"), page_files)


def _process_members(store: ObjectStore, unpacked: UnpackResult, settings: Settings, level: int,
                     engines: OcrEngines | None, memory: Mapping[str, int] | None, page_files: bool) -> None:
    items = unpacked.items or read_manifest(store.get(unpacked.manifest_key), DocumentRef)
    for item in items:
        process_document(store, item, settings, level + 1, engines=engines, memory=memory, page_files=page_files)


def _read_ocr_pages(store: ObjectStore, document: DocumentRef, plan: Plan, settings: Settings,
                    engines: OcrEngines | None, invocation: Callable[[str], Invocation | None]) -> None:
    """The workflow's OCR stage in this process: plan, then each page as the OCR Map iteration
    runs it, with its Catches (throttled past the retries: read without Textract; a failure:
    recorded on the page)."""
    from papersift.ocr.pages import OcrEngines
    from papersift.steps.ocr import read_ocr_page
    from papersift.steps.ocr_plan import plan_ocr

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
