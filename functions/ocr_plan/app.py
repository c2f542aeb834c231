"""OCR plan step: after the text layer (or straight from the plan, for a picture), list the pages
OCR reads; only their numbers and input keys go back into the workflow state."""

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
from papersift.steps.contracts import OcrPlanRequest
from papersift.steps.ocr_plan import plan_ocr
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
@event_parser(model=OcrPlanRequest)
def handler(event: OcrPlanRequest, context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(doc_id=event.doc_id)
    planned = plan_ocr(S3ObjectStore(s3, event.bucket), event, settings,
                       Invocation("ocr_plan", context.memory_limit_in_mb))
    metrics.add_metric(name="PagesPlannedForOcr", unit=MetricUnit.Count, value=planned.page_count)
    logger.info("ocr planned", extra=planned.model_dump(include={"page_count", "use_distributed_map"}))
    return planned.model_dump(mode="json")
