"""Ingest: SQS batch of S3 (or EventBridge) object-created notifications -> one Step
Functions execution per object version, never more running at once than
``Settings.max_running_executions``.

Nothing run twice. The execution name is the document id derived from bucket/key/version, so a
duplicate notification, a redelivered message or a retried ingest cannot start a second run:
StartExecution with a name in use answers ExecutionAlreadyExists (or, while that run is open and
the input is the same, the open run itself). Step Functions keeps a name 90 days after its run
closes, and every message the drop queue can hand ingest is younger: SQS keeps a message 14 days at
most, and a dead letter redriven to the queue keeps its first enqueue time. So powertools'
idempotency (a DynamoDB record per message, with its own expiry window) would add a table and a write
per drop without closing any gap the names leave. A new object version has a new id: a new run.

Admission. Before starting anything an invocation counts RUNNING executions with ListExecutions,
page by page only as far as the limit. That count is the truth: a counter kept by ingest and the
workflow would leak a slot for every run that is aborted, times out or never reaches its last state.
A drop that finds no free slot is sent to the queue again with a delay and the original is
acknowledged (the record succeeds, Lambda deletes it). Handing it back instead (a batch item failure,
or a shorter visibility timeout) would count one receive per wait, and a drop that waited through
``MAX_RECEIVE_COUNT`` of them would land in the dead-letter queue. StartExecution refused for load
(throttled, too many open executions) and a count that fails defer the same way: waiting is never a
failure. Records that fail for any other reason are reported back to SQS as partial batch failures
(retried, then dead-lettered), never dropped.

ListExecutions is eventually consistent: executions another invocation started a moment ago may not
be listed yet. The event source mapping runs at most two ingests at once (``INGEST_MAX_CONCURRENCY``),
and an invocation counts what it starts itself and, for a few seconds, what its container started
before; only the other invocation's starts within that lag can overshoot the limit.
"""

from __future__ import annotations

import functools
import json
import os
import random
import time
from collections.abc import Callable
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
from botocore.exceptions import BotoCoreError, ClientError

from papersift import layout
from papersift.errors import THROTTLING_EXCEPTION
from papersift.settings import Settings
from papersift.steps import RunInput

logger = Logger()
tracer = Tracer()
metrics = Metrics()
settings = Settings.from_env(os.environ)
sfn = boto3.client("stepfunctions")
sqs = boto3.client("sqs")
STATE_MACHINE_ARN = os.environ[layout.STATE_MACHINE_ARN_ENV]
#: a deferred drop comes back after this many seconds plus up to as many again (jitter, so a backlog
#: does not return in one wave); the stack sets it to papersift.layout's default, the local runner shortens it
ADMISSION_DELAY_SECONDS = int(os.environ.get(layout.ADMISSION_DELAY_ENV, str(layout.ADMISSION_DELAY_SECONDS)))
#: SQS's longest message delay
MAX_DELAY_SECONDS = 900
#: how many times a drop has been deferred (a message attribute; for logs and metrics)
DEFERRALS_ATTRIBUTE = "papersift-deferrals"
#: StartExecution errors that defer the drop ("not now" rather than "never"): Step Functions'
#: throttling, and its quota of open executions
START_DEFERRED_CODES = frozenset({THROTTLING_EXCEPTION, "ExecutionLimitExceeded"})
#: ListExecutions' largest page
LIST_PAGE = 1000


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


class Slots:
    """The executions one invocation may still start, counted when a record first needs one (a
    batch of test events or unparseable bodies asks nothing of Step Functions)."""

    def __init__(self, count: Callable[[], int]) -> None:
        self._count = count
        self.free: int | None = None

    def available(self) -> bool:
        if self.free is None:
            self.free = self._count()
        return self.free > 0

    def take(self) -> None:
        self.free = (self.free or 0) - 1


class Admission:
    """Counts RUNNING executions against the limit, once per invocation.

    Two things carry over between invocations of a warm container. A count that found the workflow
    full is believed for a quarter of the delay, so while a backlog cycles through the queue each
    container asks ListExecutions once per interval rather than once per batch (and ListExecutions
    is throttled per account). And the executions this container started in the last few seconds
    count as running even when ListExecutions does not list them yet.
    """

    def __init__(self, client: Any, state_machine_arn: str, limit: int, delay_seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.state_machine_arn = state_machine_arn
        self.limit = limit
        self.full_seconds = delay_seconds / 4
        self.unlisted_seconds = delay_seconds / 6
        self.clock = clock
        self._full_until = 0.0
        self._started: dict[str, float] = {}  # execution name -> when this container started it

    def free(self) -> int:
        """What an invocation may start: the limit less what runs (0 when it cannot be counted)."""
        now = self.clock()
        self._started = {name: at for name, at in self._started.items() if now - at < self.unlisted_seconds}
        if now < self._full_until:
            return 0
        try:
            running = self.running()
        except (BotoCoreError, ClientError):
            logger.warning("cannot count running executions: deferring the batch", exc_info=True)
            return 0
        free = max(0, self.limit - running)
        if not free:
            self._full_until = now + self.full_seconds
        return free

    def running(self) -> int:
        """RUNNING executions (up to the limit: counting stops there) with this container's unlisted starts."""
        names = set(self._started)
        request: dict[str, Any] = {"stateMachineArn": self.state_machine_arn, "statusFilter": "RUNNING",
                                   "maxResults": min(self.limit, LIST_PAGE)}
        while len(names) < self.limit:
            page = self.client.list_executions(**request)
            names.update(execution["name"] for execution in page["executions"])
            if not page.get("nextToken"):
                break
            request["nextToken"] = page["nextToken"]
        return len(names)

    def started(self, name: str) -> None:
        self._started[name] = self.clock()


admission = Admission(sfn, STATE_MACHINE_ARN, settings.max_running_executions, ADMISSION_DELAY_SECONDS)


def start_run(obj: DroppedObject, slots: Slots) -> bool:
    """Start the object's run, or find it started already. False: Step Functions refused for load."""
    run_input = RunInput.for_object(obj.bucket, obj.key, obj.version_id, obj.etag)
    doc_id = run_input.doc_id
    try:
        sfn.start_execution(stateMachineArn=STATE_MACHINE_ARN, name=doc_id, input=run_input.model_dump_json())
    except sfn.exceptions.ExecutionAlreadyExists:
        metrics.add_metric(name="DuplicateNotifications", unit=MetricUnit.Count, value=1)
        logger.info("duplicate notification: run already exists", extra={"doc_id": doc_id, "key": obj.key})
        return True
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in START_DEFERRED_CODES:
            raise
        logger.warning("Step Functions refused the start for load", extra={"doc_id": doc_id, "error": str(exc)})
        return False
    # (a duplicate while its run is open with the same input also lands here: no second run either)
    slots.take()
    admission.started(doc_id)
    metrics.add_metric(name="ExecutionsStarted", unit=MetricUnit.Count, value=1)
    logger.info("started", extra={"doc_id": doc_id, "key": obj.key})
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
    deferrals = int(previous.string_value or 0) + 1 if previous else 1
    delay = min(MAX_DELAY_SECONDS, ADMISSION_DELAY_SECONDS + random.randint(0, ADMISSION_DELAY_SECONDS))
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
