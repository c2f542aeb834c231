"""The export step (Settings.export_parquet): after assemble, a document's page records as
``exports/<doc_id>.parquet``, so an Athena/Glue table can sit over the bucket (docs/export.md).

The records are `papersift export --unit page`'s, built by the same code
(:func:`papersift.export.stored_document_records`, reading results/<doc_id>/ through the store)
and written by the same writer (:class:`papersift.parquet.ParquetWriter`): one file a document,
one record a page. The unit is the page, not the block: every document has pages (blocks only
where pages/N.json has them), one grain keeps a table's counts and sums honest (a table mixing page
and block records counts text twice), and a page is what a reader cites; block records remain
`papersift export --unit block`'s.

An export that fails never fails the document: its results are already written. The workflow
catches the failure and runs this step again with the error (``ExportRequest.error``), which
records it (:func:`export_failed`); the handler writes the outcome on the document's item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from papersift.export import Origin, stored_document_records
from papersift.layout import PARQUET_CONTENT_TYPE, export_key
from papersift.listing import TABLE_KEY
from papersift.parquet import ParquetWriter
from papersift.steps.contracts import EXPORT_FAILED, EXPORT_WRITTEN, DocumentRef, ExportRequest, ExportResult, Plan
from papersift.storage import ObjectStore
from papersift.workfiles import plan_key

#: the unit of the records the step writes (papersift.export.EXPORT_UNITS)
EXPORT_UNIT = "page"
#: the longest failure reason kept on the item (the item's own reason is cut alike)
REASON_CHARS = 1000


def export_document(store: ObjectStore, request: ExportRequest, scratch: Path) -> ExportResult:
    """Write ``exports/<doc_id>.parquet``: the document's page records (none for a document without
    pages: a file with the schema and no rows, so every document has its file). Written in
    ``scratch`` first and uploaded from there (a multipart upload when large), so memory holds a
    document's records, not the compressed file."""
    records = stored_document_records(store, request.doc_id, document_origin(store, request), EXPORT_UNIT)
    path = scratch / "export.parquet"
    with path.open("wb") as out:
        writer = ParquetWriter(out)
        try:
            writer.write(records)
        finally:
            writer.close()
    key = export_key(request.doc_id)
    store.upload_file(path, key, content_type=PARQUET_CONTENT_TYPE)
    return ExportResult(doc_id=request.doc_id, status=EXPORT_WRITTEN, key=key, rows=writer.rows)


def document_origin(store: ObjectStore, document: DocumentRef) -> Origin:
    """Where the document came from as `papersift export` names it: the file given to papersift
    and, for a member, its path inside that file, nested archives joined by / (the archives above
    it found by their plan.json under work/, there until they are assembled, after their members).
    An archive whose plan is gone leaves the member named by its own name and path."""
    if not document.parent_doc_id or not document.archive_path:
        return Origin(document.source_name, document.archive_path)
    key = plan_key(document.parent_doc_id)
    if not store.exists(key):
        return Origin(document.source_name, document.archive_path)
    return document_origin(store, Plan.model_validate_json(store.get(key))).member(document.archive_path)


def export_failed(request: ExportRequest) -> ExportResult:
    """The outcome of an export the workflow caught failing (``request.error``), with its reason."""
    reason = request.error.reason if request.error else "the export failed"
    return ExportResult(doc_id=request.doc_id, status=EXPORT_FAILED, reason=reason[:REASON_CHARS])


def run_export(store: ObjectStore, request: ExportRequest, scratch: Path) -> ExportResult:
    """The step: record the caught failure when the request carries one, else export."""
    return export_failed(request) if request.error else export_document(store, request, scratch)


def item_update(result: ExportResult) -> dict[str, Any]:
    """The DynamoDB ``update_item`` arguments (but the key) that record ``result`` on the document's
    item: ``export_status`` and ``export_key`` (written) or ``export_reason`` (failed). Only an
    item that exists is updated (assemble wrote it): an update never makes a partial item."""
    values: dict[str, Any] = {":status": result.status}
    names = {"#status": "export_status"}
    if result.key:
        names["#detail"], values[":detail"] = "export_key", result.key
    else:
        names["#detail"], values[":detail"] = "export_reason", result.reason
    return {
        "UpdateExpression": "SET #status = :status, #detail = :detail",
        "ConditionExpression": f"attribute_exists({TABLE_KEY})",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
