"""The metrics the stack's dashboard and alarms read (papersift.metrics), as the real handlers
emit them: CloudWatch embedded metric format on stdout, in the powertools namespace."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from handler_env import BUCKET, load_event, load_handler
from pdf_factory import native_and_scanned_pdf

from papersift import metrics
from papersift.errors import OcrThrottledError
from papersift.settings import Settings
from papersift.steps.ocr import default_engines


def emitted(stdout: str) -> dict[str, float]:
    """Metric values by name from the EMF documents printed, summed; each checked to be in the
    namespace and dimensions the stack reads."""
    values: dict[str, float] = {}
    for line in stdout.splitlines():
        if not line.startswith("{") or '"_aws"' not in line:
            continue
        document = json.loads(line)
        (directive,) = document["_aws"]["CloudWatchMetrics"]
        assert directive["Dimensions"] == [["service"]] and document["service"] == "papersift"
        for metric in directive["Metrics"]:
            values[metric["Name"]] = values.get(metric["Name"], 0) + sum(
                document[metric["Name"]] if isinstance(document[metric["Name"]], list) else [document[metric["Name"]]])
    return values


def test_assemble_emits_a_finished_documents_pages_and_cost_once(aws, lambda_context, capsys) -> None:
    """A two-page PDF whose second page is a scan: one document, two pages, one OCR page, no
    Textract (a local run has no client), and the ledger's total as the cost."""
    request = load_event("ocr-plan-input")
    aws["s3"].put_object(Bucket=BUCKET, Key=request["key"], Body=native_and_scanned_pdf())
    for batch in request["plan"]["batches"]:
        load_handler("extract").handler(batch, lambda_context)
    load_handler("ocr_plan").handler(request, lambda_context)
    load_handler("ocr").handler(load_event("ocr-input"), lambda_context)
    capsys.readouterr()
    ref = {k: request[k] for k in ("doc_id", "bucket", "key", "source_name")}
    load_handler("assemble").handler({**ref, "plan": request["plan"]}, lambda_context)
    values = emitted(capsys.readouterr().out)
    item = aws["table"].get_item(Key={"doc_id": request["doc_id"]})["Item"]
    assert {name: values[name] for name in (metrics.DOCUMENTS, metrics.PAGES, metrics.OCR_PAGES,
                                            metrics.TEXTRACT_PAGES)} == {
        metrics.DOCUMENTS: 1, metrics.PAGES: 2, metrics.OCR_PAGES: 1, metrics.TEXTRACT_PAGES: 0}
    assert values[metrics.COST_USD] == pytest.approx(float(item["cost"]["usd"]["total"]))
    assert values[metrics.COST_USD] > 0


def test_an_archive_member_is_counted_in_its_archive_not_again_on_its_own(aws, lambda_context, capsys) -> None:
    """The archive's report sums its members' pages and ledgers: a member's own assemble emits none."""
    key = "members/dparent/notes.txt"
    aws["s3"].put_object(Bucket=BUCKET, Key=key, Body=b"minutes of the meeting\n")
    ref = {"doc_id": "dmember", "bucket": BUCKET, "key": key, "source_name": "notes.txt",
           "parent_doc_id": "dparent", "archive_path": "notes.txt"}
    plan = load_handler("plan").handler(ref, lambda_context)
    for batch in plan["batches"]:
        load_handler("extract").handler(batch, lambda_context)
    capsys.readouterr()
    load_handler("assemble").handler({**ref, "plan": plan}, lambda_context)
    values = emitted(capsys.readouterr().out)
    assert values.get("Documents_clean") == 1
    assert metrics.DOCUMENTS not in values and metrics.COST_USD not in values


def test_a_textract_throttle_is_counted_and_the_page_handed_back_to_the_workflow(
    aws, lambda_context, capsys, monkeypatch
) -> None:
    """textract-first on a scanned page while Textract refuses for load: the step fails with
    OcrThrottledError (Step Functions retries it) and the throttle is one TextractThrottles."""
    request = load_event("ocr-plan-input")
    aws["s3"].put_object(Bucket=BUCKET, Key=request["key"], Body=native_and_scanned_pdf())
    for batch in request["plan"]["batches"]:
        load_handler("extract").handler(batch, lambda_context)
    load_handler("ocr_plan").handler(request, lambda_context)
    ocr = load_handler("ocr")
    client: Any = boto3.client("textract")
    stubber = Stubber(client)
    for _ in range(3):
        stubber.add_client_error("detect_document_text", service_error_code="ThrottlingException",
                                 service_message="Rate exceeded", http_status_code=400)
    stubber.activate()
    monkeypatch.setattr(ocr, "engines", default_engines(client, page_seconds=30))
    monkeypatch.setattr(ocr, "settings", Settings(ocr_mode="textract-first"))
    capsys.readouterr()
    with pytest.raises(OcrThrottledError):
        ocr.handler(load_event("ocr-input"), lambda_context)
    assert emitted(capsys.readouterr().out) == {metrics.TEXTRACT_THROTTLES: 1}
