"""The pipeline's plain S3 calls answered by moto's S3 backend directly, in the calling thread.

In process, every boto3 call is answered by moto through botocore's ``before-send`` hook: botocore
serializes and signs an HTTP request, moto parses it back (werkzeug), finds the handler among every
service's URL patterns, serializes an XML or header response, and botocore parses that again. For
S3 that cost about 1.4 ms of CPU per call, and a document's steps make some 30 of them (a page JSON,
an existence check, a usage record each): a quarter of `papersift run`'s time on a big archive
(docs/benchmarks.md).

:class:`DirectS3` answers ``GetObject``, ``HeadObject``, ``PutObject`` and ``ListObjectsV2`` from
moto's backend at ``before-call`` (after botocore has validated and serialized the parameters, so a
bad call still fails as before) and returns what botocore would have parsed from moto's response:
the same fields, from the same ``FakeKey``. Anything else — another operation, a parameter it does
not handle (ranges, versions, conditions, encryption, ACLs, ...), a bucket or key that does not
exist — returns None and goes the usual way, so errors are still moto's. ``PutObject`` stores the
object, its content type and user metadata as moto's handler does, then sends the bucket
notification (moto sends it before the metadata is set; S3 after the object is complete). Not
reproduced: the CRC32 checksum botocore would have sent with the upload (nothing reads it back).
"""

from __future__ import annotations

import io
import urllib.parse
import uuid
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders
from botocore.response import StreamingBody
from dateutil.tz import tzutc

#: the operations answered here, and the parameters each may have (more: the usual way)
HANDLED: dict[str, frozenset[str]] = {
    "GetObject": frozenset({"Bucket", "Key"}),
    "HeadObject": frozenset({"Bucket", "Key"}),
    # ChecksumAlgorithm: what s3transfer's upload_file asks for; the checksum is not kept (see above)
    "PutObject": frozenset({"Bucket", "Key", "Body", "ContentType", "Metadata", "ChecksumAlgorithm"}),
    "ListObjectsV2": frozenset({"Bucket", "Prefix", "MaxKeys", "ContinuationToken", "Delimiter", "EncodingType"}),
}
_PARAMS = "papersift_direct_s3"
_META = "x-amz-meta-"
#: ListObjectsV2's page size when MaxKeys is not given (moto's default, as S3's)
DEFAULT_MAX_KEYS = 1000


class DirectS3:
    """botocore event handlers (registered on every client, inert until ``enabled``)."""

    def __init__(self) -> None:
        self.enabled = False
        self.answered = 0  # calls answered here (tests look)

    # -- botocore events ---------------------------------------------------------------------

    def keep_params(self, params: dict[str, Any], context: dict[str, Any], model: Any, **_: Any) -> None:
        """``before-parameter-build.s3``: the call's own parameters, for ``before-call`` (which only
        sees the serialized request)."""
        if self.enabled and model.name in HANDLED:
            context[_PARAMS] = dict(params)

    def answer(self, model: Any, context: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        """``before-call.s3``: the response, or None for the usual way."""
        params = context.pop(_PARAMS, None)
        if not self.enabled or params is None:
            return None
        allowed = HANDLED.get(model.name)
        if allowed is None or not set(params) <= allowed:
            return None
        if params.get("EncodingType") not in (None, "url"):
            return None
        bucket = moto_bucket(params["Bucket"])
        if bucket is None:
            return None
        parsed = getattr(self, "_" + model.name)(bucket, params)
        if parsed is None:
            return None
        self.answered += 1
        headers = HTTPHeaders()
        headers["x-amz-request-id"] = uuid.uuid4().hex
        parsed["ResponseMetadata"] = {"RequestId": headers["x-amz-request-id"], "HTTPStatusCode": 200,
                                      "HTTPHeaders": dict(headers), "RetryAttempts": 0}
        return AWSResponse(f"https://{bucket.name}.s3.amazonaws.com/", 200, headers, None), parsed

    # -- the operations ------------------------------------------------------------------------

    def _GetObject(self, bucket: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        key = _latest(bucket, params["Key"])
        if key is None:
            return None
        data = key.value
        fields = _object_fields(key)
        if key.checksum_algorithm and key.checksum_value:  # botocore asks GetObject for it (ChecksumMode)
            fields[f"Checksum{key.checksum_algorithm.upper()}"] = key.checksum_value
        return {**fields, "Body": StreamingBody(io.BytesIO(data), len(data))}

    def _HeadObject(self, bucket: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        key = _latest(bucket, params["Key"])
        return None if key is None else _object_fields(key)

    def _PutObject(self, bucket: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        from moto.s3 import notifications

        body = params.get("Body", b"")
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif not isinstance(body, (bytes, bytearray)):
            if not hasattr(body, "read"):
                return None
            body = body.read()  # a file object (boto3's upload_file hands a bounded reader)
            if isinstance(body, str):
                body = body.encode("utf-8")
        backend = moto_backend()
        key = backend.put_object(bucket.name, params["Key"], bytes(body), storage="STANDARD",
                                 disable_notification=True)
        metadata: dict[str, str] = {f"{_META}{name.lower()}": value for name, value in
                                    (params.get("Metadata") or {}).items()}
        if params.get("ContentType"):
            metadata["Content-Type"] = params["ContentType"]
        key.set_metadata(metadata)
        key.set_acl(bucket.acl)
        backend.put_object_tagging(key, {})
        notifications.send_event(backend.account_id, notifications.S3NotificationEvent.OBJECT_CREATED_PUT_EVENT,
                                 bucket, key)
        parsed: dict[str, Any] = {"ETag": key.etag}
        if bucket.is_versioned:
            parsed["VersionId"] = key.version_id
        return parsed

    def _ListObjectsV2(self, bucket: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        from moto.s3.models import FakeKey

        token = params.get("ContinuationToken")
        if token == "":
            return None  # moto's InvalidContinuationToken
        prefix = params.get("Prefix")
        delimiter = params.get("Delimiter")
        encoding = params.get("EncodingType")
        max_keys = int(params.get("MaxKeys", DEFAULT_MAX_KEYS))
        found, truncated, next_token = moto_backend().list_objects_v2(
            bucket=bucket, prefix=prefix, delimiter=delimiter, continuation_token=token, start_after=None,
            max_keys=max_keys)
        keys = [k for k in found if isinstance(k, FakeKey)]
        folders = [k for k in found if not isinstance(k, FakeKey)]
        quote = urllib.parse.quote if encoding == "url" else (lambda text: text)
        contents = []
        for key in keys:
            item: dict[str, Any] = {"Key": quote(key.name), "LastModified": _seconds(key.last_modified),
                                    "ETag": key.etag, "Size": key.size, "StorageClass": key.storage_class}
            if key.checksum_algorithm:
                item["ChecksumAlgorithm"] = [key.checksum_algorithm]
            contents.append(item)
        parsed: dict[str, Any] = {"IsTruncated": truncated, "Name": bucket.name,
                                  "Prefix": quote(prefix) if prefix else "", "MaxKeys": max_keys,
                                  "KeyCount": len(keys) + len(folders)}
        if contents:  # botocore leaves out an empty list
            parsed["Contents"] = contents
        if delimiter:
            parsed["Delimiter"] = delimiter
            if folders:
                parsed["CommonPrefixes"] = [{"Prefix": quote(folder)} for folder in folders]
        if encoding:
            parsed["EncodingType"] = encoding
        if token:
            parsed["ContinuationToken"] = token
        if next_token:
            parsed["NextContinuationToken"] = next_token
        return parsed


def moto_backend() -> Any:
    """moto's S3 backend (the default account's)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    return s3_backends[DEFAULT_ACCOUNT_ID]["aws"]


def moto_bucket(name: str) -> Any:
    """moto's bucket of that name in the embedded S3, or None."""
    return moto_backend().buckets.get(name)


def _latest(bucket: Any, name: str) -> Any:
    """The key's latest version when it is a plain stored object (None: a delete marker, an
    archived storage class, missing: moto's own answer)."""
    from moto.s3.models import FakeKey

    key = bucket.keys.get(name)
    if not isinstance(key, FakeKey) or key.storage_class not in ("STANDARD", None):
        return None
    return key


def _seconds(moment: Any) -> Any:
    """A FakeKey's time as botocore parses it from moto's header: whole seconds, UTC."""
    return moment.replace(microsecond=0, tzinfo=tzutc())


def _object_fields(key: Any) -> dict[str, Any]:
    """GetObject's and HeadObject's fields for a stored key (as botocore parses moto's headers)."""
    fields: dict[str, Any] = {"AcceptRanges": "bytes", "LastModified": _seconds(key.last_modified),
                              "ContentLength": key.size, "ETag": key.etag}
    if key.version_id != "null":
        fields["VersionId"] = key.version_id
    metadata: dict[str, str] = {}
    for name, value in key.metadata.items():
        lowered = name.lower()
        if lowered.startswith(_META):
            metadata[lowered[len(_META):]] = value
        elif lowered == "content-type":
            fields["ContentType"] = value
    fields["Metadata"] = metadata
    return fields


#: one instance for the process, inert until a LocalAws enables it
DIRECT_S3 = DirectS3()
_EVENTS = (("before-parameter-build.s3", DIRECT_S3.keep_params), ("before-call.s3", DIRECT_S3.answer))


def install(client: Any) -> Any:
    """Register the handlers on one S3 client (again: nothing happens). Returns the client."""
    if getattr(getattr(client, "meta", None), "service_model", None) is None:
        return client
    if client.meta.service_model.service_name != "s3":
        return client
    for event, handler in _EVENTS:
        client.meta.events.register(event, handler, unique_id=f"papersift-direct-s3-{event}")
    return client


def install_builtin() -> None:
    """Register the handlers on every client made from now on (botocore copies its builtin handlers
    into each new session), as moto does with its own hook."""
    from botocore.handlers import BUILTIN_HANDLERS

    for event, handler in _EVENTS:
        if (event, handler) not in BUILTIN_HANDLERS:
            BUILTIN_HANDLERS.append((event, handler))
