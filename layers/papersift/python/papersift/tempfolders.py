"""The names of the temporary folders papersift makes in the system's temporary folder.

Each is ``papersift-<kind>-<pid of its maker>-<random>``, so that a run killed before it could clean
up (kill -9, an OOM kill) leaves folders the next run can tell are left over: their maker is gone.
Here, in one place, because the makers are all over the core (OCR, legacy office conversion, PDF
repair, unpacking, page workers) and the one that removes leftovers is the CLI.
"""

from __future__ import annotations

import os

#: every kind of folder papersift makes in the system's temporary folder
TEMP_KINDS = ("lane", "unit", "forkserver", "ocr", "legacy", "pdf", "unpack", "spool")


def temp_prefix(kind: str) -> str:
    """``papersift-<kind>-<this pid>-``: the ``prefix`` for ``tempfile.mkdtemp`` and friends."""
    if kind not in TEMP_KINDS:
        raise ValueError(f"unknown temporary folder kind {kind!r}")
    return f"papersift-{kind}-{os.getpid()}-"
