"""Where a document's work files are in the bucket, and reading and writing them: the layout every
step shares (docs/architecture.md, "Object layout in the bucket").

The prefixes (``work/<doc_id>/`` for what the steps pass each other through S3 and expires,
``results/<doc_id>/`` for what users read) and the result files' names are ``papersift.layout``'s;
the keys here build on them.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from papersift.content import PageContent
from papersift.layout import JSON_CONTENT_TYPE, PAGES_FOLDER, page_file, work_prefix
from papersift.ledger import Usage
from papersift.settings import Settings
from papersift.steps.contracts import DocumentOptions
from papersift.storage import ObjectStore


def page_key(doc_id: str, number: int) -> str:
    return f"{work_prefix(doc_id)}{page_file(number)}"


def pages_prefix(doc_id: str) -> str:
    """Where the text layer's pages are (``page_key``), to list them."""
    return f"{work_prefix(doc_id)}{PAGES_FOLDER}"


def plan_key(doc_id: str) -> str:
    return f"{work_prefix(doc_id)}plan.json"


def outline_key(doc_id: str) -> str:
    """A PDF's outline, written by the plan step when it has one, read by assemble for headings."""
    return f"{work_prefix(doc_id)}outline.json"


def batches_key(doc_id: str) -> str:
    return f"{work_prefix(doc_id)}batches.json"


def members_key(doc_id: str) -> str:
    return f"{work_prefix(doc_id)}members.json"


def member_items_key(doc_id: str) -> str:
    return f"{work_prefix(doc_id)}member-items.json"


def errors_prefix(doc_id: str) -> str:
    """Where extract records why a batch's file failed (``error_key``), for assemble to list."""
    return f"{work_prefix(doc_id)}errors/"


def error_key(doc_id: str, batch_index: int) -> str:
    return f"{errors_prefix(doc_id)}{batch_index:05d}.json"


#: an OCR input: the page cut as a one-page PDF, or an empty marker "draw it from the source", or
#: a unit's embedded pictures (``ocr_pictures_bundle``)
OCR_INPUT_PDF, OCR_INPUT_SOURCE, OCR_INPUT_PICTURES = "pdf", "source", "pictures.zip"
#: ... prefixed when the page is to be checked against its rendering (routing.RENDERING_CHECK):
#: plan_ocr caps those per document from the keys alone
OCR_CHECK_PREFIX = "check."


def ocr_input_kind(check: bool, cut: bool) -> str:
    """The kind an OCR input's key ends with (``ocr_input_key``)."""
    return (OCR_CHECK_PREFIX if check else "") + (OCR_INPUT_PDF if cut else OCR_INPUT_SOURCE)


def ocr_prefix(doc_id: str) -> str:
    return f"{work_prefix(doc_id)}ocr/"


def ocr_inputs_prefix(doc_id: str) -> str:
    """Where extract leaves the pages OCR should read (``ocr_input_key``), for plan_ocr to list."""
    return f"{ocr_prefix(doc_id)}inputs/"


def ocr_input_key(doc_id: str, number: int, kind: str) -> str:
    return f"{ocr_inputs_prefix(doc_id)}{number:05d}.{kind}"


def ocr_pictures_bundle(pictures: Sequence[bytes]) -> bytes:
    """A unit's pictures for OCR, in the order of its report's queued pictures: one stored (not
    compressed: pictures are compressed already) zip entry each, named by its place."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as bundle:
        for index, data in enumerate(pictures, start=1):
            bundle.writestr(f"{index:05d}", data)
    return out.getvalue()


def ocr_pictures_unbundled(data: bytes) -> list[bytes]:
    """The pictures of ``ocr_pictures_bundle``, in order."""
    with zipfile.ZipFile(io.BytesIO(data)) as bundle:
        return [bundle.read(info) for info in sorted(bundle.infolist(), key=lambda info: info.filename)]


def ocr_page_key(doc_id: str, number: int) -> str:
    return f"{ocr_prefix(doc_id)}{page_file(number)}"


def ocr_items_key(doc_id: str) -> str:
    return f"{ocr_prefix(doc_id)}items.json"


def ocr_survey_key(doc_id: str) -> str:
    """What plan_ocr found looking at a picture's frames: the blank ones, and the repeats of others."""
    return f"{ocr_prefix(doc_id)}survey.json"


def ocr_reading_key(doc_id: str, number: int, call: int) -> str:
    """Tesseract's ``call``-th reading of a page, kept for a retry after Textract refused for load."""
    return f"{ocr_prefix(doc_id)}readings/{number:05d}-tesseract-{call}.json"


#: a string this long is written into a JSON body piece by piece (json_bytes)
JSON_PIECE_CHARS = 1 << 20


def put_json(store: ObjectStore, key: str, value: Any) -> None:
    store.put(key, json_bytes(value), JSON_CONTENT_TYPE)


def json_bytes(value: Any) -> bytes:
    """``json.dumps(value, ensure_ascii=False).encode()``; a value holding a string of a megabyte
    or more is written piece by piece, so the JSON of a page of 100 MB of text and as much
    Markdown is never a whole str beside its bytes (a third copy in memory)."""
    if not _holds_long_string(value):
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
    out = io.BytesIO()
    _write_json(out, value)
    return out.getvalue()


def _holds_long_string(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) >= JSON_PIECE_CHARS
    if isinstance(value, dict):  # keys that are not strings: json.dumps's own conversion, whole
        return all(isinstance(name, str) for name in value) and any(map(_holds_long_string, value.values()))
    if isinstance(value, (list, tuple)):
        return any(_holds_long_string(item) for item in value)
    return False


def _write_json(out: io.BytesIO, value: Any) -> None:
    """What json.dumps writes (default separators), long strings escaped a piece at a time:
    escaping is per character, so the pieces' escapes are the whole string's."""
    if not _holds_long_string(value):
        out.write(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    elif isinstance(value, str):
        out.write(b'"')
        for start in range(0, len(value), JSON_PIECE_CHARS):
            out.write(json.dumps(value[start:start + JSON_PIECE_CHARS], ensure_ascii=False)[1:-1].encode("utf-8"))
        out.write(b'"')
    elif isinstance(value, dict):
        out.write(b"{")
        for index, (name, item) in enumerate(value.items()):
            out.write((", " if index else "").encode() + json.dumps(name, ensure_ascii=False).encode("utf-8") + b": ")
            _write_json(out, item)
        out.write(b"}")
    else:
        out.write(b"[")
        for index, item in enumerate(value):
            if index:
                out.write(b", ")
            _write_json(out, item)
        out.write(b"]")


def put_model(store: ObjectStore, key: str, model: BaseModel) -> None:
    store.put(key, model.model_dump_json().encode("utf-8"), JSON_CONTENT_TYPE)


def get_json(store: ObjectStore, key: str) -> Any:
    """A JSON body, its bytes decoded first (json.loads of bytes keeps them beside their text
    while it parses: a third copy of a 200 MB page)."""
    data = store.get(key)
    text = data.decode(json.detect_encoding(data), "surrogatepass")
    del data
    return json.loads(text)


@dataclass(frozen=True)
class Source:
    """A document's bytes and the settings for it: the deployment's with the upload's options
    (S3 metadata) applied. Each step that reads the source decodes the options here, once."""

    data: bytes
    settings: Settings


def read_source(store: ObjectStore, key: str, settings: Settings) -> Source:
    data, metadata = store.get_with_metadata(key)
    return Source(data, DocumentOptions.from_metadata(metadata).apply(settings))


def read_ocr_page(store: ObjectStore, key: str) -> tuple[PageContent, Usage | None]:
    """An OCR page's work file (``ocr_page_key``): the page as OCR left it, and the usage of the
    step that read it."""
    record = get_json(store, key)
    usage = record.get("usage")
    return PageContent.from_dict(record["page"]), Usage(**usage) if usage else None
