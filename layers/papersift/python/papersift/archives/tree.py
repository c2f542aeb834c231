"""One archive level: dispatch to an engine, stream members to disk, expand nested archives."""

from __future__ import annotations

import hashlib
import lzma
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from papersift.archives.attachments import ATTACHMENT_READERS
from papersift.archives.limits import CHUNK, MemberTooBig, Run, Stop
from papersift.archives.members import ArchiveStatus, Member, MemberKind, MemberStatus, UnpackedArchive
from papersift.archives.sink import Opener
from papersift.archives.streams import STREAM_OPENERS, read_stream, read_tar
from papersift.archives.tools import TOOL_KINDS, ToolError, read_with_tools
from papersift.archives.zips import PasswordError, read_zip
from papersift.names import clean_member_name, dedupe, suffix_of, visible
from papersift.sniff import archive_kind


@dataclass
class Frame:
    run: Run
    prefix: str
    depth: int
    ancestors: frozenset[str]
    members: list[Member] = field(default_factory=list)
    used_paths: set[str] = field(default_factory=set)
    unlisted: int = 0
    #: what this level's members are (a nested archive's members are archive members again)
    member_kind: MemberKind = MemberKind.ARCHIVE_MEMBER

    # -- dispatch ------------------------------------------------------------------------

    def unpack(self, path: Path, kind: str, name: str) -> UnpackedArchive:
        status, reason = ArchiveStatus.OK, ""
        try:
            self.run.check_time()
            if kind == "zip":
                status, reason = read_zip(self, path)
            elif kind == "tar":
                status, reason = read_tar(self, lambda: open(path, "rb"))  # noqa: SIM115
            elif kind in STREAM_OPENERS:
                status, reason = read_stream(self, path, kind, name)
            elif kind in TOOL_KINDS:
                status, reason = read_with_tools(self, path, kind)
            elif kind in ATTACHMENT_READERS:
                status, reason = ATTACHMENT_READERS[kind](self, path)
            else:
                status, reason = ArchiveStatus.UNSUPPORTED, f"{kind!r} is not an archive kind papersift unpacks"
        except Stop as stop:
            status, reason = ArchiveStatus.LIMIT_EXCEEDED, str(stop)
        if status is ArchiveStatus.OK:
            status, reason = self._verdict()
        return UnpackedArchive(self.members, status, reason, self.unlisted)

    def _verdict(self) -> tuple[ArchiveStatus, str]:
        own = [m for m in self.members if m.depth == self.depth]
        errors = [m for m in own if m.status is MemberStatus.ERROR]
        encrypted = [m for m in own if m.status is MemberStatus.ENCRYPTED]
        if not own:
            holds = "members" if self.member_kind is MemberKind.ARCHIVE_MEMBER else "attachments"
            return ArchiveStatus.EMPTY, f"no file {holds}"
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
        unique = dedupe(path, self.used_paths)
        if unique != path:
            note = (note + "; " if note else "") + f"duplicate name, renamed from {path!r}"
        self.used_paths.add(unique)
        changed = raw if (unique != (f"{self.prefix}/{raw}" if self.prefix else raw)) else None
        return unique, note, changed

    def _member(self, path: str, status: MemberStatus, reason: str, size: int, *, local_path: Path | None = None,
                original: str | None = None) -> Member:
        self.run.listed += 1
        return Member(path=path, status=status, reason=reason, size=size, local_path=local_path,
                      original_name=original, depth=self.depth, kind=self.member_kind)

    def record(self, raw: str, status: MemberStatus, reason: str, size: int = 0) -> None:
        clean, _ = clean_member_name(raw)
        shown = clean if clean is not None else visible(raw) or "unnamed"
        path = f"{self.prefix}/{shown}" if self.prefix else shown
        self.members.append(self._member(path, status, reason, size, original=raw if shown != raw else None))

    def skip_rest(self, names: Iterator[str], reason: str) -> None:
        """Record members not read because the tree stopped: each one listed ``skipped_limit`` with the
        reason (their names only: no bytes are read), up to the listing cap that keeps a listing of
        millions of names from being a bomb of its own (``ArchiveLimits.max_listed``)."""
        for raw in names:
            if self.run.listed >= self.run.limits.max_listed:
                self.unlisted += 1
                continue
            self.record(raw, MemberStatus.SKIPPED_LIMIT, f"not read: {reason}")

    def add_file(
        self,
        raw: str,
        source: Opener,
        *,
        packed_size: int | None = None,
        declared_size: int | None = None,
    ) -> None:
        """Stream one member to disk under the budgets, then expand it if it is an archive."""
        run, lim = self.run, self.run.limits
        try:
            run.check_time()
            run.count_member()
        except Stop as stop:
            self.skip_rest(iter([raw]), str(stop))
            raise
        path, note, original = self._name(raw)
        if path is None:
            self.record(raw, MemberStatus.UNSAFE_PATH, note, declared_size or 0)
            return
        if declared_size is not None and declared_size > lim.max_member_bytes:
            self.members.append(
                self._member(path, MemberStatus.SKIPPED_LIMIT,
                             f"declared size {declared_size} bytes is above {lim.max_member_bytes} (max_file_bytes)",
                             declared_size, original=original)
            )
            return
        target = run.new_file(suffix_of(path))
        digest = hashlib.sha256()
        written = 0
        try:
            with source() as src, open(target, "wb") as dst:
                while chunk := src.read(CHUNK):
                    written += len(chunk)
                    if written > lim.max_member_bytes:
                        raise MemberTooBig(f"larger than {lim.max_member_bytes} bytes (max_file_bytes)")
                    if (
                        packed_size is not None
                        and written > lim.ratio_floor_bytes
                        and written > lim.max_ratio * max(packed_size, 1)
                    ):
                        raise MemberTooBig(
                            f"compression ratio above {lim.max_ratio}:1 "
                            f"({packed_size} bytes packed; max_compression_ratio)"
                        )
                    run.charge(len(chunk))
                    digest.update(chunk)
                    dst.write(chunk)
        except MemberTooBig as exc:
            target.unlink(missing_ok=True)
            self.members.append(self._member(path, MemberStatus.SKIPPED_LIMIT, str(exc), written, original=original))
            return
        except Stop:
            target.unlink(missing_ok=True)
            self.members.append(
                self._member(path, MemberStatus.SKIPPED_LIMIT, run.stop_reason, written, original=original)
            )
            raise
        except PasswordError as exc:
            target.unlink(missing_ok=True)
            self.members.append(self._member(path, MemberStatus.ENCRYPTED, str(exc), 0, original=original))
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
            ToolError,
        ) as exc:
            target.unlink(missing_ok=True)
            reason = f"cannot read member: {type(exc).__name__}: {exc}"
            self.members.append(self._member(path, MemberStatus.ERROR, reason, written, original=original))
            return
        self._settle(path, target, written, digest.hexdigest(), note, original)

    def _settle(self, path: str, target: Path, size: int, digest: str, note: str, original: str | None) -> None:
        """A member is on disk: keep it, or expand it when it is itself an archive."""
        kind = archive_kind(target)
        if kind is None:
            self.members.append(self._member(path, MemberStatus.EXTRACTED, note, size, local_path=target,
                                             original=original))
            return
        lim = self.run.limits
        if digest in self.ancestors:
            self.members.append(
                self._member(path, MemberStatus.SKIPPED_LIMIT,
                             "recursive archive: same bytes as an archive it is inside of", size, local_path=target,
                             original=original)
            )
            return
        if self.depth + 1 >= lim.max_depth:
            self.members.append(
                self._member(path, MemberStatus.SKIPPED_LIMIT,
                             f"nested {kind} archive deeper than {lim.max_depth} levels (max_archive_depth); "
                             "kept unexpanded", size, local_path=target, original=original)
            )
            return
        marker = self._member(path, MemberStatus.EXPANDED, f"nested {kind} archive", size, original=original)
        self.members.append(marker)
        child = Frame(
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
            raise Stop(self.run.stop_reason)
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
