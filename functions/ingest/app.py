"""Ingest: SQS batch of S3 (or EventBridge) object-created notifications -> one Step
Functions execution per object version, never more running at once than
``Settings.max_running_executions``.

The admission control (counting running executions, starting runs named after the document, when a
drop waits) is ``papersift.admission``; this handler parses the notifications, keeps one
``Admission`` per container, sends deferred drops back to their queue, and logs and counts.

Why not powertools' idempotency: the execution name is the document id derived from
bucket/key/version, so a duplicate notification, a redelivered message or a retried ingest cannot
start a second run. Step Functions keeps a name 90 days after its run closes, and every message the
drop queue can hand ingest is younger: SQS keeps a message 14 days at most, and a dead letter
redriven to the queue keeps its first enqueue time. An idempotency record per message (a table, a
write per drop, its own expiry window) would close no gap the names leave.

A drop that finds no free slot is sent to the queue again with a delay and the original is
acknowledged (the record succeeds, Lambda deletes it): a new message starts at zero receives, so
waiting never leads to the dead-letter queue. Records that fail for any other reason are reported
back to SQS as partial batch failures (retried, then dead-lettered), never dropped.

The event source mapping runs at most two ingests at once (``INGEST_MAX_CONCURRENCY``): only the
other invocation's starts that ListExecutions does not list yet can overshoot the limit.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes import EventBridgeEvent, S3Event
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from papersift import layout
from papersift.admission import Admission, Slots, Start, deferral_count, deferral_delay
from papersift.settings import Settings
from papersift.steps.contracts import RunInput

logger = Logger()
# only botocore: patching everything X-Ray supports imports requests (~20 ms of every cold start)
tracer = Tracer(patch_modules=("boto3",))
metrics = Metrics()
settings = Settings.from_env(os.environ)
sfn = boto3.client("stepfunctions")
sqs = boto3.client("sqs")
STATE_MACHINE_ARN = os.environ[layout.STATE_MACHINE_ARN_ENV]
#: a deferred drop comes back after this many seconds plus up to as many again (jitter, so a backlog
#: does not return in one wave); the stack sets it to papersift.layout's default, the local runner shortens it
ADMISSION_DELAY_SECONDS = int(os.environ.get(layout.ADMISSION_DELAY_ENV, str(layout.ADMISSION_DELAY_SECONDS)))
#: how many times a drop has been deferred (a message attribute; for logs and metrics)
DEFERRALS_ATTRIBUTE = "papersift-deferrals"


@dataclass(frozen=True)
class DroppedObject:
    bucket: str
    key: str
    version_id: str | None
    etag: str | None


def dropped_objects(body: dict[str, Any]) -> list[DroppedObject]:
    """Object-created notifications in either shape S3 can send them to the queue."""
    if body.get("Event") == "s3:TestEvent":
        return []
    if body.get("detail-type") == "Object Created":
        detail = EventBridgeEvent(body).detail
        obj = detail["object"]
        return [DroppedObject(detail["bucket"]["name"], obj["key"], obj.get("version-id"), obj.get("etag"))]
    objects = []
    for record in S3Event(body).records:
        if not record.event_name.startswith("ObjectCreated"):
            continue
        obj = record.s3.get_object
        # notification keys are URL-encoded with '+' for spaces
        objects.append(DroppedObject(record.s3.bucket.name, unquote_plus(obj.key), obj.version_id, obj.etag))
    return objects


def _uncountable(exc: Exception) -> None:
    logger.warning("cannot count running executions: deferring the batch", exc_info=exc)


#: one per container: what it started a moment ago, and a count that found the workflow full, carry over
admission = Admission(sfn, STATE_MACHINE_ARN, settings.max_running_executions, ADMISSION_DELAY_SECONDS,
                      uncountable=_uncountable)


def start_run(obj: DroppedObject, slots: Slots) -> bool:
    """Start the object's run, or find it started already. False: Step Functions refused for load."""
    started = admission.start(RunInput.for_object(obj.bucket, obj.key, obj.version_id, obj.etag), slots)
    if started.outcome is Start.REFUSED:
        logger.warning("Step Functions refused the start for load",
                       extra={"doc_id": started.doc_id, "error": started.reason})
        return False
    if started.outcome is Start.DUPLICATE:
        metrics.add_metric(name="DuplicateNotifications", unit=MetricUnit.Count, value=1)
        logger.info("duplicate notification: run already exists", extra={"doc_id": started.doc_id, "key": obj.key})
    else:
        metrics.add_metric(name="ExecutionsStarted", unit=MetricUnit.Count, value=1)
        logger.info("started", extra={"doc_id": started.doc_id, "key": obj.key})
    return True


@functools.cache
def queue_url(queue_arn: str) -> str:
    """The URL of the queue a record came from (deferred drops go back to it)."""
    _, _, _, _, account, name = queue_arn.split(":", 5)
    return str(sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"])


def defer(record: SQSRecord) -> None:
    """Send the drop to its queue again, to come back after the delay; the original is deleted when
    this record succeeds. A new message starts at zero receives: waiting never leads to the DLQ."""
    previous = record.message_attributes[DEFERRALS_ATTRIBUTE]
    deferrals = deferral_count(previous.string_value if previous else None)
    delay = deferral_delay(ADMISSION_DELAY_SECONDS)
    sqs.send_message(
        QueueUrl=queue_url(record.event_source_arn), MessageBody=record.body, DelaySeconds=delay,
        MessageAttributes={DEFERRALS_ATTRIBUTE: {"DataType": "Number", "StringValue": str(deferrals)}},
    )
    metrics.add_metric(name="DropsDeferred", unit=MetricUnit.Count, value=1)
    logger.info("deferred: the workflow runs its limit of executions",
                extra={"message_id": record.message_id, "deferrals": deferrals, "delay_seconds": delay})


@tracer.capture_method
def record_handler(record: SQSRecord, slots: Slots) -> None:
    # Records are taken in order and slots only shrink, so every start of a batch comes before its
    # first deferral. A record whose objects (S3 sends one per message) outrun the slots is deferred
    # whole: the ones already started meet their execution names when it comes back.
    for obj in dropped_objects(json.loads(record.body)):
        if not slots.available() or not start_run(obj, slots):
            defer(record)
            return


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    slots = Slots(admission.free)
    # a processor per invocation: it holds the batch's state, and the local runner can enter ingest
    # again from inside a send (moto hands a new message to the event source mapping at once)
    processor = BatchProcessor(event_type=EventType.SQS)
    return process_partial_response(event=event, record_handler=functools.partial(record_handler, slots=slots),
                                    processor=processor, context=context)
