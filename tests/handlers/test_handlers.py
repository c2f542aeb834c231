"""Each handler through its real module, with sample events from events/ and moto."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from handler_env import BUCKET, load_event, load_handler
from pdf_factory import native_and_scanned_pdf, numbered_pdf

from papersift.steps.contracts import DocumentOptions, document_id


def _sqs_wrapping(body: dict[str, Any], message_id: str = "m-1") -> dict[str, Any]:
    event = load_event("sqs-s3-notification")
    record = dict(event["Records"][0], messageId=message_id, body=json.dumps(body))
    return {"Records": [record]}


def test_ingest_starts_one_execution_named_after_the_document(aws, lambda_context):
    ingest = load_handler("ingest")
    result = ingest.handler(load_event("sqs-s3-notification"), lambda_context)
    assert result == {"batchItemFailures": []}
    runs = aws["sfn"].list_executions(stateMachineArn=aws["state_machine_arn"])["executions"]
    notification = load_event("s3-put")["Records"][0]["s3"]
    expected = document_id(BUCKET, "incoming/tenders/edital nº 12.pdf", notification["object"]["versionId"],
                           notification["object"]["eTag"])
    assert [r["name"] for r in runs] == [expected]
    run_input = json.loads(aws["sfn"].describe_execution(executionArn=runs[0]["executionArn"])["input"])
    assert run_input["key"] == "incoming/tenders/edital nº 12.pdf", "keys arrive URL-decoded"
    assert run_input["source_name"] == "edital nº 12.pdf"


def test_duplicate_notification_does_not_start_a_second_run(aws, lambda_context):
    ingest = load_handler("ingest")
    event = load_event("sqs-s3-notification")
    ingest.handler(event, lambda_context)
    assert ingest.handler(event, lambda_context) == {"batchItemFailures": []}
    runs = aws["sfn"].list_executions(stateMachineArn=aws["state_machine_arn"])["executions"]
    assert len(runs) == 1


def test_eventbridge_object_created_through_sqs_starts_a_run(aws, lambda_context):
    ingest = load_handler("ingest")
    ingest.handler(load_event("sqs-eventbridge-object-created"), lambda_context)
    runs = aws["sfn"].list_executions(stateMachineArn=aws["state_machine_arn"])["executions"]
    run_input = json.loads(aws["sfn"].describe_execution(executionArn=runs[0]["executionArn"])["input"])
    assert run_input["key"] == "incoming/scans/archive 2019.zip"


def test_unparseable_message_is_reported_as_a_partial_batch_failure(aws, lambda_context):
    ingest = load_handler("ingest")
    good = load_event("sqs-s3-notification")["Records"][0]
    bad = dict(good, messageId="broken-1", body="{not json")
    result = ingest.handler({"Records": [good, bad]}, lambda_context)
    assert result == {"batchItemFailures": [{"itemIdentifier": "broken-1"}]}
    assert len(aws["sfn"].list_executions(stateMachineArn=aws["state_machine_arn"])["executions"]) == 1


def _drops(*keys: str, deferrals: int = 0) -> dict[str, Any]:
    """An SQS batch of one S3 notification per key (as the drop queue hands them to ingest)."""
    template = load_event("sqs-s3-notification")["Records"][0]
    notification = json.loads(template["body"])
    records = []
    for number, key in enumerate(keys):
        body = json.loads(json.dumps(notification))
        body["Records"][0]["s3"]["object"]["key"] = key
        attributes = {"papersift-deferrals": {"stringValue": str(deferrals), "dataType": "Number"}} if deferrals else {}
        records.append(dict(template, messageId=f"m-{number}", body=json.dumps(body), messageAttributes=attributes))
    return {"Records": records}


def _spy(calls: list[dict[str, Any]], method: Any) -> Any:
    def spy(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return method(**kwargs)
    return spy


def _running_limit(monkeypatch, limit: int) -> Any:
    """Ingest with Settings.max_running_executions = limit, and the drop queue its events name."""
    monkeypatch.setenv("PAPERSIFT_MAX_RUNNING_EXECUTIONS", str(limit))
    boto3.client("sqs").create_queue(QueueName="papersift-incoming")
    return load_handler("ingest")


def test_ingest_defers_drops_past_the_running_limit_as_new_delayed_messages(aws, lambda_context, monkeypatch):
    """Limit 2, three drops: two runs start, the third is sent to the queue again with a delay of
    30-60 s and a deferral count, and its record succeeds (SQS deletes the original): waiting is
    never a failure, so it never counts towards the dead-letter queue."""
    ingest = _running_limit(monkeypatch, 2)
    sent: list[dict[str, Any]] = []
    ingest.sqs.send_message = _spy(sent, ingest.sqs.send_message)
    event = _drops("incoming/a.txt", "incoming/b.txt", "incoming/c.txt")
    assert ingest.handler(event, lambda_context) == {"batchItemFailures": []}
    runs = aws["sfn"].list_executions(stateMachineArn=aws["state_machine_arn"])["executions"]
    assert len(runs) == 2
    (deferred,) = sent
    assert deferred["MessageBody"] == event["Records"][2]["body"]
    assert 30 <= deferred["DelaySeconds"] <= 60
    assert deferred["MessageAttributes"] == {"papersift-deferrals": {"DataType": "Number", "StringValue": "1"}}
    attributes = boto3.client("sqs").get_queue_attributes(QueueUrl=deferred["QueueUrl"],
                                                          AttributeNames=["ApproximateNumberOfMessagesDelayed"])
    assert attributes["Attributes"]["ApproximateNumberOfMessagesDelayed"] == "1"


def test_ingest_counts_running_executions_once_and_only_as_far_as_the_limit(aws, lambda_context, monkeypatch):
    """Five runs open, limit 2: one ListExecutions page of two answers "full"; both drops wait, and
    the next batch believes that verdict for a while instead of asking again."""
    ingest = _running_limit(monkeypatch, 2)
    for number in range(5):
        aws["sfn"].start_execution(stateMachineArn=aws["state_machine_arn"], name=f"open-{number}", input="{}")
    listed: list[dict[str, Any]] = []
    ingest.sfn.list_executions = _spy(listed, ingest.sfn.list_executions)
    assert ingest.handler(_drops("incoming/a.txt", "incoming/b.txt"), lambda_context) == {"batchItemFailures": []}
    assert [call["maxResults"] for call in listed] == [2]
    assert len(aws["sfn"].list_executions(stateMachineArn=aws["state_machine_arn"])["executions"]) == 5
    ingest.handler(_drops("incoming/c.txt"), lambda_context)
    assert len(listed) == 1


def test_a_drop_deferred_again_carries_its_count_and_test_events_ask_nothing(aws, lambda_context, monkeypatch):
    ingest = _running_limit(monkeypatch, 1)
    aws["sfn"].start_execution(stateMachineArn=aws["state_machine_arn"], name="open-1", input="{}")
    sent: list[dict[str, Any]] = []
    listed: list[dict[str, Any]] = []
    ingest.sqs.send_message = _spy(sent, ingest.sqs.send_message)
    ingest.sfn.list_executions = _spy(listed, ingest.sfn.list_executions)
    test_event = load_event("sqs-s3-notification")["Records"][1]
    assert ingest.handler({"Records": [test_event]}, lambda_context) == {"batchItemFailures": []}
    assert listed == []
    ingest.handler(_drops("incoming/a.txt", deferrals=3), lambda_context)
    assert sent[0]["MessageAttributes"]["papersift-deferrals"]["StringValue"] == "4"


def test_ingest_defers_when_step_functions_refuses_for_load_or_cannot_count(aws, lambda_context, monkeypatch):
    """StartExecution throttled (or at the open-execution limit), ListExecutions failing: the drops
    wait in the queue; neither is a record failure."""
    from botocore.exceptions import ClientError

    ingest = _running_limit(monkeypatch, 5)
    sent: list[dict[str, Any]] = []
    ingest.sqs.send_message = _spy(sent, ingest.sqs.send_message)

    def throttled(**kwargs: Any) -> Any:
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "StartExecution")

    ingest.sfn.start_execution = throttled
    assert ingest.handler(_drops("incoming/a.txt"), lambda_context) == {"batchItemFailures": []}

    def unavailable(**kwargs: Any) -> Any:
        raise ClientError({"Error": {"Code": "ServiceUnavailable", "Message": "try later"}}, "ListExecutions")

    ingest = _running_limit(monkeypatch, 5)
    ingest.sqs.send_message = _spy(sent, ingest.sqs.send_message)
    ingest.sfn.list_executions = unavailable
    assert ingest.handler(_drops("incoming/b.txt"), lambda_context) == {"batchItemFailures": []}
    assert [json.loads(m["MessageBody"])["Records"][0]["s3"]["object"]["key"] for m in sent] == [
        "incoming/a.txt", "incoming/b.txt"]
    assert aws["sfn"].list_executions(stateMachineArn=aws["state_machine_arn"])["executions"] == []


def test_plan_extract_assemble_write_results_and_one_table_item(aws, lambda_context):
    key = "incoming/notes.txt"
    aws["s3"].put_object(Bucket=BUCKET, Key=key, Body="Ata da sessão pública\nsegunda linha\n".encode())
    run_input = {"doc_id": "dtest1", "bucket": BUCKET, "key": key, "source_name": "notes.txt"}
    plan = load_handler("plan").handler(run_input, lambda_context)
    assert plan["status"] == "ready" and plan["kind"] == "txt" and plan["batch_count"] == 1
    extract = load_handler("extract")
    for batch in plan["batches"]:
        assert extract.handler(batch, lambda_context)["pages"] == 1
    done = load_handler("assemble").handler({**run_input, "plan": plan}, lambda_context)
    assert done == {"doc_id": "dtest1", "status": "clean", "page_count": 1, "results_prefix": "results/dtest1/"}
    text = aws["s3"].get_object(Bucket=BUCKET, Key="results/dtest1/text.txt")["Body"].read().decode()
    assert "Ata da sessão pública" in text
    report = json.loads(aws["s3"].get_object(Bucket=BUCKET, Key="results/dtest1/report.json")["Body"].read())
    assert report["pages"][0]["engine"]
    item = aws["table"].get_item(Key={"doc_id": "dtest1"})["Item"]
    assert item["status"] == "clean" and item["trusted"] is True and item["report_key"] == "results/dtest1/report.json"


def test_plan_records_encrypted_pdf_without_password_as_terminal_status(aws, lambda_context):
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt(user_password="s3cret", owner_password="owner")
    import io

    buffer = io.BytesIO()
    writer.write(buffer)
    aws["s3"].put_object(Bucket=BUCKET, Key="incoming/locked.pdf", Body=buffer.getvalue())
    plan = load_handler("plan").handler(
        {"doc_id": "dlocked", "bucket": BUCKET, "key": "incoming/locked.pdf", "source_name": "locked.pdf"},
        lambda_context)
    assert plan["status"] == "encrypted" and plan["batches"] == []
    aws["s3"].put_object(Bucket=BUCKET, Key="incoming/locked2.pdf", Body=buffer.getvalue(),
                         Metadata=DocumentOptions(passwords=("s3cret",)).metadata())
    plan = load_handler("plan").handler(
        {"doc_id": "dlocked2", "bucket": BUCKET, "key": "incoming/locked2.pdf", "source_name": "locked2.pdf"},
        lambda_context)
    assert plan["status"] == "ready" and plan["page_count"] == 1


def test_assemble_as_catch_target_records_failed_with_reason(aws, lambda_context):
    done = load_handler("assemble").handler(load_event("assemble-failure-input"), lambda_context)
    assert done["status"] == "failed"
    doc_id = load_event("assemble-failure-input")["doc_id"]
    item = aws["table"].get_item(Key={"doc_id": doc_id})["Item"]
    assert item["status"] == "failed" and item["trusted"] is False
    assert "Lambda.Unknown" in item["reason"]


def test_sample_step_events_drive_plan_extract_and_assemble(aws, lambda_context):
    """events/plan-input.json, extract-input.json and assemble-input.json as SAM would send them."""
    run_input = load_event("plan-input")
    aws["s3"].put_object(Bucket=BUCKET, Key=run_input["key"], Body=numbered_pdf(30))
    plan = load_handler("plan").handler(run_input, lambda_context)
    assert (plan["status"], plan["page_count"], plan["source_name"]) == ("ready", 30, "edital nº 12.pdf")
    batch = load_event("extract-input")
    assert load_handler("extract").handler(batch, lambda_context)["pages"] == 25
    assembled = load_handler("assemble").handler(load_event("assemble-input"), lambda_context)
    assert assembled["page_count"] == 25, "only the sample batch's pages were extracted"
    report_key = f"results/{run_input['doc_id']}/report.json"
    report = json.loads(aws["s3"].get_object(Bucket=BUCKET, Key=report_key)["Body"].read())
    assert report["source"]["name"] == "edital nº 12.pdf" and len(report["pages"]) == 25


def test_sample_ocr_events_drive_the_ocr_plan_and_ocr_steps_on_a_scanned_page(aws, lambda_context):
    """events/ocr-plan-input.json and ocr-input.json as SAM would send them, after the text layer
    of a two-page PDF whose second page is a scan: the plan lists page 2 only; the OCR step reads
    it with Tesseract (no Textract client in a local run: a warning, no error); assemble lays it
    over the text layer."""
    request = load_event("ocr-plan-input")
    aws["s3"].put_object(Bucket=BUCKET, Key=request["key"], Body=native_and_scanned_pdf())
    for batch in request["plan"]["batches"]:
        assert load_handler("extract").handler(batch, lambda_context)["ocr_pages"] == 1
    planned = load_handler("ocr_plan").handler(request, lambda_context)
    item = load_event("ocr-input")
    assert planned["items"] == [item] and planned["page_count"] == 1
    ocr = load_handler("ocr")
    assert ocr.textract is None, "no Textract client where TEXTRACT_ENABLED is not set"
    result = ocr.handler(item, lambda_context)
    assert (result["status"], result["engine"], result["skipped"]) == ("ocr", "tesseract", False)
    assert ocr.handler(item, lambda_context)["skipped"] is True
    done = load_handler("assemble").handler({**{k: request[k] for k in ("doc_id", "bucket", "key", "source_name")},
                                             "plan": request["plan"]}, lambda_context)
    assert done["status"] == "partially_recovered"
    item_row = aws["table"].get_item(Key={"doc_id": request["doc_id"]})["Item"]
    assert item_row["pages_ocr"] == 1 and item_row["pages_clean"] == 1
    assert item_row["cost"]["lambda_invocations"]["ocr"] == 1  # the skipped retry wrote nothing
    report = json.loads(aws["s3"].get_object(Bucket=BUCKET, Key=f"results/{request['doc_id']}/report.json")
                        ["Body"].read())
    assert report["pages"][1]["ocr"]["engine"] == "tesseract"
    assert "quick brown fox" in aws["s3"].get_object(Bucket=BUCKET, Key=f"results/{request['doc_id']}/text.txt")[
        "Body"].read().decode()


@pytest.mark.parametrize("refused", ["text.txt", "document.md", "report.html"])
def test_assemble_with_a_result_put_refused_writes_no_report_and_no_item(aws, lambda_context, refused):
    """S3 refuses one of assemble's result puts (past the SDK's retries): the step raises for the
    workflow's Catch, and neither report.json nor the table item exists, so nothing says the
    document is done while its results are not all there (the report and the item come last)."""
    from botocore.exceptions import ClientError

    key = "incoming/refused.txt"
    aws["s3"].put_object(Bucket=BUCKET, Key=key, Body=b"A note whose Markdown cannot be stored.\n")
    run_input = {"doc_id": "drefused", "bucket": BUCKET, "key": key, "source_name": "refused.txt"}
    plan = load_handler("plan").handler(run_input, lambda_context)
    extract = load_handler("extract")
    for batch in plan["batches"]:
        extract.handler(batch, lambda_context)
    assemble = load_handler("assemble")
    real_put = assemble.s3.put_object
    written: list[str] = []

    def refusing_the_markdown(**kwargs: Any) -> Any:
        if kwargs["Key"].endswith("/" + refused):
            raise ClientError({"Error": {"Code": "InternalError", "Message": "We encountered an internal error."}},
                              "PutObject")
        written.append(kwargs["Key"])
        return real_put(**kwargs)

    assemble.s3.put_object = refusing_the_markdown
    with pytest.raises(ClientError):
        assemble.handler({**run_input, "plan": plan}, lambda_context)
    listed = aws["s3"].list_objects_v2(Bucket=BUCKET, Prefix="results/drefused/").get("Contents", [])
    assert "results/drefused/report.json" not in {obj["Key"] for obj in listed}
    assert "results/drefused/report.json" not in written
    assert "Item" not in aws["table"].get_item(Key={"doc_id": "drefused"})


#: S3's billing classes, by the API operation boto3 sends
S3_PUT_CLASS = frozenset({"PutObject", "CopyObject", "ListObjectsV2", "CreateMultipartUpload", "UploadPart",
                          "CompleteMultipartUpload"})
S3_GET_CLASS = frozenset({"GetObject", "HeadObject"})


def test_the_ledgers_s3_requests_are_the_requests_the_handlers_sent_to_s3(aws, lambda_context):
    key = "incoming/minutes.pdf"
    aws["s3"].put_object(Bucket=BUCKET, Key=key, Body=numbered_pdf(3))
    sent: dict[str, int] = {"put": 0, "get": 0}

    def count(model: Any, **_: Any) -> None:
        if model.name in S3_PUT_CLASS:
            sent["put"] += 1
        elif model.name in S3_GET_CLASS:
            sent["get"] += 1

    steps = {name: load_handler(name) for name in ("plan", "extract", "assemble")}
    for step in steps.values():
        step.s3.meta.events.register("before-call.s3", count)
    run_input = {"doc_id": "dcount1", "bucket": BUCKET, "key": key, "source_name": "minutes.pdf"}
    plan = steps["plan"].handler(run_input, lambda_context)
    for batch in plan["batches"]:
        steps["extract"].handler(batch, lambda_context)
    steps["assemble"].handler({**run_input, "plan": plan}, lambda_context)
    report = json.loads(aws["s3"].get_object(Bucket=BUCKET, Key="results/dcount1/report.json")["Body"].read())
    assert report["cost"]["s3_requests"] == sent
    assert report["cost"]["usd"]["s3"] > 0
