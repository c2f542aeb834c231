"""The unpack step: an archive's members (or the files a PDF or an email holds) uploaded as
documents of their own, every member listed in ``work/<doc_id>/members.json``."""

from __future__ import annotations

import time
from pathlib import Path

from papersift import archives
from papersift.layout import JSON_CONTENT_TYPE, members_prefix
from papersift.ledger import Invocation, record_usage
from papersift.settings import Settings
from papersift.steps.contracts import (
    ArchiveListing,
    DocumentOptions,
    DocumentRef,
    MemberEntry,
    UnpackRequest,
    UnpackResult,
    document_id,
    manifest_json,
    source_name_of,
)
from papersift.storage import CountingStore, ObjectStore
from papersift.workfiles import member_items_key, members_key, put_model


def unpack_archive(store: ObjectStore, request: UnpackRequest, settings: Settings, scratch: Path,
                   invocation: Invocation | None = None) -> UnpackResult:
    """Unpack an archive (nested ones included), or the files a PDF or an email holds (after its
    own text: ``Plan.unpacks_after``), and upload each member as a document of its own under
    ``members/<doc_id>/<n>/<name>`` (``member_object_key``). Every member, processed or not, is
    recorded in ``work/<doc_id>/members.json``; the ones to process are the returned items."""
    started = time.perf_counter()
    store = counted = CountingStore(store)
    doc_id = request.doc_id
    local_copy = scratch / "archive"
    metadata = store.download_file(request.key, local_copy)
    doc_settings = DocumentOptions.from_metadata(metadata).apply(settings)
    result = archives.unpack(local_copy, request.plan.kind, scratch / "members",
                             archives.ArchiveLimits.from_settings(doc_settings), doc_settings.passwords,
                             name=request.source_name)
    members: list[MemberEntry] = []
    items: list[DocumentRef] = []
    for index, member in enumerate(result.members):
        entry = MemberEntry.model_validate(member.to_dict())
        if member.status is archives.MemberStatus.EXTRACTED and member.local_path is not None:
            member_key = member_object_key(doc_id, index, member.path)
            # the upload's options (passwords, tables) apply to its members too
            store.upload_file(member.local_path, member_key, metadata=dict(metadata))
            member.local_path.unlink()
            item = DocumentRef(doc_id=document_id(request.bucket, member_key), bucket=request.bucket, key=member_key,
                               source_name=source_name_of(member.path), parent_doc_id=doc_id,
                               archive_path=member.path, member_kind=member.kind)
            entry = entry.model_copy(update={"doc_id": item.doc_id})
            items.append(item)
        members.append(entry)
    listing = ArchiveListing(status=result.status, reason=result.reason, unlisted=result.unlisted,
                             members=members)
    put_model(store, members_key(doc_id), listing)
    if invocation is not None:
        record_usage(store, doc_id, invocation.usage(time.perf_counter() - started, counted, puts_to_come=2))
    store.put(member_items_key(doc_id), manifest_json(items), JSON_CONTENT_TYPE)
    # an archive member's members are an inline Map inside its iteration (no Distributed Map there)
    distributed = request.parent_doc_id is None and len(items) > settings.distributed_map_threshold
    return UnpackResult(status=listing.status, reason=listing.reason, unlisted=listing.unlisted,
                        member_count=len(members), item_count=len(items), use_distributed_map=distributed,
                        manifest_key=member_items_key(doc_id), max_concurrency=settings.max_concurrency,
                        items=[] if distributed else items)


def member_object_key(doc_id: str, index: int, path: str) -> str:
    """``members/<archive doc_id>/<n>/<file name>``: the member's place in the listing keeps every key
    unique and short whatever the names (``x.txt`` beside ``x.txt/report.json``, names a local
    directory store cannot nest, paths longer than S3's 1,024 bytes); its path inside the archive
    travels as ``archive_path``, its file name stays readable at the end of the key."""
    return f"{members_prefix(doc_id)}{index:05d}/{source_name_of(path) or 'unnamed'}"
