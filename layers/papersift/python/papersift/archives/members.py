"""What unpack() returns: every member with a status, and the archive's own verdict."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from papersift.names import name_text


class MemberStatus(StrEnum):
    EXTRACTED = "extracted"  # bytes in local_path, to be processed as a dropped file
    EXPANDED = "nested_archive_expanded"  # a nested archive; its members follow under its path
    SKIPPED_LIMIT = "skipped_limit"  # a safety limit (size, ratio, count, depth, recursion, time)
    UNSAFE_PATH = "unsafe_path"  # '..' traversal, links, device files: never written
    ENCRYPTED = "encrypted"  # no supplied password opens it
    ERROR = "error"  # the archive is damaged at this member, or no tool could read it


class MemberKind(StrEnum):
    """What holds the member. Every kind is unpacked, limited, named and processed alike; the kind
    only says where it came from."""

    ARCHIVE_MEMBER = "archive_member"  # a file in a zip, tar, 7z...
    PDF_ATTACHMENT = "pdf_attachment"  # a PDF's embedded file (name tree, FileAttachment annotation, portfolio)
    EMAIL_ATTACHMENT = "email_attachment"  # a MIME part of an email that is a file


class ArchiveStatus(StrEnum):
    OK = "ok"
    EMPTY = "empty"
    ENCRYPTED = "encrypted"  # the listing itself is encrypted, or every file member is
    LIMIT_EXCEEDED = "limit_exceeded"
    CORRUPT = "corrupt"  # reading broke off; members read before that are still reported
    UNSUPPORTED = "unsupported"


@dataclass(kw_only=True)
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
    kind: MemberKind = MemberKind.ARCHIVE_MEMBER

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "status": str(self.status),
            "reason": self.reason,
            "size": self.size,
            # as text any JSON consumer takes: bytes that are not UTF-8 (a tar's raw name) as \xNN
            "original_name": None if self.original_name is None else name_text(self.original_name),
            "depth": self.depth,
            "kind": str(self.kind),
        }


@dataclass
class UnpackedArchive:
    """What ``archives.unpack`` found: every member with its status, and the archive's own status.
    The unpack step turns it into its contract (``steps.contracts.UnpackResult``)."""

    members: list[Member]
    status: ArchiveStatus
    reason: str = ""
    #: members known to exist but not listed one by one (beyond max_members)
    unlisted: int = 0

    @property
    def extracted(self) -> list[Member]:
        return [m for m in self.members if m.status is MemberStatus.EXTRACTED]
