"""S3 object bodies kept compressed in the embedded S3's memory (``papersift run``).

moto keeps every object's bytes in memory. A big archive's members' results (text, Markdown,
report JSON and page, ~24 KB a member) stay there until the archive's own assemble step has read
them, as they stay in S3 on AWS: 20,000 members held ~500 MB of them. Text, JSON and HTML
compress 3-5x with zlib at its fastest level (~30 us for such an object). A body is stored
compressed when it is small enough to be cheap to inflate on every read (below 1 MiB: not a
source PDF that each page batch reads again) and shrinks by a fifth at least; what a client reads,
its size and its ETag are the object's own bytes either way.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

#: bodies from this size up are kept as they are (read whole by every batch of a big document)
COMPRESS_BELOW_BYTES = 1 << 20
#: smaller ones gain nothing worth a compression
COMPRESS_FROM_BYTES = 512
_FLAG = "_papersift_zlib"


def _get_value(key: Any) -> bytes:
    with key.lock:
        key._value_buffer.seek(0)
        stored = key._value_buffer.read()
    return zlib.decompress(stored) if getattr(key, _FLAG, False) else bytes(stored)


def _set_value(key: Any, value: bytes | str) -> None:
    if isinstance(value, str):
        value = value.encode("utf-8")
    stored, compressed = value, False
    if COMPRESS_FROM_BYTES <= len(value) < COMPRESS_BELOW_BYTES:
        packed = zlib.compress(value, 1)
        if len(packed) * 5 <= len(value) * 4:
            stored, compressed = packed, True
    key._value_buffer.seek(0)
    key._value_buffer.truncate()
    key._value_buffer.write(stored)
    setattr(key, _FLAG, compressed)
    key.contentsize = len(value)


def compressed_value() -> property:
    """``FakeKey.value`` that stores small bodies compressed."""
    return property(_get_value, _set_value)


def etag_of(original: property) -> property:
    """``FakeKey.etag``: the MD5 of the object's own bytes when its body is stored compressed."""

    def etag(key: Any) -> str:
        if getattr(key, _FLAG, False) and key._etag is None:
            key._etag = hashlib.md5(_get_value(key), usedforsecurity=False).hexdigest()
        return str(original.fget(key))  # type: ignore[misc]

    return property(etag)
