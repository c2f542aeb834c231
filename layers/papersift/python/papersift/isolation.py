"""Work that can be stopped: units (pages, members, a whole document) run in a child process with
a deadline per unit and a memory limit, so one pathological input ends as a recorded failure of
that unit and never hangs, exhausts or crashes the step that runs it.

Why a process and not a thread: a thread cannot be stopped, only abandoned, and an abandoned
thread inside pdfium keeps the CPU, the memory and pdfium's global state; a C library's crash
(pdfium, poppler) takes the whole process with it. A child is killed at its deadline, gets its
own address-space limit (``RLIMIT_AS``), and its death is a status, not a crash of ours.

How the child is made: forked, when this process runs one thread (a Lambda invocation): a few
milliseconds, the parent's memory shared copy-on-write. A process with other threads (the local
runner, where every step is a thread) must not fork: a lock another thread holds at that moment
(a module being imported, a finalizer's) stays held forever in the child. There the child comes
from a fork server, a clean single-threaded process started once with the core imported, and the
work travels to it pickled (so ``setup`` and ``work`` are module-level callables or partials of
them). Pipes only, no queues or locks: Lambda has no /dev/shm.

The child runs the units one after another and sends each result back as soon as it is done; a
unit that overruns its deadline, runs out of memory or crashes the child fails alone, and a new
child goes on from the next unit (``setup`` runs again there: a document is opened once per
child, not once per unit). Exceptions a unit raises come back to the parent and are raised there,
as if the work had run in process.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.util
import os
import pickle
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from types import FunctionType, ModuleType
from typing import Any, TypeVar

from papersift.errors import DeadlineExceededError, EngineCrashError, MemoryLimitError
from papersift.tempfolders import temp_prefix

SetupT = TypeVar("SetupT")
ResultT = TypeVar("ResultT")

#: what the child sends for a unit: ("ok", number, value), ("raised", number, exception),
#: ("memory", number, message)
_OK, _RAISED, _MEMORY = "ok", "raised", "memory"
#: what a fork server imports once, so its children start with the core loaded
FORK_SERVER_PRELOAD = ["papersift.pipeline", "papersift.formats.pdf", "papersift.steps.ocr"]


@dataclass(frozen=True)
class Limits:
    """What one unit may take: wall seconds (0: no deadline) and memory beyond what the process
    already holds, in MB (0: no limit)."""

    seconds: float
    memory_mb: int = 0


@dataclass(frozen=True)
class UnitFailure:
    """A unit the child could not finish: the error says why (deadline, memory, crash)."""

    number: int
    error: DeadlineExceededError | MemoryLimitError | EngineCrashError


_UnitError = DeadlineExceededError | MemoryLimitError | EngineCrashError


#: how long a child that finished its units may take to close what its setup opened
CLOSE_GRACE_SECONDS = 5.0


def run_units(setup: Callable[[], SetupT], work: Callable[[SetupT, int], ResultT], numbers: Sequence[int],
              limits: Limits) -> Generator[tuple[int, ResultT | UnitFailure], None, None]:
    """Yield ``(number, work(setup(), number))`` for each number, in order, each computed in a
    child process; a unit that overruns ``limits.seconds``, runs out of ``limits.memory_mb`` or
    kills the child yields a :class:`UnitFailure` instead. An exception raised by ``setup`` or
    ``work`` is raised here (the remaining units are not run)."""
    remaining = list(numbers)
    while remaining:
        worker = _start(setup, work, remaining, limits)
        done = finished = False  # finished: the child sent its last message and is closing
        try:
            while remaining:
                number = remaining.pop(0)
                message = _receive(worker, limits.seconds)
                if message is _TIMEOUT or message is None:  # the deadline passed, or the child died mute
                    status = _stop(worker)
                    done = True
                    yield number, UnitFailure(number, _failure(status, limits, timed_out=message is _TIMEOUT,
                                                               grown_mb=worker.grown_mb))
                    break
                kind, sent_number, value = message
                assert sent_number == number, f"unit {sent_number} came back while {number} was expected"
                if kind == _RAISED:
                    finished = True
                    raise value
                if kind == _MEMORY:
                    _stop(worker)
                    done = True
                    yield number, UnitFailure(number, MemoryLimitError(
                        f"needed more than the {limits.memory_mb} MB a unit may use (unit_memory_mb): {value}"))
                    break
                yield number, value
            finished = True
        finally:
            if not done:
                # a child that sent its last unit is closing what its setup opened (a PdfHandle's
                # temporary folder): killed at once, it left the folder behind in TMPDIR. One
                # still at work when this was interrupted (Ctrl-C, a lane told to stop) is not
                # waited for.
                _stop(worker, grace=CLOSE_GRACE_SECONDS if finished else 0.0)


def run_once(work: Callable[[], ResultT], limits: Limits) -> ResultT:
    """``work()`` in a child process under ``limits``; raises DeadlineExceededError,
    MemoryLimitError or EngineCrashError when the child does not finish, and what ``work``
    raised when it raised."""
    for _, result in run_units(_no_setup, _Call(work), [1], limits):
        if isinstance(result, UnitFailure):
            raise result.error
        return result
    raise AssertionError("run_units yields one result per unit")


def _no_setup() -> None:
    return None


@dataclass(frozen=True)
class _Call:
    """``work()`` as a unit of ``run_units`` (picklable when ``work`` is)."""

    work: Callable[[], Any]

    def __call__(self, _state: None, _number: int) -> Any:
        return self.work()


#: where multiprocessing's own temp folder (the fork server's socket) goes: not under TMPDIR,
#: which may be longer than a Unix socket's path allows (107 bytes: a test's deep tmp_path) or be a
#: caller's work folder that it lists and removes (the socket folder then appeared among its files,
#: and multiprocessing failed at exit to remove what the caller had removed)
_SOCKET_PARENT = "/tmp"


def _context() -> Any:
    """fork when this process has one thread; a fork server otherwise (see the module's docstring)."""
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*FORK_SERVER_PRELOAD, *_main_script_imports()])
    # multiprocessing's own temp folder setting, which the fork server's socket goes under
    config: dict[str, Any] = getattr(multiprocessing.current_process(), "_config")  # noqa: B009
    if "tempdir" not in config:
        config["tempdir"] = tempfile.mkdtemp(prefix=temp_prefix("forkserver"), dir=_SOCKET_PARENT)
        # as multiprocessing does for the folder it makes itself
        multiprocessing.util.Finalize(None, shutil.rmtree, args=(config["tempdir"], True), exitpriority=-100)
    return context


def _main_script_imports() -> list[str]:
    """The modules the main script brought in, for the fork server to import once.

    Every child of a fork server runs the parent's main script again (multiprocessing does, to find
    what was pickled from ``__main__``; Python 3.11's fork server never preloads the script
    itself), so what the script imports was imported once per worker: for the ``papersift`` script
    the CLI, jinja2 and the report page, ~25 ms a worker, two workers a document."""
    main = sys.modules.get("__main__")
    if main is None:
        return []
    names = {value.__name__ if isinstance(value, ModuleType) else value.__module__
             for value in vars(main).values() if isinstance(value, (ModuleType, FunctionType, type))}
    return sorted(name for name in names if name in sys.modules and name not in ("__main__", "builtins"))


@dataclass
class _Worker:
    """A child process, the pipe its results come through, and the temporary folder it was given:
    a child killed at its deadline cannot clean up after itself, its parent does."""

    process: Any
    reader: Connection
    scratch: str
    memory_mb: int = 0  # its limit: what it may add to what it started with (0: none)
    #: how far the child's address space grew beyond its start, in MB (sampled while it works)
    grown_mb: int = 0

    def sample_memory(self) -> None:
        """Note how far the child's peak address space grew towards its limit (RLIMIT_AS, which it
        sets itself: what it started with plus ``memory_mb``)."""
        peak, limit = _address_space(self.process.pid)
        if peak and limit:
            self.grown_mb = max(self.grown_mb, (peak - limit) // (1 << 20) + self.memory_mb)


def _start(setup: Callable[[], SetupT], work: Callable[[SetupT, int], ResultT], numbers: list[int],
           limits: Limits) -> _Worker:
    context = _context()
    reader, writer = context.Pipe(duplex=False)
    scratch = tempfile.mkdtemp(prefix=temp_prefix("unit"))
    forked = context.get_start_method() == "fork"
    # a forked child inherits the reading end too: it closes it, or, orphaned, it would write into
    # its own pipe until the pipe is full, and block there for ever
    inherited = reader.fileno() if forked else -1
    # a fork server's child has the fork server for a parent, which lives until its last child ends
    # (each holds the fork server's "caller alive" pipe): nothing to check there
    parent = os.getpid() if forked else 0
    process = context.Process(target=_child, args=(setup, work, numbers, limits.memory_mb, writer, scratch,
                                                   inherited, parent), name="papersift-unit", daemon=True)
    process.start()
    worker = _Worker(process, reader, scratch, limits.memory_mb)
    try:
        writer.close()
    except BaseException:  # interrupted (a stop signal) before the caller holds the worker: end it here
        _stop(worker)
        raise
    return worker


def _stop(worker: _Worker, grace: float = 0.0) -> int:
    """Kill the child if it still runs (after ``grace`` seconds to end on its own), reap it, remove
    its temporary folder, and return its exit code (negative: a signal)."""
    process = worker.process
    if grace > 0:
        process.join(grace)
    if process.is_alive():
        process.kill()
    process.join()
    worker.reader.close()
    shutil.rmtree(worker.scratch, ignore_errors=True)
    return int(process.exitcode if process.exitcode is not None else -signal.SIGKILL)


#: a child that grew by this share of its memory limit and then crashed ran out of memory: a C
#: library that cannot allocate aborts (pdfium: SIGABRT, not a word on stderr), and the allocation
#: that failed is often the doubling of a buffer as large as all it held (a 20-million-glyph page:
#: 1.3 GB seen of a 2 GB limit, then SIGABRT; 3.3 GB without the limit)
MEMORY_GROWN_SHARE = 1 / 3
#: how often a working child's memory is sampled
MEMORY_SAMPLE_SECONDS = 0.05  # two small /proc reads (~50 µs): a fast-growing engine is seen before it dies


def _address_space(pid: int) -> tuple[int, int]:
    """A live process's peak address space (VmPeak) and its limit (RLIMIT_AS), in bytes; 0 for
    what cannot be read (no /proc, the process gone, no limit)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            peak = next((int(line.split()[1]) * 1024 for line in status if line.startswith(b"VmPeak:")), 0)
        with open(f"/proc/{pid}/limits", "rb") as limits:
            line = next((line for line in limits if line.startswith(b"Max address space")), b"")
    except (OSError, ValueError, IndexError):
        return 0, 0
    soft = line.split()[3:4]
    return peak, int(soft[0]) if soft and soft[0].isdigit() else 0


def _failure(exitcode: int, limits: Limits, timed_out: bool, grown_mb: int = 0) -> _UnitError:
    if timed_out:
        return DeadlineExceededError(f"took longer than {limits.seconds:g} s")
    if exitcode == -signal.SIGKILL:
        return MemoryLimitError("the worker was killed (SIGKILL) before finishing: out of memory")
    if exitcode < 0 and limits.memory_mb and grown_mb >= limits.memory_mb * MEMORY_GROWN_SHARE:
        name = signal.Signals(-exitcode).name
        return MemoryLimitError(f"needed more than the {limits.memory_mb} MB a unit may use (unit_memory_mb): it had "
                                f"taken {grown_mb} MB when the engine ended ({name}), failing to allocate more")
    if exitcode < 0:
        name = signal.Signals(-exitcode).name
        return EngineCrashError(f"the engine crashed ({name}): the input takes down the library that reads it")
    return EngineCrashError(f"the worker ended with exit status {exitcode} before finishing")


def _child(setup: Callable[[], SetupT], work: Callable[[SetupT, int], ResultT], numbers: list[int],
           memory_mb: int, writer: Connection, scratch: str, inherited_reader: int, parent: int) -> None:
    """The child process: the units one after another, each result sent as soon as it is ready.
    Its temporary files go to ``scratch``, which the parent removes whatever becomes of the child."""
    die_with_parent(parent)
    if inherited_reader >= 0:
        os.close(inherited_reader)
    # Ctrl-C (and a stop signal: SIGTERM, SIGHUP) ends a worker at once and quietly, as it ends the
    # C programs it may run (Tesseract): whoever started it reports the stop. The parent's own
    # handlers (a command's, which report the stop) are not the child's.
    for stop in STOP_SIGNALS:
        signal.signal(stop, signal.SIG_DFL)
    tempfile.tempdir = scratch  # this process's own: it ends with the unit
    os.environ["TMPDIR"] = scratch
    state: object = None
    try:
        _limit_memory(memory_mb)
        state = setup()
        for number in numbers:
            try:
                message: tuple[str, int, object] = (_OK, number, work(state, number))
            except MemoryError as exc:
                message = (_MEMORY, number, str(exc) or "MemoryError")
            except BaseException as exc:  # sent to the parent, raised there
                message = (_RAISED, number, _picklable(exc))
            if not _send(writer, message) or message[0] != _OK:
                return
    except MemoryError as exc:
        _send(writer, (_MEMORY, numbers[0], str(exc) or "MemoryError"))
    except BaseException as exc:  # setup failed: the first unit carries the error
        _send(writer, (_RAISED, numbers[0], _picklable(exc)))
    finally:
        writer.close()
        # the child ends in os._exit, which runs no finalizers: what setup opened (a PdfHandle's
        # temporary copy for pdftotext) is closed here, or every child that reached that rung left
        # a folder in TMPDIR
        close = getattr(state, "close", None)
        if callable(close):
            with contextlib.suppress(BaseException):
                close()


#: prctl(2) option: the signal a process gets when its parent ends
_PR_SET_PDEATHSIG = 1


#: the signals that stop a run, as Ctrl-C does: a terminal's, `timeout`'s and systemd's, a closed terminal's
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def die_with_parent(parent: int) -> None:
    """Call first thing in a forked child: it is killed when its parent ends. A worker whose parent
    was killed (kill -9 of `papersift extract`) read on for nobody, holding the caller's stdout
    open; Linux ends it with its parent instead (elsewhere it ends at its next result: its pipe is
    broken). ``parent``: the pid that forked it, which may have died before the child got here, and
    then the child ends at once (0: not checked). The parent must be the thread that forked it: the
    signal comes when that thread ends."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if parent and os.getppid() != parent:  # orphaned before prctl: no signal will come
        os._exit(1)


def _limit_memory(memory_mb: int) -> None:
    """The child may grow its address space by ``memory_mb`` beyond what it started with."""
    if memory_mb <= 0:
        return
    with open("/proc/self/statm", "rb") as statm:
        pages = int(statm.read().split()[0])
    limit = pages * os.sysconf("SC_PAGE_SIZE") + memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _picklable(exc: BaseException) -> BaseException:
    """The exception itself when it survives pickling, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return RuntimeError(detail)


def _send(writer: Connection, message: tuple[str, int, object]) -> bool:
    """Whether the parent got ``message``: a parent that stopped (SIGTERM, Ctrl-C: it closed its
    end) is no error of the worker's, which ends quietly instead of printing a traceback on the
    stopped command's stderr."""
    try:
        writer.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


class _Timeout:
    """What _receive returns when the deadline passes before the child's message."""


_TIMEOUT: Any = _Timeout()


def _receive(worker: _Worker, seconds: float) -> Any:
    """The child's next message; ``_TIMEOUT`` when ``seconds`` pass first, None when the child is
    gone without a word. While it works, its memory is sampled (``_Worker.sample_memory``)."""
    deadline = time.monotonic() + seconds if seconds > 0 else None
    try:
        while not worker.reader.poll(MEMORY_SAMPLE_SECONDS if deadline is None
                                     else min(MEMORY_SAMPLE_SECONDS, max(deadline - time.monotonic(), 0.0))):
            if deadline is not None and time.monotonic() >= deadline:
                return _TIMEOUT
            if worker.memory_mb:
                worker.sample_memory()
        return pickle.loads(worker.reader.recv_bytes())
    except (EOFError, OSError):
        return None
