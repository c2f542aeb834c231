"""Export step (container image: pyarrow): a document's page records as exports/<doc_id>.parquet
after assemble (Settings.export_parquet; docs/export.md), or, as the workflow's Catch target, the
record of why that failed. Either outcome goes on the document's item; neither fails the document.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from papersift.layout import TABLE_NAME_ENV
from papersift.listing import TABLE_KEY
from papersift.steps.contracts import ExportRequest
from papersift.steps.export import item_update, run_export
from papersift.storage import S3ObjectStore

logger = Logger()
tracer = Tracer()
metrics = Metrics()
s3 = boto3.client("s3")
table = boto3.resource("dynamodb").Table(os.environ[TABLE_NAME_ENV])


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=ExportRequest)
def handler(event: ExportRequest, context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(doc_id=event.doc_id)
    with tempfile.TemporaryDirectory(prefix="export-") as scratch:
        result = run_export(S3ObjectStore(s3, event.bucket), event, Path(scratch))
    try:
        table.update_item(Key={TABLE_KEY: event.doc_id}, **item_update(result))
    except table.meta.client.exceptions.ConditionalCheckFailedException:
        logger.warning("no item to record the export on", extra={"status": result.status})
    metrics.add_metric(name=f"Exports_{result.status}", unit=MetricUnit.Count, value=1)
    logger.info("exported", extra=result.model_dump(include={"status", "key", "rows", "reason"}))
    return result.model_dump(mode="json")
