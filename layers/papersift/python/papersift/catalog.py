"""The documents as API callers see them: submit, describe, link, list and delete.

Pure like the rest of the core: the S3, DynamoDB and Step Functions clients are passed in (the
API handler creates them). A submitted document gets its id before its bytes exist: the upload
key ``incoming/api/<token>/<file name>`` is unique per submission, and the pipeline derives an
API upload's id from its key alone (``steps.contracts.document_id``), so the id the API returns is the
id the run records under. Until the run records its result, the document's item says
``submitted`` and :meth:`Catalog.describe` tells awaiting upload, queued and running apart from
the upload and the execution.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import math
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from papersift.api_models import (
    AWAITING_UPLOAD,
    MAX_OPTIONS_METADATA_CHARS,
    QUEUED,
    RUNNING,
    SUBMITTED,
    ApiStatus,
    DeleteResult,
    DocumentLinks,
    DocumentList,
    DocumentSummary,
    DocumentView,
    ExportView,
    InlineExtractRequest,
    InlineExtractResponse,
    MemberView,
    PresignedUpload,
    ResultKind,
    ResultLink,
    SubmitRequest,
    SubmitResponse,
)
from papersift.errors import (
    DocumentNotFoundError,
    DocumentRunningError,
    PayloadTooLargeError,
    RequestError,
)
from papersift.layout import (
    API_UPLOAD_PREFIX,
    HTML_CONTENT_TYPE,
    JSON_CONTENT_TYPE,
    MARKDOWN_CONTENT_TYPE,
    MARKDOWN_FILE,
    MEMBER_LINK_ATTRIBUTE,
    MEMBERS_PREFIX,
    PARQUET_CONTENT_TYPE,
    REPORT_FILE,
    REPORT_PAGE_FILE,
    TEXT_CONTENT_TYPE,
    TEXT_FILE,
    export_key,
    members_prefix,
    results_prefix,
    views_prefix,
    work_prefix,
)
from papersift.listing import decode_token, encode_token, listing_attributes, query_arguments
from papersift.names import object_key_problem
from papersift.report import ExtractionReport, MemberReport
from papersift.settings import Settings
from papersift.steps.contracts import EXPORT_FAILED, EXPORT_PENDING, EXPORT_WRITTEN, document_id
from papersift.storage import S3ObjectStore

#: members listed by GET /documents/{id}; the rest are in the archive's report.json
MAX_MEMBERS_SHOWN = 1000
#: page status -> the item's counter of it (listing.document_item)
PAGE_COUNTERS = {"clean": "pages_clean", "recovered": "pages_recovered", "needs_ocr": "pages_needs_ocr",
                 "ocr": "pages_ocr", "low_confidence": "pages_low_confidence",
                 "corrupt_unrecoverable": "pages_corrupt", "failed": "pages_failed"}
#: result kind -> (its file under results/<doc_id>/, its content type)
RESULT_FILES: Mapping[str, tuple[str, str]] = {
    "text": (TEXT_FILE, TEXT_CONTENT_TYPE),
    "markdown": (MARKDOWN_FILE, MARKDOWN_CONTENT_TYPE),
    "report": (REPORT_FILE, JSON_CONTENT_TYPE),
    "view": (REPORT_PAGE_FILE, HTML_CONTENT_TYPE),
}
#: prefixes of objects papersift itself wrote as a document's source (deleted with the document)
OWNED_SOURCE_PREFIXES = (API_UPLOAD_PREFIX, MEMBERS_PREFIX)
#: a member link exactly as report.html writes it: the marking attribute first, then the href (Jinja
#: escapes every value, so neither holds a quote, and a member's name or reason can never look like one)
_MEMBER_LINK = re.compile(f'<a {MEMBER_LINK_ATTRIBUTE}="(?P<doc_id>[^"]*)" href="[^"]*">')
#: SigV4's longest presigned URL
MAX_PRESIGN_SECONDS = 7 * 24 * 3600


def view_copy_days(settings: Settings) -> int:
    """How long a view copy is needed, in whole days for a lifecycle rule: it is handed out for
    one expiry window and each URL of it lasts one link lifetime more."""
    return max(1, math.ceil(2 * settings.api_download_url_seconds / 86_400))


def member_links_of(page: str) -> list[str]:
    """The doc_ids report.html links as members, in page order."""
    return [match["doc_id"] for match in _MEMBER_LINK.finditer(page)]


def with_member_links(page: str, links: Mapping[str, str]) -> str:
    """report.html with each member link marked by ``MEMBER_LINK_ATTRIBUTE`` pointing at
    ``links[doc_id]`` (a member not in ``links`` keeps its link). Only the marked links change:
    the rest of the page is never parsed."""
    def relinked(match: re.Match[str]) -> str:
        url = links.get(match["doc_id"])
        if url is None:
            return match[0]
        return f'<a {MEMBER_LINK_ATTRIBUTE}="{match["doc_id"]}" href="{html.escape(url, quote=True)}">'
    return _MEMBER_LINK.sub(relinked, page)


def _now() -> datetime:
    return datetime.now(UTC)


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN of the execution named ``name`` (a document id) of a standard state machine."""
    prefix, _, machine = state_machine_arn.rpartition(":stateMachine:")
    return f"{prefix}:execution:{machine}:{name}"


def _plain(value: Any) -> Any:
    """DynamoDB's Decimals back to ints and floats."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _timestamp(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Catalog:
    """The API's operations over one deployment's bucket, table and state machine."""

    s3: Any
    table: Any  # a boto3 DynamoDB Table resource
    sfn: Any
    bucket: str
    state_machine_arn: str
    settings: Settings
    clock: Callable[[], datetime] = field(default=_now)

    @property
    def store(self) -> S3ObjectStore:
        return S3ObjectStore(self.s3, self.bucket)

    # -- submit --------------------------------------------------------------------------------

    def submit(self, request: SubmitRequest) -> SubmitResponse:
        """Record the document and hand back a presigned PUT for its bytes; the upload runs the
        same S3-triggered path as a drop. Its options are signed into the URL as metadata."""
        doc_id, key, metadata = self._new_document(request)
        # If-None-Match: * signed in: S3 refuses a second PUT to the URL (412 PreconditionFailed)
        # rather than replacing the object whose run has started, and a client cannot leave it out
        params: dict[str, Any] = {"Bucket": self.bucket, "Key": key, "IfNoneMatch": "*"}
        if metadata:
            params["Metadata"] = metadata
        seconds = self.settings.api_upload_url_seconds
        url = self.s3.generate_presigned_url("put_object", Params=params, ExpiresIn=seconds, HttpMethod="PUT")
        headers = {"If-None-Match": "*", **{f"x-amz-meta-{name}": value for name, value in metadata.items()}}
        return SubmitResponse(doc_id=doc_id, status=AWAITING_UPLOAD, links=DocumentLinks.of(doc_id),
                              upload=PresignedUpload(url=url, headers=headers, expires_in=seconds))

    def extract_inline(self, request: InlineExtractRequest) -> InlineExtractResponse:
        """Store a small file sent in the request; its upload starts the run like any drop."""
        data = self._decoded(request.content_base64)
        doc_id, key, metadata = self._new_document(request)
        try:
            self.store.put(key, data, metadata=metadata)
        except Exception:
            self.table.delete_item(Key={"doc_id": doc_id})
            raise
        return InlineExtractResponse(doc_id=doc_id, status=QUEUED, links=DocumentLinks.of(doc_id))

    def _decoded(self, content: str) -> bytes:
        limit = self.settings.api_inline_max_bytes
        if len(content) * 3 // 4 > limit + 2:  # refuse before decoding megabytes for nothing
            raise PayloadTooLargeError(f"the file is over {limit} bytes: upload it through POST /documents instead",
                                       field="content_base64")
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise RequestError("content_base64 is not base64 (standard alphabet, padded)",
                               field="content_base64") from exc
        if len(data) > limit:
            raise PayloadTooLargeError(f"the file is {len(data)} bytes, over {limit}: upload it through "
                                       "POST /documents instead", field="content_base64")
        return data

    def _new_document(self, request: SubmitRequest) -> tuple[str, str, dict[str, str]]:
        metadata = self._metadata(request)
        key = f"{API_UPLOAD_PREFIX}{secrets.token_urlsafe(18)}/{request.file_name}"
        problem = object_key_problem(key)
        if problem:  # file_name is at most 255 bytes, so only if the prefix or that rule changes
            raise RequestError(f"file_name {problem}", field="file_name")
        doc_id = document_id(self.bucket, key)
        now = self.clock().isoformat(timespec="seconds")
        item = {"doc_id": doc_id, "status": SUBMITTED, "source_bucket": self.bucket, "source_key": key,
                "source_name": request.file_name, "submitted_at": now, "updated_at": now,
                **listing_attributes(SUBMITTED, None)}
        self.table.put_item(Item=item, ConditionExpression="attribute_not_exists(doc_id)")
        return doc_id, key, metadata

    @staticmethod
    def _metadata(request: SubmitRequest) -> dict[str, str]:
        metadata = request.document_options().metadata()
        if sum(len(k) + len(v) for k, v in metadata.items()) > MAX_OPTIONS_METADATA_CHARS:
            raise RequestError("passwords and options must fit S3's 2 KB of object metadata; send fewer or "
                               "shorter passwords", field="passwords" if request.passwords else "options")
        return metadata

    # -- describe ------------------------------------------------------------------------------

    def describe(self, doc_id: str) -> DocumentView:
        item = self._item(doc_id)
        if item is None:
            return self._running_drop(doc_id)
        progress: tuple[ApiStatus, str] | None = None
        if item["status"] == SUBMITTED:
            progress = self._progress(doc_id, str(item.get("source_key") or ""))
            if progress[0] == "failed":  # the run ended since the item was read: its result may be there now
                item = self._item(doc_id) or item
                progress = progress if item["status"] == SUBMITTED else None
        view = DocumentView(
            doc_id=doc_id,
            status=item["status"],
            trusted=item.get("trusted"),
            reason=str(item.get("reason") or ""),
            source_name=str(item.get("source_name") or ""),
            detected_type=item.get("detected_type"),
            page_count=int(item.get("page_count") or 0),
            char_count=int(item.get("char_count") or 0),
            pages={status: int(item[counter]) for status, counter in PAGE_COUNTERS.items() if item.get(counter)},
            cost=dict(item.get("cost") or {}),
            parent_doc_id=item.get("parent_doc_id"),
            archive_path=item.get("archive_path"),
            submitted_at=_timestamp(item.get("submitted_at")),
            updated_at=_timestamp(item.get("updated_at")),
            links=DocumentLinks.of(doc_id),
            member_count=int(item.get("member_count") or 0),
            export=ExportView(status=item["export_status"], key=item.get("export_key"),
                              reason=str(item.get("export_reason") or "")) if item.get("export_status") else None,
        )
        if progress is not None:
            return view.model_copy(update={"status": progress[0], "reason": progress[1]})
        members = self._members(item)
        if members:
            shown = [MemberView(path=m.path, status=m.status, kind=m.kind, reason=m.reason,
                                detected_type=m.detected_type, page_count=m.page_count, doc_id=m.doc_id,
                                links=DocumentLinks.of(m.doc_id) if m.doc_id else None)
                     for m in members[:MAX_MEMBERS_SHOWN]]
            view = view.model_copy(update={"members": shown, "member_count": len(members)})
        return view

    def _members(self, item: Mapping[str, Any] | None) -> list[MemberReport]:
        """An archive's members, from its report (the item only counts them)."""
        if not item or not item.get("member_count") or not item.get("report_key"):
            return []
        return ExtractionReport.from_dict(json.loads(self.store.get(str(item["report_key"])))).members

    def _running_drop(self, doc_id: str) -> DocumentView:
        """A document dropped into the bucket has no item until its run records one."""
        execution = self._execution(doc_id)
        if execution is None or execution["status"] != "RUNNING":  # finished without an item: deleted
            raise DocumentNotFoundError(f"no document {doc_id}")
        run_input = json.loads(execution.get("input") or "{}")
        status, reason = self._progress(doc_id, "")
        return DocumentView(doc_id=doc_id, status=status, reason=reason, links=DocumentLinks.of(doc_id),
                            source_name=str(run_input.get("source_name") or ""),
                            submitted_at=execution.get("startDate"))

    def _progress(self, doc_id: str, source_key: str) -> tuple[ApiStatus, str]:
        """Where a document without a recorded result stands: its execution, else its upload."""
        execution = self._execution(doc_id)
        if execution is not None:
            if execution["status"] == "RUNNING":
                return RUNNING, "the run is in progress"
            return "failed", f"the run ended {execution['status']} without recording a result"
        if source_key and self.store.exists(source_key):
            return QUEUED, "uploaded; the run has not started yet"
        return AWAITING_UPLOAD, "waiting for the file at the presigned upload URL"

    def _item(self, doc_id: str) -> dict[str, Any] | None:
        item = self.table.get_item(Key={"doc_id": doc_id}, ConsistentRead=True).get("Item")
        return _plain(item) if item else None

    def _execution(self, doc_id: str) -> dict[str, Any] | None:
        try:
            return dict(self.sfn.describe_execution(executionArn=execution_arn(self.state_machine_arn, doc_id)))
        except self.sfn.exceptions.ExecutionDoesNotExist:
            return None

    # -- results ------------------------------------------------------------------------------

    def result_link(self, doc_id: str, kind: ResultKind) -> ResultLink:
        """A presigned GET of one result; the report also inline when it is small."""
        item = self._item(doc_id)
        if item is None or item["status"] == SUBMITTED:
            state = "unknown" if item is None and self._execution(doc_id) is None else "not finished"
            raise DocumentNotFoundError(f"document {doc_id} has no {kind} result: it is {state}")
        if kind == "export":
            key, content_type = self._export_key(doc_id, item), PARQUET_CONTENT_TYPE
        else:
            file_name, content_type = RESULT_FILES[kind]
            key = results_prefix(doc_id) + file_name
        listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=key, MaxKeys=1).get("Contents", [])
        size = next((int(obj["Size"]) for obj in listed if obj["Key"] == key), None)
        if size is None:
            raise DocumentNotFoundError(f"document {doc_id} has no {key.rsplit('/', 1)[-1]}")
        seconds = self.settings.api_download_url_seconds
        if kind == "view" and item.get("member_count"):
            key, size = self._view_with_member_links(doc_id, key, str(listed[0].get("ETag", "")).strip('"'))
        url = self._presigned_get(key, content_type, seconds)
        report = None
        if kind == "report" and size <= self.settings.api_inline_report_bytes:
            report = json.loads(self.store.get(key))
        return ResultLink(doc_id=doc_id, kind=kind, url=url, content_type=content_type, expires_in=seconds,
                          size=size, report=report)

    @staticmethod
    def _export_key(doc_id: str, item: Mapping[str, Any]) -> str:
        """The Parquet file the export step recorded on the item, or why there is none."""
        status = item.get("export_status")
        if status == EXPORT_WRITTEN and item.get("export_key"):
            return str(item["export_key"])
        if status == EXPORT_FAILED:
            raise DocumentNotFoundError(f"document {doc_id} has no export: it failed: {item.get('export_reason')}")
        if status == EXPORT_PENDING:
            raise DocumentNotFoundError(f"document {doc_id} has no export yet: the export step is running")
        raise DocumentNotFoundError(f"document {doc_id} has no export: the export step (export_parquet) is off")

    def _presigned_get(self, key: str, content_type: str, seconds: int) -> str:
        return str(self.s3.generate_presigned_url(
            "get_object", ExpiresIn=seconds, HttpMethod="GET",
            Params={"Bucket": self.bucket, "Key": key, "ResponseContentType": content_type}))

    def _view_with_member_links(self, doc_id: str, page_key: str, etag: str) -> tuple[str, int]:
        """The key and size of a copy of an archive's report.html whose member links are presigned
        GETs of each member's report.html: a relative link from a presigned URL is an unsigned
        request S3 refuses. One copy per expiry window and version of the page (its ETag), reused
        within the window; its member links outlive the window by a whole link lifetime, so they
        last at least as long as any outer link handed out for the copy. Members of members are
        linked when their own view is asked for."""
        seconds = self.settings.api_download_url_seconds
        now = self.clock().timestamp()
        window = int(now // seconds)
        copy_key = f"{views_prefix(doc_id)}{window}-{etag}/{REPORT_PAGE_FILE}"
        listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=copy_key, MaxKeys=1).get("Contents", [])
        size = next((int(obj["Size"]) for obj in listed if obj["Key"] == copy_key), None)
        if size is not None:
            return copy_key, size
        page = self.store.get(page_key).decode("utf-8")
        lifetime = min(MAX_PRESIGN_SECONDS, int((window + 1) * seconds - now) + seconds)
        links = {member: self._presigned_get(results_prefix(member) + REPORT_PAGE_FILE, HTML_CONTENT_TYPE, lifetime)
                 for member in dict.fromkeys(member_links_of(page))}
        data = with_member_links(page, links).encode("utf-8")
        self.store.put(copy_key, data, HTML_CONTENT_TYPE)
        return copy_key, len(data)

    # -- listing -------------------------------------------------------------------------------

    def list_documents(self, status: str | None, limit: int, next_token: str | None) -> DocumentList:
        start = decode_token(next_token, status)
        response = self.table.query(**query_arguments(status, limit, start))
        items = [_plain(i) for i in response.get("Items", [])]
        summaries = [DocumentSummary(
            doc_id=i["doc_id"], status=i["status"], trusted=i.get("trusted"), source_name=i.get("source_name") or "",
            detected_type=i.get("detected_type"), page_count=int(i.get("page_count") or 0),
            updated_at=_timestamp(i.get("updated_at")), links=DocumentLinks.of(i["doc_id"])) for i in items]
        return DocumentList(items=summaries, next=encode_token(_plain(response.get("LastEvaluatedKey"))))

    # -- delete --------------------------------------------------------------------------------

    def delete(self, doc_id: str) -> DeleteResult:
        """Remove a document's results, work files, view copies, exports (exports/<doc_id>.parquet, where
        the export step wrote one), members (documents of their own) and items, every object version
        of them, and the source when papersift wrote it (an API upload, an archive member). Refused
        while the document (or its archive) is still being processed; 404 when nothing of it is left
        (a second DELETE), like GET."""
        item = self._item(doc_id)
        execution = self._execution(str(item.get("parent_doc_id") or doc_id) if item else doc_id)
        if item is None and execution is None:
            raise DocumentNotFoundError(f"no document {doc_id}")
        if execution is not None and execution["status"] == "RUNNING":
            raise DocumentRunningError(f"document {doc_id} is being processed; delete it when its run has finished")
        if item is not None and item["status"] == SUBMITTED and execution is None and \
                self.store.exists(str(item.get("source_key") or "")):
            raise DocumentRunningError(f"document {doc_id} was uploaded and its run is about to start")
        documents = [doc_id, *(m.doc_id for m in self._members(item) if m.doc_id)]
        prefixes = [p for d in documents for p in (results_prefix(d), work_prefix(d), views_prefix(d), export_key(d))] \
            + [members_prefix(doc_id)]
        source_key = str(item.get("source_key") or "") if item else ""
        if source_key.startswith(OWNED_SOURCE_PREFIXES):
            prefixes.append(source_key)
        deleted = sum(self._delete_versions(prefix) for prefix in prefixes)
        if item is None and not deleted:  # a finished run whose document was deleted already, as GET says
            raise DocumentNotFoundError(f"no document {doc_id}")
        with self.table.batch_writer() as batch:
            for document in documents:
                batch.delete_item(Key={"doc_id": document})
        return DeleteResult(doc_id=doc_id, deleted_documents=len(documents), deleted_objects=deleted)

    def _delete_versions(self, prefix: str) -> int:
        deleted = 0
        for page in self.s3.get_paginator("list_object_versions").paginate(Bucket=self.bucket, Prefix=prefix):
            entries = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                       for v in (*page.get("Versions", []), *page.get("DeleteMarkers", []))]
            for chunk in _chunks(entries, 1000):
                response = self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": chunk, "Quiet": True})
                if response.get("Errors"):
                    first = response["Errors"][0]
                    raise RuntimeError(f"S3 refused to delete {first.get('Key')}: {first.get('Message')}")
                deleted += len(chunk)
        return deleted


def _chunks(entries: list[dict[str, str]], size: int) -> Iterable[list[dict[str, str]]]:
    for start in range(0, len(entries), size):
        yield entries[start:start + size]


