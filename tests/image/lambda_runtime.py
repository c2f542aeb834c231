"""The Lambda Runtime API (version 2018-06-01) on loopback, as far as a runtime client uses it.

The image's entry point (``python3 -m awslambdaric app.handler``) polls
``/runtime/invocation/next`` and posts each result to ``/response`` or ``/error``, exactly as in
Lambda; this server hands out the queued events and records what comes back. When no event is
left, ``/next`` answers 500, which makes the runtime client exit rather than poll forever.
The emulator AWS ships (aws-lambda-runtime-interface-emulator) is a Go binary that no package
registry here carries, hence this stand-in.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/2018-06-01/runtime"
ACCOUNT = "123456789012"


@dataclass
class Invocation:
    event: dict[str, Any]
    request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    response: Any = None
    error: dict[str, Any] | None = None
    done: threading.Event = field(default_factory=threading.Event)


class RuntimeApi:
    """Serve ``events`` to one runtime, one at a time; ``deadline_s`` is each invocation's time limit."""

    def __init__(self, function_name: str, events: list[dict[str, Any]], deadline_s: float = 600) -> None:
        self.function_arn = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:{function_name}"
        self.invocations = [Invocation(event) for event in events]
        self.init_error: dict[str, Any] | None = None
        self.init_failed = threading.Event()
        self.polled = threading.Event()  # the runtime asked for work: its handler is loaded
        self._pending = deque(self.invocations)
        self._by_id = {inv.request_id: inv for inv in self.invocations}
        self._deadline_s = deadline_s
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def address(self) -> str:
        """The value of AWS_LAMBDA_RUNTIME_API."""
        host, port = self._server.server_address[:2]
        return f"{host}:{port}"

    def __enter__(self) -> RuntimeApi:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait(self, timeout: float) -> bool:
        """True when every invocation has a result (or init failed) within ``timeout`` seconds."""
        end = time.monotonic() + timeout
        for inv in self.invocations:
            while not inv.done.wait(0.2):
                if self.init_failed.is_set():
                    return True
                if time.monotonic() > end:
                    return False
        return True

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reports failures
                pass

            def do_GET(self) -> None:
                if self.path != f"{PREFIX}/invocation/next":
                    self._reply(404, {"errorMessage": f"unknown path {self.path}"})
                    return
                api.polled.set()
                if not api._pending:
                    self._reply(500, {"errorMessage": "no more events: the test is over"})
                    return
                inv = api._pending.popleft()
                deadline_ms = int((time.time() + api._deadline_s) * 1000)
                self._reply(200, inv.event, {
                    "Lambda-Runtime-Aws-Request-Id": inv.request_id,
                    "Lambda-Runtime-Deadline-Ms": str(deadline_ms),
                    "Lambda-Runtime-Invoked-Function-Arn": api.function_arn,
                    "Lambda-Runtime-Trace-Id": f"Root=1-{int(time.time()):08x}-{uuid.uuid4().hex[:24]};Sampled=0",
                })

            def do_POST(self) -> None:
                body = json.loads(self._body() or b"null")
                parts = self.path.removeprefix(PREFIX).strip("/").split("/")
                if parts == ["init", "error"]:
                    api.init_error = body
                    api.init_failed.set()
                elif len(parts) == 3 and parts[0] == "invocation" and parts[1] in api._by_id:
                    inv = api._by_id[parts[1]]
                    if parts[2] == "response":
                        inv.response = body
                    else:
                        inv.error = body
                    inv.done.set()
                else:
                    self._reply(404, {"errorMessage": f"unknown path {self.path}"})
                    return
                self._reply(202, {"status": "OK"})

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while (size := int(self.rfile.readline().split(b";")[0], 16)) > 0:
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    self.rfile.readline()
                    return b"".join(chunks)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _reply(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler
