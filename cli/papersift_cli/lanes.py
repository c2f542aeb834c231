"""`papersift extract`'s inputs read side by side in lanes: processes forked once from the command,
each reading one input at a time as the command hands them out.

Why processes and not threads: every input's pages are read in worker processes
(papersift.isolation), two or more an input. A process that runs one thread forks them in a few
milliseconds, with what it has loaded shared; a process with threads must not fork (a lock held by
another thread stays held in the child) and asks a fork server instead (~15-25 ms a worker, the
core imported once more). On the ten bench-pdfs, lanes cost 0.4 s of CPU less than threads did.

The largest inputs are handed out first, so the longest one does not start last. A lane that dies
(killed from outside: nothing it runs itself can crash it, the readers run in its workers) costs
only the input it held, which is reported as broken, and a new lane takes the rest.

Stopping: each lane leads a process group of its own, which its workers and the programs they run
(Tesseract, pdftotext) join, and keeps its temporary files in a folder of its own. When the run
stops early (Ctrl-C, which only the command receives, or an error), the command kills each lane's
group at once and removes its folder: nothing is left running, nothing has to unwind, and no lane
prints a word on the way out.

When the command itself is killed (kill -9, the OOM killer), the lanes and their workers die with it
(``die_with_parent``): nothing reads on for nobody, holding the caller's stdout open (`papersift
extract ... | tee log` would never end). A lane holds no other lane's pipe, nor the command's end of
its own: otherwise a lane never saw its pipe close, and one lane's pipe kept another waiting. The
lanes' folders, named after the command's pid, are then removed by the next run
(papersift_cli.leftovers).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from papersift.isolation import STOP_SIGNALS, die_with_parent
from papersift.tempfolders import temp_prefix

ResultT = TypeVar("ResultT")

_OK, _RAISED = "ok", "raised"


@dataclass
class _Lane:
    process: Any
    scratch: str  # the lane's temporary folder (TMPDIR), its workers' under it
    holding: int | None = None  # the input it reads


#: how often ``tick`` is called while every lane is busy
TICK_SECONDS = 0.5


def run_in_lanes(lanes: int, order: Sequence[int], work: Callable[[int], ResultT],
                 done: Callable[[int, ResultT], None], lost: Callable[[int, str], ResultT], *,
                 started: Callable[[int], None] | None = None, tick: Callable[[], None] | None = None) -> None:
    """``done(i, work(i))`` for each ``i`` of ``order``, ``lanes`` at a time, each ``work(i)`` in a
    lane; ``lost(i, why)`` stands in for the result when the lane died holding ``i``. An exception
    ``work`` raises is raised here. Call it while this process runs one thread: lanes are forked.
    For progress: ``started(i)`` when ``i`` is handed to a lane, ``tick()`` every ``TICK_SECONDS``
    while lanes are busy (both in this process, so a lane never writes to the terminal)."""
    context = multiprocessing.get_context("fork")
    pending = list(order)
    running: dict[Connection, _Lane] = {}  # by the command's end of its pipe

    def hand_out(end: Connection) -> None:
        lane = running[end]
        lane.holding = pending.pop(0) if pending else None
        end.send(lane.holding)
        if lane.holding is not None and started is not None:
            started(lane.holding)
        if lane.holding is None:  # nothing left: the lane ends
            lane.process.join()
            _remove(end, lane)
            del running[end]

    def start() -> None:
        end, lane_end = context.Pipe()
        scratch = tempfile.mkdtemp(prefix=temp_prefix("lane"))
        # the lane closes its copies of the command's ends, its own and the other lanes'
        commands_ends = [end.fileno(), *(other.fileno() for other in running)]
        # not a daemon: a daemon process may not start the workers that read the pages
        process = context.Process(target=_lane, args=(lane_end, work, scratch, os.getpid(), commands_ends),
                                  name="papersift-lane")
        process.start()
        assert process.pid is not None
        _lead_own_group(process.pid)  # here too: the lane may not have run yet when it must be stopped
        lane_end.close()
        running[end] = _Lane(process, scratch)
        hand_out(end)

    try:
        for _ in range(min(lanes, len(pending))):
            start()
        while running:
            ready = wait(list(running), timeout=TICK_SECONDS if tick is not None else None)
            if tick is not None:
                tick()
            for end in ready:
                assert isinstance(end, Connection)
                lane = running[end]
                assert lane.holding is not None
                try:
                    kind, value = end.recv()
                except (EOFError, OSError):
                    _stop(lane)
                    _remove(end, lane)
                    del running[end]
                    done(lane.holding, lost(lane.holding, "the process reading it ended without a result (exit "
                                                          f"status {lane.process.exitcode})"))
                    if pending:
                        start()
                    continue
                if kind == _RAISED:
                    raise RuntimeError(value)
                done(lane.holding, value)
                hand_out(end)
    finally:
        for end, lane in running.items():  # only when something went wrong
            _stop(lane)
            _remove(end, lane)


def _lead_own_group(pid: int) -> None:
    with contextlib.suppress(PermissionError, ProcessLookupError):  # done by the lane already, or it is gone
        os.setpgid(pid, pid)


def _stop(lane: _Lane) -> None:
    """The lane, its workers and whatever they run, at once."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(lane.process.pid, signal.SIGKILL)
    lane.process.join()


def _remove(end: Connection, lane: _Lane) -> None:
    end.close()
    shutil.rmtree(lane.scratch, ignore_errors=True)


def _lane(end: Connection, work: Callable[[int], Any], scratch: str, command: int, commands_ends: list[int]) -> None:
    """One lane: inputs until the command sends None."""
    die_with_parent(command)
    for inherited in commands_ends:
        os.close(inherited)
    _lead_own_group(0)
    # Ctrl-C is the command's to answer (it stops the lanes): a terminal signals only its group,
    # a caller signalling more than that should not make a lane print on its way out. The command's
    # handlers of the other stop signals are its own: a lane stopped by one ends at once.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for stop in STOP_SIGNALS:
        if stop != signal.SIGINT:
            signal.signal(stop, signal.SIG_DFL)
    tempfile.tempdir = scratch
    os.environ["TMPDIR"] = scratch
    try:
        while (index := end.recv()) is not None:
            try:
                message: tuple[str, Any] = (_OK, work(index))
            except Exception as exc:  # the command raises it, as if the work had run there
                message = (_RAISED, f"{type(exc).__name__}: {exc}")
            end.send(message)
    except (EOFError, BrokenPipeError):  # the command is gone
        return
