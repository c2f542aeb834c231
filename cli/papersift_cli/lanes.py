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
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

ResultT = TypeVar("ResultT")

_OK, _RAISED = "ok", "raised"


def run_in_lanes(lanes: int, order: Sequence[int], work: Callable[[int], ResultT],
                 done: Callable[[int, ResultT], None], lost: Callable[[int, str], ResultT]) -> None:
    """``done(i, work(i))`` for each ``i`` of ``order``, ``lanes`` at a time, each ``work(i)`` in a
    lane; ``lost(i, why)`` stands in for the result when the lane died holding ``i``. An exception
    ``work`` raises is raised here. Call it while this process runs one thread: lanes are forked."""
    context = multiprocessing.get_context("fork")
    pending = list(order)
    held: dict[Connection, tuple[Any, int | None]] = {}  # a lane's end, its process, the input it holds

    def hand_out(end: Connection) -> None:
        process, _ = held[end]
        index = pending.pop(0) if pending else None
        end.send(index)
        held[end] = (process, index)
        if index is None:  # nothing left: the lane ends
            process.join()
            end.close()
            del held[end]

    def start() -> None:
        end, lane_end = context.Pipe()
        # not a daemon: a daemon process may not start the workers that read the pages
        process = context.Process(target=_lane, args=(lane_end, work), name="papersift-lane")
        process.start()
        lane_end.close()
        held[end] = (process, None)
        hand_out(end)

    try:
        for _ in range(min(lanes, len(pending))):
            start()
        while held:
            for end in wait(list(held)):
                assert isinstance(end, Connection)
                process, index = held[end]
                assert index is not None
                try:
                    kind, value = end.recv()
                except (EOFError, OSError):
                    process.join()
                    end.close()
                    del held[end]
                    done(index, lost(index, f"the process reading it ended without a result (exit status "
                                            f"{process.exitcode})"))
                    if pending:
                        start()
                    continue
                if kind == _RAISED:
                    raise RuntimeError(value)
                done(index, value)
                hand_out(end)
    finally:
        # only when something went wrong: each lane stops its workers on SIGTERM (SIGKILL would
        # leave them running their page to its end), then is killed if it has not ended
        for process, _ in held.values():
            process.terminate()
        for end, (process, _) in held.items():
            process.join(LANE_GRACE_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
            end.close()


#: how long a lane told to stop may take to stop its workers
LANE_GRACE_SECONDS = 5.0


def _lane(end: Connection, work: Callable[[int], Any]) -> None:
    """One lane: inputs until the command sends None. Ctrl-C reaches the whole process group: the
    command reports it, the lane just stops (its workers are stopped as they are when it raises)."""
    signal.signal(signal.SIGTERM, _stop_lane)
    try:
        while (index := end.recv()) is not None:
            try:
                message: tuple[str, Any] = (_OK, work(index))
            except (KeyboardInterrupt, SystemExit):  # Ctrl-C, or told to stop: not the work's error
                raise
            except BaseException as exc:  # the command raises it, as if the work had run there
                message = (_RAISED, f"{type(exc).__name__}: {exc}")
            end.send(message)
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        return


def _stop_lane(signum: int, frame: object) -> None:
    """SIGTERM in a lane: unwind, so that the worker reading a page is stopped on the way out."""
    raise SystemExit(128 + signum)
