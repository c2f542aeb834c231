"""`papersift serve`: the API's own Lambda handler behind an HTTP server on 127.0.0.1.

werkzeug (a maintained WSGI library, already here through moto[server]) parses HTTP; each
request becomes an API Gateway REST proxy event (payload 1.0) for ``functions/api/app.py``'s
handler, and the handler's proxy response becomes the HTTP response. What API Gateway does in
front of the Lambda is done here the same way, so a client sees one behaviour in both places:

- authentication, on every route: ``iam`` checks the request's SigV4 signature (service
  ``execute-api``) by recomputing it with botocore's own signer from the local credentials
  (the embedded AWS's access key and secret); ``api_key`` checks the ``x-api-key`` header;
- throttling: a token bucket with the stage's rate and burst (``Settings.api_throttle_*``);
- its refusals answer in the API's error shape, with the codes of ``api_models.GATEWAY_ERRORS``.

One request runs the handler at a time, like one Lambda instance: powertools keeps the current
event on the router classes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.util
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from werkzeug.datastructures import Headers
from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

from papersift.api_models import GATEWAY_ERRORS, ErrorResponse
from papersift.settings import Settings

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
STAGE = "local"
SIGV4_SERVICE = "execute-api"
#: how far a request's X-Amz-Date may be from now (AWS's SigV4 rule)
MAX_CLOCK_SKEW = timedelta(minutes=15)
API_MODULE_NAMES = ("route_support", "document_routes", "result_routes")


def load_api_module(directory: Path, name: str | None = None) -> ModuleType:
    """``functions/api/app.py`` with its sibling route modules, as Lambda would import it (its
    directory on the path). Its clients bind to the environment at import: load it after the
    embedded AWS has set AWS_ENDPOINT_URL."""
    spec = importlib.util.spec_from_file_location(name or f"papersift_api_{uuid.uuid4().hex[:8]}",
                                                  directory / "app.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the API handler from {directory}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(directory))
    try:
        for sibling in API_MODULE_NAMES:  # a fresh copy each time: they hold the routers
            sys.modules.pop(sibling, None)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(directory))
    return module


def gateway_error(kind: str, message: str) -> Response:
    status, code = GATEWAY_ERRORS[kind]
    return Response(ErrorResponse.of(code, message).model_dump_json(), status=status, mimetype="application/json")


@dataclass
class TokenBucket:
    """API Gateway's throttle: ``rate`` requests a second on average, ``burst`` at once."""

    rate: float
    burst: int
    clock: Callable[[], float] = time.monotonic
    _tokens: float = field(init=False)
    _stamp: float = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._tokens, self._stamp = float(self.burst), self.clock()

    def take(self) -> bool:
        with self._lock:
            now = self.clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            if self._tokens >= 1:
                self._tokens -= 1
                return True
            return False


@dataclass(frozen=True)
class SigV4Verifier:
    """Checks an ``Authorization: AWS4-HMAC-SHA256 ...`` header the way API Gateway's IAM
    authorization does: known access key, scope, clock skew, and the signature recomputed over
    the request as received (method, raw path and query, the signed headers, the body)."""

    secrets: Mapping[str, str]  # access key id -> secret access key
    region: str
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def refusal(self, request: Request, body: bytes) -> tuple[str, str] | None:
        """None when the signature is good, else (gateway error kind, message)."""
        header = request.headers.get("Authorization", "")
        if not header:
            return "MISSING_AUTHENTICATION_TOKEN", "Missing Authentication Token"
        fields = _authorization_fields(header)
        if fields is None:
            return "INVALID_SIGNATURE", "Authorization header is not AWS4-HMAC-SHA256 Credential=..., " \
                                        "SignedHeaders=..., Signature=..."
        access_key, date, region, service, terminator = (fields["Credential"].split("/") + [""] * 5)[:5]
        if access_key not in self.secrets:
            return "ACCESS_DENIED", "The security token included in the request is invalid"
        if (region, service, terminator) != (self.region, SIGV4_SERVICE, "aws4_request"):
            return "INVALID_SIGNATURE", f"Credential scope must be <date>/{self.region}/{SIGV4_SERVICE}/aws4_request"
        amz_date = request.headers.get("X-Amz-Date", "")
        try:
            signed_at = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        except ValueError:
            return "INVALID_SIGNATURE", "X-Amz-Date is missing or not YYYYMMDDTHHMMSSZ"
        if abs(self.clock() - signed_at) > MAX_CLOCK_SKEW or date != amz_date[:8]:
            return "INVALID_SIGNATURE", "Signature expired or dated in the future"
        signed = [name.strip().lower() for name in fields["SignedHeaders"].split(";") if name.strip()]
        if "host" not in signed:
            return "INVALID_SIGNATURE", "host must be a signed header"
        content_hash = request.headers.get("X-Amz-Content-Sha256")
        if content_hash is not None and content_hash != hashlib.sha256(body).hexdigest():
            return "INVALID_SIGNATURE", "X-Amz-Content-Sha256 does not match the body"
        expected = self._signature(request, body, signed, access_key, amz_date)
        if not hmac.compare_digest(expected, fields["Signature"]):
            return "INVALID_SIGNATURE", "The request signature we calculated does not match the signature you provided"
        return None

    def _signature(self, request: Request, body: bytes, signed: Iterable[str], access_key: str,
                   amz_date: str) -> str:
        raw_path = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or request.full_path
        path = raw_path.split("?", 1)[0]
        query = request.environ.get("QUERY_STRING", "")
        url = f"{request.scheme}://{request.host}{path}" + (f"?{query}" if query else "")
        headers = {name: request.headers.get(name, "") for name in signed}
        aws_request = AWSRequest(method=request.method, url=url, data=body, headers=headers)
        aws_request.context["timestamp"] = amz_date
        signer = SigV4Auth(Credentials(access_key, self.secrets[access_key]), SIGV4_SERVICE, self.region)
        canonical = signer.canonical_request(aws_request)
        return str(signer.signature(signer.string_to_sign(aws_request, canonical), aws_request))


def _authorization_fields(header: str) -> dict[str, str] | None:
    algorithm, _, rest = header.partition(" ")
    if algorithm != "AWS4-HMAC-SHA256":
        return None
    fields = dict(part.strip().partition("=")[::2] for part in rest.split(","))
    return fields if {"Credential", "SignedHeaders", "Signature"} <= set(fields) else None


def proxy_event(request: Request, body: bytes, identity: Mapping[str, str]) -> dict[str, Any]:
    """The API Gateway REST proxy event (payload format 1.0) for one HTTP request."""
    headers = {name: value for name, value in request.headers.items()}
    multi_headers: dict[str, list[str]] = {}
    for name, value in request.headers.items():
        multi_headers.setdefault(name, []).append(value)
    query = {name: values[-1] for name, values in request.args.lists()} or None
    multi_query = {name: list(values) for name, values in request.args.lists()} or None
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode("ascii"), True
    now = datetime.now(UTC)
    return {
        "resource": request.path,
        "path": request.path,
        "httpMethod": request.method,
        "headers": headers,
        "multiValueHeaders": multi_headers,
        "queryStringParameters": query,
        "multiValueQueryStringParameters": multi_query,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": request.path,
            "httpMethod": request.method,
            "path": f"/{STAGE}{request.path}",
            "stage": STAGE,
            "requestId": str(uuid.uuid4()),
            "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "requestTimeEpoch": int(now.timestamp() * 1000),
            "protocol": request.environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
            "identity": {"sourceIp": request.remote_addr or "127.0.0.1",
                         "userAgent": request.headers.get("User-Agent", ""), **identity},
            "accountId": "123456789012",
            "apiId": "local",
        },
        "body": text if body else None,
        "isBase64Encoded": encoded,
    }


def http_response(result: Mapping[str, Any]) -> Response:
    """The handler's proxy response as HTTP."""
    raw = result.get("body") or ""
    body = base64.b64decode(raw) if result.get("isBase64Encoded") else str(raw).encode("utf-8")
    headers = Headers()
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers.setlist(name, [str(v) for v in values])
    for name, value in (result.get("headers") or {}).items():
        headers[name] = str(value)
    return Response(body, status=int(result.get("statusCode", 200)), headers=headers)


class ApiServer:
    """WSGI application: API Gateway's checks, then the handler, one request at a time."""

    def __init__(self, handler: Handler, settings: Settings, *, secrets: Mapping[str, str], region: str,
                 api_keys: Iterable[str] = (), context_factory: Callable[[], Any] | None = None) -> None:
        self.handler = handler
        self.auth = settings.api_auth
        self.verifier = SigV4Verifier(dict(secrets), region)
        self.api_keys = frozenset(api_keys)
        if self.auth == "api_key" and not self.api_keys:
            raise ValueError("api_key authentication needs at least one API key")
        self.throttle = TokenBucket(settings.api_throttle_rate, settings.api_throttle_burst)
        self.context_factory = context_factory or (lambda: None)
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        request = Request(environ)
        return self.respond(request)(environ, start_response)

    def respond(self, request: Request) -> Response:
        body = request.get_data(cache=True)
        identity: dict[str, str] = {}
        if self.auth == "iam":
            refusal = self.verifier.refusal(request, body)
            if refusal:
                return gateway_error(*refusal)
            identity["accessKey"] = request.headers["Authorization"].split("Credential=", 1)[1].split("/", 1)[0]
        else:
            key = request.headers.get("x-api-key", "")
            if not key:
                return gateway_error("MISSING_AUTHENTICATION_TOKEN", "Forbidden: an x-api-key header is required")
            if not any(hmac.compare_digest(key, known) for known in self.api_keys):
                return gateway_error("INVALID_API_KEY", "Forbidden: the API key is not valid")
            identity["apiKey"] = key
        if not self.throttle.take():
            return gateway_error("THROTTLED", "Too Many Requests")
        event = proxy_event(request, body, identity)
        with self._lock:
            result = self.handler(event, self.context_factory())
        return http_response(result)


@dataclass
class RunningServer:
    """A server started on a free (or given) loopback port, serving in a thread."""

    server: BaseWSGIServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def start_server(app: ApiServer, port: int = 0) -> RunningServer:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="papersift-api", daemon=True)
    thread.start()
    return RunningServer(server, thread)


def describe_auth(app: ApiServer) -> str:
    """What `papersift serve` prints so a person can call it."""
    region = app.verifier.region
    if app.auth == "iam":
        key, secret = next(iter(app.verifier.secrets.items()))
        return (f"auth: IAM (SigV4, service {SIGV4_SERVICE}, region {region}, access key {key}, secret {secret})\n"
                f"  curl --aws-sigv4 'aws:amz:{region}:{SIGV4_SERVICE}' --user '{key}:{secret}' ...")
    return f"auth: API key: send the header x-api-key: {next(iter(app.api_keys))}"


class LocalApi:
    """The embedded AWS of `papersift run`, the API handler loaded against it, and the server.

    ``papersift serve`` holds one open until interrupted; the HTTP tests hold one per module.
    """

    def __init__(self, settings: Settings | None = None, *, port: int = 0, api_keys: Iterable[str] = (),
                 retry_time_scale: float = 0.0, log_level: str = "WARNING") -> None:
        from papersift_cli.local_aws import LocalAws

        self.settings = settings or Settings()
        self.port = port
        self.api_keys = tuple(api_keys)
        self.aws = LocalAws(self.settings, retry_time_scale=retry_time_scale, log_level=log_level,
                            in_process=False)  # presigned URLs must reach the embedded S3 over HTTP
        self.app: ApiServer | None = None
        self._running: RunningServer | None = None

    @property
    def url(self) -> str:
        assert self._running is not None, "the server is not running"
        return self._running.url

    def __enter__(self) -> LocalApi:
        from infra.deployment import API
        from papersift_cli.local_aws import REGION, InvocationContext, handler_path

        self.aws.__enter__()
        try:
            module = load_api_module(handler_path(API.name).parent)
            self.app = ApiServer(
                module.handler, self.settings, region=REGION, api_keys=self.api_keys,
                # the embedded AWS's own credentials: what a local caller signs with
                secrets={os.environ["AWS_ACCESS_KEY_ID"]: os.environ["AWS_SECRET_ACCESS_KEY"]},
                context_factory=lambda: InvocationContext.for_function(self.aws.prefix, API))
            self._running = start_server(self.app, self.port)
        except BaseException:
            self.aws.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._running is not None:
                self._running.stop()
                self._running = None
        finally:
            self.aws.__exit__(None, None, None)

    def poll_queue(self) -> None:
        """Redeliver drops whose ingest failed, as Lambda's SQS poller would (moto has none)."""
        self.aws.redeliver_pending()
