"""Assemble step: join pages into results/<doc_id>/ and record the document in DynamoDB.

Also the target of the workflow's Catch: with an ``error`` in the event it records the
document as failed with the reason, so no input ends without a status.
"""

from __future__ import annotations

import os
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from papersift.layout import TABLE_NAME_ENV, results_prefix
from papersift.ledger import Invocation
from papersift.listing import document_item
from papersift.metrics import COST_USD, document_metrics
from papersift.settings import Settings
from papersift.steps.assemble import assemble_document
from papersift.steps.contracts import AssembleRequest, AssembleResult
from papersift.storage import S3ObjectStore

logger = Logger()
# only botocore: patching everything X-Ray supports imports requests (~20 ms of every cold start)
tracer = Tracer(patch_modules=("boto3",))
metrics = Metrics()
settings = Settings.from_env(os.environ)
s3 = boto3.client("s3")
table = boto3.resource("dynamodb").Table(os.environ[TABLE_NAME_ENV])


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=AssembleRequest)
def handler(event: AssembleRequest, context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(doc_id=event.doc_id)
    report = assemble_document(S3ObjectStore(s3, event.bucket), event, settings,
                               Invocation("assemble", context.memory_limit_in_mb))
    table.put_item(Item=document_item(report, export_next=settings.export_parquet))
    metrics.add_metric(name=f"Documents_{report.status}", unit=MetricUnit.Count, value=1)
    if event.parent_doc_id is None:  # an archive's report already counts its members: once each
        for name, value in document_metrics(report.page_count, report.cost).items():
            metrics.add_metric(name=name, unit=MetricUnit.NoUnit if name == COST_USD else MetricUnit.Count, value=value)
    logger.info("assembled", extra={"status": report.status, "pages": report.page_count, "reason": report.reason})
    result = AssembleResult(doc_id=report.doc_id, status=report.status, page_count=report.page_count,
                            results_prefix=results_prefix(report.doc_id))
    return result.model_dump(mode="json")
