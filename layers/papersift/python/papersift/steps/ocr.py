"""The OCR step: ``read_ocr_page`` reads one page, writing ``work/<doc_id>/ocr/pages/<n>.json``,
which assemble lays over the text layer's page; ``default_engines`` builds the engines it reads
with. States carry page numbers and keys, never text.
"""

from __future__ import annotations

import functools
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from PIL import Image

from papersift.content import PageContent
from papersift.errors import PapersiftError
from papersift.isolation import Limits, run_once
from papersift.layout import JSON_CONTENT_TYPE
from papersift.ledger import Invocation, textract_calls, textract_price
from papersift.ocr.pages import (
    RENDERING_DISAGREES,
    OcrEngines,
    OcrTask,
    Original,
    PictureReader,
    disagreement,
    read_page,
)
from papersift.ocr.reading import OcrReading, reading_from_dict, reading_to_dict
from papersift.ocr.routing import PICTURES, REGION_SCOPES, RENDERING_CHECK, WHOLE_PAGE, engine_order
from papersift.rendering import RenderedPage, picture_frame_count, picture_size, render_page, render_picture_frames
from papersift.report import ErrorRecord, PageReport, PageStatus
from papersift.settings import Settings
from papersift.sniff import PICTURE_KINDS
from papersift.steps.contracts import DocumentOptions, OcrRequest, OcrResult
from papersift.storage import CountingStore, ObjectStore
from papersift.workfiles import (
    OCR_INPUT_PICTURES,
    get_json,
    ocr_page_key,
    ocr_pictures_unbundled,
    ocr_reading_key,
    page_key,
)
from papersift.workfiles import read_ocr_page as read_ocr_page_file


def read_ocr_page(store: ObjectStore, request: OcrRequest, settings: Settings, engines: OcrEngines,
                  invocation: Invocation | None = None) -> OcrResult:
    """Read one page with OCR and write it to ``work/<doc_id>/ocr/pages/<n>.json`` (a page already
    there is skipped: a retried iteration does nothing twice). With ``request.error`` (a Catch's)
    the page is recorded as failed with the reason, its text layer kept; with
    ``request.throttled`` it is read without Textract."""
    started = time.perf_counter()
    store = counted = CountingStore(store)
    doc_id, number = request.doc_id, request.page
    out_key = ocr_page_key(doc_id, number)
    if store.exists(out_key):
        page, _ = read_ocr_page_file(store, out_key)
        return OcrResult(page=number, status=page.report.status, engine=page.report.engine,
                         chars=page.report.char_count, skipped=True)
    layer = _text_layer(store, doc_id, number)
    if request.error is not None:
        page = _failed(number, layer, f"the OCR step failed: {request.error.reason}", request.error.error)
    else:
        doc_settings = DocumentOptions.from_metadata(store.metadata(request.key)).apply(settings)
        try:
            # drawn in a worker (papersift.isolation): pdfium and poppler meet the page's own images here
            data = store.get(request.input_key)  # here: a worker must not use this process's clients
            task = run_once(functools.partial(_task, data, request, layer, doc_settings),
                            Limits(doc_settings.page_seconds, doc_settings.unit_memory_mb))
        except PapersiftError as exc:  # the page cannot be drawn: it fails, the document goes on
            page = _failed(number, layer, f"the page could not be drawn for OCR: {exc}", exc.code)
        else:
            skip = f"Textract refused for load past the retries ({request.throttled.reason})" \
                if request.throttled is not None else ""
            cached = _remembering(store, doc_id, number, engines)
            read = functools.partial(read_page, order=engine_order(doc_settings.ocr_mode), engines=cached,
                                     languages=doc_settings.ocr_languages, tables=doc_settings.extract_tables,
                                     skip_textract=skip)
            page = read(task)
            if task.scope == RENDERING_CHECK and RENDERING_DISAGREES in page.report.signals and \
                    doc_settings.rendering_check_dpi < doc_settings.ocr_dpi:
                page = _read_again(page, read, data, request, layer, doc_settings)
            page.report.ocr_cost_usd = _textract_cost(page.report, doc_settings)
    usage = invocation.usage(time.perf_counter() - started, counted) if invocation is not None else None
    store.put(out_key, json.dumps({"page": page.to_dict(), "usage": usage.to_dict() if usage else None},
                                  ensure_ascii=False).encode("utf-8"), JSON_CONTENT_TYPE)
    return OcrResult(page=number, status=page.report.status, engine=page.report.engine,
                     chars=page.report.char_count)


def _read_again(checked: PageContent, read: Callable[[OcrTask], PageContent], data: bytes, request: OcrRequest,
                layer: PageContent | None, settings: Settings) -> PageContent:
    """A page whose rendering check disagreed with its text layer is OCR's: read again at ocr_dpi, as
    any page OCR reads, keeping what the check found (its attempts, the agreement)."""
    try:
        task = run_once(functools.partial(_task, data, request, layer, settings, check=False),
                        Limits(settings.page_seconds, settings.unit_memory_mb))
    except PapersiftError:
        return checked  # the check's reading stands
    page = read(task)
    layer_attempts = layer.report.attempts if layer is not None else []
    attempts = [*layer_attempts, *checked.report.attempts[len(layer_attempts):],
                *page.report.attempts[len(layer_attempts):]]
    told = disagreement(layer.unverified_text if layer is not None else (), checked.text,
                        checked.report.rendering_agreement or 0.0)
    report = page.report.replace(attempts=attempts, rendering_agreement=checked.report.rendering_agreement,
                                 signals=[*page.report.signals, RENDERING_DISAGREES],
                                 reason=f"{page.report.reason}; {told}")
    return replace(page, report=report)


def _text_layer(store: ObjectStore, doc_id: str, number: int) -> PageContent | None:
    key = page_key(doc_id, number)
    return PageContent.from_dict(get_json(store, key)) if store.exists(key) else None


def _task(data: bytes, request: OcrRequest, layer: PageContent | None, settings: Settings,
          check: bool = True) -> OcrTask:
    """The page drawn for OCR from ``data`` (``request.input_key``'s bytes): a frame of a picture,
    page 1 of its one-page PDF, or the page of the whole PDF when pdfium could not cut it (then
    drawn by poppler if need be); a page sent to check its text layer at rendering_check_dpi
    (unless ``check`` is False: read it whole). Pure: it runs in a worker process."""
    scope = layer.ocr_scope if layer is not None and layer.ocr_scope else WHOLE_PAGE
    if scope == RENDERING_CHECK and not check:
        scope = WHOLE_PAGE
    dpi = settings.rendering_check_dpi if scope == RENDERING_CHECK else settings.ocr_dpi
    number, cap = request.page, settings.ocr_max_pixels
    original: Original | None = None
    if request.input_key.endswith(f".{OCR_INPUT_PICTURES}") and layer is not None:
        return _embedded_task(data, number, layer, cap)
    if request.kind in PICTURE_KINDS:
        picture = next(render_picture_frames(data, [number], max_pixels=cap))
        original = _single_frame(data, request.kind)
    elif request.input_key != request.key:
        picture = _renumbered(render_page(data, 1, dpi=dpi, max_pixels=cap), number)
        original = Original(data, "pdf")
    else:
        picture = render_page(data, number, dpi=dpi, passwords=settings.passwords, max_pixels=cap)
    regions = tuple(tuple(box) for box in layer.ocr_regions) if layer is not None and scope in REGION_SCOPES else ()
    return OcrTask(number=number, picture=picture, original=original, text_layer=layer, scope=scope,
                   regions=regions,  # type: ignore[arg-type]  # four floats each, as written
                   reason=layer.ocr_reason if layer is not None else "a picture has no text layer")


def _embedded_task(data: bytes, number: int, layer: PageContent, cap: int) -> OcrTask:
    """A unit's embedded pictures (its OCR input's bundle, in the order of its queued records),
    each drawn like a picture file's frame; one that cannot be drawn is recorded failed, the
    others are read."""
    queued = [index for index, record in enumerate(layer.report.pictures) if record.status == "queued"]
    drawn: list[RenderedPage] = []
    records = list(layer.report.pictures)
    for index, picture in zip(queued, ocr_pictures_unbundled(data), strict=False):
        try:
            frame = next(render_picture_frames(picture, [1], max_pixels=cap))
        except PapersiftError as exc:
            records[index] = records[index].replace(status="failed", reason=f"the picture cannot be drawn: {exc}")
            continue
        drawn.append(_renumbered(frame, index + 1))
    layer.report.pictures = records
    placeholder = drawn[0] if drawn else RenderedPage(number=number, image=Image.new("L", (1, 1), 255), dpi=0.0,
                                                      renderer="pillow", capped=False)
    return OcrTask(number=number, picture=placeholder, original=None, text_layer=layer, scope=PICTURES,
                   embedded=tuple(drawn), reason=layer.ocr_reason)


#: picture files Textract reads as they are (a single frame); GIF, BMP and WebP are sent as a PNG
_TEXTRACT_PICTURES = frozenset({"png", "jpeg", "tiff"})


def _single_frame(data: bytes, kind: str) -> Original | None:
    """The picture file itself when it is one frame of a format Textract reads: its own pixels, not
    the ones drawn for Tesseract."""
    return Original(data, kind) if kind in _TEXTRACT_PICTURES and picture_frame_count(data) == 1 else None


def _renumbered(picture: RenderedPage, number: int) -> RenderedPage:
    return RenderedPage(number=number, image=picture.image, dpi=picture.dpi, renderer=picture.renderer,
                        capped=picture.capped)


def _remembering(store: ObjectStore, doc_id: str, number: int, engines: OcrEngines) -> OcrEngines:
    """The same engines, with Tesseract's readings kept under ``work/<doc_id>/ocr/readings/``: when
    Textract refuses for load after Tesseract read the page (local-first), the workflow's retry
    reads the stored reading instead of running Tesseract again."""
    if engines.tesseract is None:
        return engines
    calls = [0]
    tesseract: PictureReader = engines.tesseract

    def remembered(image: Image.Image, languages: Sequence[str]) -> OcrReading:
        calls[0] += 1
        key = ocr_reading_key(doc_id, number, calls[0])
        if store.exists(key):
            return reading_from_dict(get_json(store, key))
        reading = tesseract(image, languages)
        store.put(key, json.dumps(reading_to_dict(reading), ensure_ascii=False).encode("utf-8"), JSON_CONTENT_TYPE)
        return reading

    return OcrEngines(tesseract=remembered, textract=engines.textract, textract_missing=engines.textract_missing)


def _textract_cost(report: PageReport, settings: Settings) -> float:
    return round(sum(n * textract_price(api, settings) for api, n in textract_calls([report]).items()), 6)


def _failed(number: int, layer: PageContent | None, reason: str, code: str) -> PageContent:
    """A page OCR could not be run on: failed with the reason; the text layer's text is kept."""
    record = ErrorRecord(code=code, reason=reason, engine="ocr", page=number)
    if layer is not None:
        pictures = [p.replace(status="failed", reason=reason) if p.status == "queued" else p
                    for p in layer.report.pictures]
        report = PageReport(**{**vars(layer.report), "status": PageStatus.FAILED, "reason": reason,
                               "errors": [*layer.report.errors, record], "pictures": pictures})
        return PageContent(number=number, text=layer.text, report=report, tables=layer.tables, label=layer.label,
                           form_fields=layer.form_fields)
    report = PageReport.without_text(number, PageStatus.FAILED, reason, signals=["image_only"], errors=[record])
    return PageContent(number=number, text="", report=report)


def _textract_document(picture: RenderedPage, original: Original | None) -> Any:
    """The page as the file has it (its own images, at their resolution) when that is within
    Textract's synchronous limits, else the picture drawn for OCR."""
    from papersift.ocr import textract

    if original is not None and len(original.data) <= textract.MAX_DOCUMENT_BYTES and _within_sides(picture, original):
        return textract.PageDocument(original.data, original.format, (f"the page as its own {original.format}",))
    return textract.page_picture(picture.image)


def _within_sides(picture: RenderedPage, original: Original) -> bool:
    """A PDF page at most 40 inches a side; a picture at most 10,000 px a side (as drawn, it was
    capped at ocr_max_pixels; as the file has it, it is width / scale)."""
    from papersift.ocr import textract

    if original.format == "pdf":
        return max(picture.image.size) / max(picture.dpi, 1.0) * 72 <= textract.MAX_PDF_PAGE_POINTS
    return max(picture_size(original.data)) <= textract.MAX_IMAGE_SIDE


def default_engines(textract_client: Any | None, *, page_seconds: float, layout: bool = False) -> OcrEngines:
    """Tesseract when its binary is installed here, Textract through ``textract_client`` when one
    is given (the handler creates it; a local run has none, and does not import botocore for it:
    0.16 s of every `papersift extract`), asked for its LAYOUT where ``layout``
    (Settings.textract_layout)."""
    from papersift.ocr import tesseract

    local = functools.partial(tesseract.read_image, timeout_seconds=page_seconds) \
        if shutil.which("tesseract") else None
    if textract_client is None:
        return OcrEngines(tesseract=local, textract=None)
    from papersift.ocr import textract

    reader = textract.TextractReader(textract_client)

    def read_with_textract(picture: RenderedPage, original: Original | None, tables: bool) -> OcrReading:
        return reader.read(_textract_document(picture, original), tables=tables, layout=layout)

    return OcrEngines(tesseract=local, textract=read_with_textract)
