"""The moto internals patched while a LocalAws is open; every patch is undone by ``restore``.

- ``LambdaFunction.invoke``: every way moto invokes a function goes through it; it becomes a
  dispatch to our handler in this process.
- The Step Functions retrier's ``time``: Retry waits really sleep in moto; they are scaled.
- ``s3.notifications._get_s3_event``: AWS puts the object's versionId into the notification and
  moto leaves it out; the document id (and so ingest's dedupe) is derived from it.
- moto's global Step Functions config, which ``POST /moto-api/config`` changes, is saved and put back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
    def __init__(self, dispatch: Dispatch, retry_time_scale: float) -> None:
        self.dispatch = dispatch
        self.retry_time_scale = retry_time_scale
        self._undo: list[Callable[[], None]] = []

    def apply(self) -> None:
        self._keep_step_functions_config()
        self._dispatch_invocations()
        self._scale_retry_waits()
        self._add_version_ids_to_notifications()

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
