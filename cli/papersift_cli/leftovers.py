"""What a run leaves in the temporary folder when it cannot clean up itself (kill -9, an OOM kill,
a power cut), and how the next run recognises and removes it.

Every temporary folder papersift makes is named after the process that made it and removes it:
``papersift-<kind>-<pid>-<random>`` (papersift.tempfolders names every kind), as those it makes
in the output folder are: the extract's work folder (``.papersift-work-<pid>-<random>``) and a
document's results while they are written (``.papersift-tmp-<pid>-<random>``, renamed into place when
whole), each with a marker file inside, since a result folder may carry any input's name. A folder
whose owner is gone is left over. Gone
means no process has that pid, or the one that has it started after the folder last changed (the
pid was reused: its owner had started before it made the folder). A folder of another user is never
touched, nor one of a live owner: two runs side by side keep each other's.

Why not "older than N minutes": a page may be read for many minutes, and the next run, started
right after a killed one, should find the killed one's folders gone, not wait.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from papersift.tempfolders import TEMP_KINDS

_TEMP_FOLDER = re.compile(r"papersift-(?:" + "|".join(TEMP_KINDS) + r")-([0-9]+)-[a-z0-9_]{8}")
#: a process's start time is known to the clock tick; a folder's change time may round the other way
_START_SLACK_SECONDS = 1.0


def owner_gone(pid: int, changed: float) -> bool:
    """No process ``pid`` made a folder last changed at ``changed`` (epoch seconds) and still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: alive
        pass
    if process_state(pid) in ("Z", "X"):  # dead, not yet reaped: where pid 1 reaps no orphans (containers)
        return True
    started = process_start_time(pid)
    return started is not None and started > changed + _START_SLACK_SECONDS


def process_state(pid: int) -> str | None:
    """The state letter of ``pid`` (R, S, D, Z for a zombie, ...), from /proc; None where there is none."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def process_start_time(pid: int) -> float | None:
    """When ``pid`` started (epoch seconds), from /proc; None where there is no /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
    except (OSError, IndexError, StopIteration, ValueError):
        return None
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 (starttime), after pid and comm


def remove_stale(folder: Path | None = None) -> list[Path]:
    """Remove the left-over ``papersift-<kind>-<pid>-*`` folders of this user in ``folder`` (the
    system's temporary folder by default); return those removed."""
    removed = []
    for path in Path(folder or tempfile.gettempdir()).glob("papersift-*"):
        match = _TEMP_FOLDER.fullmatch(path.name)
        if match is None:
            continue
        try:
            info = path.lstat()
        except OSError:
            continue
        if not path.is_dir() or path.is_symlink() or info.st_uid != os.getuid():
            continue
        if owner_gone(int(match.group(1)), info.st_mtime):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def remove_own(folder: Path | None = None, killed: Sequence[int] = ()) -> None:
    """Remove this process's ``papersift-<kind>-<pid>-*`` folders, and those of the descendants it
    ``killed`` (a page worker's OCR folder: SIGKILL leaves its TemporaryDirectory behind): at the
    end of a run that was stopped while threads still held page workers (`papersift run`), which
    will not unwind."""
    owners = {str(os.getpid()), *map(str, killed)}
    for path in Path(folder or tempfile.gettempdir()).glob("papersift-*"):
        match = _TEMP_FOLDER.fullmatch(path.name)
        if match is not None and match.group(1) in owners:
            shutil.rmtree(path, ignore_errors=True)


def kill_descendants() -> list[int]:
    """SIGKILL every process descended from this one (the fork server, its page workers, the programs
    they run): a stopped `papersift run` leaves none reading on for nobody. From /proc; nothing
    where there is none. Returns their pids."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return found


# -- folders papersift keeps inside the output folder -------------------------------------------

#: the kinds of folder papersift makes inside an output folder: the extract's work folder, and a
#: document's results while they are written (renamed into place when complete)
OUTPUT_KINDS = ("work", "tmp")
_OUTPUT_FOLDER = re.compile(r"\.papersift-(" + "|".join(OUTPUT_KINDS) + r")-([0-9]+)-[a-z0-9_]{8}")


def output_marker(kind: str) -> str:
    """The file inside that makes a folder of the pattern one of ours: a result folder may carry
    any input's name (``.papersift-work-1-abcdefgh`` too), never this file (result names are fixed)."""
    return f".papersift-{kind}-folder"


def output_name(kind: str) -> str:
    """``.papersift-<kind>-<this pid>-<8 random hex digits>``: a new temporary name in an output
    folder (made by hand, not by tempfile, whose files and folders are private: a result is made
    with the modes the user's umask gives)."""
    assert kind in OUTPUT_KINDS, kind
    return f".papersift-{kind}-{os.getpid()}-{secrets.token_hex(4)}"


def is_output_folder(path: Path) -> bool:
    """Whether ``path`` is one of papersift's own folders in an output folder (a work folder, a
    result still being written or left by a killed run), not a result: its exact name and marker."""
    match = _OUTPUT_FOLDER.fullmatch(path.name)
    return match is not None and (path / output_marker(match.group(1))).is_file()


def make_output_folder(parent: Path, kind: str) -> Path:
    """``parent/.papersift-<kind>-<this pid>-<random>``, with its marker inside."""
    while True:
        folder = parent / output_name(kind)
        try:
            folder.mkdir()
            break
        except FileExistsError:
            continue
    try:
        (folder / output_marker(kind)).write_text(f"papersift {kind} folder of pid {os.getpid()}\n", encoding="utf-8")
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def remove_stale_output(parent: Path) -> list[Path]:
    """Remove the output folder's left-over ``.papersift-<kind>-<pid>-*`` folders (exact pattern,
    marker inside, owner gone) and ``--flat`` temporary files (exact pattern, owner gone: a flat
    result's name always ends in .txt, .status or .report.json); return those removed."""
    removed = []
    for path in parent.glob(".papersift-*"):
        match = _OUTPUT_FOLDER.fullmatch(path.name)
        if match is None:
            continue
        try:
            info = path.lstat()
        except OSError:
            continue
        ours = (path / output_marker(match.group(1))).is_file() if stat.S_ISDIR(info.st_mode) \
            else stat.S_ISREG(info.st_mode) and match.group(1) == "tmp"
        if ours and info.st_uid == os.getuid() and owner_gone(int(match.group(2)), info.st_mtime):
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
    return removed
