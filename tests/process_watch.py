"""Watching the processes a command started, for the fault tests of `extract` and `run`: waiting
for a condition, and finding every process that still carries the run's environment marker."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def wait_for(condition: Callable[[], object], seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def processes_with(marker: str, *, zombies: bool = True) -> list[int]:
    """The processes whose environment carries ``marker`` (every descendant of the run inherits it);
    ``zombies=False`` leaves out the ones that have ended and wait only to be reaped."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() not in (entry / "environ").read_bytes():
                    continue
                if not zombies and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            except OSError:
                continue
            found.append(int(entry.name))
    return found
