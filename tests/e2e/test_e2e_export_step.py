"""The workflow's export step (Settings.export_parquet) on the embedded AWS: every document and
archive member gets exports/<doc_id>.parquet, the records `papersift export` gives for the same
results; with the setting off no step runs and nothing is written under exports/; a failed export
is recorded on the item and fails nothing."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from archive_factory import zip_bytes
from pdf_factory import text_pdf

from papersift.export import COLUMN_NAMES
from papersift.settings import Settings
from papersift_cli.local_aws import LocalAws
from papersift_cli.main import main

pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture
def aws(request: pytest.FixtureRequest) -> Iterator[LocalAws]:
    """An embedded AWS whose settings turn the export step on (the test's ``export`` param)."""
    with LocalAws(Settings(page_batch_size=5, ocr_mode="off", export_parquet=request.param)) as local:
        yield local


@pytest.fixture
def inputs(tmp_path: Path) -> list[Path]:
    """A two-page memo and an archive with a member in a folder and a nested archive."""
    memo = tmp_path / "memo.pdf"
    memo.write_bytes(text_pdf(["Quarterly memo about lighthouse maintenance.", "Second page mentions the harbour."]))
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(zip_bytes({"docs/river.txt": b"Alpha notes about the river and its ferries.\n",
                                  "inner.zip": zip_bytes({"deep.txt": b"The deepest note speaks of the mill.\n"})}))
    return [memo, bundle]


def run(aws: LocalAws, inputs: list[Path]) -> list[str]:
    keys = [aws.drop(path) for path in inputs]
    assert aws.wait(keys, timeout=120)
    return keys


def objects(aws: LocalAws, prefix: str) -> list[str]:
    listed = aws.client("s3").list_objects_v2(Bucket=aws.bucket, Prefix=prefix)
    return sorted(obj["Key"] for obj in listed.get("Contents", []))


def parquet_rows(aws: LocalAws, key: str) -> list[dict[str, Any]]:
    body = aws.client("s3").get_object(Bucket=aws.bucket, Key=key)["Body"].read()
    table = pq.read_table(io.BytesIO(body))
    assert table.column_names == list(COLUMN_NAMES)
    return list(table.to_pylist())


def cli_export_of_results(aws: LocalAws, folder: Path) -> list[dict[str, Any]]:
    """`papersift export --unit page --format parquet` of a copy of the bucket's results/."""
    s3 = aws.client("s3")
    for key in objects(aws, "results/"):
        path = folder / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read())
    out = folder / "pages.parquet"
    assert main(["export", str(folder), "--format", "parquet", "--unit", "page", "--out", str(out)]) == 0
    return list(pq.read_table(out).to_pylist())


def place(row: dict[str, Any]) -> tuple[str, str, int]:
    return row["source_name"], row["archive_path"] or "", row["page"]


@pytest.mark.parametrize("aws", [True], indirect=True)
def test_each_document_and_member_gets_its_parquet_of_the_records_papersift_export_gives(
        aws: LocalAws, inputs: list[Path], tmp_path: Path) -> None:
    keys = run(aws, inputs)
    outcomes = {outcome.source_name: outcome for outcome in aws.results.outcomes(keys)}
    items = aws.results.items()
    exported = objects(aws, "exports/")
    assert exported == sorted(f"exports/{doc_id}.parquet" for doc_id in items), "one file a document and member"
    rows: dict[str, list[dict[str, Any]]] = {key: parquet_rows(aws, key) for key in exported}
    memo_id = outcomes["memo.pdf"].doc_id
    memo = rows[f"exports/{memo_id}.parquet"]
    assert [(r["page"], r["text"], r["status"], r["engine"], r["role"]) for r in memo] == [
        (1, "Quarterly memo about lighthouse maintenance.", "clean", "pdfium", "page"),
        (2, "Second page mentions the harbour.", "clean", "pdfium", "page")]
    everything = sorted((row for found in rows.values() for row in found), key=place)
    assert [place(row) for row in everything] == [
        ("bundle.zip", "docs/river.txt", 1), ("bundle.zip", "inner.zip/deep.txt", 1),
        ("memo.pdf", "", 1), ("memo.pdf", "", 2)], "members named by their archive's file and path"
    bundle_id = outcomes["bundle.zip"].doc_id
    assert {row["parent_doc_id"] for row in everything if row["source_name"] == "bundle.zip"} == {bundle_id}
    assert everything == sorted(cli_export_of_results(aws, tmp_path / "copy"), key=place), \
        "the step's records are `papersift export`'s, value for value"
    item = items[memo_id]
    assert (item["export_status"], item["export_key"]) == ("written", f"exports/{memo_id}.parquet")
    assert items[bundle_id]["export_status"] == "written", "an archive without pages of its own: a file with no rows"
    assert rows[f"exports/{bundle_id}.parquet"] == []


@pytest.mark.parametrize("aws", [True], indirect=True)
def test_the_ledger_counts_the_export_state_as_the_execution_history_does(
        aws: LocalAws, inputs: list[Path]) -> None:
    (key,) = run(aws, inputs[:1])
    (execution,) = aws.results.executions()
    (outcome,) = aws.results.outcomes([key])
    report = json.loads(aws.client("s3").get_object(
        Bucket=aws.bucket, Key=f"{outcome.results_prefix}report.json")["Body"].read())
    assert report["cost"]["state_transitions"] == aws.results.state_transitions(execution["executionArn"])


@pytest.mark.parametrize("aws", [False], indirect=True)
def test_with_the_setting_off_no_export_step_runs_and_nothing_is_written_under_exports(
        aws: LocalAws, inputs: list[Path]) -> None:
    keys = run(aws, inputs)
    assert all(outcome.status == "clean" for outcome in aws.results.outcomes(keys))
    assert objects(aws, "exports/") == []
    assert "export" not in {name for name, _ in aws.invocations}
    assert not any("export_status" in item for item in aws.results.items().values())


@pytest.mark.parametrize("aws", [True], indirect=True)
def test_a_failed_export_is_recorded_on_the_item_and_the_document_stays_extracted(
        aws: LocalAws, inputs: list[Path]) -> None:
    real_export = aws.handlers["export"]

    def export_out_of_memory(event: Any, context: Any) -> Any:
        if not event.get("error"):  # the export itself; its Catch target records the failure for real
            raise MemoryError("the export ran out of memory")
        return real_export(event, context)

    aws.handlers["export"] = export_out_of_memory
    (key,) = run(aws, inputs[:1])
    (outcome,) = aws.results.outcomes([key])
    assert (outcome.execution_status, outcome.status) == ("SUCCEEDED", "clean")
    assert objects(aws, f"{outcome.results_prefix}report.json"), "its results stand"
    assert objects(aws, "exports/") == []
    item = aws.results.item(outcome.doc_id or "")
    assert item is not None and item["export_status"] == "failed"
    assert item["export_reason"] == "MemoryError: the export ran out of memory"
    assert "export_key" not in item


def test_papersift_run_with_the_export_step_on_writes_its_results_whole(inputs: list[Path], tmp_path: Path) -> None:
    """`papersift run` deploys the same workflow from its settings: with the export step on, what a
    finished document leaves in the embedded AWS is removed only after that step (it reads the
    page files), and the results written out are the ones an export-off run writes."""
    config = tmp_path / "papersift.toml"
    config.write_text("[papersift]\nexport_parquet = true\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", *map(str, inputs), "--out", str(out), "--config", str(config), "--ocr", "off",
                 "--quiet"]) == 0
    assert json.loads((out / "memo.pdf" / "report.json").read_text(encoding="utf-8"))["status"] == "clean"
    assert (out / "bundle.zip" / "members" / "inner.zip" / "deep.txt" / "report.json").is_file()
    exported = tmp_path / "pages.jsonl"
    assert main(["export", str(out), "--format", "jsonl", "--out", str(exported)]) == 0
    rows = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    assert sorted(map(place, rows)) == [("bundle.zip", "docs/river.txt", 1), ("bundle.zip", "inner.zip/deep.txt", 1),
                                        ("memo.pdf", "", 1), ("memo.pdf", "", 2)]


def test_deleting_a_document_through_the_api_deletes_its_exports_and_its_members(tmp_path: Path) -> None:
    """DELETE /documents/{id} removes what papersift wrote of the document: its and its members'
    exports/<doc_id>.parquet too, or a deleted document would stay in every table over exports/."""
    import base64

    from api_client import ApiClient

    from papersift_cli.api_server import LocalApi

    bundle = zip_bytes({"a/first.txt": b"The first member speaks of rivers.\n"})
    with LocalApi(Settings(ocr_mode="off", export_parquet=True)) as api:
        client = ApiClient(api.url)
        body = {"file_name": "bundle.zip", "content_base64": base64.b64encode(bundle).decode("ascii")}
        doc_id = str(client.json("POST", "/documents:extract", body, expect=202)["doc_id"])
        document = client.wait_finished(doc_id)
        (member,) = [m["doc_id"] for m in document["members"]]
        assert objects(api.aws, "exports/") == sorted([f"exports/{doc_id}.parquet", f"exports/{member}.parquet"])
        client.json("DELETE", f"/documents/{doc_id}")
        versions = api.aws.client("s3").list_object_versions(Bucket=api.aws.bucket, Prefix="exports/")
        assert not versions.get("Versions") and not versions.get("DeleteMarkers"), "every version is gone"
