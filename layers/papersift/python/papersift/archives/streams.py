"""Tar and bare compressed streams read in process, in one forward pass."""

from __future__ import annotations

import bz2
import contextlib
import functools
import gzip
import lzma
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any
from zlib import error as zlib_error

from papersift.archives.limits import Stop
from papersift.archives.members import ArchiveStatus, MemberStatus
from papersift.archives.sink import Chunks, MemberSink
from papersift.archives.tools import ToolError, count_member, read_with_tools
from papersift.sniff import is_tar_header


def read_tar(frame: MemberSink, open_stream: Callable[[], Any]) -> tuple[ArchiveStatus, str]:
    """Stream mode ('r|'): one forward pass, no seeking back through a compressed stream."""
    with open_stream() as raw_stream:
        try:
            tf = tarfile.open(fileobj=raw_stream, mode="r|", errors="surrogateescape")  # noqa: SIM115
        except (tarfile.TarError, OSError, EOFError, lzma.LZMAError) as exc:
            return ArchiveStatus.CORRUPT, f"not a readable tar: {exc}"
        try:
            while True:
                frame.run.check_time()
                try:
                    info = tf.next()
                except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, zlib_error) as exc:
                    return ArchiveStatus.CORRUPT, f"tar stream broke off after {len(frame.members)} members: {exc}"
                if info is None:
                    break
                # as tarfile decoded it (surrogate escapes for bytes that are not UTF-8): the member's
                # path is made readable from it and the report keeps the original as \xNN text
                name = info.name
                if info.isdir():
                    continue
                try:
                    if info.issym() or info.islnk():
                        count_member(frame, name)
                        kind = "symbolic" if info.issym() else "hard"
                        frame.record(name, MemberStatus.UNSAFE_PATH, f"{kind} link to {info.linkname!r}: not followed")
                    elif not info.isfile():
                        count_member(frame, name)
                        frame.record(name, MemberStatus.UNSAFE_PATH,
                                     "device, fifo or other special file: not extracted")
                    else:
                        frame.add_file(name, functools.partial(_tar_member, tf, info), declared_size=info.size)
                except Stop as stop:
                    frame.skip_rest(_names_after(tf, info, frame), str(stop))
                    raise
        finally:
            with contextlib.suppress(Exception):
                tf.close()
    return ArchiveStatus.OK, ""


#: decompressed bytes a tar is read on for the names of the members after a member-count stop
_LISTING_READ_BYTES = 64 * 1024 * 1024


def _names_after(tf: tarfile.TarFile, last: tarfile.TarInfo, frame: MemberSink) -> Iterator[str]:
    """The names of the members after a stop, so each is listed skipped_limit. Only after a member-count
    stop: a stream has no directory, and after a byte or ratio stop reading on means decompressing the
    very data the limit refused. Bounded too by time and by the decompressed bytes it may skip."""
    if "max_archive_members" not in frame.run.stop_reason:
        return
    end = last.offset_data + _LISTING_READ_BYTES
    while frame.run.seconds_left() > 0 and last.offset_data + last.size <= end:
        try:
            info = tf.next()
        except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, zlib_error):
            return
        if info is None:
            return
        last = info
        if not info.isdir():
            yield info.name


def read_stream(frame: MemberSink, path: Path, kind: str, name: str) -> tuple[ArchiveStatus, str]:
    opener = STREAM_OPENERS[kind]
    try:
        with opener(path) as probe:
            head = _read_up_to(probe, 512)
    except (OSError, EOFError, lzma.LZMAError, ValueError, ToolError, zlib_error) as exc:
        if kind in ("gzip", "bzip2", "xz", "lzma", "zstd"):
            return read_with_tools(frame, path, kind)
        return ArchiveStatus.CORRUPT, f"cannot decompress {kind}: {exc}"
    if is_tar_header(head):
        return read_tar(frame, lambda: opener(path))
    frame.add_file(_stream_member_name(name, kind), lambda: opener(path), packed_size=path.stat().st_size)
    return ArchiveStatus.OK, ""


@contextlib.contextmanager
def _tar_member(tf: tarfile.TarFile, info: tarfile.TarInfo) -> Iterator[Chunks]:
    stream = tf.extractfile(info)
    if stream is None:
        raise tarfile.TarError("member has no data")
    yield stream


def _read_up_to(stream: IO[bytes], n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = stream.read(n - len(out))
        if not chunk:
            break
        out += chunk
    return out


def _open_zstd(path: Path) -> Any:
    import zstandard

    fh = open(path, "rb")  # noqa: SIM115
    reader = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True, closefd=True)
    return reader


class _PipeReader:
    """stdout of a decompressor process as a file object, killed on close or timeout."""

    def __init__(self, cmd: list[str], timeout: float) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.deadline = time.monotonic() + timeout

    def read(self, n: int = -1) -> bytes:
        if time.monotonic() > self.deadline:
            raise ToolError("decompressor timed out")
        assert self.proc.stdout is not None
        data = self.proc.stdout.read(n)
        if not data:
            rc = self.proc.wait(timeout=max(1.0, self.deadline - time.monotonic()))
            if rc != 0:
                err = self.proc.stderr.read().decode("utf-8", "replace").strip() if self.proc.stderr else ""
                raise ToolError(f"decompressor failed: {err or rc}")
        return data

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe:
                pipe.close()

    def __enter__(self) -> _PipeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_bsdcat(path: Path) -> Any:
    return _PipeReader(["bsdcat", "--", str(path)], 120.0)


#: each returns a closeable, readable decompressed stream
STREAM_OPENERS: dict[str, Callable[[Path], Any]] = {
    "gzip": lambda p: gzip.open(p, "rb"),  # noqa: SIM115 - the caller closes
    "bzip2": lambda p: bz2.open(p, "rb"),  # noqa: SIM115
    "xz": lambda p: lzma.open(p, "rb"),  # noqa: SIM115
    "lzma": lambda p: lzma.open(p, "rb"),  # noqa: SIM115
    "zstd": _open_zstd,
    "lzip": _open_bsdcat,
    "compress": _open_bsdcat,
}

_STREAM_SUFFIXES = {
    ".tgz": ".tar",
    ".tbz": ".tar",
    ".tbz2": ".tar",
    ".txz": ".tar",
    ".tzst": ".tar",
    ".taz": ".tar",
    ".gz": "",
    ".gzip": "",
    ".bz2": "",
    ".bz": "",
    ".xz": "",
    ".lzma": "",
    ".zst": "",
    ".zstd": "",
    ".lz": "",
    ".z": "",
}


def _stream_member_name(name: str, kind: str) -> str:
    """'report.pdf.gz' -> 'report.pdf'; unknown suffix -> '<name>.out'."""
    base = PurePosixPath(name.replace("\\", "/")).name or "stream"
    stem, dot, ext = base.rpartition(".")
    if dot and stem and ("." + ext.lower()) in _STREAM_SUFFIXES:
        return stem + _STREAM_SUFFIXES["." + ext.lower()]
    return base + ".out"
