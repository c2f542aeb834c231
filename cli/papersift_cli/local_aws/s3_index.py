"""Listing a prefix of moto's S3 without visiting every key of the bucket.

moto's ``S3Backend.list_objects`` walks every key of the bucket (a copy of its dict, the latest
version of each looked up) and keeps those that start with the prefix. The pipeline lists small
prefixes (a document's ``work/<doc_id>/pages/``, its ``results/<doc_id>/``) of a bucket that holds
every document of the run, so one listing cost grew with the run and a run of N documents with
N^2: a 2,000-member archive spent almost half its time there (docs/benchmarks.md). On AWS a
listing costs what it returns.

:class:`IndexedKeyStore` is moto's key store (``_VersionedKeyStore``, a dict of key name -> its
versions) that also keeps its key names in a tree of ``/``-separated folders; :func:`list_objects`
is moto's ``list_objects`` that takes its candidates from that tree: the keys of the prefix's folder
and of the sub-folders the prefix covers. What it returns is exactly what moto's returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from moto.s3.utils import _VersionedKeyStore


class _Folder:
    __slots__ = ("folders", "keys")

    def __init__(self) -> None:
        self.keys: set[str] = set()  # full key names directly in this folder
        self.folders: dict[str, _Folder] = {}


class PrefixIndex:
    """Key names in a tree of folders (``/``-separated), for the names under a prefix."""

    def __init__(self) -> None:
        self._root = _Folder()
        self._lock = threading.Lock()

    def add(self, name: str) -> None:
        *folders, _ = name.split("/")
        with self._lock:
            node = self._root
            for part in folders:
                child = node.folders.get(part)
                if child is None:
                    child = node.folders[part] = _Folder()
                node = child
            node.keys.add(name)

    def discard(self, name: str) -> None:
        *folders, _ = name.split("/")
        with self._lock:
            path = [self._root]
            for part in folders:
                child = path[-1].folders.get(part)
                if child is None:
                    return
                path.append(child)
            path[-1].keys.discard(name)
            # drop the folders this left empty, so a run's finished documents leave no nodes behind
            for part, node, parent in zip(reversed(folders), reversed(path[1:]), reversed(path[:-1]), strict=True):
                if node.keys or node.folders:
                    break
                del parent.folders[part]

    def clear(self) -> None:
        with self._lock:
            self._root = _Folder()

    def names(self, prefix: str) -> list[str]:
        """Every name that starts with ``prefix`` (in no particular order)."""
        *folders, rest = prefix.split("/")
        found: list[str] = []
        with self._lock:
            node = self._root
            for part in folders:
                child = node.folders.get(part)
                if child is None:
                    return found
                node = child
            found.extend(name for name in node.keys if name.startswith(prefix))
            for part, child in node.folders.items():
                if part.startswith(rest):
                    _collect(child, found)
        return found


def _collect(node: _Folder, found: list[str]) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        found.extend(current.keys)
        stack.extend(current.folders.values())


class IndexedKeyStore(_VersionedKeyStore):
    """moto's versioned key store, its key names also kept in a :class:`PrefixIndex`.

    moto changes a bucket's keys through ``__setitem__``, ``setlist`` and ``pop`` only; the dict's
    own ``__delitem__``, ``clear`` and ``update`` are covered as well."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.index = PrefixIndex()
        for name in dict.keys(self):
            self.index.add(name)

    def __setitem__(self, key: str, value: Any) -> Any:
        super().__setitem__(key, value)
        self.index.add(key)

    def setlist(self, key: Any, list_: Any) -> Any:
        super().setlist(key, list_)
        self.index.add(key)

    def pop(self, key: str) -> None:  # type: ignore[override]
        super().pop(key)
        self.index.discard(key)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.index.discard(key)

    def clear(self) -> None:
        super().clear()
        self.index.clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self.setlist(key, value)


ListObjects = Callable[[Any, Any, "str | None", "str | None", "str | None", "int | None"], Any]


def indexed_list_objects(original: ListObjects) -> ListObjects:
    """moto's ``S3Backend.list_objects``, the candidates taken from the bucket's index (moto's own
    for a bucket without one)."""
    from moto.s3.exceptions import MethodNotAllowed
    from moto.s3.models import FakeDeleteMarker, FakeTableStorageBucket

    def list_objects(backend: Any, bucket: Any, prefix: str | None, delimiter: str | None, marker: str | None,
                     max_keys: int | None) -> tuple[Any, Any, bool, str | None]:
        keys = bucket.keys
        if not isinstance(keys, IndexedKeyStore):
            return original(backend, bucket, prefix, delimiter, marker, max_keys)
        if isinstance(bucket, FakeTableStorageBucket):
            raise MethodNotAllowed()
        prefix = prefix or ""
        key_results: set[Any] = set()
        folder_results: set[str] = set()
        for name in keys.index.names(prefix):
            key = keys.get(name)  # the latest version, as moto's items() gives
            if key is None:  # removed since the names were taken
                continue
            rest = name[len(prefix):]
            if delimiter and delimiter in rest:
                folder_results.add(f"{prefix}{rest.split(delimiter)[0]}{delimiter}")
            else:
                key_results.add(key)
        found = sorted((k for k in key_results if not isinstance(k, FakeDeleteMarker)), key=lambda k: k.name)
        folders = sorted(folder_results)
        if marker:
            limit = backend._pagination_tokens.get(marker) or marker
            found = backend._get_results_from_token(found, limit)
        if max_keys is not None:
            found, is_truncated, next_marker = backend._truncate_result(found, max_keys)
        else:
            is_truncated, next_marker = False, None
        return found, folders, is_truncated, next_marker

    list_objects.__wrapped__ = original  # type: ignore[attr-defined]  # moto's own, for comparing
    return list_objects

