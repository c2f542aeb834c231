"""Removing what a finished document left in the embedded AWS (``papersift run`` only).

moto keeps every object version and every item in memory until the process ends: a run's memory
grew with everything it had read (a 20,000-member archive: sources, page JSONs, work files and
results of every member; docs/benchmarks.md). On AWS the work files are lifecycle-expired and the
results are what the user keeps; locally the results are copied out to the output folder, so what
a document leaves can go as soon as nothing will read it again:

- when a document's assemble step has returned: its work files (``work/<doc_id>/``), its page
  JSONs under its results (``results/<doc_id>/pages/``: the output folder has no use for them) and,
  for an archive member, its source (``members/<archive>/...``) and its DynamoDB item, whose
  fields its outcome needs are set aside (``Results.set_aside``). The member's other results
  stay: its archive's assemble reads them;
- when a top-level document's results are written out: everything under its own and its members'
  prefixes, its upload (every version) and its members' DynamoDB items and its own.

Objects are removed from moto's S3 backend directly (``bucket.keys.pop``: every version of the key,
its body freed; and the tag set moto keeps for each version), not with ``DeleteObject``, which in a
versioned bucket only adds a delete marker.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from typing import Any

from infra.deployment import TABLE_KEY
from papersift_cli.local_aws.s3_direct import moto_backend, moto_bucket
from papersift_cli.local_aws.s3_index import IndexedKeyStore


class WeaklyTracked:
    """moto's ``instances_tracked`` list of every model object made, holding none of them: an object
    forgotten here is freed (moto only appends to it and iterates it, to reset or show its state).
    By identity: some of moto's models compare equal without being hashable."""

    def __init__(self, instances: Iterable[Any] = ()) -> None:
        self._refs: dict[int, weakref.ref[Any]] = {}
        for instance in instances:
            self.append(instance)

    def append(self, instance: Any) -> None:
        key = id(instance)
        self._refs[key] = weakref.ref(instance, lambda _ref: self._refs.pop(key, None))

    def __iter__(self) -> Iterator[Any]:
        return (instance for ref in list(self._refs.values()) if (instance := ref()) is not None)

    def __len__(self) -> int:
        return len(self._refs)


def forget_objects(bucket_name: str, prefixes: Iterable[str] = (), keys: Iterable[str] = ()) -> int:
    """Every version of every key under ``prefixes`` and of ``keys``; the number of keys removed."""
    bucket = moto_bucket(bucket_name)
    if bucket is None:
        return 0
    store = bucket.keys
    names: set[str] = set(keys)
    for prefix in prefixes:
        if isinstance(store, IndexedKeyStore):
            names.update(store.index.names(prefix))
        else:
            names.update(name for name in list(dict.keys(store)) if name.startswith(prefix))
    tagger = moto_backend().tagger
    removed = 0
    for name in names:
        for version in store.getlist(name, []):  # every put left an (empty) tag set by the version's ARN
            tagger.delete_all_tags_for_resource(version.arn)
        try:
            store.pop(name)
        except KeyError:  # not there (already removed, or never written)
            continue
        removed += 1
    return removed


def forget_items(region: str, table_name: str, doc_ids: Iterable[str]) -> int:
    """The documents' DynamoDB items; the number removed."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID][region]
    removed = 0
    for doc_id in doc_ids:
        if backend.delete_item(table_name, {TABLE_KEY: {"S": doc_id}}) is not None:
            removed += 1
    return removed
