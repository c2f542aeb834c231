"""Extract step: one batch of pages, written to work/<doc_id>/pages/ in S3."""

from __future__ import annotations

import os
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from papersift.ledger import Invocation
from papersift.settings import Settings
from papersift.steps.contracts import Batch
from papersift.steps.extract import extract_batch, preload_for_workers
from papersift.storage import S3ObjectStore

logger = Logger()
# only botocore: patching everything X-Ray supports imports requests (~20 ms of every cold start)
tracer = Tracer(patch_modules=("boto3",))
metrics = Metrics()
settings = Settings.from_env(os.environ)
s3 = boto3.client("s3")
# every invocation forks a worker to read its pages: loaded here once, each worker inherits it
preload_for_workers()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=Batch)
def handler(event: Batch, context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(doc_id=event.doc_id, batch_index=event.batch_index)
    result = extract_batch(S3ObjectStore(s3, event.bucket), event, settings,
                           Invocation("extract", context.memory_limit_in_mb),
                           time_left=lambda: context.get_remaining_time_in_millis() / 1000)
    metrics.add_metric(name="PagesExtracted", unit=MetricUnit.Count, value=result.pages)
    metrics.add_metric(name="PagesSentToOcr", unit=MetricUnit.Count, value=result.ocr_pages)
    return result.model_dump(mode="json")
