"""The export step's core (papersift.steps.export) over a store built in code: what it names a
member, what it records of a failure, and how it writes the outcome on the item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papersift.steps.contracts import DocumentRef, ExportRequest, Plan, StepError
from papersift.steps.export import REASON_CHARS, document_origin, export_failed, item_update, run_export
from papersift.storage import LocalDirStore
from papersift.workfiles import plan_key, put_model

pq = pytest.importorskip("pyarrow.parquet")


def ref(doc_id: str, name: str, parent: str | None = None, path: str | None = None) -> DocumentRef:
    return DocumentRef(doc_id=doc_id, bucket="b", key=f"members/{parent}/1/{name}" if parent else f"incoming/{name}",
                       source_name=name, parent_doc_id=parent, archive_path=path,
                       member_kind="archive_member" if parent else None)


def planned(store: LocalDirStore, document: DocumentRef) -> None:
    put_model(store, plan_key(document.doc_id), Plan(**document.model_dump(), status="archive",
                                                     manifest_key="m", max_concurrency=1))


def test_a_member_of_a_member_is_named_by_the_dropped_file_and_its_path_through_both(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path)
    outer = ref("d-outer", "bundle.zip")
    inner = ref("d-inner", "inner.zip", parent="d-outer", path="docs/inner.zip")
    planned(store, outer)
    planned(store, inner)
    origin = document_origin(store, ref("d-deep", "deep.txt", parent="d-inner", path="deep.txt"))
    assert (origin.source_name, origin.archive_path) == ("bundle.zip", "docs/inner.zip/deep.txt")
    assert document_origin(store, outer).archive_path is None


def test_a_member_whose_archive_plan_is_gone_keeps_its_own_name_and_path(tmp_path: Path) -> None:
    origin = document_origin(LocalDirStore(tmp_path), ref("d-deep", "deep.txt", parent="d-gone", path="a/deep.txt"))
    assert (origin.source_name, origin.archive_path) == ("deep.txt", "a/deep.txt")


def test_a_caught_failure_is_recorded_with_the_lambda_message_and_nothing_is_exported(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path)
    cause = json.dumps({"errorType": "Sandbox.Timedout", "errorMessage": "Task timed out after 300.00 seconds"})
    request = ExportRequest(**ref("d1", "a.pdf").model_dump(), error=StepError(Error="Sandbox.Timedout", Cause=cause))
    result = run_export(store, request, tmp_path / "scratch")
    assert (result.status, result.key, result.reason) == \
        ("failed", None, "Sandbox.Timedout: Task timed out after 300.00 seconds")
    assert store.list_keys("exports/") == []
    long = ExportRequest(**ref("d1", "a.pdf").model_dump(), error=StepError(Error="E", Cause="x" * 5000))
    assert len(export_failed(long).reason) == REASON_CHARS


def test_a_document_without_pages_gets_a_file_with_the_schema_and_no_rows(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "bucket")
    report = {"doc_id": "d1", "source": {"name": "empty.txt"}, "detected_type": "txt", "status": "empty", "pages": []}
    store.put("results/d1/report.json", json.dumps(report).encode())
    (tmp_path / "scratch").mkdir()
    result = run_export(store, ExportRequest(**ref("d1", "empty.txt").model_dump()), tmp_path / "scratch")
    assert (result.status, result.key, result.rows) == ("written", "exports/d1.parquet", 0)
    assert pq.read_table(tmp_path / "bucket" / "exports" / "d1.parquet").num_rows == 0


def test_the_item_update_records_the_reason_of_a_failure_and_only_on_an_existing_item() -> None:
    failed = export_failed(ExportRequest(**ref("d1", "a.pdf").model_dump(),
                                         error=StepError(Error="MemoryError", Cause="out of memory")))
    update = item_update(failed)
    assert update["ExpressionAttributeNames"] == {"#status": "export_status", "#detail": "export_reason"}
    assert update["ExpressionAttributeValues"] == {":status": "failed", ":detail": "MemoryError: out of memory"}
    assert update["ConditionExpression"] == "attribute_exists(doc_id)"
