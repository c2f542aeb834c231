"""The whole pipeline on an embedded AWS: moto in-process, our handlers in-process.

moto's server provides S3, SQS, DynamoDB, IAM, Lambda (as a registry) and Step Functions,
and it *executes* the workflow (``execute_state_machine``). moto cannot run Lambda code without
Docker, and every path that invokes a function (boto3 ``invoke``, Step Functions tasks, S3
notifications, SQS event source mappings) goes through one method,
``moto.awslambda.models.LambdaFunction.invoke``. While a :class:`LocalAws` is open that method
is replaced by a dispatch to ``functions/<name>/app.py:handler`` in this process, so the
handlers' own boto3 calls (pointed at the server through ``AWS_ENDPOINT_URL``) hit moto too.
See docs/local-pipeline.md for what differs from AWS.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import sys
import threading
import time
import traceback
import uuid
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any
from urllib.request import Request, urlopen

from papersift import listing
from papersift.settings import Settings
from papersift.steps import DocumentOptions

REPO_ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
ACCOUNT_ID = "123456789012"

#: short name -> ``functions/<dir>``; the names the stack gives them, minus the stack prefix
FUNCTIONS: tuple[str, ...] = ("ingest", "plan", "extract", "assemble", "unpack")
#: functions that call pdfium (page counts, text layers): run one at a time in this process
PDFIUM_FUNCTIONS = frozenset({"plan", "extract"})
#: the workflow placeholders each function fills
PLACEHOLDERS: Mapping[str, str] = {
    "plan": "PlanFunctionArn",
    "extract": "ExtractFunctionArn",
    "assemble": "AssembleFunctionArn",
    "unpack": "UnpackFunctionArn",
}
INCOMING_PREFIX = "incoming/"
#: the stack's redrive policy: a poison message goes to the DLQ after this many receives
MAX_RECEIVE_COUNT = 5

Handler = Callable[[Any, Any], Any]
_FINISHED = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")
_ACTIVE_LOCK = threading.Lock()


@dataclass
class FakeLambdaContext:
    """What powertools reads from a Lambda context; enough for in-process handlers."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int = 3008
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = ""
    log_stream_name: str = ""
    function_version: str = "$LATEST"
    deadline: float = field(default_factory=lambda: time.monotonic() + 900)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


@dataclass
class DocumentOutcome:
    """One dropped file after the pipeline: the execution, the DynamoDB item and where results are."""

    key: str
    source_name: str
    doc_id: str | None
    execution_status: str | None  # None: no execution was ever started for the key
    item: dict[str, Any] | None
    seconds: float
    members: list[DocumentOutcome] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.item and self.item.get("status"):
            return str(self.item["status"])
        return "missing"

    @property
    def reason(self) -> str:
        if self.item:
            return str(self.item.get("reason") or "")
        if self.execution_status is None:
            return "no execution was started for this file (ingest failed or the message is in the DLQ)"
        return f"execution ended {self.execution_status} without recording a status"

    @property
    def broken(self) -> bool:
        """True when papersift itself failed: no recorded status for this file."""
        return self.item is None or not self.item.get("status")

    @property
    def results_prefix(self) -> str:
        return f"results/{self.doc_id}/"


def _member_outcomes(doc_id: str, members_of: Mapping[str, list[dict[str, Any]]],
                     execution_status: str) -> list[DocumentOutcome]:
    """The members of an archive document (and theirs, for a member that was an archive too)."""
    return [
        DocumentOutcome(
            key=str(member.get("source_key", "")),
            source_name=str(member.get("archive_path") or member.get("source_name") or ""),
            doc_id=str(member["doc_id"]),
            execution_status=execution_status,
            item=member,
            seconds=0.0,
            members=_member_outcomes(str(member["doc_id"]), members_of, execution_status),
        )
        for member in sorted(members_of.get(doc_id, []), key=lambda i: str(i.get("archive_path", "")))
    ]


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


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _ScaledTime:
    """Stands in for the ``time`` module inside moto's retrier so Retry waits are shortened."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def sleep(self, seconds: float) -> None:
        if self.scale > 0:
            time.sleep(seconds * self.scale)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


class LocalAws:
    """moto server + the stack's resources + our handlers, for one process.

    Use as a context manager; only one can be open at a time (it patches moto globally and sets
    process environment variables, both restored on exit).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        retry_time_scale: float = 0.0,
        log_level: str = "WARNING",
        repo_root: Path = REPO_ROOT,
        prefix: str = "papersift",
    ) -> None:
        self.settings = settings or Settings()
        self.retry_time_scale = retry_time_scale
        self.log_level = log_level
        self.repo_root = repo_root
        self.prefix = prefix
        self.bucket = f"{prefix}-documents"
        self.table_name = f"{prefix}-documents"
        self.queue_name = f"{prefix}-incoming"
        self.dlq_name = f"{prefix}-incoming-dlq"
        self.state_machine_name = f"{prefix}-workflow"
        self.port = 0
        self.endpoint_url = ""
        self.queue_url = ""
        self.dlq_url = ""
        self.state_machine_arn = ""
        self.function_arns: dict[str, str] = {}
        #: short function name -> handler(event, context); tests may replace entries
        self.handlers: dict[str, Handler] = {}
        self.invocations: list[tuple[str, str]] = []  # (function, "ok" | error type), for tests
        self._server: Any = None
        self._saved_env: dict[str, str | None] = {}
        self._saved_invoke: Any = None
        self._saved_retrier_time: Any = None
        self._saved_s3_event: Any = None
        self._saved_sfn_config: Any = None
        self._clients: dict[str, Any] = {}
        self._execution_inputs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._pdfium_lock = threading.Lock()
        self._open = False

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

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self._stop()
        finally:
            _ACTIVE_LOCK.release()

    def _start(self) -> None:
        from moto.core.config import default_user_config
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.port = _free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.endpoint_url = f"http://127.0.0.1:{self.port}"
        self._saved_sfn_config = dict(default_user_config.get("stepfunctions", {}))
        self._post("/moto-api/reset")
        self._post("/moto-api/config", {"stepfunctions": {"execute_state_machine": True}})
        self._set_env()
        self._patch_moto()
        self._open = True
        self._create_resources()
        self._load_handlers()

    def _stop(self) -> None:
        self._open = False
        if self._server is not None:
            with contextlib.suppress(Exception):  # stopping must not mask the real error
                self._server.stop()
            self._server = None
        self._unpatch_moto()
        if self._saved_sfn_config is not None:
            from moto.core.config import default_user_config

            default_user_config["stepfunctions"] = self._saved_sfn_config
            self._saved_sfn_config = None
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env = {}
        self._clients = {}

    def reset_documents(self) -> None:
        """Empty the bucket's objects and the table between tests, keeping the resources."""
        s3 = self.client("s3")
        versions = s3.get_paginator("list_object_versions")
        for page in versions.paginate(Bucket=self.bucket):
            for entry in page.get("Versions", []) + page.get("DeleteMarkers", []):
                s3.delete_object(Bucket=self.bucket, Key=entry["Key"], VersionId=entry["VersionId"])
        table = self.client("dynamodb")
        for page in table.get_paginator("scan").paginate(TableName=self.table_name):
            for item in page.get("Items", []):
                table.delete_item(TableName=self.table_name, Key={"doc_id": item["doc_id"]})
        self.invocations.clear()

    # -- environment and patches -----------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "MOTO_PORT": str(self.port),
            "TABLE_NAME": self.table_name,
            "BUCKET_NAME": self.bucket,
            "STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:{ACCOUNT_ID}:stateMachine:{self.state_machine_name}",
            "POWERTOOLS_SERVICE_NAME": "papersift",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_METRICS_NAMESPACE": "papersift",
            "POWERTOOLS_LOG_LEVEL": self.log_level,
        }
        env.update(self.settings.to_env())
        return env

    def _set_env(self) -> None:
        env = self._env()
        for name in ("AWS_PROFILE", *env):
            self._saved_env.setdefault(name, os.environ.get(name))
        os.environ.pop("AWS_PROFILE", None)
        os.environ.update(env)

    def _patch_moto(self) -> None:
        from moto.awslambda.models import LambdaFunction
        from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

        runner = self

        def invoke(fn: Any, body: str, request_headers: Any, response_headers: Any) -> bytes:
            return runner._dispatch(fn.function_name, body, request_headers, response_headers)

        self._saved_invoke = LambdaFunction.invoke
        LambdaFunction.invoke = invoke  # type: ignore[method-assign,assignment]
        self._saved_retrier_time = retrier_decl.time
        retrier_decl.time = _ScaledTime(self.retry_time_scale)  # type: ignore[assignment]

        from moto.s3 import notifications

        original_event = notifications._get_s3_event

        def s3_event(event_name: str, bucket: Any, key: Any, notification_id: str) -> dict[str, Any]:
            # AWS puts the object's versionId into the notification; moto leaves it out, and the
            # document id (dedupe) is derived from it.
            event = original_event(event_name, bucket, key, notification_id)
            version_id = getattr(key, "version_id", None)
            if version_id and version_id != "null":
                for record in event["Records"]:
                    record["s3"]["object"]["versionId"] = version_id
            return event

        self._saved_s3_event = original_event
        notifications._get_s3_event = s3_event

    def _unpatch_moto(self) -> None:
        from moto.awslambda.models import LambdaFunction
        from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

        if self._saved_invoke is not None:
            LambdaFunction.invoke = self._saved_invoke  # type: ignore[method-assign]
            self._saved_invoke = None
        if self._saved_retrier_time is not None:
            retrier_decl.time = self._saved_retrier_time
            self._saved_retrier_time = None
        if self._saved_s3_event is not None:
            from moto.s3 import notifications

            notifications._get_s3_event = self._saved_s3_event
            self._saved_s3_event = None

    def _post(self, path: str, payload: Mapping[str, Any] | None = None) -> None:
        data = json.dumps(payload or {}).encode("utf-8")
        request = Request(self.endpoint_url + path, data=data, method="POST",
                          headers={"Content-Type": "application/json"})
        with urlopen(request, timeout=30) as response:
            response.read()

    # -- handlers ----------------------------------------------------------------------------

    def _load_handlers(self) -> None:
        token = uuid.uuid4().hex[:8]
        for name in FUNCTIONS:
            path = self.repo_root / "functions" / name / "app.py"
            if path.exists():
                module = _load_module(path, f"papersift_local_{name}_{token}")
                self.handlers[name] = module.handler

    def _dispatch(self, function_name: str, body: str, request_headers: Any, response_headers: Any) -> bytes:
        name = function_name.removeprefix(f"{self.prefix}-")
        event = json.loads(body) if body else {}
        context = FakeLambdaContext(function_name=function_name, invoked_function_arn=self.function_arns.get(name, ""))
        try:
            handler = self.handlers.get(name)
            if handler is None:
                raise LookupError(f"no handler for function {function_name}: functions/{name}/app.py is missing")
            if name in PDFIUM_FUNCTIONS:
                # pdfium is not thread-safe and moto runs Map iterations in threads of this one
                # process; in Lambda every invocation has a process of its own
                with self._pdfium_lock:
                    result = handler(event, context)
            else:
                result = handler(event, context)
            payload = json.dumps(result, default=str)
            outcome = "ok"
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

    # -- resources ---------------------------------------------------------------------------

    def client(self, service: str) -> Any:
        import boto3
        from botocore.config import Config

        if service not in self._clients:
            self._clients[service] = boto3.client(  # type: ignore[call-overload]  # service chosen at run time
                service,
                endpoint_url=self.endpoint_url,
                region_name=REGION,
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
                config=Config(retries={"max_attempts": 2}, max_pool_connections=20),
            )
        return self._clients[service]

    def _create_resources(self) -> None:
        s3, sqs, ddb = self.client("s3"), self.client("sqs"), self.client("dynamodb")
        s3.create_bucket(Bucket=self.bucket)
        s3.put_bucket_versioning(Bucket=self.bucket, VersioningConfiguration={"Status": "Enabled"})
        ddb.create_table(
            TableName=self.table_name,
            KeySchema=[{"AttributeName": listing.TABLE_KEY, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in listing.KEY_ATTRIBUTES],
            GlobalSecondaryIndexes=[{
                "IndexName": index.name,
                "KeySchema": [{"AttributeName": index.partition, "KeyType": "HASH"},
                              {"AttributeName": index.sort, "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(listing.PROJECTED)},
            } for index in listing.INDEXES],
            BillingMode="PAY_PER_REQUEST",
        )
        self.dlq_url = sqs.create_queue(QueueName=self.dlq_name)["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=self.dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.queue_url = sqs.create_queue(
            QueueName=self.queue_name,
            Attributes={
                "VisibilityTimeout": "960",
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVE_COUNT}),
            },
        )["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        s3.put_bucket_notification_configuration(
            Bucket=self.bucket,
            NotificationConfiguration={
                "QueueConfigurations": [{
                    "QueueArn": queue_arn,
                    "Events": ["s3:ObjectCreated:*"],
                    "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": INCOMING_PREFIX}]}},
                }]
            },
        )
        # S3 sends an s3:TestEvent when notifications are configured; AWS's would reach ingest
        # before any document, here it would ride along with the first one. Drop it.
        sqs.purge_queue(QueueUrl=self.queue_url)
        self._create_functions()
        self._create_state_machine()
        self.client("lambda").create_event_source_mapping(
            EventSourceArn=queue_arn, FunctionName=self.function_arns["ingest"], BatchSize=10, Enabled=True
        )

    def _create_functions(self) -> None:
        iam, lam = self.client("iam"), self.client("lambda")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                         "Principal": {"Service": ["lambda.amazonaws.com",
                                                                                   "states.amazonaws.com"]}}]}
        role_arn = iam.create_role(RoleName=f"{self.prefix}-role", AssumeRolePolicyDocument=json.dumps(trust))[
            "Role"]["Arn"]
        self.role_arn = role_arn
        buffer = BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("app.py", "def handler(event, context):\n    raise RuntimeError('runs in-process')\n")
        code = buffer.getvalue()
        env = {k: v for k, v in self._env().items() if not k.startswith("AWS_")}
        for name in FUNCTIONS:
            response = lam.create_function(
                FunctionName=f"{self.prefix}-{name}",
                Runtime="python3.11",
                Role=role_arn,
                Handler="app.handler",
                Code={"ZipFile": code},
                Timeout=900,
                MemorySize=3008,
                Environment={"Variables": env},
            )
            self.function_arns[name] = response["FunctionArn"]

    def _create_state_machine(self) -> None:
        workflow_path = self.repo_root / "infra" / "workflow.py"
        workflow = _load_module(workflow_path, f"papersift_local_workflow_{uuid.uuid4().hex[:8]}")
        arns = {placeholder: self.function_arns[name] for name, placeholder in PLACEHOLDERS.items()}
        definition = workflow.load_definition(arns)
        response = self.client("stepfunctions").create_state_machine(
            name=self.state_machine_name, definition=definition, roleArn=self.role_arn, type="STANDARD"
        )
        self.state_machine_arn = response["stateMachineArn"]

    # -- driving the pipeline ------------------------------------------------------------------

    def drop(self, path: Path, options: DocumentOptions | None = None, name: str | None = None) -> str:
        """Upload a file under ``incoming/``; S3 -> SQS -> ingest starts its execution. Returns the key."""
        key = INCOMING_PREFIX + (name or path.name)
        metadata = options.metadata() if options else {}
        with path.open("rb") as body:
            self.client("s3").put_object(Bucket=self.bucket, Key=key, Body=body, Metadata=metadata)
        return key

    def executions(self) -> list[dict[str, Any]]:
        """Every execution of the workflow with its parsed input (Distributed Map children excluded)."""
        sfn = self.client("stepfunctions")
        found: list[dict[str, Any]] = []
        for page in sfn.get_paginator("list_executions").paginate(stateMachineArn=self.state_machine_arn):
            for execution in page["executions"]:
                arn = execution["executionArn"]
                if arn not in self._execution_inputs:
                    described = sfn.describe_execution(executionArn=arn)
                    self._execution_inputs[arn] = json.loads(described.get("input") or "{}")
                execution_input = self._execution_inputs[arn]
                if "batch_index" in execution_input:
                    continue
                found.append({**execution, "input": execution_input})
        return found

    def pending_messages(self) -> int:
        attributes = self.client("sqs").get_queue_attributes(
            QueueUrl=self.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])

    def redeliver(self) -> int:
        """Poll the queue like Lambda's poller would: moto only delivers to the mapping on a send.

        A message left visible after a failed ingest is received again here and handed to ingest in
        an SQS-shaped event; past ``maxReceiveCount`` moto moves it to the DLQ on receive.
        """
        sqs = self.client("sqs")
        response = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0,
                                       AttributeNames=["All"])
        messages = response.get("Messages", [])
        if not messages:
            return 0
        queue_arn = sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"]
        event = {"Records": [{
            "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
            "attributes": m.get("Attributes", {}), "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
            "eventSource": "aws:sqs", "eventSourceARN": queue_arn, "awsRegion": REGION,
        } for m in messages]}
        response_headers: dict[str, Any] = {}
        payload = json.loads(self._dispatch(f"{self.prefix}-ingest", json.dumps(event), {}, response_headers))
        if "x-amz-function-error" in response_headers:
            return len(messages)
        failed = {f.get("itemIdentifier") for f in (payload or {}).get("batchItemFailures", [])} if isinstance(
            payload, dict) else set()
        for message in messages:
            if message["MessageId"] not in failed:
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return len(messages)

    def wait(
        self,
        keys: Sequence[str],
        timeout: float = 1800.0,
        poll: float = 0.25,
        on_poll: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> bool:
        """Wait until every key has a finished execution and nothing else runs. False on timeout."""
        deadline = time.monotonic() + timeout
        wanted = set(keys)
        quiet_polls = 0
        while time.monotonic() < deadline:
            executions = self.executions()
            if on_poll is not None:
                on_poll(executions)
            started = {e["input"].get("key") for e in executions if not e["input"].get("parent_doc_id")}
            running = [e for e in executions if e["status"] not in _FINISHED]
            pending = self.pending_messages()
            if pending and not running:
                self.redeliver()
            settled = not running and not pending and (wanted <= started or not self._any_in_flight())
            quiet_polls = quiet_polls + 1 if settled else 0
            if quiet_polls >= 2:  # twice in a row: a finishing parent may just have started a child
                return True
            time.sleep(poll)
        return False

    def _any_in_flight(self) -> bool:
        return self.pending_messages() > 0

    def outcomes(self, keys: Sequence[str]) -> list[DocumentOutcome]:
        """What happened to each dropped key, from its execution and DynamoDB; archive members
        (processed inside the archive's own execution) from their items' parent_doc_id."""
        executions = self.executions()
        items = self.items()
        members_of: dict[str, list[dict[str, Any]]] = {}
        for item in items.values():
            if item.get("parent_doc_id"):
                members_of.setdefault(str(item["parent_doc_id"]), []).append(item)
        outcomes: list[DocumentOutcome] = []
        for key in keys:
            mine = [e for e in executions if e["input"].get("key") == key and not e["input"].get("parent_doc_id")]
            mine.sort(key=lambda e: e["startDate"])
            source_name = key.removeprefix(INCOMING_PREFIX)
            if not mine:
                outcomes.append(DocumentOutcome(key, source_name, None, None, None, 0.0))
                continue
            execution = mine[-1]
            doc_id = execution["input"].get("doc_id")
            stop = execution.get("stopDate")
            outcome = DocumentOutcome(
                key=key,
                source_name=source_name,
                doc_id=doc_id,
                execution_status=execution["status"],
                item=items.get(doc_id or ""),
                seconds=(stop - execution["startDate"]).total_seconds() if stop else 0.0,
            )
            outcome.members = _member_outcomes(doc_id or "", members_of, execution["status"])
            outcomes.append(outcome)
        return outcomes

    def items(self) -> dict[str, dict[str, Any]]:
        from boto3.dynamodb.types import TypeDeserializer

        deserializer = TypeDeserializer()
        items: dict[str, dict[str, Any]] = {}
        for page in self.client("dynamodb").get_paginator("scan").paginate(TableName=self.table_name):
            for raw in page.get("Items", []):
                item = {k: deserializer.deserialize(v) for k, v in raw.items()}
                items[str(item["doc_id"])] = item
        return items

    def result_keys(self, outcome: DocumentOutcome) -> list[str]:
        """The top-level result objects of a document (text.txt, document.md, report.json, ...)."""
        if not outcome.doc_id:
            return []
        response = self.client("s3").list_objects_v2(Bucket=self.bucket, Prefix=outcome.results_prefix, Delimiter="/")
        return sorted(obj["Key"] for obj in response.get("Contents", []))

    def read(self, key: str) -> bytes:
        return bytes(self.client("s3").get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def count_pages_done(self, doc_ids: Iterable[str]) -> int:
        """Page JSONs written so far for running documents (progress display only)."""
        total = 0
        s3 = self.client("s3")
        for doc_id in doc_ids:
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                      Prefix=f"work/{doc_id}/pages/"):
                total += page.get("KeyCount", 0)
        return total
