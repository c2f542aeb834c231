"""API: one Lambda behind API Gateway (REST) for callers who cannot drop files into the bucket.

Routes live by module (``document_routes``, ``result_routes``) on powertools Routers; requests and
responses are the pydantic models of ``papersift.api_models``, validated by the resolver, and
``docs/openapi.json`` is generated from them. The work is ``papersift.catalog.Catalog``; this module
only creates its clients and turns every failure into the one error shape, ``{"error": {"code",
"message", "field"}}``, never a stack trace.

Passwords arrive in request bodies: the event is never logged, the tracer does not record
responses (a presigned upload carries the options header), and they leave this function only
as the upload's S3 metadata.
"""

from __future__ import annotations

import os
from http import HTTPStatus
from typing import Any

import boto3
import document_routes
import result_routes
from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.models import APIKey
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.config import Config
from botocore.exceptions import ClientError
from route_support import body_refusal, with_lowercase_media_type

from papersift import __version__
from papersift.api_models import ErrorResponse
from papersift.catalog import Catalog
from papersift.errors import AWS_THROTTLING_CODES, RequestError, ThrottledError
from papersift.layout import BUCKET_NAME_ENV, STATE_MACHINE_ARN_ENV, TABLE_NAME_ENV
from papersift.settings import Settings

logger = Logger()
# only botocore: patching everything X-Ray supports imports requests (~20 ms of every cold start)
tracer = Tracer(patch_modules=("boto3",))
settings = Settings.from_env(os.environ)
# SigV4 presigning: the upload's options (passwords) become signed headers; SigV2 would put them
# in the URL's query string, which S3 server access logs record
s3 = boto3.client("s3", config=Config(signature_version="s3v4", retries={"mode": "standard"}))
catalog = Catalog(
    s3=s3,
    table=boto3.resource("dynamodb").Table(os.environ[TABLE_NAME_ENV]),
    sfn=boto3.client("stepfunctions"),
    bucket=os.environ[BUCKET_NAME_ENV],
    state_machine_arn=os.environ[STATE_MACHINE_ARN_ENV],
    settings=settings,
)
app = APIGatewayRestResolver(enable_validation=True)
app.include_router(document_routes.router)
app.include_router(result_routes.router)

#: AWS error codes the API answers 429 "retry with backoff" to: a back end (S3, DynamoDB, Step
#: Functions) busy, whichever code it says it with
API_BUSY_CODES = AWS_THROTTLING_CODES


def error_response(status: int, code: str, message: str, field: str | None = None) -> Response[str]:
    body = ErrorResponse.of(code, message, field).model_dump_json()
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


@app.exception_handler(RequestValidationError)
def invalid_request(exc: RequestValidationError) -> Response[str]:
    """400 naming the first bad field; pydantic's message, never the value sent (a password)."""
    first = exc.errors()[0]
    location = [str(part) for part in first.get("loc", ())]
    if first.get("type") == "json_invalid":  # its location is ("body", the character offset)
        reason = str((first.get("ctx") or {}).get("error") or "JSON decode error")
        at = f" at character {location[1]}" if len(location) > 1 else ""
        return error_response(HTTPStatus.BAD_REQUEST, "bad_request", f"body: not valid JSON ({reason}{at})", "body")
    field = ".".join(location[1:]) or (location[0] if location else "body")
    return error_response(HTTPStatus.BAD_REQUEST, "bad_request", f"{field}: {first.get('msg', 'invalid')}", field)


@app.exception_handler(RequestError)
def refused(exc: RequestError) -> Response[str]:
    return error_response(exc.http_status, exc.code, str(exc), exc.field)


@app.exception_handler(ClientError)
def aws_refused(exc: ClientError) -> Response[str]:
    """A back end refusing for load is the caller's ThrottledError (429: retry with backoff);
    any other AWS failure is ours (500)."""
    code = str(exc.response.get("Error", {}).get("Code", ""))
    if code in API_BUSY_CODES:
        return refused(ThrottledError("a back end is busy: retry with backoff"))
    logger.exception("AWS call failed", extra={"aws_error": code})
    return error_response(HTTPStatus.INTERNAL_SERVER_ERROR, "internal", "internal error")


@app.exception_handler(Exception)
def crashed(exc: Exception) -> Response[str]:
    logger.exception("unhandled error")
    return error_response(HTTPStatus.INTERNAL_SERVER_ERROR, "internal", "internal error")


@app.not_found
def no_route(exc: NotFoundError) -> Response[str]:
    return error_response(HTTPStatus.NOT_FOUND, "no_route", "no such route")


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, log_event=False)
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    refusal = body_refusal(event)
    if refusal is not None:  # before the resolver, whose validation reads the body first; what passes
        # is JSON in UTF-8 with a lower-case media type, which powertools' validation takes
        body = ErrorResponse.of(refusal.code, str(refusal), refusal.field).model_dump_json()
        return {"statusCode": refusal.http_status, "headers": {"Content-Type": content_types.APPLICATION_JSON},
                "body": body, "isBase64Encoded": False}
    app.append_context(catalog=catalog)
    return app.resolve(with_lowercase_media_type(event), context)


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of these routes, as committed in docs/openapi.json.

    powertools lists a 422 for request (and response) validation errors; this API answers a bad
    request with 400 and the error shape (every route declares it), and a response that fails
    validation is a 500: the 422 entries and their schemas are dropped."""
    import json

    document: dict[str, Any] = json.loads(app.get_openapi_json_schema(
        title="papersift API",
        version=__version__,
        description="Submit documents, follow their extraction, fetch text, Markdown and reports.",
        security_schemes={
            "sigv4": APIKey.model_validate({"type": "apiKey", "name": "Authorization", "in": "header",
                                            "x-amazon-apigateway-authtype": "awsSigv4"}),
            "api_key": APIKey.model_validate({"type": "apiKey", "name": "x-api-key", "in": "header"}),
        },
        security=[{"sigv4": []}, {"api_key": []}],
    ))
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            operation.get("responses", {}).pop("422", None)
    schemas = document.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(name, None)
    return document
