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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papersift.errors import RequestError

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
