"""Routes of the documents themselves: submit (presigned or inline), list, describe, delete."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from route_support import DocId, catalog_of, responses

from papersift.api_models import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    DeleteResult,
    DocumentList,
    DocumentView,
    InlineExtractRequest,
    InlineExtractResponse,
    ListedStatus,
    SubmitRequest,
    SubmitResponse,
)

router = Router()


@router.post("/documents", status_code=201, summary="Submit a document; upload it to the returned URL",
             responses=responses(201, "Recorded: PUT the file to upload.url with upload.headers", 400, 415),
             tags=["documents"])
def submit(request: Annotated[SubmitRequest, Body()]) -> SubmitResponse:
    return catalog_of(router).submit(request)


@router.post("/documents:extract", status_code=202, summary="Extract a small file sent inline (base64)",
             responses=responses(202, "Stored; its run starts now", 400, 413, 415), tags=["documents"])
def extract_inline(request: Annotated[InlineExtractRequest, Body()]) -> InlineExtractResponse:
    return catalog_of(router).extract_inline(request)


@router.get("/documents", summary="List documents, newest first", tags=["documents"],
            responses=responses(200, "One page of documents", 400))
def list_documents(
    status: Annotated[ListedStatus | None, Query(description="only documents with this stored status")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    next_token: Annotated[str | None, Query(alias="next", max_length=2048,
                                            description="the token of the previous page")] = None,
) -> DocumentList:
    return catalog_of(router).list_documents(status, limit, next_token)


@router.get("/documents/<doc_id>", summary="Status, verdict, counts, cost and members of a document",
            responses=responses(200, "The document", 400, 404), tags=["documents"])
def describe(doc_id: DocId) -> DocumentView:
    return catalog_of(router).describe(doc_id)


@router.delete("/documents/<doc_id>", summary="Delete a document's results, work files, members and item",
               responses=responses(200, "Deleted", 400, 404, 409), tags=["documents"])
def delete(doc_id: DocId) -> DeleteResult:
    return catalog_of(router).delete(doc_id)
