"""What an archive reader writes to: the readers (zips, streams, tools) report each member to a
sink and never import the tree that consumes them (tree.Frame is the sink)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol

from papersift.archives.limits import Run
from papersift.archives.members import Member, MemberStatus


class Chunks(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


#: opens a member's bytes for streaming
Opener = Callable[[], contextlib.AbstractContextManager[Chunks]]


class MemberSink(Protocol):
    #: the budgets and scratch space shared by every level of one unpack
    run: Run
    #: what was recorded so far (readers only count them, for their messages)
    members: list[Member]

    def add_file(self, raw: str, source: Opener, *, packed_size: int | None = None,
                 declared_size: int | None = None) -> None:
        """A member with bytes: streamed to disk under the budgets (and expanded if an archive)."""

    def record(self, raw: str, status: MemberStatus, reason: str, size: int = 0) -> None:
        """A member without bytes to keep (unsafe, encrypted, skipped...), with why."""

    def skip_rest(self, names: Iterator[str], reason: str) -> None:
        """Members not read because the unpack stopped, each recorded with the reason."""
