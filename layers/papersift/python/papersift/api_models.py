"""The API's contract: one pydantic model per request and response body.

The routes in ``functions/api`` take and return these, powertools validates requests against
them, and ``docs/openapi.json`` is generated from them (a test fails when it drifts). Passwords
are ``SecretStr``: their repr, str and any log line show ``**********``; only
:meth:`SubmitRequest.document_options` reads them, to put them in the upload's S3 metadata.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from papersift.layout import CLEAN_TEXT_FILE
from papersift.names import file_name_problem
from papersift.report import DocumentStatus
from papersift.steps.contracts import DocumentOptions

#: a document the API accepted whose run has not recorded a result yet (stored status)
SUBMITTED: Final = "submitted"
#: what GET /documents/{id} says of a submitted document, from its upload and its execution
AWAITING_UPLOAD: Final = "awaiting_upload"
QUEUED: Final = "queued"
RUNNING: Final = "running"
#: every status the listing can filter on: the stored ones
LISTED_STATUSES: tuple[str, ...] = (SUBMITTED, *(str(s) for s in DocumentStatus))
ListedStatus = Literal[
    "submitted", "clean", "partially_recovered", "needs_review", "corrupt_unrecoverable", "encrypted",
    "unsupported", "empty", "limit_exceeded", "failed",
]
ApiStatus = Literal[
    "awaiting_upload", "queued", "running", "submitted", "clean", "partially_recovered", "needs_review",
    "corrupt_unrecoverable", "encrypted", "unsupported", "empty", "limit_exceeded", "failed",
]
ResultKind = Literal["text", "markdown", "report", "view", "export"]
OcrMode = Literal["off", "local-first", "textract-first", "local-only", "textract-only"]
#: S3 keeps at most 2 KB of user metadata per object, where the options travel
MAX_OPTIONS_METADATA_CHARS = 1900
DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 20, 100
#: what steps.contracts.document_id returns ("d" and 40 hex digits of a SHA-256)
DOC_ID_PATTERN = r"^d[0-9a-f]{40}$"

Password = Annotated[SecretStr, Field(min_length=1, max_length=256)]
Language = Annotated[str, Field(pattern=r"^[A-Za-z0-9_]{2,32}$")]


class ApiModel(BaseModel):
    """Unknown fields are refused with a 400 naming them, so a typo never passes as a default."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class ExtractionOptions(ApiModel):
    """How to extract this one document; unset fields keep the deployment's settings. The same
    names as the ``papersift-options`` metadata of a drop."""

    extract_tables: bool | None = Field(default=None, description="detect tables and add them as Markdown")
    ocr_mode: OcrMode | None = Field(default=None, description="OCR routing for this document")
    ocr_languages: list[Language] | None = Field(default=None, max_length=8, description="Tesseract codes, e.g. eng")
    clean_text: bool | None = Field(default=None, description=f"also write {CLEAN_TEXT_FILE}")


class SubmitRequest(ApiModel):
    """POST /documents: announce a file; upload it to the returned URL."""

    file_name: str = Field(min_length=1, max_length=255,
                           description="the file's name (its extension is a hint only): taken in NFC, at most "
                                       "255 bytes of UTF-8, no '/' or '\\', not '.' or '..', and no control, "
                                       "format (bidi), line separator or private-use character")
    passwords: list[Password] = Field(default_factory=list, max_length=16,
                                      description="tried on encrypted files; never logged or stored in results")
    options: ExtractionOptions = Field(default_factory=ExtractionOptions)

    @field_validator("file_name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        """The name becomes the last segment of the upload's key and the document's source name:
        it must be one a file system and S3 take as it is, and that shows as it is
        (``file_name_problem``, the rule the CLI's output folders follow)."""
        value = unicodedata.normalize("NFC", value)
        problem = file_name_problem(value)
        if problem:
            raise ValueError(f"file_name {problem}")
        return value

    def document_options(self) -> DocumentOptions:
        """The upload's options as the pipeline reads them from S3 metadata (the one place the
        passwords are revealed)."""
        return DocumentOptions(passwords=tuple(p.get_secret_value() for p in self.passwords),
                               **self.options.model_dump(exclude_none=True))


class InlineExtractRequest(SubmitRequest):
    """POST /documents:extract: a small file in the request itself."""

    content_base64: str = Field(min_length=1, description="the file, base64 (standard alphabet)")


class PresignedUpload(ApiModel):
    url: str
    method: Literal["PUT"] = "PUT"
    #: headers the upload must send as they are: they are signed into the URL
    headers: dict[str, str]
    expires_in: int = Field(description="seconds the URL stays valid")


class DocumentLinks(ApiModel):
    """API paths of a document and its results."""

    document: str
    text: str
    markdown: str
    report: str
    view: str
    export: str = Field(description="exports/<doc_id>.parquet, where the export step (export_parquet) wrote it")

    @classmethod
    def of(cls, doc_id: str) -> DocumentLinks:
        base = f"/documents/{doc_id}"
        return cls(document=base, text=f"{base}/text", markdown=f"{base}/markdown", report=f"{base}/report",
                   view=f"{base}/view", export=f"{base}/export")


class SubmitResponse(ApiModel):
    doc_id: str
    status: ApiStatus
    upload: PresignedUpload
    links: DocumentLinks


class InlineExtractResponse(ApiModel):
    doc_id: str
    status: ApiStatus
    links: DocumentLinks


class MemberView(ApiModel):
    """One member (an archive's, or a PDF's or an email's attachment) with how it ended; ``doc_id``
    when it was processed as a document."""

    path: str
    status: str
    kind: str = Field(default="archive_member",
                      description="what held it: archive_member, pdf_attachment or email_attachment")
    reason: str = ""
    detected_type: str | None = None
    page_count: int = 0
    doc_id: str | None = None
    links: DocumentLinks | None = None


class ExportView(ApiModel):
    """What the export step (Settings.export_parquet) recorded on the document's item."""

    status: Literal["pending", "written", "failed"] = Field(
        description="pending: the document is assembled and the export step is next")
    key: str | None = Field(default=None, description="the Parquet file in the documents bucket, when written")
    reason: str = Field(default="", description="why the export failed (the document's results stand)")


class DocumentView(ApiModel):
    """GET /documents/{id}: where a document stands and what became of it."""

    doc_id: str
    status: ApiStatus
    trusted: bool | None = Field(default=None, description="null until the run records a result")
    reason: str = ""
    source_name: str = ""
    detected_type: str | None = None
    page_count: int = 0
    char_count: int = 0
    pages: dict[str, int] = Field(default_factory=dict, description="page count by page status")
    cost: dict[str, Any] = Field(default_factory=dict, description="the cost ledger")
    parent_doc_id: str | None = None
    archive_path: str | None = None
    submitted_at: datetime | None = None
    updated_at: datetime | None = None
    links: DocumentLinks
    member_count: int = 0
    members: list[MemberView] = Field(default_factory=list, description="archive members (the first 1,000)")
    export: ExportView | None = Field(default=None, description="null when the export step is off")


class ResultLink(ApiModel):
    """A presigned GET URL of one result file; the report itself too when it is small."""

    doc_id: str
    kind: ResultKind
    url: str
    content_type: str
    expires_in: int
    size: int
    report: dict[str, Any] | None = None


class DocumentSummary(ApiModel):
    doc_id: str
    status: ApiStatus
    trusted: bool | None = None
    source_name: str = ""
    detected_type: str | None = None
    page_count: int = 0
    updated_at: datetime | None = None
    links: DocumentLinks


class DocumentList(ApiModel):
    """One page of the listing, newest first; pass ``next`` back for the following page."""

    items: list[DocumentSummary]
    next: str | None = None


class DeleteResult(ApiModel):
    doc_id: str
    deleted_documents: int = Field(description="the document and its archive members")
    deleted_objects: int = Field(description="S3 object versions removed")


class ErrorDetail(ApiModel):
    code: str = Field(description="stable machine code, e.g. bad_request, not_found, throttled")
    message: str
    field: str | None = Field(default=None, description="the request field at fault")


class ErrorResponse(ApiModel):
    """Every error the API (or API Gateway in front of it) answers with."""

    error: ErrorDetail

    @classmethod
    def of(cls, code: str, message: str, field: str | None = None) -> ErrorResponse:
        return cls(error=ErrorDetail(code=code, message=message, field=field))


#: API Gateway's own refusals (gateway response types) -> (HTTP status, error.code). The stack
#: answers them with the ErrorResponse shape; `papersift serve` answers its own checks alike.
GATEWAY_ERRORS: dict[str, tuple[int, str]] = {
    "MISSING_AUTHENTICATION_TOKEN": (403, "not_authenticated"),
    "ACCESS_DENIED": (403, "access_denied"),
    "INVALID_SIGNATURE": (403, "invalid_signature"),
    "EXPIRED_TOKEN": (403, "expired_token"),
    "INVALID_API_KEY": (403, "invalid_api_key"),
    "UNAUTHORIZED": (401, "not_authenticated"),
    "THROTTLED": (429, "throttled"),
    "QUOTA_EXCEEDED": (429, "quota_exceeded"),
    "REQUEST_TOO_LARGE": (413, "payload_too_large"),
    "BAD_REQUEST_PARAMETERS": (400, "bad_request"),
    "BAD_REQUEST_BODY": (400, "bad_request"),
    "UNSUPPORTED_MEDIA_TYPE": (415, "unsupported_media_type"),
    "RESOURCE_NOT_FOUND": (404, "no_route"),
    "INTEGRATION_TIMEOUT": (504, "timeout"),
    "DEFAULT_4XX": (400, "bad_request"),
    "DEFAULT_5XX": (500, "internal"),
}
