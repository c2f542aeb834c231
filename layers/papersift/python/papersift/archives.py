"""Safe unpacking of archives, with limits from Settings.

Every member of a dropped archive ends with a recorded status, so nothing dropped is
silently lost. Member bytes are streamed to flat numbered files under ``work_dir`` (never to
a path derived from the member name), so a hostile name cannot escape; names are only
sanitized into the stable relative POSIX ``path`` that callers use as an S3 key suffix.
Nested archives are expanded depth-first under one shared budget (bytes, members, ratio,
time), which is what stops 42.zip-style bombs that look harmless level by level.

Engines: zipfile (+ pyzipper for AES) for zip, tarfile for (compressed) tar, the stdlib or
``zstandard`` for bare compressed streams, and external tools (7z, then unar, then patool)
for everything else, always with a timeout, a file-size rlimit and a disk-usage watchdog.
"""

from __future__ import annotations

import bz2
import contextlib
import functools
import gzip
import hashlib
import json
import lzma
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import tarfile
import time
import unicodedata
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, Protocol
from zlib import error as zlib_error

from papersift.errors import CorruptInputError, EncryptedInputError, LimitExceededError

if TYPE_CHECKING:
    from papersift.settings import Settings
    from papersift.sniff import FileType

CHUNK = 1024 * 1024
#: kinds read by external tools (7z, unar, patool); zip, tar and bare streams are read in-process
TOOL_KINDS = frozenset(
    {"7z", "rar", "cab", "arj", "lzh", "iso", "cpio", "ar", "wim", "rpm", "deb", "xar", "dmg", "chm"}
)
_MAX_COMPONENT_BYTES = 255


class _Chunks(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


#: opens a member's bytes for streaming
_Opener = Callable[[], contextlib.AbstractContextManager[_Chunks]]


class MemberStatus(StrEnum):
    EXTRACTED = "extracted"  # bytes in local_path, to be processed as a dropped file
    EXPANDED = "nested_archive_expanded"  # a nested archive; its members follow under its path
    SKIPPED_LIMIT = "skipped_limit"  # a safety limit (size, ratio, count, depth, recursion, time)
    UNSAFE_PATH = "unsafe_path"  # '..' traversal, links, device files: never written
    ENCRYPTED = "encrypted"  # no supplied password opens it
    ERROR = "error"  # the archive is damaged at this member, or no tool could read it


class ArchiveStatus(StrEnum):
    OK = "ok"
    EMPTY = "empty"
    ENCRYPTED = "encrypted"  # the listing itself is encrypted, or every file member is
    LIMIT_EXCEEDED = "limit_exceeded"
    CORRUPT = "corrupt"  # reading broke off; members read before that are still reported
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class ArchiveLimits:
    """Safety limits shared by a whole archive tree (nested archives count against the same budget)."""

    max_depth: int = 5
    max_members: int = 10_000
    max_total_bytes: int = 4 * 1024**3
    max_member_bytes: int = 512 * 1024**2
    max_ratio: int = 200
    #: ratios are judged only beyond this many uncompressed bytes: tiny files compress oddly
    ratio_floor_bytes: int = 1024 * 1024
    #: per external tool call
    tool_timeout_seconds: float = 120.0
    #: wall clock for one whole unpack() tree
    total_timeout_seconds: float = 600.0

    @classmethod
    def from_settings(cls, settings: Settings) -> ArchiveLimits:
        return cls(
            max_depth=settings.max_archive_depth,
            max_members=settings.max_archive_members,
            max_total_bytes=settings.max_archive_total_bytes,
            max_member_bytes=settings.max_file_bytes,
            max_ratio=settings.max_compression_ratio,
        )


@dataclass
class Member:
    #: stable relative POSIX path; members of nested archives are under the nested archive's
    #: own path, e.g. "edital/anexos.zip/anexo_1.pdf"
    path: str
    status: MemberStatus
    reason: str = ""
    size: int = 0
    #: where the bytes are (inside work_dir); set for EXTRACTED, and for SKIPPED_LIMIT members
    #: kept whole (nested archives beyond the depth limit or recursive ones)
    local_path: Path | None = None
    #: the name as stored in the archive, when ``path`` differs (sanitized, renamed duplicate)
    original_name: str | None = None
    #: nesting level: 0 for members of the archive passed to unpack()
    depth: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "status": str(self.status),
            "reason": self.reason,
            "size": self.size,
            "original_name": self.original_name,
            "depth": self.depth,
        }


@dataclass
class UnpackResult:
    members: list[Member]
    status: ArchiveStatus
    reason: str = ""
    #: members known to exist but not listed one by one (beyond max_members)
    unlisted: int = 0

    @property
    def extracted(self) -> list[Member]:
        return [m for m in self.members if m.status is MemberStatus.EXTRACTED]


# --------------------------------------------------------------------------------------------
# public entry point


def unpack(
    data_path: Path,
    file_type: FileType | str,
    work_dir: Path,
    limits: ArchiveLimits,
    passwords: Sequence[str] = (),
    *,
    name: str | None = None,
    ancestors: frozenset[str] = frozenset(),
) -> UnpackResult:
    """Unpack ``data_path`` (typed by the caller's sniff, not by its name) into ``work_dir``.

    ``name`` is the archive's own name (default: the file name), used to name the single
    member of a bare compressed stream. ``ancestors`` are sha256 hex digests of archives
    already being expanded above this one (for a caller that unpacks level by level).
    """
    kind = file_type if isinstance(file_type, str) else file_type.kind
    work_dir.mkdir(parents=True, exist_ok=True)
    run = _Run(limits, work_dir, tuple(passwords), data_path.stat().st_size)
    digest = _sha256_file(data_path)
    frame = _Frame(run, prefix="", depth=0, ancestors=ancestors | {digest})
    return frame.unpack(data_path, kind, name or data_path.name)


def raise_for_status(result: UnpackResult) -> None:
    """For callers that want an exception when nothing usable came out."""
    if result.extracted:
        return
    if result.status is ArchiveStatus.ENCRYPTED:
        raise EncryptedInputError(result.reason or "archive is encrypted")
    if result.status is ArchiveStatus.LIMIT_EXCEEDED:
        raise LimitExceededError(result.reason)
    if result.status is ArchiveStatus.CORRUPT:
        raise CorruptInputError(result.reason)


# --------------------------------------------------------------------------------------------
# shared state of one unpack() tree


class _Stop(Exception):
    """The whole tree must stop (total bytes, member count, overall ratio, time)."""


class _MemberTooBig(Exception):
    pass


@dataclass
class _Run:
    limits: ArchiveLimits
    work_dir: Path
    passwords: tuple[str, ...]
    source_size: int
    total_bytes: int = 0
    member_count: int = 0
    next_index: int = 0
    started: float = field(default_factory=time.monotonic)
    stop_reason: str = ""

    def new_file(self, suffix: str) -> Path:
        self.next_index += 1
        directory = self.work_dir / "members"
        directory.mkdir(exist_ok=True)
        return directory / f"{self.next_index:06d}{suffix}"

    def tmp_dir(self) -> Path:
        self.next_index += 1
        directory = self.work_dir / "tmp" / f"{self.next_index:06d}"
        directory.mkdir(parents=True)
        return directory

    def seconds_left(self) -> float:
        return self.limits.total_timeout_seconds - (time.monotonic() - self.started)

    def check_time(self) -> None:
        if self.seconds_left() <= 0:
            self.stop(f"archive unpacking took longer than {self.limits.total_timeout_seconds:g} s")

    def stop(self, reason: str) -> None:
        self.stop_reason = self.stop_reason or reason
        raise _Stop(self.stop_reason)

    def count_member(self) -> None:
        if self.member_count >= self.limits.max_members:
            self.stop(f"more than {self.limits.max_members} members (max_archive_members)")
        self.member_count += 1

    def charge(self, nbytes: int) -> None:
        """Account written bytes against the tree's byte and overall-ratio budgets."""
        self.total_bytes += nbytes
        lim = self.limits
        if self.total_bytes > lim.max_total_bytes:
            self.stop(f"more than {lim.max_total_bytes} bytes uncompressed (max_archive_total_bytes)")
        if self.total_bytes > lim.ratio_floor_bytes and self.total_bytes > lim.max_ratio * max(self.source_size, 1):
            self.stop(
                f"overall compression ratio above {lim.max_ratio}:1 "
                f"({self.total_bytes} bytes out of {self.source_size}; max_compression_ratio)"
            )

    def budget_left(self) -> int:
        lim = self.limits
        by_ratio = max(lim.max_ratio * max(self.source_size, 1), lim.ratio_floor_bytes)
        return max(0, min(lim.max_total_bytes, by_ratio) - self.total_bytes)


# --------------------------------------------------------------------------------------------
# one archive level


@dataclass
class _Frame:
    run: _Run
    prefix: str
    depth: int
    ancestors: frozenset[str]
    members: list[Member] = field(default_factory=list)
    used_paths: set[str] = field(default_factory=set)
    unlisted: int = 0

    # -- dispatch ------------------------------------------------------------------------

    def unpack(self, path: Path, kind: str, name: str) -> UnpackResult:
        status, reason = ArchiveStatus.OK, ""
        try:
            self.run.check_time()
            if kind == "zip":
                status, reason = self._zip(path)
            elif kind == "tar":
                status, reason = self._tar_from(lambda: open(path, "rb"))  # noqa: SIM115
            elif kind in _STREAM_OPENERS:
                status, reason = self._stream(path, kind, name)
            elif kind in TOOL_KINDS:
                status, reason = self._tools(path, kind)
            else:
                status, reason = ArchiveStatus.UNSUPPORTED, f"{kind!r} is not an archive kind papersift unpacks"
        except _Stop as stop:
            status, reason = ArchiveStatus.LIMIT_EXCEEDED, str(stop)
        if status is ArchiveStatus.OK:
            status, reason = self._verdict()
        return UnpackResult(self.members, status, reason, self.unlisted)

    def _verdict(self) -> tuple[ArchiveStatus, str]:
        own = [m for m in self.members if m.depth == self.depth]
        errors = [m for m in own if m.status is MemberStatus.ERROR]
        encrypted = [m for m in own if m.status is MemberStatus.ENCRYPTED]
        if not own:
            return ArchiveStatus.EMPTY, "the archive has no file members"
        if errors:
            return ArchiveStatus.CORRUPT, f"{len(errors)} of {len(own)} members could not be read: {errors[0].reason}"
        if any(m.status is MemberStatus.SKIPPED_LIMIT for m in self.members):
            return ArchiveStatus.LIMIT_EXCEEDED, "some members were skipped by a safety limit"
        if len(encrypted) == len(own):
            return ArchiveStatus.ENCRYPTED, "no supplied password opens any member"
        if encrypted:
            return ArchiveStatus.OK, f"{len(encrypted)} encrypted members not opened"
        return ArchiveStatus.OK, ""

    # -- member bookkeeping ----------------------------------------------------------------

    def _name(self, raw: str) -> tuple[str | None, str, str | None]:
        """(path or None when unsafe, reason, original name when it changed)."""
        clean, note = clean_member_name(raw)
        if clean is None:
            return None, note, raw
        path = f"{self.prefix}/{clean}" if self.prefix else clean
        unique = _dedupe(path, self.used_paths)
        if unique != path:
            note = (note + "; " if note else "") + f"duplicate name, renamed from {path!r}"
        self.used_paths.add(unique)
        changed = raw if (unique != (f"{self.prefix}/{raw}" if self.prefix else raw)) else None
        return unique, note, changed

    def _record(self, raw: str, status: MemberStatus, reason: str, size: int = 0) -> None:
        clean, _ = clean_member_name(raw)
        shown = clean if clean is not None else _visible(raw) or "unnamed"
        path = f"{self.prefix}/{shown}" if self.prefix else shown
        self.members.append(Member(path, status, reason, size, None, raw if shown != raw else None, self.depth))

    def _skip_rest(self, names: Iterator[str], reason: str) -> None:
        """Record members not read because the tree stopped, up to the listing cap."""
        for raw in names:
            if len(self.members) >= self.run.limits.max_members:
                self.unlisted += 1
                continue
            self._record(raw, MemberStatus.SKIPPED_LIMIT, f"not read: {reason}")

    def _add_file(
        self,
        raw: str,
        source: _Opener,
        *,
        packed_size: int | None = None,
        declared_size: int | None = None,
    ) -> None:
        """Stream one member to disk under the budgets, then expand it if it is an archive."""
        run, lim = self.run, self.run.limits
        try:
            run.check_time()
            run.count_member()
        except _Stop as stop:
            self._skip_rest(iter([raw]), str(stop))
            raise
        path, note, original = self._name(raw)
        if path is None:
            self._record(raw, MemberStatus.UNSAFE_PATH, note, declared_size or 0)
            return
        if declared_size is not None and declared_size > lim.max_member_bytes:
            self.members.append(
                Member(
                    path,
                    MemberStatus.SKIPPED_LIMIT,
                    f"declared size {declared_size} bytes is above {lim.max_member_bytes} (max_file_bytes)",
                    declared_size,
                    None,
                    original,
                    self.depth,
                )
            )
            return
        target = run.new_file(_suffix_of(path))
        digest = hashlib.sha256()
        written = 0
        try:
            with source() as src, open(target, "wb") as dst:
                while chunk := src.read(CHUNK):
                    written += len(chunk)
                    if written > lim.max_member_bytes:
                        raise _MemberTooBig(f"larger than {lim.max_member_bytes} bytes (max_file_bytes)")
                    if (
                        packed_size is not None
                        and written > lim.ratio_floor_bytes
                        and written > lim.max_ratio * max(packed_size, 1)
                    ):
                        raise _MemberTooBig(
                            f"compression ratio above {lim.max_ratio}:1 "
                            f"({packed_size} bytes packed; max_compression_ratio)"
                        )
                    run.charge(len(chunk))
                    digest.update(chunk)
                    dst.write(chunk)
        except _MemberTooBig as exc:
            target.unlink(missing_ok=True)
            self.members.append(Member(path, MemberStatus.SKIPPED_LIMIT, str(exc), written, None, original, self.depth))
            return
        except _Stop:
            target.unlink(missing_ok=True)
            self.members.append(
                Member(path, MemberStatus.SKIPPED_LIMIT, run.stop_reason, written, None, original, self.depth)
            )
            raise
        except _PasswordError as exc:
            target.unlink(missing_ok=True)
            self.members.append(Member(path, MemberStatus.ENCRYPTED, str(exc), 0, None, original, self.depth))
            return
        except (
            OSError,
            EOFError,
            zipfile.BadZipFile,
            tarfile.TarError,
            lzma.LZMAError,
            ValueError,
            RuntimeError,
            NotImplementedError,
            _ToolError,
        ) as exc:
            target.unlink(missing_ok=True)
            reason = f"cannot read member: {type(exc).__name__}: {exc}"
            self.members.append(Member(path, MemberStatus.ERROR, reason, written, None, original, self.depth))
            return
        self._settle(path, target, written, digest.hexdigest(), note, original)

    def _settle(self, path: str, target: Path, size: int, digest: str, note: str, original: str | None) -> None:
        """A member is on disk: keep it, or expand it when it is itself an archive."""
        kind = archive_kind(target)
        if kind is None:
            self.members.append(Member(path, MemberStatus.EXTRACTED, note, size, target, original, self.depth))
            return
        lim = self.run.limits
        if digest in self.ancestors:
            self.members.append(
                Member(
                    path,
                    MemberStatus.SKIPPED_LIMIT,
                    "recursive archive: same bytes as an archive it is inside of",
                    size,
                    target,
                    original,
                    self.depth,
                )
            )
            return
        if self.depth + 1 >= lim.max_depth:
            self.members.append(
                Member(
                    path,
                    MemberStatus.SKIPPED_LIMIT,
                    f"nested {kind} archive deeper than {lim.max_depth} levels (max_archive_depth); kept unexpanded",
                    size,
                    target,
                    original,
                    self.depth,
                )
            )
            return
        marker = Member(path, MemberStatus.EXPANDED, f"nested {kind} archive", size, None, original, self.depth)
        self.members.append(marker)
        child = _Frame(
            self.run, prefix=path, depth=self.depth + 1, ancestors=self.ancestors | {digest}, used_paths=self.used_paths
        )
        try:
            result = child.unpack(target, kind, PurePosixPath(path).name)
        finally:
            self.members.extend(child.members)
            self.unlisted += child.unlisted
        if result.status is ArchiveStatus.LIMIT_EXCEEDED and self.run.stop_reason:
            target.unlink(missing_ok=True)
            marker.reason += f"; {result.reason}"
            raise _Stop(self.run.stop_reason)
        produced = any(m.status is MemberStatus.EXTRACTED for m in child.members)
        if result.status in (ArchiveStatus.OK, ArchiveStatus.LIMIT_EXCEEDED, ArchiveStatus.EMPTY) or produced:
            if result.status is not ArchiveStatus.OK:
                marker.reason += f"; {result.status}: {result.reason}"
            target.unlink(missing_ok=True)
            return
        # nothing came out: keep the nested archive's bytes, with the reason
        marker.status = MemberStatus.ENCRYPTED if result.status is ArchiveStatus.ENCRYPTED else MemberStatus.ERROR
        marker.reason = f"nested {kind} archive not expanded: {result.status}: {result.reason}"
        marker.local_path = target

    # -- zip ----------------------------------------------------------------------------------

    def _zip(self, path: Path) -> tuple[ArchiveStatus, str]:
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            status, reason = self._tools(path, "zip")
            if status in (ArchiveStatus.CORRUPT, ArchiveStatus.UNSUPPORTED):
                return ArchiveStatus.CORRUPT, f"not a readable zip ({exc}); {reason}"
            return status, reason
        with zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            if any(i.compress_type not in _ZIP_NATIVE_METHODS for i in infos):
                # deflate64, PPMd, ...: 7z reads them, zipfile does not
                return self._tools(path, "zip")
            aes: _AesZip | None = None
            remaining = iter(infos)
            try:
                for info in remaining:
                    raw = _zip_name(info)
                    if _zip_is_link(info):
                        self.run.count_member()
                        self._record(raw, MemberStatus.UNSAFE_PATH, "symbolic link: not followed")
                        continue
                    if info.compress_type == _ZIP_AES:
                        aes = aes or _AesZip(path)
                        opener = aes.opener(info.filename, self.run.passwords)
                    else:
                        opener = _zip_opener(zf, info, self.run.passwords)
                    self._add_file(raw, opener, packed_size=info.compress_size, declared_size=info.file_size)
            except _Stop as stop:
                self._skip_rest((_zip_name(i) for i in remaining), str(stop))
                raise
            finally:
                if aes is not None:
                    aes.close()
        return ArchiveStatus.OK, ""

    # -- tar ----------------------------------------------------------------------------------

    def _tar_from(self, open_stream: Callable[[], Any]) -> tuple[ArchiveStatus, str]:
        """Stream mode ('r|'): one forward pass, no seeking back through a compressed stream."""
        with open_stream() as raw_stream:
            try:
                tf = tarfile.open(fileobj=raw_stream, mode="r|", errors="surrogateescape")  # noqa: SIM115
            except (tarfile.TarError, OSError, EOFError, lzma.LZMAError) as exc:
                return ArchiveStatus.CORRUPT, f"not a readable tar: {exc}"
            try:
                while True:
                    self.run.check_time()
                    try:
                        info = tf.next()
                    except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, zlib_error) as exc:
                        return ArchiveStatus.CORRUPT, f"tar stream broke off after {len(self.members)} members: {exc}"
                    if info is None:
                        break
                    name = _tar_name(info.name)
                    if info.isdir():
                        continue
                    if info.issym() or info.islnk():
                        self.run.count_member()
                        kind = "symbolic" if info.issym() else "hard"
                        self._record(name, MemberStatus.UNSAFE_PATH, f"{kind} link to {info.linkname!r}: not followed")
                        continue
                    if not info.isfile():
                        self.run.count_member()
                        self._record(
                            name, MemberStatus.UNSAFE_PATH, "device, fifo or other special file: not extracted"
                        )
                        continue
                    self._add_file(name, functools.partial(_tar_member, tf, info), declared_size=info.size)
            finally:
                with contextlib.suppress(Exception):
                    tf.close()
        return ArchiveStatus.OK, ""

    # -- bare compressed streams ---------------------------------------------------------------

    def _stream(self, path: Path, kind: str, name: str) -> tuple[ArchiveStatus, str]:
        opener = _STREAM_OPENERS[kind]
        try:
            with opener(path) as probe:
                head = _read_up_to(probe, 512)
        except (OSError, EOFError, lzma.LZMAError, ValueError, _ToolError, zlib_error) as exc:
            if kind in ("gzip", "bzip2", "xz", "lzma", "zstd"):
                return self._tools(path, kind)
            return ArchiveStatus.CORRUPT, f"cannot decompress {kind}: {exc}"
        if _looks_like_tar(head):
            return self._tar_from(lambda: opener(path))
        self._add_file(_stream_member_name(name, kind), lambda: opener(path), packed_size=path.stat().st_size)
        return ArchiveStatus.OK, ""

    # -- external tools --------------------------------------------------------------------------

    def _tools(self, path: Path, kind: str) -> tuple[ArchiveStatus, str]:
        engines = ("unar", "7z") if kind in ("rar", "lzh") else ("7z", "unar")
        reasons: list[str] = []
        for engine in engines:
            listing = _list_7z if engine == "7z" else _list_lsar
            try:
                entries, password = listing(path, self.run)
            except _EncryptedListing as exc:
                return ArchiveStatus.ENCRYPTED, str(exc)
            except _ToolError as exc:
                reasons.append(f"{engine}: {exc}")
                continue
            return self._extract_listed(path, engine, entries, password)
        try:
            return self._patool(path)
        except _ToolError as exc:
            reasons.append(f"patool: {exc}")
        return ArchiveStatus.CORRUPT, "; ".join(reasons)

    def _extract_listed(
        self, path: Path, engine: str, entries: list[_Entry], password: str | None
    ) -> tuple[ArchiveStatus, str]:
        """Check the listing against the limits, extract what passes, re-check on disk."""
        run, lim = self.run, self.run.limits
        wanted: list[_Entry] = []
        planned = 0
        stopped = ""
        for entry in entries:
            if entry.is_dir:
                continue
            if not stopped and run.member_count + len(wanted) >= lim.max_members:
                stopped = f"more than {lim.max_members} members (max_archive_members)"
            if stopped:
                run.stop_reason = run.stop_reason or stopped
                self._skip_rest(iter([entry.name]), stopped)
                continue
            verdict = _judge_listed(entry, password, lim)
            if verdict is not None:
                run.member_count += 1
                self._record(entry.name, verdict[0], verdict[1], entry.size)
                continue
            if planned + entry.size > run.budget_left():
                stopped = (
                    f"the listing declares more than the {run.budget_left()} bytes left of the budget "
                    "(max_archive_total_bytes / max_compression_ratio)"
                )
                run.stop_reason = run.stop_reason or stopped
                self._skip_rest(iter([entry.name]), stopped)
                continue
            planned += entry.size
            wanted.append(entry)
        if wanted:
            out = run.tmp_dir()
            try:
                partial = len(wanted) != sum(1 for e in entries if not e.is_dir)
                error = _run_extract(path, engine, out, wanted, partial, password, run)
                self._collect(out, wanted, error)
            finally:
                shutil.rmtree(out, ignore_errors=True)
        if stopped:
            raise _Stop(stopped)
        return ArchiveStatus.OK, ""

    def _collect(self, out: Path, wanted: list[_Entry], error: str) -> None:
        """Walk what the tool wrote; never follow links; match files back to the listing."""
        found: dict[str, Path] = {}
        for root, dirs, files in os.walk(out, followlinks=False):
            for fname in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
                full = Path(root) / fname
                found[full.relative_to(out).as_posix()] = full
        for entry in wanted:
            key = _tool_key(entry.name)
            if key not in found:
                status = MemberStatus.ENCRYPTED if entry.encrypted else MemberStatus.ERROR
                self.run.count_member()
                self._record(entry.name, status, f"not extracted by the tool: {error or 'no output'}", entry.size)
                continue
            self._take(entry.name, found.pop(key))
        for rel, full in sorted(found.items()):  # written but not in the listing (renamed by the tool)
            self._take(rel, full)

    def _take(self, raw: str, full: Path) -> None:
        st = full.lstat()
        if not stat.S_ISREG(st.st_mode):
            self.run.count_member()
            self._record(raw, MemberStatus.UNSAFE_PATH, "link or special file written by the tool: not followed")
            return
        self._add_file(raw, lambda: open(full, "rb"), declared_size=st.st_size)  # noqa: SIM115

    def _patool(self, path: Path) -> tuple[ArchiveStatus, str]:
        """Last resort without a listing: extract, then judge every file on disk."""
        out = self.run.tmp_dir()
        try:
            script = (
                "import sys, patoolib; patoolib.extract_archive(sys.argv[1], outdir=sys.argv[2], "
                "interactive=False, verbosity=-1, password=sys.argv[3] or None)"
            )
            password = self.run.passwords[0] if self.run.passwords else ""
            rc, _, err = _run_tool([sys.executable, "-c", script, str(path), str(out), password], out, self.run)
            files = [p for p in out.rglob("*") if p.is_file() or p.is_symlink()]
            if rc != 0 and not files:
                raise _ToolError(_last_line(err) or f"exit code {rc}")
            for full in sorted(files):
                self._take(full.relative_to(out).as_posix(), full)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        return ArchiveStatus.OK, ""


def _judge_listed(entry: _Entry, password: str | None, lim: ArchiveLimits) -> tuple[MemberStatus, str] | None:
    """Why a listed member must not be extracted, or None when it may be."""
    if entry.is_link:
        return MemberStatus.UNSAFE_PATH, "link: not followed"
    clean, note = clean_member_name(entry.name)
    if clean is None:
        return MemberStatus.UNSAFE_PATH, note
    if entry.size > lim.max_member_bytes:
        return (
            MemberStatus.SKIPPED_LIMIT,
            f"declared size {entry.size} bytes is above {lim.max_member_bytes} (max_file_bytes)",
        )
    if entry.packed and entry.size > lim.ratio_floor_bytes and entry.size > lim.max_ratio * entry.packed:
        return MemberStatus.SKIPPED_LIMIT, (
            f"compression ratio above {lim.max_ratio}:1 ({entry.size} bytes from {entry.packed}; max_compression_ratio)"
        )
    if entry.encrypted and password is None:
        return MemberStatus.ENCRYPTED, "encrypted; no supplied password opens it"
    return None


# --------------------------------------------------------------------------------------------
# names


def clean_member_name(raw: str) -> tuple[str | None, str]:
    """A safe relative POSIX path for ``raw``, or (None, reason) when it tries to traverse.

    Absolute paths and drive letters are made relative (common in old tars and Windows
    zips); '..' components are refused. Control characters become '_', components are
    capped at 255 UTF-8 bytes keeping the extension, an empty name becomes 'unnamed'.
    """
    notes: list[str] = []
    text = _fix_surrogates(raw).replace("\\", "/")
    text = unicodedata.normalize("NFC", text)
    if re.match(r"^[A-Za-z]:", text):
        text = text[2:]
        notes.append("drive letter removed")
    if text.startswith("/"):
        notes.append("absolute path made relative")
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            return None, "path traversal ('..'): not extracted"
        cleaned = "".join("_" if (unicodedata.category(c) == "Cc" or c == "\x7f") else c for c in part)
        if cleaned != part:
            notes.append("control characters replaced")
        capped = _cap_component(cleaned)
        if capped != cleaned:
            notes.append("long name shortened")
        parts.append(capped)
    if not parts:
        notes.append("empty name")
        parts = ["unnamed"]
    return "/".join(parts), "; ".join(dict.fromkeys(notes))


def _cap_component(part: str) -> str:
    if len(part.encode("utf-8")) <= _MAX_COMPONENT_BYTES:
        return part
    stem, dot, ext = part.rpartition(".")
    if not dot or len(ext.encode()) > 16:
        stem, ext = part, ""
    tag = "~" + hashlib.sha1(part.encode("utf-8")).hexdigest()[:8]
    tail = ("." + ext) if ext else ""
    room = _MAX_COMPONENT_BYTES - len(tag.encode()) - len(tail.encode())
    short = stem.encode("utf-8")[:room].decode("utf-8", "ignore")
    return short + tag + tail


def _dedupe(path: str, used: set[str]) -> str:
    if path not in used:
        return path
    parent, _, leaf = path.rpartition("/")
    stem, dot, ext = leaf.rpartition(".")
    if not dot or not stem:
        stem, dot, ext = leaf, "", ""
    n = 2
    while True:
        candidate = f"{stem} ({n}){dot}{ext}"
        full = f"{parent}/{candidate}" if parent else candidate
        if full not in used:
            return full
        n += 1


def _fix_surrogates(text: str) -> str:
    """Names decoded with surrogateescape: try UTF-8, then cp1252, never fail."""
    if not any("\udc80" <= c <= "\udcff" for c in text):
        return text
    raw = text.encode("utf-8", "surrogateescape")
    for codec in ("utf-8", "cp1252"):
        with contextlib.suppress(UnicodeDecodeError):
            return raw.decode(codec)
    return raw.decode("latin-1")


def _visible(raw: str) -> str:
    return "".join(c if c.isprintable() else "_" for c in _fix_surrogates(raw))


def _suffix_of(path: str) -> str:
    suffix = PurePosixPath(path).suffix
    return suffix if re.fullmatch(r"\.[A-Za-z0-9]{1,10}", suffix) else ""


def _tar_name(name: str) -> str:
    return _fix_surrogates(name)


def _tool_key(name: str) -> str:
    """How 7z/unar lay out a listed name on disk (relative, no leading slash)."""
    return "/".join(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))


# --------------------------------------------------------------------------------------------
# zip details

_ZIP_AES = 99
_ZIP_NATIVE_METHODS = frozenset(
    {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, _ZIP_AES}
)


class _PasswordError(Exception):
    pass


def _zip_name(info: zipfile.ZipInfo) -> str:
    """UTF-8 first for names without flag 0x800: many tools write UTF-8 without setting it."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        raw = info.orig_filename.encode("cp437")
    except UnicodeEncodeError:
        return info.filename
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return info.orig_filename


def _zip_is_link(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


def _password_bytes(passwords: Sequence[str]) -> list[bytes]:
    out: list[bytes] = []
    for pw in passwords:
        for codec in ("utf-8", "latin-1", "cp437"):
            with contextlib.suppress(UnicodeEncodeError):
                candidate = pw.encode(codec)
                if candidate not in out:
                    out.append(candidate)
    return out


def _zip_opener(zf: zipfile.ZipFile, info: zipfile.ZipInfo, passwords: Sequence[str]) -> Callable[[], IO[bytes]]:
    if not info.flag_bits & 0x1:
        return lambda: zf.open(info)
    candidates = _password_bytes(passwords)

    def open_encrypted() -> IO[bytes]:
        if not candidates:
            raise _PasswordError("encrypted; no password supplied")
        for pw in candidates:
            # a wrong ZipCrypto password passes the 1-byte check 1 time in 256; a full read
            # with CRC proves it, and costs no more than the budget allows anyway
            try:
                with zf.open(info, pwd=pw) as probe:
                    while probe.read(CHUNK):
                        pass
            except (RuntimeError, zipfile.BadZipFile):
                continue
            return zf.open(info, pwd=pw)
        raise _PasswordError("encrypted; no supplied password opens it")

    return open_encrypted


class _AesZip:
    """WinZip AES members, read through pyzipper (zipfile cannot decrypt them)."""

    def __init__(self, path: Path) -> None:
        try:
            import pyzipper
        except ImportError as exc:  # pragma: no cover - pyzipper is a dependency
            raise _ToolError("AES-encrypted zip needs pyzipper") from exc
        self.zf = pyzipper.AESZipFile(path)

    def opener(self, name: str, passwords: Sequence[str]) -> Callable[[], IO[bytes]]:
        candidates = _password_bytes(passwords)

        def open_aes() -> IO[bytes]:
            if not candidates:
                raise _PasswordError("AES-encrypted; no password supplied")
            for pw in candidates:
                try:
                    stream: IO[bytes] = self.zf.open(name, pwd=pw)
                except RuntimeError:
                    continue
                return stream
            raise _PasswordError("AES-encrypted; no supplied password opens it")

        return open_aes

    def close(self) -> None:
        self.zf.close()


# --------------------------------------------------------------------------------------------
# tar and stream details


@contextlib.contextmanager
def _tar_member(tf: tarfile.TarFile, info: tarfile.TarInfo) -> Iterator[_Chunks]:
    stream = tf.extractfile(info)
    if stream is None:
        raise tarfile.TarError("member has no data")
    yield stream


def _looks_like_tar(head: bytes) -> bool:
    if len(head) < 512:
        return False
    if head[257:262] == b"ustar":
        return True
    try:
        tarfile.TarInfo.frombuf(head, "utf-8", "surrogateescape")
    except tarfile.TarError:
        return False
    return True


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
            raise _ToolError("decompressor timed out")
        assert self.proc.stdout is not None
        data = self.proc.stdout.read(n)
        if not data:
            rc = self.proc.wait(timeout=max(1.0, self.deadline - time.monotonic()))
            if rc != 0:
                err = self.proc.stderr.read().decode("utf-8", "replace").strip() if self.proc.stderr else ""
                raise _ToolError(f"decompressor failed: {err or rc}")
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
_STREAM_OPENERS: dict[str, Callable[[Path], Any]] = {
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


# --------------------------------------------------------------------------------------------
# external tools


class _ToolError(Exception):
    pass


class _EncryptedListing(Exception):
    pass


@dataclass
class _Entry:
    name: str
    size: int
    packed: int
    is_dir: bool
    is_link: bool
    encrypted: bool
    index: int


def _run_tool(cmd: list[str], out: Path | None, run: _Run) -> tuple[int, str, str]:
    """Run with a timeout, a per-file size rlimit and a watchdog on disk usage under ``out``."""
    limit = run.limits.max_member_bytes + 1
    budget = run.budget_left()
    timeout = max(1.0, min(run.limits.tool_timeout_seconds, run.seconds_left()))

    def confine() -> None:  # runs in the child: a file beyond the limit gets SIGXFSZ
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=confine,
        start_new_session=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )
    deadline = time.monotonic() + timeout
    killed = ""
    stdout_chunks: list[bytes] = []
    try:
        while True:
            try:
                out_b, err_b = proc.communicate(timeout=0.25)
                stdout_chunks.append(out_b)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() > deadline:
                killed = f"timed out after {timeout:g} s"
            elif out is not None and _disk_usage(out) > budget:
                killed = f"output grew beyond the {budget} bytes left of the budget"
            if killed:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, 9)
                out_b, err_b = proc.communicate()
                break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = err_b.decode("utf-8", "replace").strip()
    if killed:
        raise _ToolError(f"{Path(cmd[0]).name} {killed}")
    return proc.returncode, b"".join(stdout_chunks).decode("utf-8", "replace"), err


def _disk_usage(root: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(root):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, f)).st_size
    return total


def _list_7z(path: Path, run: _Run) -> tuple[list[_Entry], str | None]:
    """List with 7z -slt; returns entries and the password that opens them (None: none needed/found)."""
    tried: list[str | None] = [None, *run.passwords]
    for pw in tried:
        rc, out, err = _run_tool(["7z", "l", "-slt", "-bd", "-sccUTF-8", f"-p{pw or ''}", "--", str(path)], None, run)
        if "Cannot open encrypted archive" in err or "Wrong password" in err:
            continue
        if rc != 0 and "----------" not in out:
            raise _ToolError(_last_line(err) or f"7z exit code {rc}")
        entries = _parse_7z_slt(out)
        if any(e.encrypted for e in entries):
            return entries, _find_password_7z(path, run)
        return entries, pw
    if run.passwords:
        raise _EncryptedListing("the file list is encrypted and no supplied password opens it")
    raise _EncryptedListing("the file list is encrypted and no password was supplied")


def _find_password_7z(path: Path, run: _Run) -> str | None:
    for pw in run.passwords:
        rc, _, _ = _run_tool(["7z", "t", "-bd", f"-p{pw}", "--", str(path)], None, run)
        if rc == 0:
            return pw
    return None


def _parse_7z_slt(out: str) -> list[_Entry]:
    _, _, body = out.partition("\n----------\n")
    entries: list[_Entry] = []
    for index, block in enumerate(b for b in body.split("\n\n") if b.strip()):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(" = ")
            if sep:
                fields[key.strip()] = value
        if "Path" not in fields:
            continue
        attrs = fields.get("Attributes", "")
        unix = attrs.split(" ")[-1] if " " in attrs else ""
        entries.append(
            _Entry(
                name=fields["Path"],
                size=_int(fields.get("Size")),
                packed=_int(fields.get("Packed Size")),
                is_dir=fields.get("Folder") == "+" or attrs.startswith("D") or unix.startswith("d"),
                is_link=bool(fields.get("Symbolic Link")) or bool(fields.get("Hard Link")) or unix.startswith("l"),
                encrypted=fields.get("Encrypted") == "+",
                index=index,
            )
        )
    return entries


def _list_lsar(path: Path, run: _Run) -> tuple[list[_Entry], str | None]:
    tried: list[str | None] = [None, *run.passwords]
    for pw in tried:
        cmd = ["lsar", "-j", "-nr", *(["-p", pw] if pw else []), "--", str(path)]
        rc, out, err = _run_tool(cmd, None, run)
        try:
            doc = json.loads(out)
        except json.JSONDecodeError as exc:
            if "password" in (out + err).lower() or "encrypt" in (out + err).lower():
                continue
            raise _ToolError(_last_line(err) or _last_line(out) or f"lsar exit code {rc}") from exc
        if doc.get("lsarError") and not doc.get("lsarContents"):
            raise _ToolError(f"lsar error {doc.get('lsarError')}")
        entries = [
            _Entry(
                name=str(item.get("XADFileName", "")),
                size=_int(item.get("XADFileSize")),
                packed=_int(item.get("XADCompressedSize")),
                is_dir=bool(item.get("XADIsDirectory")),
                is_link=bool(item.get("XADIsLink")) or bool(item.get("XADIsHardLink")),
                encrypted=bool(item.get("XADIsEncrypted")),
                index=int(item.get("XADIndex", i)),
            )
            for i, item in enumerate(doc.get("lsarContents", []))
        ]
        if any(e.encrypted for e in entries):
            return entries, _find_password_lsar(path, run)
        return entries, pw
    raise _EncryptedListing("the file list is encrypted and no supplied password opens it")


def _find_password_lsar(path: Path, run: _Run) -> str | None:
    for pw in run.passwords:
        rc, out, _ = _run_tool(["lsar", "-t", "-nr", "-p", pw, "--", str(path)], None, run)
        if rc == 0 and "wrong password" not in out.lower():
            return pw
    return None


def _run_extract(
    path: Path, engine: str, out: Path, wanted: list[_Entry], partial: bool, password: str | None, run: _Run
) -> str:
    """Extract ``wanted`` into ``out``; returns the tool's error text ('' when clean)."""
    try:
        if engine == "7z":
            cmd = ["7z", "x", "-y", "-bd", "-spd", f"-p{password or ''}", f"-o{out}"]
            if partial:
                listfile = out.parent / (out.name + ".list")
                listfile.write_text("\n".join(e.name for e in wanted) + "\n", encoding="utf-8")
                cmd += ["-scsUTF-8", f"-i@{listfile}"]
            cmd += ["--", str(path)]
        else:
            cmd = ["unar", "-q", "-nr", "-f", "-D", "-k", "skip", "-o", str(out)]
            if password:
                cmd += ["-p", password]
            if partial:  # the arguments after the archive are lsar indexes
                cmd += ["-i", "--", str(path), *(str(e.index) for e in wanted)]
            else:
                cmd += ["--", str(path)]
        rc, stdout, err = _run_tool(cmd, out, run)
    except _ToolError as exc:
        return str(exc)
    return "" if rc == 0 else (_last_line(err) or _last_line(stdout) or f"exit code {rc}")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _int(value: object) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return 0


# --------------------------------------------------------------------------------------------
# archive detection for members


def archive_kind(path: Path) -> str | None:
    """The archive kind of a file on disk by magic bytes, or None.

    Zip-based documents (OOXML, ODF, EPUB) are documents, not archives.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(0x8006)
    except OSError:
        return None
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            if kind == "zip":
                return None if _is_document_zip(path) else "zip"
            return kind
    if len(head) > 7 and head[2:5] == b"-lh" and head[6:7] == b"-":
        return "lzh"
    if head[0x8001:0x8006] == b"CD001":
        return "iso"
    if _looks_like_tar(head[:512]):
        return "tar"
    return None


_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"Rar!\x1a\x07", "rar"),
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"LZIP", "lzip"),
    (b"\x1f\x9d", "compress"),
    (b"MSCF", "cab"),
    (b"\x60\xea", "arj"),
    (b"!<arch>\n", "ar"),
    (b"070701", "cpio"),
    (b"070702", "cpio"),
    (b"070707", "cpio"),
    (b"\xc7\x71", "cpio"),
    (b"\x71\xc7", "cpio"),
)


def _is_document_zip(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist()[:2000])
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
    return bool(names & {"[Content_Types].xml", "mimetype", "META-INF/manifest.xml", "AndroidManifest.xml"})


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
