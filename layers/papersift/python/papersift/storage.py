"""Where the pipeline's objects live: S3 in the cloud, a directory for `papersift extract`.

The steps in ``pipeline`` only see ``ObjectStore``, so the same code runs in Lambda and
on a laptop. The S3 store takes an injected client: the core never creates one.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Protocol

from papersift.tempfolders import temp_prefix


class ObjectStore(Protocol):
    def get(self, key: str) -> bytes: ...

    def get_with_metadata(self, key: str) -> tuple[bytes, dict[str, str]]: ...

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream",
            metadata: dict[str, str] | None = None) -> None: ...

    def exists(self, key: str) -> bool: ...

    def metadata(self, key: str) -> dict[str, str]: ...

    def size(self, key: str) -> int: ...

    def list_keys(self, prefix: str) -> list[str]: ...

    def download_file(self, key: str, path: Path) -> dict[str, str]: ...

    def upload_file(self, path: Path, key: str, metadata: dict[str, str] | None = None,
                    content_type: str | None = None) -> None: ...


class S3ObjectStore:
    """One bucket through an injected boto3 S3 client."""

    def __init__(self, client: Any, bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    def get(self, key: str) -> bytes:
        return self.get_with_metadata(key)[0]

    def get_with_metadata(self, key: str) -> tuple[bytes, dict[str, str]]:
        response = self.client.get_object(Bucket=self.bucket, Key=key)
        return response["Body"].read(), dict(response.get("Metadata") or {})

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream",
            metadata: dict[str, str] | None = None) -> None:
        self.client.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType=content_type,
                               Metadata=metadata or {})

    def exists(self, key: str) -> bool:
        response = self.client.list_objects_v2(Bucket=self.bucket, Prefix=key, MaxKeys=1)
        return any(obj["Key"] == key for obj in response.get("Contents", []))

    def size(self, key: str) -> int:
        return int(self.client.head_object(Bucket=self.bucket, Key=key)["ContentLength"])

    def metadata(self, key: str) -> dict[str, str]:
        """The object's user metadata without its bytes (the per-upload options)."""
        return dict(self.client.head_object(Bucket=self.bucket, Key=key).get("Metadata") or {})

    def list_keys(self, prefix: str) -> list[str]:
        keys: list[str] = []
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
            keys.extend(obj["Key"] for obj in page.get("Contents", []))
        return sorted(keys)

    def download_file(self, key: str, path: Path) -> dict[str, str]:
        """Stream an object to disk (archives can be larger than memory)."""
        response = self.client.get_object(Bucket=self.bucket, Key=key)
        with path.open("wb") as out:
            for chunk in response["Body"].iter_chunks(1024 * 1024):
                out.write(chunk)
        return dict(response.get("Metadata") or {})

    def upload_file(self, path: Path, key: str, metadata: dict[str, str] | None = None,
                    content_type: str | None = None) -> None:
        """boto3's managed transfer: a multipart upload past its threshold, read from the file in parts."""
        extra: dict[str, Any] = {"Metadata": metadata or {}}
        if content_type is not None:
            extra["ContentType"] = content_type
        self.client.upload_file(str(path), self.bucket, key, ExtraArgs=extra)


def _inside(folder: str, key: str) -> str | None:
    """``folder/key``, normalised, when it lies inside ``folder`` (not the folder itself).

    Checked as a string: two resolve() a call (every component lstat'ed) and pathlib's parsing
    were a tenth of `papersift extract`'s own time; the store writes only files, never a symlink
    to follow."""
    path = os.path.normpath(os.path.join(folder, key))
    return path if path.startswith(folder + os.sep) else None


def _write(path: str, data: bytes, parts: str) -> None:
    """``path`` holds all of ``data`` or is as it was: written under a temporary name in ``parts``
    (a folder of the store, on its file system, that no key lists) and renamed over it; the
    temporary file is removed when a write fails (a full disk keeps no half)."""
    handle, temporary = tempfile.mkstemp(dir=parts)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


#: a result object held in memory up to this size, then spooled to a temporary file
SPOOL_MEMORY_BYTES = 8 << 20


class Spool:
    """An object written part by part: in memory while small, in a temporary file past
    ``SPOOL_MEMORY_BYTES``, so a 100,000-page document's text is never whole in memory. Stored
    with :func:`put_spool`; a ``with`` block removes the temporary file. The file is in a folder of
    its own, ``papersift-spool-<pid>-<random>`` in the temporary folder: the assemble step runs in the
    command's own process (`papersift run`, an `extract` without lanes), whose temporary folder is the
    system's, where only such names are known to be left over."""

    def __init__(self, memory_bytes: int = SPOOL_MEMORY_BYTES) -> None:
        self._memory_bytes = memory_bytes
        self._buffer = io.BytesIO()
        self._file: Any = None  # a NamedTemporaryFile once past memory_bytes
        self._folder: str | None = None  # the folder holding it
        self.size = 0

    def write(self, part: bytes) -> None:
        if not part:
            return
        if self._file is None and self.size + len(part) > self._memory_bytes:
            self._folder = tempfile.mkdtemp(prefix=temp_prefix("spool"))
            self._file = tempfile.NamedTemporaryFile(dir=self._folder, delete=False)  # noqa: SIM115
            self._file.write(self._buffer.getvalue())
            self._buffer = io.BytesIO()
        (self._file or self._buffer).write(part)
        self.size += len(part)

    def put(self, store: ObjectStore, key: str, content_type: str) -> None:
        """Store what was written under ``key``: one put while in memory, else the file's upload
        (a multipart upload on S3, a hard link in a local store)."""
        if self._file is None:
            store.put(key, self._buffer.getvalue(), content_type)
            return
        self._file.flush()
        store.upload_file(Path(self._file.name), key, content_type=content_type)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


#: room kept free beyond a copy's own size (the page files and results written after it)
COPY_HEADROOM_BYTES = 1 << 20


def check_room_for(size: int, folder: str) -> None:
    """Raise ENOSPC before a copy of ``size`` bytes into ``folder`` that cannot fit: checked first,
    so a copy that fails does not fill the disk the other documents are written to."""
    free = shutil.disk_usage(folder).free
    if size + COPY_HEADROOM_BYTES > free:
        raise OSError(errno.ENOSPC, f"No space left on device for a copy of {size / 1e6:.1f} MB "
                                    f"({free / 1e6:.1f} MB free)")


class LocalDirStore:
    """A directory as a bucket; metadata lives beside each object as ``<key>.meta.json``."""

    _META = ".papersift-meta"
    _PARTS = ".papersift-parts"  # objects being written, renamed into place when whole

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self._base = os.path.realpath(root)
        self._parts = os.path.join(self._base, self._PARTS)
        os.makedirs(self._parts, exist_ok=True)
        self._folders: set[str] = set()  # made by put: one mkdir per folder, not per object

    def _path(self, key: str) -> str:
        path = _inside(self._base, key)
        if path is None:
            raise ValueError(f"key escapes the store: {key!r}")
        return path

    def _meta_path(self, key: str) -> Path:
        return self.root / self._META / f"{key}.json"

    def _read_meta(self, key: str) -> dict[str, str]:
        meta = self._meta_path(key)
        return json.loads(meta.read_text()) if meta.exists() else {}

    def get(self, key: str) -> bytes:
        with open(self._path(key), "rb") as file:
            return file.read()

    def get_with_metadata(self, key: str) -> tuple[bytes, dict[str, str]]:
        return self.get(key), self._read_meta(key)

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream",
            metadata: dict[str, str] | None = None) -> None:
        path = self._path(key)
        folder = os.path.dirname(path)
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)
        try:
            _write(path, data, self._parts)
        except FileNotFoundError:  # the folder was removed behind the store's back
            os.makedirs(folder, exist_ok=True)
            os.makedirs(self._parts, exist_ok=True)
            _write(path, data, self._parts)
        self._write_meta(key, metadata)

    def _write_meta(self, key: str, metadata: dict[str, str] | None) -> None:
        if metadata:
            meta = self._meta_path(key)
            meta.parent.mkdir(parents=True, exist_ok=True)
            _write(str(meta), json.dumps(metadata).encode("utf-8"), self._parts)

    def exists(self, key: str) -> bool:
        return os.path.isfile(self._path(key))

    def size(self, key: str) -> int:
        return os.stat(self._path(key)).st_size

    def metadata(self, key: str) -> dict[str, str]:
        if not os.path.isfile(self._path(key)):
            raise FileNotFoundError(key)
        return self._read_meta(key)

    def list_keys(self, prefix: str) -> list[str]:
        base = str(self.root) + os.sep
        # walk only the prefix's directory: a walk of the whole store per call made an
        # archive of N members cost O(N^2) (2,000 members: tens of minutes). os.walk, not rglob:
        # a folder removed while it is walked (a lane done with its document while the progress
        # line counts its pages) is skipped, where rglob raised FileNotFoundError
        start = base + prefix.rsplit("/", 1)[0] if "/" in prefix else base
        keys = [os.path.join(folder, name)[len(base):].replace(os.sep, "/")
                for folder, _, names in os.walk(start) for name in names]
        return sorted(k for k in keys if k.startswith(prefix) and not k.startswith((self._META, self._PARTS)))

    def download_file(self, key: str, path: Path) -> dict[str, str]:
        shutil.copyfile(self._path(key), path)
        return self._read_meta(key)

    def upload_file(self, path: Path, key: str, metadata: dict[str, str] | None = None,
                    content_type: str | None = None) -> None:
        """A hard link where the file system allows (an input is only read: no second copy of a
        large file), else a copy."""
        target = self._path(key)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        try:
            os.link(path, target)
        except OSError:
            check_room_for(os.stat(path).st_size, os.path.dirname(target))
            try:
                shutil.copyfile(path, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(target)
                raise
        self._write_meta(key, metadata)

    def delete_prefix(self, prefix: str) -> None:
        """Every object under ``prefix`` (a folder of the store), and their metadata."""
        self._folders.clear()
        for root in (self._base, os.path.join(self._base, self._META)):
            folder = _inside(root, prefix)
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)


#: S3 bills LIST like PUT; one LIST answers at most this many keys
S3_LIST_PAGE_KEYS = 1000


class CountingStore:
    """A store that counts the S3 requests a step makes, by the class S3 bills them in: PUT
    (PUT, COPY, POST, LIST) and GET (GET, HEAD). Made per invocation around the step's store, so
    a warm Lambda's reused client carries no count across documents, and the same count holds for
    S3 and for a local directory (what S3 would have billed)."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.puts = 0
        self.gets = 0

    def get(self, key: str) -> bytes:
        self.gets += 1
        return self.store.get(key)

    def get_with_metadata(self, key: str) -> tuple[bytes, dict[str, str]]:
        self.gets += 1
        return self.store.get_with_metadata(key)

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream",
            metadata: dict[str, str] | None = None) -> None:
        self.puts += 1
        self.store.put(key, data, content_type, metadata)

    def exists(self, key: str) -> bool:
        self.puts += 1  # a one-key LIST on S3 (S3ObjectStore.exists)
        return self.store.exists(key)

    def metadata(self, key: str) -> dict[str, str]:
        self.gets += 1  # HEAD
        return self.store.metadata(key)

    def size(self, key: str) -> int:
        self.gets += 1  # HEAD
        return self.store.size(key)

    def list_keys(self, prefix: str) -> list[str]:
        keys = self.store.list_keys(prefix)
        self.puts += max(1, -(-len(keys) // S3_LIST_PAGE_KEYS))
        return keys

    def download_file(self, key: str, path: Path) -> dict[str, str]:
        self.gets += 1
        return self.store.download_file(key, path)

    def upload_file(self, path: Path, key: str, metadata: dict[str, str] | None = None,
                    content_type: str | None = None) -> None:
        self.puts += 1  # one PUT below the multipart threshold; a larger upload makes a few more
        self.store.upload_file(path, key, metadata, content_type)
