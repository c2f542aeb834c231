"""How documents are listed: two sparse global secondary indexes of the documents table.

``GET /documents`` pages through DynamoDB with Query, never Scan. Only top-level documents carry
the index attributes (archive members are reached through their archive), so both indexes hold
exactly the listable documents:

- ``by-status``: partition ``list_status`` (the stored status), sort ``updated_at``;
- ``recent``: partition ``list_all`` (one constant value), sort ``updated_at``.

The stack and the local runner create the indexes from :data:`INDEXES`; the items get their
attributes from :func:`listing_attributes`; the API queries them. One place for all three.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from papersift.errors import RequestError
from papersift.layout import MARKDOWN_FILE, REPORT_FILE, TEXT_FILE, results_prefix
from papersift.report import ExtractionReport, PageStatus
from papersift.steps.contracts import EXPORT_PENDING

TABLE_KEY = "doc_id"
SORT_ATTRIBUTE = "updated_at"
STATUS_ATTRIBUTE = "list_status"
ALL_ATTRIBUTE = "list_all"
ALL_VALUE = "document"


@dataclass(frozen=True)
class ListingIndex:
    name: str
    partition: str
    sort: str = SORT_ATTRIBUTE


BY_STATUS = ListingIndex("by-status", STATUS_ATTRIBUTE)
RECENT = ListingIndex("recent", ALL_ATTRIBUTE)
INDEXES: tuple[ListingIndex, ...] = (BY_STATUS, RECENT)
#: every attribute a key of the table or of an index is made of (all strings)
KEY_ATTRIBUTES: tuple[str, ...] = (TABLE_KEY, SORT_ATTRIBUTE, STATUS_ATTRIBUTE, ALL_ATTRIBUTE)
#: the attributes a listed item carries into the indexes (projection INCLUDE, besides the keys)
PROJECTED: tuple[str, ...] = ("status", "trusted", "source_name", "detected_type", "page_count")


def listing_attributes(status: str, parent_doc_id: str | None) -> dict[str, str]:
    """The index attributes of a document item: none for an archive member."""
    if parent_doc_id:
        return {}
    return {STATUS_ATTRIBUTE: status, ALL_ATTRIBUTE: ALL_VALUE}


def query_arguments(status: str | None, limit: int, start_key: Mapping[str, Any] | None) -> dict[str, Any]:
    """``Table.query`` keyword arguments for one page of the listing, newest first."""
    index, value = (BY_STATUS, status) if status else (RECENT, ALL_VALUE)
    arguments: dict[str, Any] = {
        "IndexName": index.name,
        "KeyConditionExpression": "#p = :p",
        "ExpressionAttributeNames": {"#p": index.partition},
        "ExpressionAttributeValues": {":p": value},
        "ScanIndexForward": False,
        "Limit": limit,
    }
    if start_key:
        arguments["ExclusiveStartKey"] = dict(start_key)
    return arguments


def encode_token(last_key: Mapping[str, Any] | None) -> str | None:
    """The opaque ``next`` token of a page: DynamoDB's LastEvaluatedKey, base64url JSON."""
    if not last_key:
        return None
    text = json.dumps({k: str(v) for k, v in last_key.items()}, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def decode_token(token: str | None, status: str | None) -> dict[str, str] | None:
    """Back to an ExclusiveStartKey; a token from another listing (or made up) is a 400 on ``next``."""
    if not token:
        return None
    index = BY_STATUS if status else RECENT
    expected = {TABLE_KEY, index.partition, index.sort}
    try:
        padded = token + "=" * (-len(token) % 4)
        key = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")).decode("utf-8"))
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise RequestError("next is not a token this listing returned", field="next") from exc
    if not isinstance(key, dict) or set(key) != expected or not all(isinstance(v, str) for v in key.values()):
        raise RequestError("next is not a token this listing returned", field="next")
    if key[index.partition] != (status or ALL_VALUE):
        raise RequestError("next belongs to a listing with another status filter", field="next")
    return key


def document_item(report: ExtractionReport, *, export_next: bool = False) -> dict[str, Any]:
    """One flat item per document: enough to decide "trust" vs "review" without S3. With
    ``export_next`` (the workflow's export step follows) the item says its export is pending, so
    a reader of the item tells "not yet" from "off"."""
    counts = Counter(p.status for p in report.pages)
    prefix = results_prefix(report.doc_id)
    item: dict[str, Any] = {
        "doc_id": report.doc_id,
        "status": report.status,
        "trusted": report.trusted,
        "reason": report.reason[:1000],
        "source_bucket": report.source.get("bucket", ""),
        "source_key": report.source.get("key", ""),
        "source_name": report.source.get("name", ""),
        "detected_type": report.detected_type,
        "page_count": report.page_count,
        "pages_clean": counts[PageStatus.CLEAN],
        "pages_recovered": counts[PageStatus.RECOVERED],
        "pages_needs_ocr": counts[PageStatus.NEEDS_OCR],
        "pages_ocr": counts[PageStatus.OCR],
        "pages_low_confidence": counts[PageStatus.LOW_CONFIDENCE],
        "pages_corrupt": counts[PageStatus.CORRUPT_UNRECOVERABLE],
        "pages_failed": counts[PageStatus.FAILED],
        "pages_truncated": counts[PageStatus.TRUNCATED],
        "error_code": report.error_code,
        "char_count": report.char_count,
        "text_key": prefix + TEXT_FILE,
        "markdown_key": prefix + MARKDOWN_FILE,
        "report_key": prefix + REPORT_FILE,
        "updated_at": report.created_at,
        "member_count": len(report.members),
        # the cost ledger (DynamoDB takes numbers as Decimal)
        "cost": _decimals(report.cost),
        **listing_attributes(report.status, report.source.get("parent_doc_id")),
    }
    for extra in ("parent_doc_id", "archive_path", "member_kind"):
        if report.source.get(extra):
            item[extra] = report.source[extra]
    if export_next:
        item["export_status"] = EXPORT_PENDING
    return item


def _decimals(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {key: _decimals(item) for key, item in value.items()}
    return value
