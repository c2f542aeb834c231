"""Faults injected into the local pipeline (`papersift run`'s embedded AWS), and what each leaves:
every input ends with a final status, ran once, with one DynamoDB item and one set of results.

Faults tested elsewhere, not repeated here:
- Textract throttled, then answering: ``test_e2e_ocr.py::test_textract_throttled_twice_then_answering_reads_the_page``
  (and throttled past the workflow's retries: ``..._throttled_past_the_retries_...`` there);
- a duplicate S3 notification: ``test_e2e_local_aws.py::test_a_duplicate_notification_starts_no_second_execution``;
- a poison message, dead-lettered after ``MAX_RECEIVE_COUNT`` receives and reported:
  ``test_e2e_local_aws.py::test_a_poison_message_ends_in_the_dlq_and_the_file_is_reported_broken``;
- a drop waiting for admission longer than that, never dead-lettered: ``test_e2e_admission.py``.
A page past its deadline belongs to per-page isolation (``tests/unit/test_isolation.py`` and the
extract step's tests), not here.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from botocore.exceptions import ClientError, ConnectionClosedError
from pdf_factory import numbered_pdf

from papersift_cli.local_aws import LocalAws
from papersift_cli.local_aws.outcomes import DocumentOutcome

#: the pages of the several-batch document; the module's LocalAws cuts batches of 5 (conftest)
PAGES = 12
TOP_LEVEL_RESULTS = ("document.md", "report.html", "report.json", "text.txt")


@pytest.fixture
def aws(local_aws: LocalAws) -> Iterator[LocalAws]:
    local_aws.reset_documents()
    saved = dict(local_aws.handlers)
    yield local_aws
    local_aws.handlers.clear()
    local_aws.handlers.update(saved)


def drop(aws: LocalAws, tmp_path: Path, name: str, data: bytes | str) -> str:
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return aws.drop(path)


def versions(aws: LocalAws, prefix: str) -> Counter[str]:
    """Key -> how many times it was written (the bucket is versioned)."""
    found: Counter[str] = Counter()
    for page in aws.client("s3").get_paginator("list_object_versions").paginate(Bucket=aws.bucket, Prefix=prefix):
        found.update(entry["Key"] for entry in page.get("Versions", []))
    return found


def item(outcome: DocumentOutcome) -> dict[str, Any]:
    assert outcome.item is not None, f"{outcome.key} has no item"
    return outcome.item


def assert_each_ran_once(aws: LocalAws, keys: list[str]) -> list[DocumentOutcome]:
    """Every input has a final status and one execution; the table holds one item per document; the
    bucket one set of results per document (the top-level files and a JSON per page read), each
    written once; nothing is in the dead-letter queue."""
    outcomes = aws.results.outcomes(keys)
    assert [o.key for o in outcomes if o.broken] == []
    runs = Counter(e["input"]["key"] for e in aws.results.executions() if e["input"]["key"] in keys)
    assert runs == Counter(keys)
    doc_ids = {o.doc_id for o in outcomes}
    assert set(aws.results.items()) == doc_ids
    results = versions(aws, "results/")
    assert {key.split("/")[1] for key in results} == doc_ids
    for outcome in outcomes:
        top = {outcome.results_prefix + name for name in TOP_LEVEL_RESULTS}
        mine = {key for key in results if key.startswith(outcome.results_prefix)}
        assert top <= mine, outcome.key
        assert all(re.fullmatch(r"pages/\d{5}\.json", key.removeprefix(outcome.results_prefix)) for key in mine - top)
    assert {key: count for key, count in results.items() if count > 1} == {}
    assert aws.dead_keys() == set()
    return outcomes


def extract_calls(aws: LocalAws) -> list[tuple[str, int]]:
    """Record the (key, batch index) of every extract invocation (the real handler still runs)."""
    calls: list[tuple[str, int]] = []
    real = aws.handlers["extract"]

    def counted(event: Any, context: Any) -> Any:
        calls.append((event["key"], event["batch_index"]))
        return real(event, context)

    aws.handlers["extract"] = counted
    return calls


def test_an_invocation_crashing_on_one_batch_is_retried_and_the_other_batches_run_once(
    aws: LocalAws, tmp_path: Path
) -> None:
    """The middle batch of a 12-page PDF (3 batches of 5) writes its pages, then its invocation dies
    (Lambda.ServiceException: the service lost it): the workflow retries that batch alone, the retry
    finds its pages written and skips them; the other batches and a file dropped alongside run once."""
    lost_invocation = type("Lambda.ServiceException", (Exception,), {})
    calls = extract_calls(aws)
    counted = aws.handlers["extract"]
    crashed: list[int] = []

    def crashing_once(event: Any, context: Any) -> Any:
        result = counted(event, context)
        if event["batch_index"] == 1 and not crashed:
            crashed.append(1)
            raise lost_invocation("the sandbox died after writing the pages")
        return result

    aws.handlers["extract"] = crashing_once
    keys = [drop(aws, tmp_path, "batches.pdf", numbered_pdf(PAGES)),
            drop(aws, tmp_path, "alongside.txt", "A plain note dropped next to the PDF.\n")]
    assert aws.wait(keys, timeout=120)
    pdf, note = assert_each_ran_once(aws, keys)
    assert (pdf.status, item(pdf)["page_count"], note.status) == ("clean", PAGES, "clean")
    assert Counter(index for key, index in calls if key == pdf.key) == Counter({0: 1, 1: 2, 2: 1})
    page_writes = versions(aws, f"work/{pdf.doc_id}/pages/")
    assert len(page_writes) == PAGES and set(page_writes.values()) == {1}, "the retry wrote no page twice"
    text = aws.results.read(pdf.results_prefix + "text.txt").decode()
    assert [text.count(f"page number {n} of") for n in (1, 6, 10, 12)] == [1, 1, 1, 1]


def test_our_code_crashing_on_one_batch_fails_that_document_with_the_reason_and_spares_the_others(
    aws: LocalAws, tmp_path: Path
) -> None:
    """An exception of ours in one batch, every time: the workflow does not retry it (only Lambda's
    own errors are); the document ends with a recorded status that is not trusted, naming the error;
    the file dropped alongside is clean."""
    real = aws.handlers["extract"]

    def broken_batch(event: Any, context: Any) -> Any:
        if event["batch_index"] == 1:
            raise RuntimeError("batch 1 hit a bug of ours")
        return real(event, context)

    aws.handlers["extract"] = broken_batch
    keys = [drop(aws, tmp_path, "buggy.pdf", numbered_pdf(PAGES)),
            drop(aws, tmp_path, "spared.txt", "This note must not notice the other file's bug.\n")]
    assert aws.wait(keys, timeout=120)
    pdf, note = assert_each_ran_once(aws, keys)
    assert item(pdf)["trusted"] is False and pdf.status != "clean"
    assert "bug of ours" in json.dumps(json.loads(aws.results.read(pdf.results_prefix + "report.json")))
    assert note.status == "clean"


def drop_connection_once(aws: LocalAws, function: str, prefix: str) -> list[str]:
    """The function's first PutObject under ``prefix`` never reaches S3 (the connection is reset, as
    under load); botocore retries it. Returns the keys refused. (A handler's response would not
    stop moto's from storing the object: every before-send handler runs, the first answer wins.)"""
    refused: list[str] = []
    client = aws.handler_module(function).s3

    def reset(request: Any, **kwargs: Any) -> None:
        path = urlparse(request.url).path
        if not refused and f"/{prefix}" in path:
            refused.append(path[path.index(f"/{prefix}") + 1:])
            raise ConnectionClosedError(endpoint_url=request.url)

    client.meta.events.register_first("before-send.s3.PutObject", reset, unique_id="papersift-reset")
    return refused


def test_a_page_write_that_never_reached_s3_is_retried_by_the_sdk_and_written_once(
    aws: LocalAws, tmp_path: Path
) -> None:
    """The first page JSON an extract step writes is lost on the way: the SDK's retry writes it, the
    document is clean, every page written once."""
    refused = drop_connection_once(aws, "extract", "work/")
    try:
        keys = [drop(aws, tmp_path, "reset-write.pdf", numbered_pdf(PAGES))]
        assert aws.wait(keys, timeout=120)
    finally:
        aws.handler_module("extract").s3.meta.events.unregister("before-send.s3.PutObject",
                                                                unique_id="papersift-reset")
    (pdf,) = assert_each_ran_once(aws, keys)
    assert len(refused) == 1 and refused[0].startswith(f"work/{pdf.doc_id}/pages/")
    assert pdf.status == "clean"
    assert set(versions(aws, f"work/{pdf.doc_id}/pages/").values()) == {1}


def test_a_result_write_failing_past_the_sdk_retries_ends_the_document_failed_with_the_reason(
    aws: LocalAws, tmp_path: Path
) -> None:
    """The store raises on assemble's first result write (S3 still refusing after the SDK's own
    retries): the workflow's Catch records the document failed, naming the error, with one set of
    results; the file dropped alongside is clean."""
    assemble = aws.handler_module("assemble")
    put_object = assemble.s3.put_object
    real = aws.handlers["assemble"]
    unlucky_ids: list[str] = []
    refused: list[str] = []

    def noting_the_unlucky_one(event: Any, context: Any) -> Any:
        if event["source_name"] == "unlucky.txt":
            unlucky_ids.append(event["doc_id"])
        return real(event, context)

    def failing_once(**kwargs: Any) -> Any:
        if not refused and unlucky_ids and kwargs["Key"].startswith(f"results/{unlucky_ids[0]}/"):
            refused.append(kwargs["Key"])
            raise ClientError({"Error": {"Code": "InternalError", "Message": "We encountered an internal error."}},
                              "PutObject")
        return put_object(**kwargs)

    aws.handlers["assemble"] = noting_the_unlucky_one
    assemble.s3.put_object = failing_once
    try:
        keys = [drop(aws, tmp_path, "unlucky.txt", "The first results of this note cannot be written.\n"),
                drop(aws, tmp_path, "lucky.txt", "This note is written after the store recovered.\n")]
        assert aws.wait(keys, timeout=60)
    finally:
        assemble.s3.put_object = put_object
    unlucky, lucky = assert_each_ran_once(aws, keys)
    assert refused and refused[0].startswith(unlucky.results_prefix)
    assert unlucky.status == "failed" and "InternalError" in unlucky.reason
    assert lucky.status == "clean"


# -- idempotency: nothing run twice -----------------------------------------------------------


def bodies_seen_by_ingest(aws: LocalAws) -> list[str]:
    """Every SQS message body handed to ingest (the real handler still runs)."""
    bodies: list[str] = []
    real = aws.handlers["ingest"]

    def recorded(event: Any, context: Any) -> Any:
        bodies.extend(record["body"] for record in event["Records"])
        return real(event, context)

    aws.handlers["ingest"] = recorded
    return bodies


def finished(aws: LocalAws, key: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = [e for e in aws.results.executions() if e["input"]["key"] == key]
        if runs and all(e["status"] == "SUCCEEDED" for e in runs):
            return
        time.sleep(0.05)
    raise AssertionError(f"{key} did not finish")


@pytest.mark.parametrize("redelivered", ["while the run is open", "after the run finished"])
def test_a_message_redelivered_after_ingest_started_its_run_starts_no_second_one(
    aws: LocalAws, tmp_path: Path, redelivered: str
) -> None:
    """Ingest starts the run, then its invocation fails before SQS deletes the message (a timeout, a
    crash): the same message comes back, while the run is open or after it finished, and meets the
    execution name; one run, one item, one set of results."""
    name = f"{'open' if 'open' in redelivered else 'closed'}-redelivery.txt"
    key = "incoming/" + name
    real_ingest, real_assemble = aws.handlers["ingest"], aws.handlers["assemble"]
    invocations: list[int] = []
    second_delivery = threading.Event()

    def crashing_after_the_start(event: Any, context: Any) -> Any:
        result = real_ingest(event, context)
        invocations.append(1)
        if len(invocations) > 1:
            second_delivery.set()
            return result
        if redelivered == "after the run finished":
            finished(aws, key)
        raise TimeoutError("ingest timed out after starting the run")

    def held_open(event: Any, context: Any) -> Any:
        assert second_delivery.wait(30), "the message was not delivered again"
        return real_assemble(event, context)

    aws.handlers["ingest"] = crashing_after_the_start
    if redelivered == "while the run is open":
        aws.handlers["assemble"] = held_open
    assert drop(aws, tmp_path, name, "A note whose notification is delivered twice.\n") == key
    assert aws.wait([key], timeout=60)
    assert len(invocations) == 2
    (outcome,) = assert_each_ran_once(aws, [key])
    assert outcome.status == "clean"


def test_a_notification_sent_again_after_the_run_finished_starts_nothing(aws: LocalAws, tmp_path: Path) -> None:
    """The very notification body S3 sent, sent to the queue again once the run is done (a replay
    from the dead-letter queue, a redrive): ingest meets the execution name, nothing is rewritten."""
    bodies = bodies_seen_by_ingest(aws)
    key = drop(aws, tmp_path, "replayed.txt", "A note whose notification is replayed.\n")
    assert aws.wait([key], timeout=60)
    (first,) = bodies
    before = versions(aws, "results/")
    aws.client("sqs").send_message(QueueUrl=aws.queue_url, MessageBody=first)
    assert aws.wait([key], timeout=60)
    assert bodies == [first, first]
    assert_each_ran_once(aws, [key])
    assert versions(aws, "results/") == before


def test_a_new_version_of_the_same_key_is_a_second_run_with_its_own_results(aws: LocalAws, tmp_path: Path) -> None:
    """The same key uploaded twice with different content: two object versions, two document ids,
    two runs, two items, two sets of results, each with its own text."""
    first = drop(aws, tmp_path, "edited.txt", "First draft: the bridge opens in May.\n")
    assert aws.wait([first], timeout=60)
    second = drop(aws, tmp_path, "edited.txt", "Second draft: the bridge opens in June.\n")
    assert first == second
    assert aws.wait([second], timeout=60)
    runs = sorted((e for e in aws.results.executions() if e["input"]["key"] == first), key=lambda e: e["startDate"])
    assert len(runs) == 2 and runs[0]["input"]["version_id"] != runs[1]["input"]["version_id"]
    doc_ids = [run["input"]["doc_id"] for run in runs]
    assert len(set(doc_ids)) == 2 and set(aws.results.items()) == set(doc_ids)
    texts = [aws.results.read(f"results/{doc_id}/text.txt").decode() for doc_id in doc_ids]
    assert ["May" in texts[0], "June" in texts[1]] == [True, True]
    assert {key.split("/")[1] for key in versions(aws, "results/")} == set(doc_ids)
    assert set(versions(aws, "results/").values()) == {1}
