"""Work run where it can be stopped: a unit that overruns, exhausts memory or crashes its worker
fails alone, and the units after it still run. The work is module-level functions, so the tests
hold whichever way the worker is made (forked, or from a fork server when the test process has
other threads)."""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest

from papersift.errors import CorruptInputError, DeadlineExceededError, EngineCrashError, MemoryLimitError
from papersift.isolation import Limits, UnitFailure, run_once, run_units


def nothing() -> None:
    return None


def opened_at() -> tuple[int, float]:
    return os.getpid(), time.monotonic()


def whoami(_state: None, number: int) -> tuple[int, int]:
    return number, os.getpid()


def setup_of(state: tuple[int, float], _number: int) -> tuple[int, float]:
    return state


def hang_on_two(_state: None, number: int) -> int:
    if number == 2:
        time.sleep(30)
    return number


def hog_on_one(_state: None, number: int) -> int:
    if number == 1:
        hog = bytearray(400 * 1024 * 1024)
        return len(hog)
    return number


def crash_on_two(_state: None, number: int) -> int:
    if number == 2:
        ctypes.string_at(0)  # a segmentation fault, as a C library's bug would cause
    return number


def corrupt(_state: None, _number: int) -> int:
    raise CorruptInputError("not a PDF: no %PDF header in the first 4 KiB")


def leave_a_file_and_hang(_state: None, number: int) -> str:
    with tempfile.NamedTemporaryFile(delete=False) as handle:  # what pdftotext's copy does
        handle.write(b"left behind")
    if number == 1:
        time.sleep(30)
    return handle.name


def answer() -> int:
    return 42


def sleep_long() -> None:
    time.sleep(30)


@pytest.fixture(params=["one thread", "another thread"])
def threads(request: pytest.FixtureRequest) -> object:
    """Each test twice: as a Lambda invocation runs (workers forked) and as the local runner does
    (other threads about: workers from a fork server)."""
    if request.param == "one thread":
        yield None
        return
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait, name="another step")
    busy.start()
    yield busy
    stop.set()
    busy.join()


def test_results_come_back_in_order_from_one_child_process(threads: object) -> None:
    pids = list(run_units(nothing, whoami, [1, 2, 3], Limits(seconds=30)))
    assert [n for n, _ in pids] == [1, 2, 3]
    children = {pid for _, (_, pid) in pids}
    assert len(children) == 1 and children != {os.getpid()}


def test_setup_runs_once_per_child_not_once_per_unit(threads: object) -> None:
    results = dict(run_units(opened_at, setup_of, [1, 2, 3], Limits(seconds=30)))
    assert len(set(results.values())) == 1


def test_a_unit_past_its_deadline_fails_alone_and_the_next_ones_run(threads: object) -> None:
    started = time.monotonic()
    results = dict(run_units(nothing, hang_on_two, [1, 2, 3], Limits(seconds=1)))
    assert time.monotonic() - started < 15
    assert results[1] == 1 and results[3] == 3
    failure = results[2]
    assert isinstance(failure, UnitFailure) and isinstance(failure.error, DeadlineExceededError)
    assert str(failure.error) == "took longer than 1 s"


def test_a_unit_that_needs_too_much_memory_fails_and_the_parent_survives(threads: object) -> None:
    results = dict(run_units(nothing, hog_on_one, [1, 2], Limits(seconds=30, memory_mb=100)))
    assert isinstance(results[1], UnitFailure) and isinstance(results[1].error, MemoryLimitError)
    assert results[2] == 2


def test_a_native_crash_in_one_unit_is_recorded_and_the_rest_go_on(threads: object) -> None:
    results = dict(run_units(nothing, crash_on_two, [1, 2, 3], Limits(seconds=30)))
    assert results[1] == 1 and results[3] == 3
    failure = results[2]
    assert isinstance(failure, UnitFailure) and isinstance(failure.error, EngineCrashError)
    assert "SIGSEGV" in str(failure.error)


def test_an_error_the_work_raises_is_raised_in_the_caller(threads: object) -> None:
    with pytest.raises(CorruptInputError, match="no %PDF header"):
        list(run_units(nothing, corrupt, [1, 2], Limits(seconds=30)))


def test_run_once_raises_the_limit_that_stopped_it(threads: object) -> None:
    assert run_once(answer, Limits(seconds=30)) == 42
    with pytest.raises(DeadlineExceededError):
        run_once(sleep_long, Limits(seconds=1))


def test_a_worker_killed_at_its_deadline_leaves_no_temporary_file(threads: object) -> None:
    """Its temporary folder is its parent's to remove: a killed child cannot clean up."""
    results = dict(run_units(nothing, leave_a_file_and_hang, [1, 2], Limits(seconds=1)))
    assert isinstance(results[1], UnitFailure)
    assert not Path(str(results[2])).exists() and not Path(str(results[2])).parent.exists()


MAIN_SCRIPT = """
import sys, threading
sys.path[:0] = {paths!r}
import counted_module  # the script's own import: counted once per interpreter that runs this script
from papersift.isolation import Limits, run_once

if __name__ == "__main__":
    stop = threading.Event()
    threading.Thread(target=stop.wait).start()  # another thread: workers come from a fork server
    for _ in range(3):
        run_once(counted_module.pid, Limits(seconds=60))
    stop.set()
"""


def test_workers_from_a_fork_server_find_the_main_script_s_imports_done(tmp_path: Path) -> None:
    """Each worker runs the main script again (multiprocessing does): what the script imports is
    imported once, in the fork server, not once a worker (the papersift script's CLI: ~25 ms a
    worker, two workers a document)."""
    import subprocess
    import sys

    import papersift

    log = tmp_path / "imports.log"
    (tmp_path / "counted_module.py").write_text(
        f"import os\nwith open({str(log)!r}, 'a') as log:\n    log.write(f'{{os.getpid()}}\\n')\n\n"
        "def pid() -> int:\n    return os.getpid()\n", encoding="utf-8")
    script = tmp_path / "main_script.py"
    paths = [str(tmp_path), str(Path(papersift.__file__).parents[1])]
    script.write_text(MAIN_SCRIPT.format(paths=paths), encoding="utf-8")
    subprocess.run([sys.executable, str(script)], check=True, timeout=120, cwd=tmp_path)
    importers = log.read_text(encoding="utf-8").split()
    assert len(importers) == 2, importers  # the script's process and the fork server, no worker


def report_and_sleep(pid_file: str) -> None:
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(60)


def test_a_wait_interrupted_while_the_unit_is_at_work_stops_the_worker_at_once(tmp_path: Path) -> None:
    """Ctrl-C, or a lane told to stop: the worker is not given the grace a finished one gets."""
    class Interrupted(Exception):
        pass

    pid_file = tmp_path / "worker.pid"
    interrupted: list[float] = []

    def interrupt(signum: int, frame: object) -> None:
        if not (pid_file.exists() and pid_file.read_text()):  # the unit is not at work yet (a loaded machine)
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            return
        interrupted.append(time.monotonic())
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(Interrupted):
            run_once(functools.partial(report_and_sleep, str(pid_file)), Limits(30))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - interrupted[0] < 3  # a grace of 5 s would show
    assert _ends_soon(int(pid_file.read_text()))


def _ends_soon(pid: int, seconds: float = 2.0) -> bool:
    """The process is gone, or dead and not yet reaped (a fork server's child is its to reap, a
    moment after the kill that ended it, later on a loaded machine), within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def note_pid(pid_file: str) -> None:
    Path(pid_file).write_text(str(os.getpid()))


def chatty(_state: None, _number: int) -> bytes:
    time.sleep(0.05)
    return b"x" * 100_000  # more than a pipe holds


def read_units_for_ever(pid_file: str) -> None:
    for _ in run_units(functools.partial(note_pid, pid_file), chatty, range(10_000), Limits(30)):
        time.sleep(60)  # reads one result, then stops reading: the pipe fills


def test_a_worker_whose_parent_was_killed_ends_with_it(tmp_path: Path) -> None:
    """kill -9 of `papersift extract`: its worker read on for nobody, then blocked for ever on a full
    pipe it held both ends of."""
    import multiprocessing

    pid_file = tmp_path / "worker.pid"
    parent = multiprocessing.get_context("fork").Process(target=read_units_for_ever, args=(str(pid_file),))
    parent.start()
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(parent.pid, signal.SIGKILL)
    parent.join()
    worker = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{worker}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    state = Path(f"/proc/{worker}/stat").read_text().rsplit(")", 1)[1].split()[0] \
        if Path(f"/proc/{worker}").exists() else "gone"
    assert state in ("gone", "Z"), f"the worker is still at work (state {state})"


def test_a_worker_whose_parent_stopped_listening_ends_quietly_not_with_a_traceback() -> None:
    """A stopped run (SIGTERM) closes its end of a page worker's pipe: the worker's next message
    fails with EPIPE, which is no error to print on the command's stderr (issue 20)."""
    import multiprocessing

    from papersift.isolation import _send

    reader, writer = multiprocessing.Pipe(duplex=False)
    reader.close()
    assert _send(writer, ("ok", 1, "text")) is False
