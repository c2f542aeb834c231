"""Ingest: SQS batch of S3 (or EventBridge) object-created notifications -> one Step
Functions execution per object version.

The execution name is the document id derived from bucket/key/version, so a duplicate
notification cannot start a second run. Records that fail are reported back to SQS as
partial batch failures (retried, then dead-lettered), never dropped.
"""

from __future__ import annotations

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

from papersift.steps import RunInput

logger = Logger()
tracer = Tracer()
metrics = Metrics()
processor = BatchProcessor(event_type=EventType.SQS)
sfn = boto3.client("stepfunctions")
STATE_MACHINE_ARN = os.environ["STATE_MACHINE_ARN"]


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


def start_run(obj: DroppedObject) -> None:
    run_input = RunInput.for_object(obj.bucket, obj.key, obj.version_id, obj.etag)
    doc_id = run_input.doc_id
    try:
        sfn.start_execution(stateMachineArn=STATE_MACHINE_ARN, name=doc_id, input=run_input.model_dump_json())
        metrics.add_metric(name="ExecutionsStarted", unit=MetricUnit.Count, value=1)
        logger.info("started", extra={"doc_id": doc_id, "key": obj.key})
    except sfn.exceptions.ExecutionAlreadyExists:
        metrics.add_metric(name="DuplicateNotifications", unit=MetricUnit.Count, value=1)
        logger.info("duplicate notification: run already exists", extra={"doc_id": doc_id, "key": obj.key})


@tracer.capture_method
def record_handler(record: SQSRecord) -> None:
    for obj in dropped_objects(json.loads(record.body)):
        start_run(obj)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
