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

Layout: ``members`` (what a caller gets back), ``limits`` (the limits and the shared budget),
``tree`` (one archive level and its member bookkeeping), ``zips``/``streams``/``tools`` (the
engines, which report members to the ``sink`` Protocol and never import the tree that consumes
them); member names are sanitized by ``papersift.names``. Which files are archives is decided by
``papersift.sniff`` (``archive_kind``), the one detector plan and unpack share.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from papersift.archives.attachments import ATTACHMENT_KINDS, ATTACHMENTS_FOLDER
from papersift.archives.limits import CHUNK, ArchiveLimits, Run, limit_code
from papersift.archives.members import ArchiveStatus, Member, MemberKind, MemberStatus, UnpackedArchive
from papersift.archives.tools import TOOL_KINDS
from papersift.archives.tree import Frame
from papersift.errors import CorruptInputError, EncryptedInputError, LimitExceededError
from papersift.names import clean_member_name
from papersift.sniff import archive_kind

if TYPE_CHECKING:
    from papersift.sniff import FileType

__all__ = [
    "ATTACHMENTS_FOLDER",
    "ATTACHMENT_KINDS",
    "TOOL_KINDS",
    "ArchiveLimits",
    "ArchiveStatus",
    "Member",
    "MemberKind",
    "MemberStatus",
    "UnpackedArchive",
    "archive_kind",
    "clean_member_name",
    "limit_code",
    "raise_for_status",
    "unpack",
]


def unpack(
    data_path: Path,
    file_type: FileType | str,
    work_dir: Path,
    limits: ArchiveLimits,
    passwords: Sequence[str] = (),
    *,
    name: str | None = None,
    ancestors: frozenset[str] = frozenset(),
) -> UnpackedArchive:
    """Unpack ``data_path`` (typed by the caller's sniff, not by its name) into ``work_dir``.

    ``name`` is the archive's own name (default: the file name), used to name the single
    member of a bare compressed stream. A document that holds files (``ATTACHMENT_KINDS``: a PDF,
    an email) is unpacked the same way, its files under ``attachments/``. ``ancestors`` are sha256
    hex digests of archives already being expanded above this one (for a caller that unpacks
    level by level).
    """
    kind = file_type if isinstance(file_type, str) else file_type.kind
    work_dir.mkdir(parents=True, exist_ok=True)
    run = Run(limits, work_dir, tuple(passwords), data_path.stat().st_size)
    digest = _sha256_file(data_path)
    holder = ATTACHMENT_KINDS.get(kind)
    frame = Frame(run, prefix=ATTACHMENTS_FOLDER if holder else "", depth=0, ancestors=ancestors | {digest},
                  member_kind=holder or MemberKind.ARCHIVE_MEMBER)
    return frame.unpack(data_path, kind, name or data_path.name)


def raise_for_status(result: UnpackedArchive) -> None:
    """For callers that want an exception when nothing usable came out."""
    if result.extracted:
        return
    if result.status is ArchiveStatus.ENCRYPTED:
        raise EncryptedInputError(result.reason or "archive is encrypted")
    if result.status is ArchiveStatus.LIMIT_EXCEEDED:
        raise LimitExceededError(result.reason)
    if result.status is ArchiveStatus.CORRUPT:
        raise CorruptInputError(result.reason)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
