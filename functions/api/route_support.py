"""What every router module of the API shares: the catalog of the invocation, the document id
parameter, the check of a request body and the error responses of the OpenAPI document."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Annotated, Any, cast

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from papersift.api_models import DOC_ID_PATTERN, ErrorResponse
from papersift.catalog import Catalog
from papersift.errors import RequestError, UnsupportedMediaTypeError

DocId = Annotated[str, Path(pattern=DOC_ID_PATTERN, description="the document id (d + 40 hex digits)")]
_DESCRIPTIONS = {
    400: "A field of the request is invalid (error.field names it)",
    403: "Not authenticated or not allowed (IAM SigV4 or API key)",
    404: "No such document, or no such result yet",
    409: "The document is being processed",
    413: "The inline file is too large",
    415: "The body is not JSON (send Content-Type: application/json)",
    429: "Throttled: retry with backoff",
    500: "Internal error (never with details)",
}


JSON_MEDIA_TYPE = "application/json"


def body_refusal(event: Mapping[str, Any]) -> RequestError | None:
    """Why a request's body cannot be read as the API's JSON, or None. API Gateway passes any
    body through, and powertools would read a form or multipart body as fields (a missing
    ``file_name`` for what was a file), answer any other media type with an exception (a 500),
    and raise UnicodeDecodeError on a body that is not UTF-8 (a 500): each is the caller's
    mistake and gets a 415 or a 400 naming ``body``. No Content-Type is taken as JSON, as
    powertools does."""
    body = event.get("body")
    if not body:
        return None
    headers = event.get("headers") or {}
    content_type = next((str(v) for k, v in headers.items() if str(k).lower() == "content-type"), "")
    media_type, _, parameters = content_type.partition(";")
    media_type = media_type.strip().lower()
    if media_type and media_type != JSON_MEDIA_TYPE:
        return UnsupportedMediaTypeError(f"the body must be JSON (Content-Type: {JSON_MEDIA_TYPE}), "
                                         f"not {media_type[:100]}", field="body")
    charset = next((value.strip().strip('"').lower() for name, _, value in
                    (p.partition("=") for p in parameters.split(";")) if name.strip().lower() == "charset"), "")
    if charset not in ("", "utf-8", "utf8"):
        return UnsupportedMediaTypeError(f"the body must be UTF-8 JSON (Content-Type: {JSON_MEDIA_TYPE}), "
                                         f"not charset={charset[:40]}", field="body")
    if event.get("isBase64Encoded"):
        try:
            base64.b64decode(str(body), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
            return RequestError("the body is not UTF-8 text", field="body")
    return None


def with_lowercase_media_type(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with its Content-Type in lower case: media types and charsets are case-insensitive
    (``Application/JSON`` is JSON, as ``body_refusal`` takes it), powertools compares them as they are."""
    headers = event.get("headers")
    if not isinstance(headers, dict):
        return event
    return {**event, "headers": {k: (str(v).lower() if str(k).lower() == "content-type" else v)
                                 for k, v in headers.items()}}


def catalog_of(router: Router) -> Catalog:
    """The catalog app.py puts in the resolver's context for each invocation."""
    return cast(Catalog, router.context["catalog"])


def responses(success: int, description: str, *errors: int) -> dict[int, Any]:
    """OpenAPI responses of a route: its success (the schema of its return type), its own error
    statuses, and the errors every route can answer."""
    model = {"application/json": {"model": ErrorResponse}}
    documented: dict[int, Any] = {success: {"description": description}}
    for status in sorted({*errors, 403, 429, 500}):
        documented[status] = {"description": _DESCRIPTIONS[status], "content": model}
    return documented
