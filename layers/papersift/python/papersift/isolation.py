"""Work that can be stopped: units (pages, members, a whole document) run in a forked child
process with a deadline per unit and a memory limit, so one pathological input ends as a
recorded failure of that unit and never hangs, exhausts or crashes the step that runs it.

Why a process and not a thread: a thread cannot be stopped, only abandoned, and an abandoned
thread inside pdfium keeps the CPU, the memory and pdfium's global state; a C library's crash
(pdfium, poppler) takes the whole process with it. A forked child costs a few milliseconds (the
parent's memory is shared copy-on-write, the document already read), is killed at its deadline,
gets its own address-space limit (``RLIMIT_AS``), and its death is a status, not a crash of ours.

The child runs the units one after another and sends each result back as soon as it is done; a
unit that overruns its deadline, runs out of memory or crashes the child fails alone, and a new
child goes on from the next unit (``setup`` runs again there: a document is opened once per
child, not once per unit). Exceptions a unit raises come back to the parent and are raised there,
as if the work had run in process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import resource
import select
import signal
import struct
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from papersift.errors import DeadlineExceededError, EngineCrashError, MemoryLimitError

SetupT = TypeVar("SetupT")
ResultT = TypeVar("ResultT")

_HEADER = struct.Struct("!Q")
#: what the child sends for a unit: ("ok", number, value), ("raised", number, exception),
#: ("memory", number, message)
_OK, _RAISED, _MEMORY = "ok", "raised", "memory"


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


@dataclass
class _Child(Generic[SetupT, ResultT]):
    pid: int
    reader: int

    def close(self, kill: bool) -> int:
        """Reap the child (killing it first if asked); its wait status."""
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        os.close(self.reader)
        return os.waitpid(self.pid, 0)[1]


def run_units(setup: Callable[[], SetupT], work: Callable[[SetupT, int], ResultT], numbers: Sequence[int],
              limits: Limits) -> Iterator[tuple[int, ResultT | UnitFailure]]:
    """Yield ``(number, work(setup(), number))`` for each number, in order, each computed in a
    child process; a unit that overruns ``limits.seconds``, runs out of ``limits.memory_mb`` or
    kills the child yields a :class:`UnitFailure` instead. An exception raised by ``setup`` or
    ``work`` is raised here (the remaining units are not run)."""
    remaining = list(numbers)
    while remaining:
        child: _Child[SetupT, ResultT] = _start(setup, work, remaining, limits)
        finished = False
        try:
            while remaining:
                number = remaining[0]
                message = _receive(child.reader, limits.seconds)
                if message is _TIMEOUT or message is None:  # the deadline passed, or the child died mute
                    status = child.close(kill=True)
                    finished = True
                    remaining.pop(0)
                    yield number, UnitFailure(number, _failure(status, limits, message is _TIMEOUT))
                    break
                kind, sent_number, value = message
                assert sent_number == number, f"unit {sent_number} came back while {number} was expected"
                remaining.pop(0)
                if kind == _RAISED:
                    raise value
                if kind == _MEMORY:
                    yield number, UnitFailure(number, MemoryLimitError(
                        f"needed more than the {limits.memory_mb} MB a unit may use ({value})"))
                    status = child.close(kill=True)
                    finished = True
                    break
                yield number, value
        finally:
            if not finished:
                child.close(kill=bool(remaining))


def run_once(work: Callable[[], ResultT], limits: Limits) -> ResultT:
    """``work()`` in a child process under ``limits``; raises DeadlineExceededError,
    MemoryLimitError or EngineCrashError when the child does not finish, and what ``work``
    raised when it raised."""
    for _, result in run_units(lambda: None, lambda _setup, _number: work(), [1], limits):
        if isinstance(result, UnitFailure):
            raise result.error
        return result
    raise AssertionError("run_units yields one result per unit")


_UnitError = DeadlineExceededError | MemoryLimitError | EngineCrashError


def _failure(status: int, limits: Limits, timed_out: bool) -> _UnitError:
    if timed_out:
        return DeadlineExceededError(f"took longer than {limits.seconds:g} s")
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        return MemoryLimitError("the worker was killed (SIGKILL) before finishing: out of memory")
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return EngineCrashError(f"the engine crashed ({name}): the input takes down the library that reads it")
    return EngineCrashError(f"the worker ended with exit status {os.WEXITSTATUS(status)} before finishing")


def _start(setup: Callable[[], SetupT], work: Callable[[SetupT, int], ResultT], numbers: list[int],
           limits: Limits) -> _Child[SetupT, ResultT]:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid:
        os.close(writer)
        return _Child(pid, reader)
    # -- the child: never returns ----------------------------------------------------------
    os.close(reader)
    code = 0
    try:
        _limit_memory(limits.memory_mb)
        state = setup()
        for number in numbers:
            try:
                message: tuple[str, int, object] = (_OK, number, work(state, number))
            except MemoryError as exc:
                message = (_MEMORY, number, str(exc) or "MemoryError")
            except BaseException as exc:  # sent to the parent, raised there
                message = (_RAISED, number, _picklable(exc))
            _send(writer, message)
            if message[0] != _OK:
                break
    except MemoryError as exc:
        _send(writer, (_MEMORY, numbers[0], str(exc) or "MemoryError"))
    except BaseException as exc:  # setup failed: the first unit carries the error
        try:
            _send(writer, (_RAISED, numbers[0], _picklable(exc)))
        except BaseException:
            code = 1
    finally:
        os._exit(code)  # no atexit handlers, no flushing of the parent's buffers


def _limit_memory(memory_mb: int) -> None:
    """The child may grow its address space by ``memory_mb`` beyond what it inherited."""
    if memory_mb <= 0:
        return
    with open("/proc/self/statm", "rb") as statm:
        pages = int(statm.read().split()[0])
    current = pages * os.sysconf("SC_PAGE_SIZE")
    limit = current + memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _picklable(exc: BaseException) -> BaseException:
    """The exception itself when it survives pickling, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return RuntimeError(detail)


def _send(fd: int, message: tuple[str, int, object]) -> None:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        written = os.write(fd, data)
        data = data[written:]


class _Timeout:
    """What _receive returns when the deadline passes before the child's message."""


_TIMEOUT: Any = _Timeout()


def _receive(fd: int, seconds: float) -> Any:
    """The child's next message; ``_TIMEOUT`` when ``seconds`` pass first, None when the child is
    gone without a word."""
    deadline = time.monotonic() + seconds if seconds > 0 else None
    header = _read_exactly(fd, _HEADER.size, deadline)
    if not isinstance(header, bytes):
        return header
    (size,) = _HEADER.unpack(header)
    payload = _read_exactly(fd, size, deadline)
    if not isinstance(payload, bytes):
        return payload
    return pickle.loads(payload)


def _read_exactly(fd: int, size: int, deadline: float | None) -> Any:
    chunks: list[bytes] = []
    left = size
    while left:
        timeout = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return _TIMEOUT
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
