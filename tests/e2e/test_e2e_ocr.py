"""OCR through the local pipeline (`papersift run`'s embedded AWS): each mode routes as documented,
Textract answered by the real service's recorded responses (tests/textract_replay.py) through
the workflow's retries and catches, and the cost ledger and state transitions as the history
counts them."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.credentials
import botocore.session
import pytest
from attachment_factory import pdf_with_attachments
from pdf_factory import native_and_scanned_pdf, numbered_pdf
from scan_factory import image_bytes, scanned_pdf, text_image
from textract_replay import ReplayingTextract, input_bytes

from papersift.ocr.textract import CLIENT_CONFIG
from papersift.steps.contracts import DocumentOptions
from papersift.steps.ocr import default_engines
from papersift_cli.local_aws import LocalAws

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tesseract") is None,
                                                   reason="tesseract is not installed")]


@pytest.fixture
def aws(local_aws: LocalAws) -> Iterator[LocalAws]:
    local_aws.reset_documents()
    ocr = local_aws.handler_module("ocr")
    saved = ocr.engines
    yield local_aws
    ocr.engines = saved


def with_textract(aws: LocalAws, client: Any) -> None:
    """The OCR function as the stack deploys it where the mode may use Textract: with a client."""
    aws.handler_module("ocr").engines = default_engines(client, page_seconds=60)


def run(aws: LocalAws, tmp_path: Path, name: str, data: bytes, **options: Any) -> tuple[Any, dict[str, Any]]:
    path = tmp_path / name
    path.write_bytes(data)
    key = aws.drop(path, DocumentOptions(**options))
    assert aws.wait([key], timeout=180)
    (outcome,) = aws.results.outcomes([key])
    report = json.loads(aws.results.read(outcome.results_prefix + "report.json"))
    return outcome, report


def only_page(report: dict[str, Any]) -> dict[str, Any]:
    (page,) = report["pages"]
    return page


def test_textract_first_reads_a_picture_with_textract_and_bills_one_detect_call(aws: LocalAws, tmp_path: Path) -> None:
    replay = ReplayingTextract()
    with_textract(aws, replay.client)
    outcome, report = run(aws, tmp_path, "single-page-1.png", input_bytes("single-page-1.png"),
                          ocr_mode="textract-first")
    page = only_page(report)
    assert (outcome.status, page["status"], page["engine"]) == ("partially_recovered", "ocr", "textract")
    assert [call.operation for call in replay.calls] == ["DetectDocumentText"]
    assert replay.calls[0].document == input_bytes("single-page-1.png"), "the picture is sent as the file has it"
    cost = report["cost"]
    assert cost["textract_pages"] == {"DetectDocumentText": 1} and cost["usd"]["textract"] == 0.0015
    assert page["ocr"]["api"] == "DetectDocumentText"


def test_tables_are_asked_of_textract_only_when_the_document_wants_them(aws: LocalAws, tmp_path: Path) -> None:
    replay = ReplayingTextract()
    with_textract(aws, replay.client)
    outcome, report = run(aws, tmp_path, "test.png", input_bytes("test.png"), ocr_mode="textract-first",
                          extract_tables=True)
    assert [(c.operation, c.params["FeatureTypes"]) for c in replay.calls] == [("AnalyzeDocument", ["TABLES"])]
    assert only_page(report)["tables"] >= 1
    markdown = aws.results.read(outcome.results_prefix + "document.md").decode()
    assert "<!-- table page=1 index=0 -->" in markdown and "|---|" in markdown
    assert report["cost"]["textract_pages"] == {"AnalyzeDocument": 1}
    assert report["cost"]["usd_all_textract"] == 0.015  # priced at AnalyzeDocument: tables were asked


def test_textract_throttled_twice_then_answering_reads_the_page(aws: LocalAws, tmp_path: Path) -> None:
    """The workflow retries OcrThrottledError with backoff (waits scaled to zero here)."""
    replay = ReplayingTextract(config=CLIENT_CONFIG)
    replay.fail_next("ThrottlingException", "Rate exceeded", times=2 * 2)  # two SDK attempts per try
    with_textract(aws, replay.client)
    _, report = run(aws, tmp_path, "single-page-1.png", input_bytes("single-page-1.png"), ocr_mode="textract-only")
    page = only_page(report)
    assert (page["status"], page["engine"]) == ("ocr", "textract")
    assert len(replay.calls) == 5, "the four refusals, then the answer"
    assert [name for name, _ in aws.invocations].count("ocr") >= 3, "the workflow retried the page"


def test_textract_throttled_past_the_retries_leaves_the_page_needing_ocr_with_the_reason(
    aws: LocalAws, tmp_path: Path,
) -> None:
    replay = ReplayingTextract(config=CLIENT_CONFIG)
    replay.fail_next("ProvisionedThroughputExceededException", "over the account's TPS", times=1000)
    with_textract(aws, replay.client)
    outcome, report = run(aws, tmp_path, "single-page-1.png", input_bytes("single-page-1.png"),
                          ocr_mode="textract-only")
    page = only_page(report)
    assert page["status"] == "needs_ocr" and "refused for load past the retries" in page["reason"]
    assert outcome.status == "needs_review" and not outcome.broken


def test_textract_first_reads_a_page_throttled_past_the_retries_with_tesseract(aws: LocalAws, tmp_path: Path) -> None:
    replay = ReplayingTextract(config=CLIENT_CONFIG)
    replay.fail_next("LimitExceededException", "too many concurrent requests", times=1000)
    with_textract(aws, replay.client)
    _, report = run(aws, tmp_path, "scan.png", image_bytes(text_image()), ocr_mode="textract-first")
    page = only_page(report)
    assert (page["status"], page["engine"]) == ("ocr", "tesseract")
    assert any("Textract not used" in note for note in page["ocr"]["notes"])


@pytest.mark.parametrize("code", ["InvalidParameterException", "UnsupportedDocumentException", "BadDocumentException"])
def test_a_page_textract_rejects_ends_failed_with_the_services_reason(aws: LocalAws, tmp_path: Path,
                                                                       code: str) -> None:
    replay = ReplayingTextract()
    replay.fail_next(code, f"the service says {code}")
    with_textract(aws, replay.client)
    outcome, report = run(aws, tmp_path, "single-page-1.png", input_bytes("single-page-1.png"),
                          ocr_mode="textract-only")
    page = only_page(report)
    assert page["status"] == "failed" and f"the service says {code}" in page["reason"]
    assert [e["code"] for e in page["errors"]] == ["ocr_rejected"]
    assert outcome.status == "corrupt_unrecoverable" and not outcome.broken


def test_textract_without_credentials_falls_back_to_tesseract_with_a_warning(aws: LocalAws, tmp_path: Path) -> None:
    session = botocore.session.Session()
    session.register_component("credential_provider", botocore.credentials.CredentialResolver(providers=[]))
    client = session.create_client("textract", region_name="us-east-1", config=CLIENT_CONFIG)
    with_textract(aws, client)
    _, report = run(aws, tmp_path, "scan.png", image_bytes(text_image()), ocr_mode="textract-first")
    page = only_page(report)
    assert (page["status"], page["engine"], page["errors"]) == ("ocr", "tesseract", [])
    assert any("NoCredentialsError" in note for note in page["ocr"]["notes"])


def test_local_only_never_calls_textract_even_when_tesseract_is_unsure(aws: LocalAws, tmp_path: Path) -> None:
    replay = ReplayingTextract()
    with_textract(aws, replay.client)
    faint = text_image(["faint grey words", "on a noisy page"], font_size=14).point(lambda v: 170 if v < 128 else v)
    run(aws, tmp_path, "faint.png", image_bytes(faint), ocr_mode="local-only")
    run(aws, tmp_path, "scan.png", image_bytes(text_image()), ocr_mode="local-only")
    assert replay.calls == []


def test_a_local_run_without_a_textract_client_reads_textract_first_pages_with_tesseract(
    aws: LocalAws, tmp_path: Path,
) -> None:
    """Locally (moto) Textract is unavailable unless a client is configured: Tesseract reads the
    page, the report says why, nothing crashes."""
    outcome, report = run(aws, tmp_path, "scan.png", image_bytes(text_image()), ocr_mode="textract-first")
    page = only_page(report)
    assert (outcome.status, page["engine"]) == ("partially_recovered", "tesseract")
    assert any("no Textract client is configured" in note for note in page["ocr"]["notes"])


def test_ocr_off_leaves_scanned_pages_needing_ocr_and_calls_no_engine(aws: LocalAws, tmp_path: Path) -> None:
    _, report = run(aws, tmp_path, "mixed.pdf", native_and_scanned_pdf(), ocr_mode="off")
    assert [p["status"] for p in report["pages"]] == ["clean", "needs_ocr"]
    assert "ocr" not in {name for name, _ in aws.invocations} and "ocr_plan" not in {n for n, _ in aws.invocations}


def test_state_transitions_in_the_report_are_those_the_execution_history_counts(aws: LocalAws,
                                                                                tmp_path: Path) -> None:
    """The ledger's count, from the workflow's shape, equals the history's for a native document
    in several batches, a document with a scanned page, a four-page scan and a picture. The OCR
    stage costs 3 transitions a document (PlanOcr, its Choice, the Map) and 1 a page: at most 2 a
    page from three OCR pages on."""
    # names no other test of this module drops: the executions of earlier tests stay listed
    documents = {"t-native.pdf": numbered_pdf(12), "t-mixed.pdf": native_and_scanned_pdf(),
                 "t-photo.png": image_bytes(text_image()), "t-scan.pdf": scanned_pdf([text_image()] * 4),
                 "t-holder.pdf": pdf_with_attachments("A cover page that holds two files.",
                                                      {"a.txt": b"First attached note.\n",
                                                       "b.pdf": numbered_pdf(2)})}
    keys = {}
    for name, data in documents.items():
        (tmp_path / name).write_bytes(data)
        keys[name] = aws.drop(tmp_path / name)
    assert aws.wait(list(keys.values()), timeout=180)
    counted = {}
    for execution in aws.results.executions():
        if execution["input"]["key"] not in keys.values():
            continue  # an earlier test's
        name = execution["input"]["source_name"]
        report = json.loads(aws.results.read(f"results/{execution['input']['doc_id']}/report.json"))
        counted[name] = (aws.results.state_transitions(execution["executionArn"]),
                         report["cost"]["state_transitions"])
    assert all(history == estimate for history, estimate in counted.values()), counted
    # the fixture's batches are 5 pages: 12 pages in 3 batches (Plan, Route, the Map, 3 batches,
    # OcrNeeded, Assemble)
    assert counted["t-native.pdf"][0] == 2 + 1 + 3 + 1 + 1
    # Plan, Route, PlanOcr, Choose, Map, 1 page, AfterOcr, Assemble
    assert counted["t-photo.png"][0] == 2 + 2 + 1 + 1 + 1 + 1
    text_layer = 2 + 1 + 1 + 1 + 1  # Plan, Route, the Map, 1 batch, OcrNeeded, Assemble
    ocr_stage = counted["t-scan.pdf"][0] - text_layer
    assert ocr_stage == 3 + 4 + 1 and ocr_stage / 4 <= 2  # with AfterOcr
    # its text layer, then Unpack, ChooseMemberMapKind, the member Map, and each member's own states
    member_txt, member_pdf = 2 + 1 + 1 + 1 + 1, 2 + 1 + 1 + 1 + 1
    assert counted["t-holder.pdf"][0] == text_layer + 3 + member_txt + member_pdf


def test_past_the_threshold_ocr_pages_run_in_a_distributed_map_reading_the_manifest(aws: LocalAws,
                                                                                   tmp_path: Path) -> None:
    """A picture of more frames than distributed_map_threshold (40): PlanOcr writes the items to
    work/<doc_id>/ocr/items.json and the OCR Distributed Map reads them from there; every frame is
    read and reported. The OCR step is a fast stand-in here (Tesseract on 45 frames would take
    minutes): the route, the manifest and the results are the workflow's."""
    from papersift.ocr.pages import OcrEngines
    from papersift.ocr.reading import TESSERACT, OcrReading

    def quick(image: Any, languages: Any) -> OcrReading:
        return OcrReading(engine=TESSERACT, text="A frame of the long scan, read.", confidence=0.95, words=7,
                          seconds=0.01)

    aws.handler_module("ocr").engines = OcrEngines(tesseract=quick, textract=None)
    # each frame its own: identical frames would be read once (the OCR plan's survey)
    frames = [text_image([f"frame {n}"], font_size=20, width=200) for n in range(1, 46)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    outcome, report = run(aws, tmp_path, "long-scan.tif", out.getvalue())
    assert [p["status"] for p in report["pages"]] == ["ocr"] * 45
    plan_ocr_results = [name for name, _ in aws.invocations if name == "ocr_plan"]
    assert plan_ocr_results == ["ocr_plan"]
    assert aws.results.read(f"work/{outcome.doc_id}/ocr/items.json").startswith(b"[{")
    (execution,) = [e for e in aws.results.executions() if e["input"]["key"].endswith("long-scan.tif")]
    entered = set()
    for page in aws.client("stepfunctions").get_paginator("get_execution_history").paginate(
            executionArn=execution["executionArn"]):
        entered |= {e["stateEnteredEventDetails"]["name"] for e in page["events"] if "stateEnteredEventDetails" in e}
    assert "OcrPagesOfManifest" in entered and "OcrPagesInline" not in entered
