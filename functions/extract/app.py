"""Extract step: one batch of pages, written to work/<doc_id>/pages/ in S3."""

from __future__ import annotations

import gc
import os
from typing import Any

# no collections while the imports below build their ~130,000 objects (the collections they would set
# off walk them over and over and find no garbage): paused until init is done, then init is frozen
was_enabled = gc.isenabled()
gc.disable()

import botocore.session  # noqa: E402
from aws_lambda_powertools import Logger, Metrics, Tracer  # noqa: E402
from aws_lambda_powertools.metrics import MetricUnit  # noqa: E402
from aws_lambda_powertools.utilities.parser import event_parser  # noqa: E402
from aws_lambda_powertools.utilities.typing import LambdaContext  # noqa: E402

from papersift.ledger import Invocation  # noqa: E402
from papersift.settings import Settings  # noqa: E402
from papersift.steps.contracts import Batch  # noqa: E402
from papersift.steps.extract import extract_batch, preload_for_workers  # noqa: E402
from papersift.storage import S3ObjectStore  # noqa: E402

logger = Logger()
# only botocore: patching everything X-Ray supports imports requests (~20 ms of every cold start)
tracer = Tracer(patch_modules=("botocore",))
metrics = Metrics()
settings = Settings.from_env(os.environ)
# botocore's client, not boto3's: boto3 adds only its managed transfers (upload_file and kin), which
# extract does not use; importing and making it cost 11-13 ms more of the cold start (docs/benchmarks.md)
s3 = botocore.session.get_session().create_client("s3")
# every invocation forks a worker to read its pages: loaded here once, each worker inherits it
preload_for_workers()
# init's objects live as long as the process: in the permanent generation no later collection here
# walks them, nor one in a forked worker (whose walk would also copy the pages they sit on)
gc.freeze()
if was_enabled:
    gc.enable()


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
