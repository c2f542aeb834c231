"""S3 object bodies of the embedded S3 kept on disk, small ones compressed (``papersift run``).

moto keeps every object's bytes in memory. A big archive's members' results (text, Markdown,
report JSON, ~50 KB a member) stay there until the archive's own assemble step has read them, as
they stay in S3 on AWS: 20,000 members held ~500 MB of them, ~300 MB once compressed
(docs/benchmarks.md section 2). Here every body is a row of one private temporary SQLite database
(``sqlite3.connect("")``: a file in the temp folder that SQLite deletes when it is closed; the
standard library's, with its own page cache, free-page reuse and locking, rather than a
hand-written file of offsets): what stays in memory is a row number a key.

Text, JSON and HTML compress 3-5x with zlib at its fastest level (~30 us for such an object): a
body is stored compressed when it is small enough to be cheap to inflate on every read (below
1 MiB: not a source PDF that each page batch reads again) and shrinks by a fifth at least. Bodies
from 8 MiB (SPILL_BELOW_BYTES) are each a temporary file instead, read and written with one copy
(SQLite makes one more each way). What a client reads, the object's size and its ETag are the object's own bytes
whichever way it is stored.
"""

from __future__ import annotations

import hashlib
import io
import sqlite3
import tempfile
import threading
import zlib
from typing import Any

#: bodies from this size up are kept as they are (read whole by every batch of a big document)
COMPRESS_BELOW_BYTES = 1 << 20
#: smaller ones gain nothing worth a compression
COMPRESS_FROM_BYTES = 512
#: bodies from this size up are each a temporary file: SQLite copies a value it is given and one it
#: returns, so a 120 MB page's JSON cost three copies at once (its limit on a value is 1e9 bytes)
SPILL_BELOW_BYTES = 8 << 20
_COMPRESSED = "_papersift_zlib"
#: the buffer of every key whose body is in a BodyFile (moto only closes it, or drops it to copy the key)
NO_BUFFER = io.BytesIO()
NO_BUFFER.close()
_ROW = "_papersift_row"  # (BodyFile, row id) of a body kept in a BodyFile


class BodyFile:
    """Bodies by row id in a private temporary SQLite database, usable from any thread."""

    def __init__(self) -> None:
        self._db = sqlite3.connect("", check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")  # scratch data: nothing to roll back or recover
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE body (data BLOB NOT NULL)")
        self._lock = threading.Lock()
        #: rows of disposed keys, deleted at the next put: a key is disposed of from ``__del__``
        #: too, i.e. whenever the garbage collector runs, perhaps inside this lock
        self._freed: list[int] = []
        self.closed = False

    def put(self, data: bytes) -> int:
        with self._lock:
            self._check()
            if self._freed:
                freed, self._freed = self._freed, []
                self._db.executemany("DELETE FROM body WHERE rowid = ?", [(row,) for row in freed])
            row = self._db.execute("INSERT INTO body (data) VALUES (?)", (data,)).lastrowid
        assert row is not None
        return row

    def get(self, row: int) -> bytes:
        with self._lock:
            self._check()
            found = self._db.execute("SELECT data FROM body WHERE rowid = ?", (row,)).fetchone()
        if found is None:
            raise ValueError(f"body {row} was removed (its key was disposed of)")
        return bytes(found[0])

    def delete(self, row: int) -> None:
        self._freed.append(row)  # atomic: no lock (see _freed)

    def count(self) -> int:
        """Bodies kept (disposed ones not counted)."""
        with self._lock:
            self._check()
            return int(self._db.execute("SELECT count(*) FROM body").fetchone()[0]) - len(set(self._freed))

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                self._db.close()

    def _check(self) -> None:
        if self.closed:  # a key that outlived its LocalAws; moto treats ValueError as a closed buffer
            raise ValueError("I/O operation on a closed body file")


def _stored(key: Any) -> bytes:
    kept = getattr(key, _ROW, None)
    if kept is not None:
        return kept[0].get(kept[1])
    with key.lock:
        key._value_buffer.seek(0)
        return bytes(key._value_buffer.read())


def _get_value(key: Any) -> bytes:
    stored = _stored(key)
    return zlib.decompress(stored) if getattr(key, _COMPRESSED, False) else stored


def _release(key: Any) -> None:
    kept = key.__dict__.pop(_ROW, None)
    if kept is not None:
        kept[0].delete(kept[1])


def _set_value(bodies: BodyFile, key: Any, value: bytes | str) -> None:
    if isinstance(value, str):
        value = value.encode("utf-8")
    stored, compressed = value, False
    if COMPRESS_FROM_BYTES <= len(value) < COMPRESS_BELOW_BYTES:
        packed = zlib.compress(value, 1)
        if len(packed) * 5 <= len(value) * 4:
            stored, compressed = packed, True
    _release(key)
    key._value_buffer.close()
    if len(stored) < SPILL_BELOW_BYTES:
        setattr(key, _ROW, (bodies, bodies.put(stored)))
        key._value_buffer = NO_BUFFER  # moto's own buffer, empty, was ~400 bytes a key
    else:
        # a file of its own (moto closes it when the key is disposed of, as it does the one it
        # made): a spooled one would first copy the body into memory
        key._value_buffer = tempfile.TemporaryFile()  # noqa: SIM115
        key._value_buffer.write(stored)
    setattr(key, _COMPRESSED, compressed)
    key.contentsize = len(value)


def stored_value(bodies: BodyFile) -> property:
    """``FakeKey.value`` that keeps the body in ``bodies`` (small ones compressed)."""
    return property(_get_value, lambda key, value: _set_value(bodies, key, value))


def etag_of(original: property) -> property:
    """``FakeKey.etag``: moto hashes its buffer; the MD5 of the object's own bytes instead."""

    def etag(key: Any) -> str:
        if key._etag is None and (getattr(key, _ROW, None) is not None or getattr(key, _COMPRESSED, False)):
            key._etag = hashlib.md5(_get_value(key), usedforsecurity=False).hexdigest()
        return str(original.fget(key))  # type: ignore[misc]

    return property(etag)


def releasing(dispose: Any) -> Any:
    """``FakeKey.dispose`` (deleted, overwritten, garbage-collected) that also frees the body's row."""

    def release_and_dispose(key: Any, garbage: bool = False) -> None:
        _release(key)
        dispose(key, garbage)

    return release_and_dispose


def stateless(getstate: Any) -> Any:
    """``FakeKey.__getstate__`` (deepcopy, pickle) without the row: the copy stores the value it is
    given in a row of its own, and neither frees the other's."""

    def state(key: Any) -> dict[str, Any]:
        found: dict[str, Any] = getstate(key)
        found.pop(_ROW, None)
        return found

    return state
