"""OCR step (container image: Tesseract and its models, poppler): read one page with the engines
of the document's OCR mode; the page JSON goes to S3, a small summary back into the workflow.

Textract is called only where the stack enabled it (``TEXTRACT_ENABLED``: the OCR mode may use it),
through a client with few SDK retries: a throttled page comes back quickly as OcrThrottledError and
the workflow retries it with backoff and full jitter.
"""

from __future__ import annotations

import os
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from papersift.errors import OcrThrottledError
from papersift.layout import TEXTRACT_ENABLED, TEXTRACT_ENABLED_ENV
from papersift.ledger import Invocation
from papersift.metrics import TEXTRACT_THROTTLES
from papersift.ocr.textract import CLIENT_CONFIG
from papersift.settings import Settings
from papersift.steps.contracts import OcrRequest
from papersift.steps.ocr import default_engines, read_ocr_page
from papersift.storage import S3ObjectStore

logger = Logger()
tracer = Tracer()
metrics = Metrics()
settings = Settings.from_env(os.environ)
s3 = boto3.client("s3")
textract = boto3.client("textract", config=CLIENT_CONFIG) \
    if os.environ.get(TEXTRACT_ENABLED_ENV) == TEXTRACT_ENABLED else None
engines = default_engines(textract, page_seconds=settings.ocr_page_seconds, layout=settings.textract_layout)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=OcrRequest)
def handler(event: OcrRequest, context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(doc_id=event.doc_id, page=event.page)
    try:
        result = read_ocr_page(S3ObjectStore(s3, event.bucket), event, settings, engines,
                               Invocation("ocr", context.memory_limit_in_mb))
    except OcrThrottledError:  # the workflow retries the page; the alarm watches how often
        metrics.add_metric(name=TEXTRACT_THROTTLES, unit=MetricUnit.Count, value=1)
        raise
    metrics.add_metric(name=f"OcrPages_{result.status}", unit=MetricUnit.Count, value=1)
    logger.info("ocr page", extra=result.model_dump(include={"status", "engine", "chars", "skipped"}))
    return result.model_dump(mode="json")
