"""Unpack step (container image: 7z, unar, cabextract... are binaries): open an archive
with the safety limits and upload every extractable member as a document of its own.

Members then run through the same plan/extract/assemble steps as a dropped file; only
their list (or an S3 manifest, for large archives) goes back into the workflow state.
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

from papersift.ledger import Invocation
from papersift.settings import Settings
from papersift.steps.contracts import UnpackRequest
from papersift.steps.unpack import unpack_archive
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
@event_parser(model=UnpackRequest)
def handler(event: UnpackRequest, context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(doc_id=event.doc_id)
    with tempfile.TemporaryDirectory(prefix="unpack-") as scratch:
        unpacked = unpack_archive(S3ObjectStore(s3, event.bucket), event, settings, Path(scratch),
                                  Invocation("unpack", context.memory_limit_in_mb))
    metrics.add_metric(name="ArchiveMembers", unit=MetricUnit.Count, value=unpacked.member_count)
    logger.info("unpacked", extra=unpacked.model_dump(include={"status", "reason", "member_count", "item_count"}))
    return unpacked.model_dump(mode="json")
