"""The moto internals patched while a LocalAws is open; every patch is undone by ``restore``.

- ``LambdaFunction.invoke``: every way moto invokes a function goes through it; it becomes a
  dispatch to our handler in this process.
- The Step Functions retrier's ``time``: Retry waits really sleep in moto; they are scaled.
- ``s3.notifications._get_s3_event``: AWS puts the object's versionId into the notification and
  moto leaves it out; the document id (and so ingest's dedupe) is derived from it.
- moto's global Step Functions config, which ``POST /moto-api/config`` changes, is saved and put back.
- In process (``papersift run``, the tests): moto's botocore stubber is switched on, so every boto3
  client without an endpoint URL (the handlers', the runner's, Step Functions' own Lambda client) is
  answered by moto's backends in this thread, with no HTTP round trip, socket or server thread; and
  S3's URL table, which moto re-imports (``importlib.reload``) on every S3 request, is read once.
  Both were most of `papersift run`'s time (docs/benchmarks.md). The server still answers clients
  that name its endpoint (`papersift serve`'s presigned URLs, the container image tests).
- Step Functions' own clients and JSONPaths: moto built a new boto3 client (service model JSON read
  again) for every Task's Lambda invoke and every item-reader read, and compiled every JSONPath with a
  fresh ply parser at every state; both are built once per key instead (clients are thread-safe,
  compiled paths immutable).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

#: (function name, request body, request headers, response headers) -> response payload
Dispatch = Callable[[str, str, Any, Any], bytes]


class _ScaledTime:
    """Stands in for the ``time`` module inside moto's retrier so Retry waits are shortened."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def sleep(self, seconds: float) -> None:
        if self.scale > 0:
            time.sleep(seconds * self.scale)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


class MotoPatches:
    def __init__(self, dispatch: Dispatch, retry_time_scale: float, in_process: bool = True) -> None:
        self.dispatch = dispatch
        self.retry_time_scale = retry_time_scale
        self.in_process = in_process
        self._undo: list[Callable[[], None]] = []

    def apply(self) -> None:
        self._keep_step_functions_config()
        self._dispatch_invocations()
        self._scale_retry_waits()
        self._add_version_ids_to_notifications()
        self._reuse_step_functions_clients()
        self._compile_json_paths_once()
        if self.in_process:
            self._answer_boto_calls_in_process()
            self._read_s3_urls_once()

    def restore(self) -> None:
        while self._undo:
            self._undo.pop()()

    def _keep_step_functions_config(self) -> None:
        from moto.core.config import default_user_config

        saved: Any = dict(default_user_config.get("stepfunctions", {}))

        def undo() -> None:
            default_user_config["stepfunctions"] = saved

        self._undo.append(undo)

    def _dispatch_invocations(self) -> None:
        from moto.awslambda.models import LambdaFunction

        dispatch = self.dispatch

        def invoke(fn: Any, body: str, request_headers: Any, response_headers: Any) -> bytes:
            return dispatch(fn.function_name, body, request_headers, response_headers)

        original = LambdaFunction.invoke
        LambdaFunction.invoke = invoke  # type: ignore[method-assign,assignment]

        def undo() -> None:
            LambdaFunction.invoke = original  # type: ignore[method-assign]

        self._undo.append(undo)

    def _scale_retry_waits(self) -> None:
        from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

        original = retrier_decl.time
        retrier_decl.time = _ScaledTime(self.retry_time_scale)  # type: ignore[assignment]

        def undo() -> None:
            retrier_decl.time = original

        self._undo.append(undo)

    def _add_version_ids_to_notifications(self) -> None:
        from moto.s3 import notifications

        original = notifications._get_s3_event

        def s3_event(event_name: str, bucket: Any, key: Any, notification_id: str) -> dict[str, Any]:
            event = original(event_name, bucket, key, notification_id)
            version_id = getattr(key, "version_id", None)
            if version_id and version_id != "null":
                for record in event["Records"]:
                    record["s3"]["object"]["versionId"] = version_id
            return event

        notifications._get_s3_event = s3_event

        def undo() -> None:
            notifications._get_s3_event = original

        self._undo.append(undo)

    def _answer_boto_calls_in_process(self) -> None:
        from moto.core.models import botocore_stubber

        original = botocore_stubber.enabled
        botocore_stubber.enabled = True

        def undo() -> None:
            botocore_stubber.enabled = original

        self._undo.append(undo)

    def _read_s3_urls_once(self) -> None:
        import moto.s3.urls as s3_urls
        from moto.s3.models import S3Backend

        original = S3Backend.__dict__["_url_module"]
        S3Backend._url_module = property(lambda backend: s3_urls)  # type: ignore[assignment,method-assign]

        def undo() -> None:
            S3Backend._url_module = original  # type: ignore[method-assign]

        self._undo.append(undo)

    def _replace(self, module: ModuleType, name: str, value: Any) -> None:
        original = getattr(module, name)
        setattr(module, name, value)
        self._undo.append(lambda: setattr(module, name, original))

    def _reuse_step_functions_clients(self) -> None:
        from moto.core.models import botocore_stubber
        from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval import (
            resource_eval_s3 as item_reader,
        )
        from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
        from moto.stepfunctions.parser.asl.utils import boto_client

        build = boto_client.boto_client_for
        clients: dict[tuple[str, str, bool], Any] = {}
        lock = threading.Lock()

        def client_for(region: str, service: str, state_credentials: Any = None) -> Any:
            if state_credentials is not None:  # a role to assume: not shared
                return build(region, service, state_credentials)
            key = (region, service, botocore_stubber.enabled)
            with lock:
                if key not in clients:
                    clients[key] = build(region, service)
                return clients[key]

        for module in (lambda_eval_utils, item_reader):
            self._replace(module, "boto_client_for", client_for)

    def _compile_json_paths_once(self) -> None:
        from moto.stepfunctions.parser.asl.component.common.path import result_path
        from moto.stepfunctions.parser.asl.utils import json_path

        for module in (json_path, result_path):
            self._replace(module, "parse", functools.lru_cache(maxsize=1024)(module.parse))
