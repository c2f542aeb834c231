"""The embedded AWS behaves like the stack where it matters: dedupe, Retry, Catch, DLQ."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus, unquote_plus

import pytest

from papersift_cli.local_aws import LocalAws


@pytest.fixture
def aws(local_aws: LocalAws) -> LocalAws:
    local_aws.reset_documents()
    saved = dict(local_aws.handlers)
    yield local_aws  # type: ignore[misc]
    local_aws.handlers.clear()
    local_aws.handlers.update(saved)


def _text_file(tmp_path: Path, name: str = "note.txt") -> Path:
    path = tmp_path / name
    path.write_text("The ferry leaves at dawn from the northern pier.\n", encoding="utf-8")
    return path


def test_a_duplicate_notification_starts_no_second_execution(aws: LocalAws, tmp_path: Path) -> None:
    key = aws.drop(_text_file(tmp_path, "dupe.txt"))
    assert aws.wait([key], timeout=60)
    head = aws.client("s3").head_object(Bucket=aws.bucket, Key=key)
    record = {"eventName": "ObjectCreated:Put", "eventSource": "aws:s3",
              "s3": {"bucket": {"name": aws.bucket},
                     "object": {"key": quote_plus(key), "eTag": head["ETag"].strip('"'),
                                "versionId": head["VersionId"], "size": head["ContentLength"]}}}
    aws.client("sqs").send_message(QueueUrl=aws.queue_url, MessageBody=json.dumps({"Records": [record]}))
    assert aws.wait([key], timeout=60)
    assert [name for name, _ in aws.invocations].count("ingest") == 2
    assert len([e for e in aws.results.executions() if e["input"]["key"] == key]) == 1
    assert len(aws.results.items()) == 1
    (outcome,) = aws.results.outcomes([key])
    assert outcome.status == "clean"


def test_a_handler_exception_is_caught_and_recorded_as_failed(aws: LocalAws, tmp_path: Path) -> None:
    def extract_on_fire(event: Any, context: Any) -> Any:
        raise RuntimeError("disk on fire while extracting")

    aws.handlers["extract"] = extract_on_fire
    key = aws.drop(_text_file(tmp_path))
    assert aws.wait([key], timeout=60)
    (outcome,) = aws.results.outcomes([key])
    assert outcome.execution_status == "SUCCEEDED"
    assert outcome.status == "failed"
    assert "disk on fire" in outcome.reason or "RuntimeError" in outcome.reason
    assert not outcome.broken


def test_a_transient_lambda_error_is_retried_without_waiting(aws: LocalAws, tmp_path: Path) -> None:
    real_extract = aws.handlers["extract"]
    service_exception = type("Lambda.ServiceException", (Exception,), {})
    calls: list[int] = []

    def flaky_extract(event: Any, context: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise service_exception("throttled by a test")
        return real_extract(event, context)

    aws.handlers["extract"] = flaky_extract
    key = aws.drop(_text_file(tmp_path))
    assert aws.wait([key], timeout=20)  # the ASL waits 2 s before a retry; patched to 0 here
    (outcome,) = aws.results.outcomes([key])
    assert outcome.status == "clean"
    assert len(calls) == 2


def test_a_poison_message_ends_in_the_dlq_and_the_file_is_reported_broken(aws: LocalAws, tmp_path: Path) -> None:
    def ingest_broken(event: Any, context: Any) -> Any:
        raise ValueError("ingest cannot parse anything today")

    aws.handlers["ingest"] = ingest_broken
    key = aws.drop(_text_file(tmp_path, "poison.txt"))
    assert aws.wait([key], timeout=60)
    (outcome,) = aws.results.outcomes([key])
    assert outcome.execution_status is None and outcome.broken
    assert "DLQ" in outcome.reason
    dlq = aws.client("sqs").receive_message(QueueUrl=aws.dlq_url, MaxNumberOfMessages=10)
    assert len(dlq.get("Messages", [])) == 1
    assert [name for name, _ in aws.invocations].count("ingest") == 5


def test_wait_does_not_return_before_every_wanted_key_has_started(aws: LocalAws, tmp_path: Path) -> None:
    """A key nothing was dropped for never starts and is not in the DLQ: wait must time out, even with
    the queue empty and nothing running (it used to report success)."""
    key = aws.drop(_text_file(tmp_path))
    assert aws.wait([key], timeout=60)
    started = time.monotonic()
    assert aws.wait([key, "incoming/never-dropped.txt"], timeout=2) is False
    assert time.monotonic() - started >= 2


@pytest.mark.parametrize("upload", ["put", "multipart"])
def test_an_uploads_options_are_on_the_object_when_its_notification_is_sent(
        aws: LocalAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, upload: str) -> None:
    """moto notified before setting the user metadata: the plan could read an upload without its
    options (the suite once saw OCR ask Textract for tables and the ledger price it without)."""
    from moto.s3 import notifications

    from papersift.steps.contracts import DocumentOptions

    seen: list[dict[str, str]] = []
    send = notifications._send_sqs_message

    def looking(account_id: str, event_body: Any, queue_name: str, region_name: str) -> None:
        for record in event_body["Records"]:
            key = unquote_plus(record["s3"]["object"]["key"])
            seen.append(aws.client("s3").head_object(Bucket=aws.bucket, Key=key)["Metadata"])
        send(account_id, event_body, queue_name, region_name)

    monkeypatch.setattr(notifications, "_send_sqs_message", looking)
    options = DocumentOptions(extract_tables=True, ocr_mode="off")
    path = _text_file(tmp_path)
    if upload == "put":
        key = aws.drop(path, options)
    else:  # as `aws s3 cp` sends a large file
        s3, key = aws.client("s3"), "incoming/" + path.name
        started = s3.create_multipart_upload(Bucket=aws.bucket, Key=key, Metadata=options.metadata())
        part = s3.upload_part(Bucket=aws.bucket, Key=key, UploadId=started["UploadId"], PartNumber=1,
                              Body=path.read_bytes())
        s3.complete_multipart_upload(Bucket=aws.bucket, Key=key, UploadId=started["UploadId"],
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert aws.wait([key], timeout=60)
    assert seen and all(metadata == options.metadata() for metadata in seen), seen
    (outcome,) = aws.results.outcomes([key])
    assert outcome.status == "clean"
