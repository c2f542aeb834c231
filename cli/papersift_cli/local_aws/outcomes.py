"""What happened to each dropped file: its execution, its DynamoDB item and where its results are."""

from __future__ import annotations

import json
from collections.abc import Callable, ItemsView, Iterable, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from typing import Any

from infra.deployment import TABLE_KEY
from papersift.layout import INCOMING_PREFIX, results_prefix
from papersift.workfiles import pages_prefix


@dataclass
class DocumentOutcome:
    """One dropped file after the pipeline: the execution, the DynamoDB item and where results are."""

    key: str
    source_name: str
    doc_id: str | None
    execution_status: str | None  # None: no execution was ever started for the key
    item: dict[str, Any] | None
    seconds: float
    members: list[DocumentOutcome] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.item and self.item.get("status"):
            return str(self.item["status"])
        return "missing"

    @property
    def reason(self) -> str:
        if self.item:
            return str(self.item.get("reason") or "")
        if self.execution_status is None:
            return "no execution was started for this file (ingest failed or the message is in the DLQ)"
        return f"execution ended {self.execution_status} without recording a status"

    @property
    def broken(self) -> bool:
        """True when papersift itself failed: no recorded status for this file."""
        return self.item is None or not self.item.get("status")

    @property
    def results_prefix(self) -> str:
        return results_prefix(self.doc_id or "")


#: what an archive member's outcome is built from: its whole item, for each of 20,000 members at once
#: while the archive is written out, held ~40 numbers and strings a member (docs/benchmarks.md section 2)
MEMBER_FIELDS = frozenset({TABLE_KEY, "status", "reason", "parent_doc_id", "source_key", "archive_path", "member_kind",
                           "source_name"})


class Results:
    """Queries over the executions, the table and the bucket of one embedded AWS."""

    def __init__(self, s3: Any, sfn: Any, dynamodb: Any, bucket: str, table_name: str, state_machine_arn: str,
                 region: str = "us-east-1") -> None:
        self.s3, self.sfn, self.dynamodb = s3, sfn, dynamodb
        self.bucket, self.table_name, self.state_machine_arn = bucket, table_name, state_machine_arn
        self.region = region
        self._inputs: dict[str, dict[str, Any]] = {}  # execution ARN -> its input (never changes)
        #: archive members' items set aside from the table (``set_aside``), by doc_id
        self._set_aside: dict[str, dict[str, Any]] = {}

    def executions(self) -> list[dict[str, Any]]:
        """Every execution of the workflow with its parsed input; Distributed Map children of page
        batches and OCR pages (whose input names no document) are left out."""
        found: list[dict[str, Any]] = []
        for page in self.sfn.get_paginator("list_executions").paginate(stateMachineArn=self.state_machine_arn):
            for execution in page["executions"]:
                arn = execution["executionArn"]
                if arn not in self._inputs:
                    described = self.sfn.describe_execution(executionArn=arn)
                    self._inputs[arn] = json.loads(described.get("input") or "{}")
                execution_input = self._inputs[arn]
                if "source_name" not in execution_input:
                    continue
                found.append({**execution, "input": execution_input})
        return found

    def state_transitions(self, execution_arn: str) -> int:
        """States entered by one execution (what Step Functions bills a Standard workflow by),
        counted from its history; a Distributed Map's child executions are not in it."""
        entered = 0
        for page in self.sfn.get_paginator("get_execution_history").paginate(executionArn=execution_arn):
            entered += sum(1 for event in page["events"] if event["type"].endswith("StateEntered"))
        return entered

    def set_aside(self, doc_id: str) -> bool:
        """Keep an archive member's item here, with only MEMBER_FIELDS, for the caller to remove it
        from the table (``papersift run``, once the member's assemble step has returned: nothing
        writes it again). Every query here answers as if it were still in the table. 20,000 members'
        items held ~5 KB each in moto's model objects until their archive was written out. True when
        the item was found."""
        item = self.items_direct([doc_id], MEMBER_FIELDS).get(doc_id)
        if item is not None:
            self._set_aside[doc_id] = item
        return item is not None

    def drop_set_aside(self, doc_ids: Iterable[str]) -> None:
        for doc_id in doc_ids:
            self._set_aside.pop(doc_id, None)

    def items(self) -> dict[str, dict[str, Any]]:
        from boto3.dynamodb.types import TypeDeserializer

        deserializer = TypeDeserializer()
        items: dict[str, dict[str, Any]] = dict(self._set_aside)
        for page in self.dynamodb.get_paginator("scan").paginate(TableName=self.table_name):
            for raw in page.get("Items", []):
                item = {k: deserializer.deserialize(v) for k, v in raw.items()}
                items[str(item[TABLE_KEY])] = item
        return items

    def item(self, doc_id: str) -> dict[str, Any] | None:
        """One document's item: what the progress line needs for each finished file (a scan of the
        whole table per finished file made a run of N files O(N^2))."""
        from boto3.dynamodb.types import TypeDeserializer

        raw = self.dynamodb.get_item(TableName=self.table_name, Key={TABLE_KEY: {"S": doc_id}}).get("Item")
        if not raw:
            return dict(self._set_aside[doc_id]) if doc_id in self._set_aside else None
        deserializer = TypeDeserializer()
        return {k: deserializer.deserialize(v) for k, v in raw.items()}

    def outcomes(self, keys: Sequence[str]) -> list[DocumentOutcome]:
        """What happened to each dropped key, from its execution and DynamoDB; archive members
        (processed inside the archive's own execution) from their items' parent_doc_id."""
        executions = self.executions()
        items = self.items()
        members_of: dict[str, list[dict[str, Any]]] = {}
        for item in items.values():
            if item.get("parent_doc_id"):
                members_of.setdefault(str(item["parent_doc_id"]), []).append(item)
        outcomes: list[DocumentOutcome] = []
        for key in keys:
            execution = latest_execution(executions, key)
            if execution is None:
                outcomes.append(DocumentOutcome(key, key.removeprefix(INCOMING_PREFIX), None, None, None, 0.0))
                continue
            doc_id = execution["input"].get("doc_id")
            outcomes.append(_outcome(key, execution, items.get(doc_id or ""),
                                     _member_outcomes(doc_id or "", members_of, execution["status"])))
        return outcomes

    def outcome(self, key: str, execution: Mapping[str, Any], children: Mapping[str, Sequence[str]]) -> DocumentOutcome:
        """One finished top-level document, without scanning the table: its item and its members'
        (``children``: archive doc_id -> its members' doc_ids, as the runner saw them assembled),
        read from moto's DynamoDB backend directly."""
        doc_id = str(execution["input"].get("doc_id") or "")
        status = str(execution["status"])
        wanted = _descendants(doc_id, children)
        items = self.items_direct([doc_id])
        items.update(self.items_direct(wanted, MEMBER_FIELDS))
        members_of: dict[str, list[dict[str, Any]]] = {}
        for member_id in wanted:
            item = items.get(member_id)
            if item is not None and item.get("parent_doc_id"):
                members_of.setdefault(str(item["parent_doc_id"]), []).append(item)
        return _outcome(key, execution, items.get(doc_id), _member_outcomes(doc_id, members_of, status))

    def items_direct(self, doc_ids: Iterable[str], fields: frozenset[str] | None = None) -> dict[str, dict[str, Any]]:
        """Items by doc_id from moto's DynamoDB backend (no request, no serialization: a scan or a
        GetItem per member cost milliseconds each), with only ``fields`` when given; missing ones are
        left out."""
        from boto3.dynamodb.types import TypeDeserializer
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends
        from moto.dynamodb.models.dynamo_type import DynamoType

        table = dynamodb_backends[DEFAULT_ACCOUNT_ID][self.region].get_table(self.table_name)
        deserializer = TypeDeserializer()
        found: dict[str, dict[str, Any]] = {}
        for doc_id in doc_ids:
            item = table.get_item(DynamoType({"S": doc_id}), None)
            if item is not None:
                raw = item.to_json()["Attributes"]
                found[doc_id] = {k: deserializer.deserialize(v) for k, v in raw.items()
                                 if fields is None or k in fields}
            elif doc_id in self._set_aside:
                found[doc_id] = dict(self._set_aside[doc_id])
        return found

    def result_keys(self, outcome: DocumentOutcome) -> list[str]:
        """The top-level result objects of a document (text.txt, document.md, report.json, ...)."""
        if not outcome.doc_id:
            return []
        response = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=outcome.results_prefix, Delimiter="/")
        return sorted(obj["Key"] for obj in response.get("Contents", []))

    def read(self, key: str) -> bytes:
        return bytes(self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def files(self, outcome: DocumentOutcome) -> StoredFiles:
        """The document's top-level result files by name, read from the store when asked for."""
        return StoredFiles(self.read, {key.rsplit("/", 1)[-1]: key for key in self.result_keys(outcome)})

    def count_pages_done(self, doc_ids: Iterable[str]) -> int:
        """Page JSONs written so far for running documents (progress display only)."""
        total = 0
        for doc_id in doc_ids:
            for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                           Prefix=pages_prefix(doc_id)):
                total += page.get("KeyCount", 0)
        return total


class StoredFiles(dict[str, bytes]):
    """A document's result files by name (text.txt, report.json, ...), each read from the store
    when it is asked for and not kept: writing a 20,000-member archive out holds one file at a time,
    not every member's. Its stored values are placeholders: read it through ``[]``, ``get``,
    ``items`` or ``values``. A file removed from the store since reads as empty."""

    def __init__(self, read: Callable[[str], bytes], keys: Mapping[str, str]) -> None:
        super().__init__(dict.fromkeys(keys, b""))
        self._read = read
        self._keys = dict(keys)

    def __getitem__(self, name: str) -> bytes:
        from botocore.exceptions import ClientError

        key = self._keys[name]
        try:
            return self._read(key)
        except ClientError as exc:  # gone from the store (forgotten after it was written out)
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return b""
            raise

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self._keys else default

    def items(self) -> ItemsView[str, bytes]:  # type: ignore[override]
        return ItemsView(self)

    def values(self) -> ValuesView[bytes]:  # type: ignore[override]
        return ValuesView(self)


def latest_execution(executions: Iterable[dict[str, Any]], key: str) -> dict[str, Any] | None:
    """The last execution started for a dropped key (its archive members' are not its own)."""
    mine = [e for e in executions if e["input"].get("key") == key and not e["input"].get("parent_doc_id")]
    return max(mine, key=lambda e: e["startDate"]) if mine else None


def _outcome(key: str, execution: Mapping[str, Any], item: dict[str, Any] | None,
             members: list[DocumentOutcome]) -> DocumentOutcome:
    stop = execution.get("stopDate")
    return DocumentOutcome(
        key=key,
        source_name=key.removeprefix(INCOMING_PREFIX),
        doc_id=execution["input"].get("doc_id"),
        execution_status=execution["status"],
        item=item,
        seconds=(stop - execution["startDate"]).total_seconds() if stop else 0.0,
        members=members,
    )


def _descendants(doc_id: str, children: Mapping[str, Sequence[str]]) -> list[str]:
    found: list[str] = []
    stack = list(children.get(doc_id, ()))
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children.get(current, ()))
    return found


def _member_outcomes(doc_id: str, members_of: Mapping[str, list[dict[str, Any]]],
                     execution_status: str) -> list[DocumentOutcome]:
    """The members of an archive document (and theirs, for a member that was an archive too)."""
    return [
        DocumentOutcome(
            key=str(member.get("source_key", "")),
            source_name=str(member.get("archive_path") or member.get("source_name") or ""),
            doc_id=str(member[TABLE_KEY]),
            execution_status=execution_status,
            item=member,
            seconds=0.0,
            members=_member_outcomes(str(member[TABLE_KEY]), members_of, execution_status),
        )
        for member in sorted(members_of.get(doc_id, []), key=lambda i: str(i.get("archive_path", "")))
    ]
