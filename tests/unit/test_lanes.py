"""`papersift extract`'s lanes: inputs handed out largest first, read in processes forked once,
whose page workers are forked straight from them; a lane killed from outside costs only its input."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import cast

import pytest

from papersift.isolation import Limits, run_once
from papersift_cli.lanes import run_in_lanes


def collect(lanes: int, order: list[int], work: object) -> tuple[list[int], dict[int, object]]:
    handed: list[int] = []
    results: dict[int, object] = {}

    def done(index: int, result: object) -> None:
        handed.append(index)
        results[index] = result

    run_in_lanes(lanes, order, work, done, lambda index, why: f"lost: {why}")  # type: ignore[arg-type]
    return handed, results


def test_one_lane_reads_the_inputs_in_the_order_given_each_once() -> None:
    handed, results = collect(1, [2, 0, 1], lambda index: index * 10)
    assert handed == [2, 0, 1]
    assert results == {0: 0, 1: 10, 2: 20}


def test_two_lanes_read_side_by_side_in_processes_of_their_own() -> None:
    def work(index: int) -> int:
        time.sleep(0.2)  # long enough that the second lane takes the next input
        return os.getpid()

    _, results = collect(2, list(range(6)), work)
    lanes = set(results.values())
    assert len(lanes) == 2 and os.getpid() not in lanes


def test_a_lanes_page_workers_are_forked_from_it_not_from_a_fork_server() -> None:
    def work(index: int) -> tuple[int, int]:
        return os.getpid(), run_once(os.getppid, Limits(30))

    _, results = collect(2, [0, 1], work)
    for value in results.values():
        lane, workers_parent = cast(tuple[int, int], value)
        assert workers_parent == lane


def test_a_lane_killed_from_outside_costs_only_the_input_it_held() -> None:
    def work(index: int) -> int:
        if index == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return index

    handed, results = collect(2, [0, 1, 2, 3], work)
    assert sorted(handed) == [0, 1, 2, 3]
    assert results[1] == "lost: the process reading it ended without a result (exit status -9)"
    assert {results[i] for i in (0, 2, 3)} == {0, 2, 3}


def test_an_error_in_the_work_is_raised_where_the_lanes_were_started() -> None:
    def work(index: int) -> int:
        raise ValueError(f"input {index} is not a document")

    with pytest.raises(RuntimeError, match="ValueError: input 0 is not a document"):
        collect(1, [0, 1], work)


def test_when_one_lane_fails_the_others_stop_and_take_their_workers_with_them(tmp_path: Path) -> None:
    worker_pid = tmp_path / "worker.pid"

    def long_page() -> None:
        worker_pid.write_text(str(os.getpid()))
        time.sleep(60)

    def work(index: int) -> None:
        if index == 0:
            run_once(long_page, Limits(120))
        while not worker_pid.exists():
            time.sleep(0.05)
        raise ValueError("a bug in the steps")

    with pytest.raises(RuntimeError, match="a bug in the steps"):
        collect(2, [0, 1], work)
    pid = int(worker_pid.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the worker of the lane that was stopped is still reading its page"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_each_input_is_announced_when_a_lane_takes_it_and_ticks_come_while_lanes_are_busy() -> None:
    events: list[tuple[str, int]] = []

    def work(index: int) -> int:
        time.sleep(1.2 if index == 0 else 0.0)  # longer than two ticks
        return index

    def done(index: int, result: object) -> None:
        events.append(("done", index))

    run_in_lanes(1, [0, 1], work, done, lambda index, why: -1, started=lambda index: events.append(("started", index)),
                 tick=lambda: events.append(("tick", 0)))
    milestones = [event for event in events if event[0] != "tick"]
    assert milestones == [("started", 0), ("done", 0), ("started", 1), ("done", 1)]
    ticks_while_first_ran = events[1:events.index(("done", 0))]
    assert len(ticks_while_first_ran) >= 2 and set(ticks_while_first_ran) == {("tick", 0)}
