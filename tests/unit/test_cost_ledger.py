"""The cost ledger's S3 requests, DynamoDB, SQS, API Gateway and log estimates, through the real
local pipeline (process_document on a LocalDirStore)."""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_factory import zip_bytes

from papersift.ledger import cost_ledger, merge_ledgers
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.steps.contracts import DocumentRef, document_id
from papersift.storage import LocalDirStore

MEMORY = {"plan": 1024, "extract": 2048, "ocr_plan": 512, "ocr": 2048, "unpack": 1024, "assemble": 1024}


class BilledRequests:
    """Every call the pipeline makes on the store, sorted as S3 bills it, kept apart from
    ``CountingStore`` so the two are checked against each other."""

    PUT_CLASS = frozenset({"put", "exists", "upload_file"})  # exists is a one-key LIST on S3
    GET_CLASS = frozenset({"get", "get_with_metadata", "metadata", "size", "download_file"})

    def __init__(self, store: LocalDirStore) -> None:
        self.store = store
        self.puts = 0
        self.gets = 0

    def __getattr__(self, name: str):
        method = getattr(self.store, name)

        def billed(*args, **kwargs):
            result = method(*args, **kwargs)
            if name in self.PUT_CLASS:
                self.puts += 1
            elif name in self.GET_CLASS:
                self.gets += 1
            elif name == "list_keys":
                self.puts += max(1, -(-len(result) // 1000))
            return result

        return billed


def _dropped(tmp_path: Path, name: str, data: bytes) -> tuple[BilledRequests, DocumentRef]:
    store = LocalDirStore(tmp_path / "bucket")
    key = f"incoming/{name}"
    store.put(key, data)
    return BilledRequests(store), DocumentRef(doc_id=document_id("local", key), bucket="local", key=key,
                                              source_name=name)


def test_a_pdfs_s3_requests_in_the_ledger_are_every_request_its_steps_made(tmp_path, pdf_factory):
    billed, document = _dropped(tmp_path, "memo.pdf", pdf_factory.numbered_pdf(12))
    report = process_document(billed, document, Settings(page_batch_size=5), memory=MEMORY)  # type: ignore[arg-type]
    cost = report.cost
    assert cost["lambda_invocations"]["extract"] == 3
    assert cost["s3_requests"] == {"put": billed.puts, "get": billed.gets}
    assert billed.puts > 12, "each page's work file is a PUT"


def test_an_archives_s3_requests_add_its_members_through_merge(tmp_path, pdf_factory):
    archive = zip_bytes({"a.pdf": pdf_factory.numbered_pdf(2), "notes.txt": b"plain words for a note"})
    billed, document = _dropped(tmp_path, "bundle.zip", archive)
    cost = process_document(billed, document, Settings(), memory=MEMORY).cost  # type: ignore[arg-type]
    assert cost["s3_requests"] == {"put": billed.puts, "get": billed.gets}
    # the archive came in one SQS message and API upload; its two members wrote their own items
    assert cost["sqs_requests"] == 3 and cost["api_requests"] == 3
    assert cost["dynamodb_writes"] == 3 + 2


def test_shape_estimates_follow_the_settings_and_add_to_the_total():
    settings = Settings(ledger_log_bytes_per_invocation=1_000_000, ledger_api_requests_per_document=0)
    from papersift.ledger import Usage

    usage = [Usage("plan", 1024, 1.0, s3_puts=10, s3_gets=4), Usage("assemble", 1024, 1.0, s3_puts=3, s3_gets=2)]
    cost = cost_ledger([], usage, 3, settings)
    assert cost["log_bytes"] == 2_000_000 and cost["api_requests"] == 0
    assert cost["usd"]["logs"] == pytest.approx(2e6 / 1e9 * 0.50)
    assert cost["usd"]["s3"] == pytest.approx(13 * 0.000005 + 6 * 0.0000004)
    assert cost["usd"]["total"] == pytest.approx(
        sum(v for k, v in cost["usd"].items() if k != "total"), abs=1e-6)
    member = cost_ledger([], usage, 3, settings, member=True)
    assert (member["sqs_requests"], member["dynamodb_writes"]) == (0, 1)
    assert merge_ledgers([cost, member])["s3_requests"] == {"put": 26, "get": 12}
