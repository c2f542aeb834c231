"""What the stack deploys and the local runner re-creates, written once: the functions with their
memory, timeout and packaging; the drop queue's limits; the bucket prefixes; the names of the
resources; the environment the handlers read (its variables' names, the bucket's prefixes and
the admission delay's default are ``papersift.layout``'s: the handlers read them from there too).

``infra/stacks/pipeline_stack.py`` builds the CDK resources from these values and
``papersift_cli.local_aws`` creates the same resources in moto from them, so the two cannot
drift apart (the runner's queue once had a 960 s visibility timeout against the stack's 180 s,
and python3.11 against 3.12). Pure: no CDK, no AWS; importable from an installed papersift.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from papersift import listing
from papersift.layout import (
    BUCKET_NAME_ENV,
    EXPORTS_PREFIX,
    MEMBERS_PREFIX,
    RESULTS_PREFIX,
    TABLE_NAME_ENV,
    WORK_PREFIX,
)
from papersift.settings import Settings

#: the Lambda runtime of the zip functions and the one the dependency layer is built for
RUNTIME = "python3.12"
HANDLER = "app.handler"
#: the machine every function runs on (Lambda's name): Graviton, about 20% less per GB-second than
#: x86_64. The dependency layer's wheels (scripts/build_layers.py) and the container image are
#: built for it.
ARCHITECTURE = "arm64"
#: the same machine as manylinux wheel tags and Linux name it
MACHINE = {"arm64": "aarch64", "x86_64": "x86_64"}[ARCHITECTURE]


@dataclass(frozen=True)
class FunctionSpec:
    """One Lambda function: ``functions/<name>/app.py``."""

    name: str
    #: the CDK construct id; also names the workflow placeholder ``${<construct_id>FunctionArn}``
    construct_id: str
    memory_mb: int
    timeout_seconds: int
    #: runs from the container image (binaries: 7z/unar for unpack, pdftotext/antiword for extract,
    #: Tesseract for ocr)
    container: bool
    #: bucket prefixes it may write under (every function may read the whole bucket)
    writes: tuple[str, ...] = ()

    @property
    def placeholder(self) -> str:
        return f"{self.construct_id}FunctionArn"


INGEST = FunctionSpec("ingest", "Ingest", memory_mb=256, timeout_seconds=30, container=False)
PLAN = FunctionSpec("plan", "Plan", memory_mb=1024, timeout_seconds=120, container=False, writes=(WORK_PREFIX,))
EXTRACT = FunctionSpec("extract", "Extract", memory_mb=3008, timeout_seconds=600, container=True,
                       writes=(WORK_PREFIX,))
ASSEMBLE = FunctionSpec("assemble", "Assemble", memory_mb=2048, timeout_seconds=300, container=False,
                        writes=(WORK_PREFIX, RESULTS_PREFIX))
UNPACK = FunctionSpec("unpack", "Unpack", memory_mb=3008, timeout_seconds=900, container=True,
                      writes=(WORK_PREFIX, MEMBERS_PREFIX))
#: lists the pages OCR reads: after the text layer, S3 listings; for a picture of several frames,
#: a look at each (ocr.survey.survey_frames: blank and repeated frames are read by no OCR step),
#: in a worker of at most SURVEY_MEMORY_MB
OCR_PLAN = FunctionSpec("ocr_plan", "OcrPlan", memory_mb=1024, timeout_seconds=120, container=False,
                        writes=(WORK_PREFIX,))
#: one page through Tesseract (in the image) and/or Textract: a page's engines each get
#: Settings.ocr_page_seconds (120 s by default), well inside the timeout
OCR = FunctionSpec("ocr", "Ocr", memory_mb=3008, timeout_seconds=300, container=True, writes=(WORK_PREFIX,))

#: a document's page records as exports/<doc_id>.parquet after assemble (Settings.export_parquet):
#: in the container image, because pyarrow (170 MB installed) does not fit beside the dependency
#: layer under the zip limit. It holds one document's records: a document of 100,000 pages (five
#: times the default max_pages), 325 MB of text, exported in 5.3 s at a peak of ~1.05 GB of RSS
#: (measured in process)
EXPORT = FunctionSpec("export", "Export", memory_mb=2048, timeout_seconds=300, container=True,
                      writes=(EXPORTS_PREFIX,))

#: the API's function (29 s is API Gateway's integration limit); `papersift serve` runs it itself
API = FunctionSpec("api", "Api", memory_mb=1024, timeout_seconds=29, container=False)

#: the functions every workflow invokes, in the order of its placeholders
WORKFLOW_FUNCTIONS: tuple[FunctionSpec, ...] = (PLAN, EXTRACT, ASSEMBLE, UNPACK, OCR_PLAN, OCR)
#: the functions of the optional steps, each invoked (and deployed) only when its setting is on
OPTIONAL_FUNCTIONS: tuple[FunctionSpec, ...] = (EXPORT,)
#: the functions the local runner registers and dispatches to (the API is served by `papersift serve`)
FUNCTIONS: tuple[FunctionSpec, ...] = (INGEST, *WORKFLOW_FUNCTIONS, *OPTIONAL_FUNCTIONS)


def workflow_functions(settings: Settings) -> tuple[FunctionSpec, ...]:
    """The functions the workflow of ``settings`` invokes: every workflow's, and the export step's
    when Settings.export_parquet is on (``infra.workflow.build_definition``). The stack deploys
    these; the local runner registers every function and the workflow reaches these."""
    return (*WORKFLOW_FUNCTIONS, *((EXPORT,) if settings.export_parquet else ()))

#: SQS messages per ingest invocation
INGEST_BATCH_SIZE = 10
#: ingest invocations at once (the event source mapping's maximum concurrency; 2 is the least SQS
#: allows): admission decisions (Settings.max_running_executions) race with one other invocation at most
INGEST_MAX_CONCURRENCY = 2
#: six times ingest's timeout, as Lambda's SQS integration advises
QUEUE_VISIBILITY_TIMEOUT_SECONDS = 6 * INGEST.timeout_seconds
#: receives before a poison message moves to the dead-letter queue
MAX_RECEIVE_COUNT = 5
DEAD_LETTER_RETENTION_DAYS = 14
#: the documents table's partition key: one item per document (its listing indexes: papersift.listing)
TABLE_KEY = listing.TABLE_KEY


@dataclass(frozen=True)
class Resource:
    """A resource the stack names by construct id (CloudFormation picks the physical name) and the
    local runner by ``<prefix>-<local_name>``."""

    construct_id: str
    local_name: str

    def named(self, prefix: str) -> str:
        return f"{prefix}-{self.local_name}"


BUCKET = Resource("Documents", "documents")
TABLE = Resource("Documents Table", "documents")
QUEUE = Resource("DropsQueue", "incoming")
DEAD_LETTER_QUEUE = Resource("DropsDeadLetterQueue", "incoming-dlq")
STATE_MACHINE = Resource("Workflow", "workflow")

SERVICE_NAME = "papersift"
METRICS_NAMESPACE = "Papersift"


#: pydantic reads every installed package's entry points for plugins on its first model build
#: (~8 ms of a cold start); papersift uses none
NO_PYDANTIC_PLUGINS = {"PYDANTIC_DISABLE_PLUGINS": "__all__"}


def function_environment(settings: Settings, *, table_name: str, bucket_name: str,
                         extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A function's environment: the settings as PAPERSIFT_* (no passwords), where the table and
    bucket are, powertools' service name and metrics namespace, and no pydantic plugins."""
    return {
        **settings.to_env(),
        TABLE_NAME_ENV: table_name,
        BUCKET_NAME_ENV: bucket_name,
        "POWERTOOLS_SERVICE_NAME": SERVICE_NAME,
        "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
        **NO_PYDANTIC_PLUGINS,
        **(extra or {}),
    }


def memory_by_function() -> dict[str, int]:
    """Each deployed function's memory (MB): what `papersift extract` prices its Lambda usage with."""
    return {spec.name: spec.memory_mb for spec in FUNCTIONS}
