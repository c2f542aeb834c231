"""LocalAws: a moto server in this process, the stack's resources in it, our handlers answering
its invocations; files dropped under ``incoming/`` and waited for as on AWS."""

from __future__ import annotations

import importlib.resources
import importlib.util
import json
import logging
import os
import socket
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any
from urllib.request import Request, urlopen

from infra import deployment
from papersift.layout import (
    ADMISSION_DELAY_ENV,
    ADMISSION_DELAY_SECONDS,
    INCOMING_PREFIX,
    MEMBERS_PREFIX,
    PAGES_FOLDER,
    STATE_MACHINE_ARN_ENV,
    export_key,
    members_prefix,
    results_prefix,
    work_prefix,
)
from papersift.settings import Settings
from papersift.steps.contracts import DocumentOptions
from papersift_cli.local_aws import s3_direct
from papersift_cli.local_aws.forget import forget_items, forget_objects
from papersift_cli.local_aws.moto_patches import MotoPatches
from papersift_cli.local_aws.outcomes import DocumentOutcome, Results, latest_execution
from papersift_cli.local_aws.queue_poller import QueuePoller
from papersift_cli.local_aws.resources import REGION, Resources, create_resources, function_name, state_machine_arn

Handler = Callable[[Any, Any], Any]
_FINISHED = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")
_ACTIVE_LOCK = threading.Lock()


@dataclass
class InvocationContext:
    """What powertools reads from a Lambda context, from the function's own settings."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    timeout_seconds: int
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = ""
    log_stream_name: str = ""
    function_version: str = "$LATEST"
    started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.started + self.timeout_seconds - time.monotonic()) * 1000))

    @classmethod
    def for_function(cls, prefix: str, spec: deployment.FunctionSpec, arn: str = "") -> InvocationContext:
        return cls(function_name=function_name(prefix, spec), invoked_function_arn=arn,
                   memory_limit_in_mb=spec.memory_mb, timeout_seconds=spec.timeout_seconds)


def handler_path(name: str) -> Path:
    """``functions/<name>/app.py``, from the checkout or from the installed package."""
    return Path(str(importlib.resources.files("papersift_functions") / name / "app.py"))


def _load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load handler from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


#: glibc's mallopt parameter: allocations from this size on are mmapped, and unmapped when freed
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 128 * 1024


def keep_large_buffers_off_the_heap() -> bool:
    """Fix glibc's mmap threshold at its default (128 KiB), for this process.

    glibc raises the threshold to the size of each mmapped block freed (up to 32 MiB), so after a
    step has read a 23 MB PDF and let it go, later buffers of that size come from the heap, and
    every thread of the runner has a heap of its own (an arena) that keeps what it once held: a
    10,000-page PDF's run reached 1.2 GB of RSS with ~300 MB in use, each of its 100 page batches
    reading the whole file. A fixed threshold keeps such buffers mmapped, returned when freed (the
    same run: 0.5 GB). Nothing else changes; False where there is no glibc."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1)
    except (OSError, AttributeError):
        return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalAws:
    """moto server + the stack's resources + our handlers, for one process.

    Use as a context manager; only one can be open at a time (it patches moto globally and sets
    process environment variables, both restored on exit).
    """

    def __init__(self, settings: Settings | None = None, *, retry_time_scale: float = 0.0,
                 log_level: str = "WARNING", prefix: str = "papersift", in_process: bool = True,
                 forget_finished: bool = False, direct_s3: bool = False) -> None:
        self.settings = settings or Settings()
        #: ``papersift run``: what a finished document leaves in the embedded AWS is removed as soon as
        #: nothing reads it again (its work files when its last step, assemble or export, returns, the
        #: rest after ``forget``), so memory does not grow with the run (see forget.py). Off for tests that
        #: look at work files afterwards and for ``papersift serve``, whose API serves them.
        self.forget_finished = forget_finished
        #: the handlers' and the runner's AWS calls answered by moto in this thread (no HTTP); False
        #: when something outside must reach what they make (``papersift serve``'s presigned URLs)
        self.in_process = in_process
        self.retry_time_scale = retry_time_scale
        self.log_level = log_level
        self.prefix = prefix
        self.port = 0
        self.endpoint_url = ""
        #: short function name -> handler(event, context); tests may replace entries
        self.handlers: dict[str, Handler] = {}
        self.invocations: list[tuple[str, str]] = []  # (function, "ok" | error type), for tests
        self._modules: dict[str, ModuleType] = {}
        self._resources: Resources | None = None
        self._results: Results | None = None
        self._poller: QueuePoller | None = None
        self._server: Any = None
        #: in process, S3's plain object calls answered from moto's backend at ``before-call``
        #: (s3_direct.py): `papersift run`. Off by default: tests that fail a request on its way
        #: (a ``before-send`` handler) need the request to be sent
        self._patches = MotoPatches(self._dispatch, retry_time_scale, in_process, direct_s3=direct_s3 and in_process)
        self._saved_env: dict[str, str | None] = {}
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()
        #: archive doc_id -> the doc_ids of its members whose assemble step returned (ever growing
        #: only by a few ids per member: the results read the members' items by it, not by a scan)
        self.children: dict[str, list[str]] = {}
        #: keys of objects removed from the embedded S3 by forget_finished (tests look)
        self.forgotten = 0
        #: workflow steps running at once: one per core. On AWS each invocation has CPUs of its own;
        #: here every Map iteration is a thread of one machine, and twenty Tesseract pages at once on
        #: two cores would each take ten times their time (and overrun their deadlines)
        self._steps = threading.BoundedSemaphore(max(2, os.cpu_count() or 2))

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> LocalAws:
        if not _ACTIVE_LOCK.acquire(blocking=False):
            raise RuntimeError("another LocalAws is already open in this process")
        try:
            self._start()
        except BaseException:
            self._stop()
            _ACTIVE_LOCK.release()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self._stop()
        finally:
            _ACTIVE_LOCK.release()

    def _start(self) -> None:
        from moto.server import ThreadedMotoServer

        keep_large_buffers_off_the_heap()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.port = _free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.endpoint_url = f"http://127.0.0.1:{self.port}"
        self._patches.apply()
        self._post("/moto-api/reset")
        self._post("/moto-api/config", {"stepfunctions": {"execute_state_machine": True}})
        self._set_env()
        self._resources = create_resources(self.client, self.prefix, self._env(), self.settings.export_parquet)
        self._results = Results(self.client("s3"), self.client("stepfunctions"), self.client("dynamodb"),
                                self.bucket, self.table_name, self.state_machine_arn, REGION)
        self._poller = QueuePoller(self.client("sqs"), self.queue_url, self._resources.queue_arn, self.dlq_url,
                                   REGION)
        self._load_handlers()

    def _stop(self) -> None:
        if self._server is not None:
            try:
                self._server.stop()
            except Exception:  # stopping must not mask the real error
                logging.getLogger(__name__).debug("moto server did not stop cleanly", exc_info=True)
            self._server = None
        self._patches.restore()
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env = {}
        self._clients = {}

    @property
    def resources(self) -> Resources:
        if self._resources is None:
            raise RuntimeError("LocalAws is not open")
        return self._resources

    @property
    def results(self) -> Results:
        """Executions, items, outcomes and result objects of the dropped files."""
        if self._results is None:
            raise RuntimeError("LocalAws is not open")
        return self._results

    @property
    def bucket(self) -> str:
        return deployment.BUCKET.named(self.prefix)

    @property
    def table_name(self) -> str:
        return deployment.TABLE.named(self.prefix)

    @property
    def state_machine_arn(self) -> str:
        return state_machine_arn(self.prefix)

    @property
    def queue_url(self) -> str:
        return self.resources.queue_url

    @property
    def dlq_url(self) -> str:
        return self.resources.dlq_url

    def reset_documents(self) -> None:
        """Empty the bucket's objects and the table between tests, keeping the resources."""
        s3 = self.client("s3")
        for page in s3.get_paginator("list_object_versions").paginate(Bucket=self.bucket):
            for entry in page.get("Versions", []) + page.get("DeleteMarkers", []):
                s3.delete_object(Bucket=self.bucket, Key=entry["Key"], VersionId=entry["VersionId"])
        table = self.client("dynamodb")
        for page in table.get_paginator("scan").paginate(TableName=self.table_name):
            for item in page.get("Items", []):
                table.delete_item(TableName=self.table_name,
                                  Key={deployment.TABLE_KEY: item[deployment.TABLE_KEY]})
        self.invocations.clear()

    # -- environment -------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        """What the stack sets on the functions (``deployment.function_environment``), pointed at
        this server, plus powertools switches for a local run."""
        server = {} if self.in_process else {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            # moto's Step Functions tasks call localhost:$MOTO_PORT
            "MOTO_PORT": str(self.port),
        }
        return deployment.function_environment(
            self.settings, table_name=self.table_name, bucket_name=self.bucket,
            extra={
                STATE_MACHINE_ARN_ENV: self.state_machine_arn,
                # deferred drops come back sooner, as retries wait less (SQS delays are whole seconds)
                ADMISSION_DELAY_ENV: str(max(1, round(ADMISSION_DELAY_SECONDS * self.retry_time_scale))),
                **server,
                "AWS_DEFAULT_REGION": REGION,
                "AWS_REGION": REGION,
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_SESSION_TOKEN": "testing",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_METRICS_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": self.log_level,
                # as the container image sets it: Tesseract on one core per page
                "OMP_THREAD_LIMIT": "1",
            },
        )

    def _set_env(self) -> None:
        env = self._env()
        for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "MOTO_PORT", *env):
            self._saved_env.setdefault(name, os.environ.get(name))
        for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "MOTO_PORT"):
            os.environ.pop(name, None)
        os.environ.update(env)

    def _post(self, path: str, payload: Mapping[str, Any] | None = None) -> None:
        data = json.dumps(payload or {}).encode("utf-8")
        request = Request(self.endpoint_url + path, data=data, method="POST",
                          headers={"Content-Type": "application/json"})
        with urlopen(request, timeout=30) as response:
            response.read()

    def client(self, service: str) -> Any:
        import boto3
        from botocore.config import Config

        if service not in self._clients:
            self._clients[service] = boto3.client(  # type: ignore[call-overload]  # service chosen at run time
                service,
                endpoint_url=None if self.in_process else self.endpoint_url,
                region_name=REGION,
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
                config=Config(retries={"max_attempts": 2}, max_pool_connections=20),
            )
            s3_direct.install(self._clients[service])
        return self._clients[service]

    # -- handlers ----------------------------------------------------------------------------

    def _load_handlers(self) -> None:
        """Each ``functions/<name>/app.py`` under a unique module name, so its module-level boto3
        clients bind to this server."""
        token = uuid.uuid4().hex[:8]
        for spec in deployment.FUNCTIONS:
            module = _load_module(handler_path(spec.name), f"papersift_local_{spec.name}_{token}")
            for value in list(vars(module).values()):  # its module-level S3 client, made at import
                s3_direct.install(value)
            self._modules[spec.name] = module
            self.handlers[spec.name] = module.handler

    def handler_module(self, name: str) -> ModuleType:
        """The loaded ``functions/<name>/app.py``: tests give the OCR function a Textract client
        through it (``module.engines``), as the stack's environment does on AWS."""
        return self._modules[name]

    def _dispatch(self, function: str, body: str, request_headers: Any, response_headers: Any) -> bytes:
        """One invocation: the handler's return value as JSON, or its exception as a Lambda function
        error (``errorType`` = the class name, so the workflow's Retry/Catch match as on AWS)."""
        name = function.removeprefix(f"{self.prefix}-")
        spec = next((s for s in deployment.FUNCTIONS if s.name == name), None)
        try:
            handler = self.handlers.get(name)
            if handler is None or spec is None:
                raise LookupError(f"no handler for function {function}: functions/{name}/app.py is missing")
            context = InvocationContext.for_function(self.prefix, spec, self.resources.function_arns[name])
            event = json.loads(body) if body else {}
            # no lock around pdfium: the handlers call it only in worker processes of their own
            # (papersift.isolation), so steps run side by side here as Lambdas do on AWS, as many
            # at once as there are cores (ingest, which only starts runs, is not held back)
            try:
                if spec.name == deployment.INGEST.name:
                    result = handler(event, context)
                else:
                    with self._steps:
                        result = handler(event, context)
            finally:
                self._clear_metrics(spec.name)
            payload = json.dumps(result, default=str)
            outcome = "ok"
            if spec.name == self._last_step.name:
                self._assembled(event)
        except Exception as exc:
            response_headers["x-amz-function-error"] = "Unhandled"
            payload = json.dumps({
                "errorType": type(exc).__name__,
                "errorMessage": str(exc) or type(exc).__name__,
                "stackTrace": traceback.format_exception(exc)[-5:],
            })
            outcome = type(exc).__name__
        with self._lock:
            self.invocations.append((name, outcome))
        encoded = payload.encode("utf-8")
        response_headers["Content-Length"] = str(len(encoded))
        return encoded

    def _clear_metrics(self, name: str) -> None:
        """Metrics are off locally, and powertools then keeps every value a handler adds (flushing
        clears nothing) until a metric holds 100, which it prints to stdout: `papersift run`'s
        output filled with EMF JSON, and the values grew with the run. They are dropped after
        each invocation instead (on Lambda they are flushed to CloudWatch after each)."""
        metrics = getattr(self._modules.get(name), "metrics", None)
        clear = getattr(metrics, "clear_metrics", None)
        if callable(clear):
            clear()

    @property
    def _last_step(self) -> deployment.FunctionSpec:
        """A document's last step: the export step when the workflow has it (it reads the results'
        page files), else assemble. Either one returns once a document, its failure recorded too."""
        return deployment.EXPORT if self.settings.export_parquet else deployment.ASSEMBLE

    def _assembled(self, event: Mapping[str, Any]) -> None:
        """A document's last step (``_last_step``) returned: note it under its archive, and with
        ``forget_finished`` remove what nothing will read again (forget.py)."""
        doc_id, parent = str(event.get("doc_id") or ""), event.get("parent_doc_id")
        if not doc_id:
            return
        if parent:
            with self._lock:
                members = self.children.setdefault(str(parent), [])
                if doc_id not in members:
                    members.append(doc_id)
        if not self.forget_finished:
            return
        source = str(event.get("key") or "")
        removed = forget_objects(self.bucket, prefixes=[work_prefix(doc_id), results_prefix(doc_id) + PAGES_FOLDER],
                                 keys=[source] if parent and source.startswith(MEMBERS_PREFIX) else [])
        if parent and self.results.set_aside(doc_id):
            forget_items(REGION, self.table_name, [doc_id])
        with self._lock:
            self.forgotten += removed

    def forget(self, outcome: DocumentOutcome) -> int:
        """Remove everything a finished top-level document and its members left in the embedded
        AWS (objects, every version, and items), once its results are written out. Returns the
        number of objects removed."""
        doc_ids = [d for d in _doc_ids(outcome) if d]
        prefixes = [p for d in doc_ids for p in (work_prefix(d), results_prefix(d), members_prefix(d))]
        # the export step's files (export_parquet) stay in the embedded bucket until here: `papersift
        # export` of the written folder gives the same records
        exports = [export_key(d) for d in doc_ids] if self.settings.export_parquet else []
        removed = forget_objects(self.bucket, prefixes=prefixes, keys=[outcome.key, *exports])
        forget_items(REGION, self.table_name, doc_ids)
        self.results.drop_set_aside(doc_ids)
        with self._lock:
            for doc_id in doc_ids:
                self.children.pop(doc_id, None)
            self.forgotten += removed
        return removed

    def _invoke_ingest(self, event: dict[str, Any]) -> tuple[Any, bool]:
        headers: dict[str, Any] = {}
        payload = json.loads(self._dispatch(function_name(self.prefix, deployment.INGEST), json.dumps(event), {},
                                            headers))
        return payload, "x-amz-function-error" in headers

    # -- driving the pipeline ------------------------------------------------------------------

    def drop(self, path: Path, options: DocumentOptions | None = None, name: str | None = None) -> str:
        """Upload a file under ``incoming/``; S3 -> SQS -> ingest starts its execution. Returns the key."""
        key = INCOMING_PREFIX + (name or path.name)
        metadata = options.metadata() if options else {}
        with path.open("rb") as body:
            self.client("s3").put_object(Bucket=self.bucket, Key=key, Body=body, Metadata=metadata)
        return key

    def wait(self, keys: Sequence[str], timeout: float = 1800.0, poll: float = 0.25,
             on_poll: Callable[[list[dict[str, Any]]], None] | None = None,
             on_finished: Callable[[DocumentOutcome], None] | None = None) -> bool:
        """Wait until every key has a finished execution (or its notification is in the dead-letter
        queue) and nothing else runs or waits in the queue. False on timeout.

        ``on_finished`` gets each key's outcome (members included) once, as soon as the key's
        execution has finished: `papersift run` writes it out then (and forgets it)."""
        deadline = time.monotonic() + timeout
        wanted = set(keys)
        delivered: set[str] = set()
        poller = self._queue_poller()
        quiet_polls = 0
        while time.monotonic() < deadline:
            executions = self.results.executions()
            if on_poll is not None:
                on_poll(executions)
            if on_finished is not None:
                self._deliver_finished(executions, wanted - delivered, delivered, on_finished)
            started = {e["input"].get("key") for e in executions if not e["input"].get("parent_doc_id")}
            running = [e for e in executions if e["status"] not in _FINISHED]
            pending = poller.pending()
            if pending and len(running) < self.settings.max_running_executions:
                # as Lambda's poller keeps polling: ingest decides whether a drop may start
                self.redeliver_pending()
            settled = not running and not pending and (wanted <= started or wanted - started <= self.dead_keys())
            quiet_polls = quiet_polls + 1 if settled else 0
            if quiet_polls >= 2:  # twice in a row: a finishing parent may just have started a child
                return True
            time.sleep(poll)
        return False

    def _deliver_finished(self, executions: list[dict[str, Any]], keys: set[str], delivered: set[str],
                          on_finished: Callable[[DocumentOutcome], None]) -> None:
        for key in sorted(keys):
            execution = latest_execution(executions, key)
            if execution is None or execution["status"] not in _FINISHED:
                continue
            with self._lock:
                children = {parent: list(members) for parent, members in self.children.items()}
            delivered.add(key)
            on_finished(self.results.outcome(key, execution, children))

    def redeliver_pending(self) -> int:
        """Hand queued drops whose ingest failed to ingest again, as Lambda's SQS poller would."""
        poller = self._queue_poller()
        return poller.redeliver(self._invoke_ingest) if poller.pending() else 0

    def dead_keys(self) -> set[str]:
        """Dropped keys whose notification ended in the dead-letter queue: they will never start."""
        dropped_objects = self._modules[deployment.INGEST.name].dropped_objects
        keys: set[str] = set()
        for body in self._queue_poller().dead_letters():
            try:
                keys.update(obj.key for obj in dropped_objects(body))
            except (KeyError, TypeError, ValueError):  # not a notification ingest understands
                continue
        return keys

    def _queue_poller(self) -> QueuePoller:
        if self._poller is None:
            raise RuntimeError("LocalAws is not open")
        return self._poller


def _doc_ids(outcome: DocumentOutcome) -> list[str]:
    """The document's doc_id and its members' (nested members too)."""
    found = [outcome.doc_id or ""]
    for member in outcome.members:
        found.extend(_doc_ids(member))
    return found
