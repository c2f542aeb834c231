"""Plan step: sniff the dropped object and cut it into page batches."""

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
from papersift.steps.contracts import RunInput
from papersift.steps.plan import plan_document
from papersift.storage import S3ObjectStore

logger = Logger()
# only botocore: patching everything X-Ray supports imports requests (~20 ms of every cold start)
tracer = Tracer(patch_modules=("boto3",))
metrics = Metrics()
settings = Settings.from_env(os.environ)
s3 = boto3.client("s3")


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=RunInput)
def handler(event: RunInput, context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(doc_id=event.doc_id)
    plan = plan_document(S3ObjectStore(s3, event.bucket), event, settings,
                         Invocation("plan", context.memory_limit_in_mb))
    metrics.add_metric(name="DocumentsPlanned", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="PagesPlanned", unit=MetricUnit.Count, value=plan.page_count)
    logger.info("planned", extra=plan.model_dump(include={"kind", "status", "page_count", "batch_count"}))
    return plan.model_dump(mode="json")
