"""The export step's Parquet through the API, over real HTTP on loopback: with export_parquet on,
GET /documents/{id} says what the step recorded and GET /documents/{id}/export hands out a presigned
GET of exports/<doc_id>.parquet, for the document and for each archive member."""

from __future__ import annotations

import base64
import io
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from api_client import ApiClient
from archive_factory import zip_bytes
from pdf_factory import text_pdf

from papersift.export import COLUMN_NAMES
from papersift.settings import Settings
from papersift_cli.api_server import LocalApi

pq = pytest.importorskip("pyarrow.parquet")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def api() -> Iterator[LocalApi]:
    with LocalApi(Settings(export_parquet=True, ocr_mode="off")) as served:
        yield served


@pytest.fixture(scope="module")
def client(api: LocalApi) -> ApiClient:
    return ApiClient(api.url)


def post(client: ApiClient, name: str, data: bytes) -> str:
    body = {"file_name": name, "content_base64": base64.b64encode(data).decode("ascii")}
    return str(client.json("POST", "/documents:extract", body, expect=202)["doc_id"])


def submit(client: ApiClient, name: str, data: bytes) -> dict[str, Any]:
    return client.wait_finished(post(client, name, data))


def exported_rows(client: ApiClient, doc_id: str) -> list[dict[str, Any]]:
    link = client.json("GET", f"/documents/{doc_id}/export")
    assert link["content_type"] == "application/vnd.apache.parquet"
    response = requests.get(link["url"], timeout=30)  # no credentials: the URL is presigned
    assert response.status_code == 200 and len(response.content) == link["size"]
    table = pq.read_table(io.BytesIO(response.content))
    assert table.column_names == list(COLUMN_NAMES)
    return list(table.to_pylist())


def test_a_documents_export_is_described_and_fetched_by_its_presigned_link(client: ApiClient) -> None:
    document = submit(client, "tide tables.pdf", text_pdf(["High water at the harbour is at noon.",
                                                           "Low water follows six hours later."]))
    doc_id = document["doc_id"]
    assert document["export"] == {"status": "written", "key": f"exports/{doc_id}.parquet", "reason": ""}
    assert document["links"]["export"] == f"/documents/{doc_id}/export"
    rows = exported_rows(client, doc_id)
    assert [(row["page"], row["status"]) for row in rows] == [(1, "clean"), (2, "clean")]
    assert "High water" in rows[0]["text"] and rows[0]["source_name"] == "tide tables.pdf"


def test_each_archive_member_has_its_own_export_named_by_its_path(client: ApiClient) -> None:
    archive = submit(client, "bundle.zip", zip_bytes({"notes/ferry.txt": b"The ferry leaves at dawn.\n"}))
    [member] = archive["members"]
    assert member["status"] == "clean", member
    described = client.json("GET", f"/documents/{member['doc_id']}")
    assert described["export"] == {"status": "written", "key": f"exports/{member['doc_id']}.parquet", "reason": ""}
    [row] = exported_rows(client, member["doc_id"])
    assert (row["source_name"], row["archive_path"]) == ("bundle.zip", "notes/ferry.txt")
    assert "ferry leaves at dawn" in row["text"]


def test_an_assembled_document_says_its_export_is_pending_until_the_step_has_run(
        api: LocalApi, client: ApiClient) -> None:
    real_export, release = api.aws.handlers["export"], threading.Event()

    def held_export(event: Any, context: Any) -> Any:
        assert release.wait(60), "the test never released the export"
        return real_export(event, context)

    api.aws.handlers["export"] = held_export
    try:
        doc_id = post(client, "harbour log.txt", b"The harbour log records every ship that docks.\n")
        deadline = time.monotonic() + 60
        while (document := client.json("GET", f"/documents/{doc_id}"))["status"] != "clean":
            assert time.monotonic() < deadline, document
            time.sleep(0.1)
        assert document["export"] == {"status": "pending", "key": None, "reason": ""}, "assembled, not exported"
        response = client.call("GET", f"/documents/{doc_id}/export")
        assert response.status_code == 404 and "running" in response.json()["error"]["message"], response.text
    finally:
        release.set()
        api.aws.handlers["export"] = real_export
    assert client.wait_finished(doc_id)["export"]["status"] == "written"
    assert "harbour log records" in exported_rows(client, doc_id)[0]["text"]
