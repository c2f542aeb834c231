"""Work run where it can be stopped: a unit that overruns, exhausts memory or crashes its worker
fails alone, and the units after it still run."""

from __future__ import annotations

import ctypes
import os
import threading
import time

import pytest

from papersift.errors import CorruptInputError, DeadlineExceededError, EngineCrashError, MemoryLimitError
from papersift.isolation import Limits, UnitFailure, run_once, run_units


@pytest.fixture(autouse=True)
def one_thread() -> None:
    """These tests pass closures, which only a forked child (a one-thread process) can run."""
    assert threading.active_count() == 1, [t.name for t in threading.enumerate()]


def square(_state: None, number: int) -> int:
    return number * number


def test_results_come_back_in_order_from_a_child_process() -> None:
    parent = os.getpid()
    pids = list(run_units(lambda: None, lambda _s, n: (n, os.getpid()), [1, 2, 3], Limits(seconds=10)))
    assert [n for n, _ in pids] == [1, 2, 3]
    assert {pid for _, (_, pid) in pids} != {parent}
    assert len({pid for _, (_, pid) in pids}) == 1, "one child runs the units one after another"


def test_setup_runs_once_per_child_not_once_per_unit() -> None:
    calls = []

    def setup() -> float:
        calls.append(1)  # in the child: the parent's list stays empty
        return time.monotonic()

    results = dict(run_units(setup, lambda opened, n: opened, [1, 2, 3], Limits(seconds=10)))
    assert len(set(results.values())) == 1 and calls == []


def test_a_unit_past_its_deadline_fails_alone_and_the_next_ones_run() -> None:
    def work(_state: None, number: int) -> int:
        if number == 2:
            time.sleep(30)
        return number

    started = time.monotonic()
    results = dict(run_units(lambda: None, work, [1, 2, 3], Limits(seconds=0.5)))
    assert time.monotonic() - started < 10
    assert results[1] == 1 and results[3] == 3
    failure = results[2]
    assert isinstance(failure, UnitFailure) and isinstance(failure.error, DeadlineExceededError)
    assert str(failure.error) == "took longer than 0.5 s"


def test_a_unit_that_needs_too_much_memory_fails_and_the_parent_survives() -> None:
    def work(_state: None, number: int) -> int:
        if number == 1:
            hog = bytearray(400 * 1024 * 1024)
            return len(hog)
        return number

    results = dict(run_units(lambda: None, work, [1, 2], Limits(seconds=30, memory_mb=100)))
    assert isinstance(results[1], UnitFailure) and isinstance(results[1].error, MemoryLimitError)
    assert results[2] == 2


def test_a_native_crash_in_one_unit_is_recorded_and_the_rest_go_on() -> None:
    def work(_state: None, number: int) -> int:
        if number == 2:
            ctypes.string_at(0)  # a segmentation fault, as a C library's bug would cause
        return number

    results = dict(run_units(lambda: None, work, [1, 2, 3], Limits(seconds=30)))
    assert results[1] == 1 and results[3] == 3
    failure = results[2]
    assert isinstance(failure, UnitFailure) and isinstance(failure.error, EngineCrashError)
    assert "SIGSEGV" in str(failure.error)


def test_an_error_the_work_raises_is_raised_in_the_caller() -> None:
    def work(_state: None, number: int) -> int:
        raise CorruptInputError("not a PDF: no %PDF header in the first 4 KiB")

    with pytest.raises(CorruptInputError, match="no %PDF header"):
        list(run_units(lambda: None, work, [1, 2], Limits(seconds=10)))


def test_run_once_raises_the_limit_that_stopped_it() -> None:
    assert run_once(lambda: 42, Limits(seconds=10)) == 42
    with pytest.raises(DeadlineExceededError):
        run_once(lambda: time.sleep(30), Limits(seconds=0.3))


def sleepy(_state: None, number: int) -> int:
    if number == 2:
        time.sleep(30)
    return number


def test_a_process_with_other_threads_gets_its_workers_from_a_fork_server(tmp_path: object) -> None:
    """Forking a process in which another thread may hold a lock (an import, a finalizer) can leave
    the child waiting forever: with a second thread running, units still run, deadlines still hold."""
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait, name="another step")
    busy.start()
    try:
        results = dict(run_units(_no_setup_for_test, sleepy, [1, 2, 3], Limits(seconds=3)))
    finally:
        stop.set()
        busy.join()
    assert results[1] == 1 and results[3] == 3
    assert isinstance(results[2], UnitFailure) and isinstance(results[2].error, DeadlineExceededError)


def _no_setup_for_test() -> None:
    return None
