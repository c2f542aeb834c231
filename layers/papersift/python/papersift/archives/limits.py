"""Safety limits, and the budget one unpack() tree spends them from.

Nested archives count against the same budget, so a bomb cannot hide by nesting.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from papersift.settings import Settings

CHUNK = 1024 * 1024
#: members listed (by name, without their bytes) per member extracted: beyond max_archive_members
#: every member is still listed as skipped_limit, up to this many times the limit
LISTED_PER_MEMBER_LIMIT = 10


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
    #: members listed one by one (the ones beyond max_members as skipped_limit, names only); an
    #: archive declaring more is refused unread: a listing of millions of names is a bomb of its own
    max_listed: int = LISTED_PER_MEMBER_LIMIT * 10_000
    #: what the worker that parses a document holding files (a PDF's name tree, an email) may take:
    #: the deadline and memory of any unit (page_seconds, unit_memory_mb)
    worker_seconds: float = 60.0
    worker_memory_mb: int = 2048

    @classmethod
    def from_settings(cls, settings: Settings) -> ArchiveLimits:
        return cls(
            max_depth=settings.max_archive_depth,
            max_members=settings.max_archive_members,
            max_total_bytes=settings.max_archive_total_bytes,
            max_member_bytes=settings.max_file_bytes,
            max_ratio=settings.max_compression_ratio,
            max_listed=LISTED_PER_MEMBER_LIMIT * settings.max_archive_members,
            worker_seconds=settings.page_seconds,
            worker_memory_mb=settings.unit_memory_mb,
        )


def limit_code(reason: str) -> str:
    """The error code of a limit's reason (every limit message names its setting): a ratio is a
    decompression bomb, depth or recursion a nesting bomb, the rest a plain limit."""
    if "max_compression_ratio" in reason:
        return "decompression_bomb"
    if "max_archive_depth" in reason or "recursive archive" in reason:
        return "nesting_too_deep"
    return "limit_exceeded"


class Stop(Exception):
    """The whole tree must stop (total bytes, member count, overall ratio, time)."""


class MemberTooBig(Exception):
    pass


@dataclass
class Run:
    limits: ArchiveLimits
    work_dir: Path
    passwords: tuple[str, ...]
    source_size: int
    total_bytes: int = 0
    member_count: int = 0
    #: members recorded in the listing, all levels (bounded by limits.max_listed)
    listed: int = 0
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
        raise Stop(self.stop_reason)

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
