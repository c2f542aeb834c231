"""What every router module of the API shares: the catalog of the invocation, the document id
parameter and the error responses of the OpenAPI document."""

from __future__ import annotations

from typing import Annotated, Any, cast

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from papersift.api_models import DOC_ID_PATTERN, ErrorResponse
from papersift.catalog import Catalog

DocId = Annotated[str, Path(pattern=DOC_ID_PATTERN, description="the document id (d + 40 hex digits)")]
_DESCRIPTIONS = {
    400: "A field of the request is invalid (error.field names it)",
    403: "Not authenticated or not allowed (IAM SigV4 or API key)",
    404: "No such document, or no such result yet",
    409: "The document is being processed",
    413: "The inline file is too large",
    429: "Throttled: retry with backoff",
    500: "Internal error (never with details)",
}


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
