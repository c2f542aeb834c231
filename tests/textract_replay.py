"""A Textract client that answers with the real service's recorded responses (../shared/textract).

The code under test gets a real ``boto3.client("textract")``: its calls go through botocore's
parameter validation and serialisation as they would against AWS, and one event hook,
``before-call``, answers in place of the HTTP request (the hook botocore's Stubber uses). The
answer is the response recorded for the request's document, found by the SHA-256 of the bytes
sent and the operation called, so a test asks for nothing by name: it sends one of the inputs
and gets what Textract said about it. Responses are checked against the operation's output
shape once, like Stubber's.

Importable from any test folder (tests/ is on sys.path)::

    from textract_replay import ReplayingTextract, require_recordings

The recorded AnalyzeDocument responses were made with TABLES, FORMS, LAYOUT and SIGNATURES:
replayed for a TABLES-only request they hold more block types than the service would send,
which a parser must ignore anyway. ``calls`` keeps every request so tests can check what was
asked (FeatureTypes, the bytes). Errors are queued with :meth:`ReplayingTextract.fail_next`
(throttling twice, then the recording).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.validate import validate_parameters

#: recorded responses beside their inputs (README there); the tests skip when absent
RECORDINGS = (Path(__file__).resolve().parents[1] / ".." / "shared" / "textract").resolve()

#: file-name suffix of a response -> the operation it answers
OPERATIONS = {
    "detect_document_text": "DetectDocumentText",
    "analyze_document": "AnalyzeDocument",
    "get_document_text_detection": "GetDocumentTextDetection",
}


def recordings_present() -> bool:
    return (RECORDINGS / "inputs").is_dir() and (RECORDINGS / "responses").is_dir()


def require_recordings() -> Path:
    """The recordings folder, or skip the calling test when it is absent."""
    if not recordings_present():
        pytest.skip(f"Textract recordings not found at {RECORDINGS}")
    return RECORDINGS


def input_bytes(name: str) -> bytes:
    return (require_recordings() / "inputs" / name).read_bytes()


def recorded_response(name: str, operation: str) -> dict[str, Any]:
    """The response recorded for input ``name`` of ``operation`` (snake_case, as the file names
    it): for parsing tests of responses no synchronous call can get, like the async multi-page."""
    path = require_recordings() / "responses" / f"{name}.{operation}.json"
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Call:
    """One request the client received: the operation and its parameters as passed."""

    operation: str
    params: dict[str, Any]

    @property
    def document(self) -> bytes:
        return bytes(self.params.get("Document", {}).get("Bytes", b""))


@dataclass
class ReplayingTextract:
    """A real Textract client whose answers come from the recordings.

    ``client`` is the boto3 client to hand to the code under test. It has dummy credentials (so
    boto3 never looks for real ones, nor asks an instance-metadata endpoint) and is never sent a
    request: the hook answers first.
    """

    recordings: Path = field(default_factory=require_recordings)
    region: str = "us-east-1"
    config: Config | None = None
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.client = boto3.client(
            "textract",
            region_name=self.region,
            aws_access_key_id="replay",
            aws_secret_access_key="replay",
            config=self.config,
        )
        self._answers: dict[tuple[str, str], dict[str, Any]] = {}
        self._names: dict[tuple[str, str], str] = {}
        self._failures: deque[tuple[str, str, int]] = deque()
        self._index()
        events = self.client.meta.events
        events.register("before-parameter-build.textract.*", self._remember_request)
        events.register("before-call.textract.*", self._answer)

    def _index(self) -> None:
        """Each response under the hash of its input and its operation."""
        inputs = self.recordings / "inputs"
        for path in sorted((self.recordings / "responses").glob("*.json")):
            name, _, suffix = path.name.removesuffix(".json").rpartition(".")
            operation = OPERATIONS.get(suffix)
            if operation is None or not (inputs / name).is_file():
                continue
            digest = hashlib.sha256((inputs / name).read_bytes()).hexdigest()
            self._names[(digest, operation)] = name
            self._answers[(digest, operation)] = self._validated(operation, path)

    def _validated(self, operation: str, path: Path) -> dict[str, Any]:
        response: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        shape = self.client.meta.service_model.operation_model(operation).output_shape
        body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
        validate_parameters(body, shape)  # raises ParamValidationError if the model disagrees
        return response

    def recorded_names(self) -> list[str]:
        """``name.Operation`` of every response this client can replay."""
        return sorted(f"{name}.{op}" for (_, op), name in self._names.items())

    def fail_next(self, code: str, message: str = "", times: int = 1, status: int = 400) -> None:
        """Answer the next ``times`` calls with the service error ``code`` (as the service sends
        it: botocore raises the client's modeled exception class for it)."""
        for _ in range(times):
            self._failures.append((code, message or f"replayed {code}", status))

    def _remember_request(self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        data = params.get("Document", {}).get("Bytes")
        context["replay_digest"] = hashlib.sha256(data).hexdigest() if isinstance(data, bytes | bytearray) else None
        self.calls.append(Call(model.name, copy.deepcopy(params)))

    def _answer(self, model: Any, context: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        if self._failures:
            code, message, status = self._failures.popleft()
            error = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}
            return AWSResponse(None, status, {}, None), error
        key = (context.get("replay_digest") or "", model.name)
        if key not in self._answers:
            raise LookupError(
                f"no recorded {model.name} response for the document sent (sha256 {key[0][:12]}...); "
                f"recorded: {', '.join(self.recorded_names())}"
            )
        return AWSResponse(None, 200, {}, None), copy.deepcopy(self._answers[key])
