"""Admission control on the local pipeline: dropping more files than
``Settings.max_running_executions`` never has more executions RUNNING at once; the others wait in
the queue (deferred by ingest with a delay, never failed) and every file ends with a status, none in
the dead-letter queue, each run once."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

import pytest

from infra import deployment
from papersift.settings import Settings
from papersift_cli.local_aws import LocalAws

LIMIT = 3
FILES = 12


@pytest.fixture(scope="module")
def local_aws() -> Iterator[LocalAws]:
    with LocalAws(Settings(max_running_executions=LIMIT)) as aws:
        yield aws


@pytest.fixture
def aws(local_aws: LocalAws) -> Iterator[LocalAws]:
    local_aws.reset_documents()
    saved = dict(local_aws.handlers)
    ingest = local_aws.handler_module("ingest")
    clients = (ingest.sfn.start_execution, ingest.sqs.send_message)
    yield local_aws
    local_aws.handlers.clear()
    local_aws.handlers.update(saved)
    ingest.sfn.start_execution, ingest.sqs.send_message = clients


class RunningWatch:
    """The most executions seen RUNNING at once: counted right after every StartExecution ingest
    makes (the only moment the number can grow) and by a thread sampling every 5 ms meanwhile.
    Every execution of the state machine counts, so the check is stricter than ingest's."""

    def __init__(self, aws: LocalAws) -> None:
        self.aws = aws
        self.sfn = aws.client("stepfunctions")
        self.peak = 0
        self.samples = 0
        self.starts: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        ingest = aws.handler_module("ingest")
        start = ingest.sfn.start_execution

        def start_execution(**kwargs: Any) -> Any:
            response = start(**kwargs)
            self.starts.append(kwargs["name"])
            self.count()
            return response

        ingest.sfn.start_execution = start_execution

    def count(self) -> int:
        running = len(self.sfn.list_executions(stateMachineArn=self.aws.state_machine_arn, statusFilter="RUNNING",
                                               maxResults=1000)["executions"])
        self.peak = max(self.peak, running)
        self.samples += 1
        return running

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.count()

    def __enter__(self) -> RunningWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def watch_deferrals(aws: LocalAws) -> dict[str, int]:
    """Key -> how many times ingest sent its drop back to the queue."""
    deferrals: dict[str, int] = {}
    ingest = aws.handler_module("ingest")
    send = ingest.sqs.send_message

    def send_message(**kwargs: Any) -> Any:
        for record in json.loads(kwargs["MessageBody"]).get("Records", []):
            key = unquote_plus(record["s3"]["object"]["key"])
            deferrals[key] = deferrals.get(key, 0) + 1
        return send(**kwargs)

    ingest.sqs.send_message = send_message
    return deferrals


def slowed(handler: Callable[[Any, Any], Any], seconds: float) -> Callable[[Any, Any], Any]:
    """The handler, taking at least ``seconds``: runs overlap as they would on AWS."""
    def slow(event: Any, context: Any) -> Any:
        time.sleep(seconds)
        return handler(event, context)

    return slow


def drop_files(aws: LocalAws, tmp_path: Path, count: int, prefix: str) -> list[str]:
    keys = []
    for number in range(count):
        path = tmp_path / f"{prefix}-{number:02d}.txt"
        path.write_text(f"Note {number}: the ferry leaves at dawn from pier {number}.\n", encoding="utf-8")
        keys.append(aws.drop(path))
    return keys


def assert_each_ran_once(aws: LocalAws, keys: list[str]) -> None:
    """Every file has a final status, one execution, one item and one set of results; none is in
    the dead-letter queue."""
    outcomes = aws.results.outcomes(keys)
    assert [(o.key, o.status) for o in outcomes] == [(key, "clean") for key in keys]
    executions = [e["input"]["key"] for e in aws.results.executions() if e["input"]["key"] in keys]
    assert sorted(executions) == sorted(keys)  # (the table and bucket are emptied between tests, not the runs)
    assert len(aws.results.items()) == len(keys)
    for outcome in outcomes:
        assert aws.results.result_keys(outcome) == [outcome.results_prefix + name for name in
                                                    ("document.md", "report.html", "report.json", "text.txt")]
    assert aws.dead_keys() == set()
    dlq = aws.client("sqs").get_queue_attributes(QueueUrl=aws.dlq_url, AttributeNames=["ApproximateNumberOfMessages"])
    assert dlq["Attributes"]["ApproximateNumberOfMessages"] == "0"


def test_more_drops_than_the_limit_never_run_more_executions_at_once(aws: LocalAws, tmp_path: Path) -> None:
    """12 files against a limit of 3, each run taking at least 0.3 s: at every start and every 5 ms
    sample at most 3 run; the limit is reached (admission does not starve the workflow); the other
    drops were deferred, and all 12 end clean, once each."""
    aws.handlers["assemble"] = slowed(aws.handlers["assemble"], 0.3)
    deferrals = watch_deferrals(aws)
    started = time.monotonic()
    with RunningWatch(aws) as watch:
        keys = drop_files(aws, tmp_path, FILES, "burst")
        assert aws.wait(keys, timeout=180)
    seconds = time.monotonic() - started
    print(f"admission: limit {LIMIT}, {FILES} files, peak running {watch.peak} over {watch.samples} samples, "
          f"{sum(deferrals.values())} deferrals ({max(deferrals.values(), default=0)} at most for one file), "
          f"{seconds:.1f} s")
    assert watch.peak == LIMIT
    assert len(watch.starts) == FILES
    assert len(deferrals) >= FILES - LIMIT
    assert_each_ran_once(aws, keys)


def test_a_drop_deferred_more_often_than_the_receive_limit_is_never_dead_lettered(
    aws: LocalAws, tmp_path: Path
) -> None:
    """With the limit taken by runs held open, a waiting drop is handed to ingest again and again (the
    test polls as Lambda's poller does, without pause): each time ingest sends it back as a new
    message, so it waits past ``MAX_RECEIVE_COUNT`` deferrals and still runs, not in the DLQ."""
    wanted = deployment.MAX_RECEIVE_COUNT + 1
    release = threading.Event()
    assemble = aws.handlers["assemble"]

    def held_assemble(event: Any, context: Any) -> Any:
        release.wait(60)
        return assemble(event, context)

    aws.handlers["assemble"] = held_assemble
    deferrals = watch_deferrals(aws)
    keys = drop_files(aws, tmp_path, LIMIT + 1, "held")  # LIMIT runs hold the slots; the last one waits
    deadline = time.monotonic() + 60
    while deferrals.get(keys[-1], 0) < wanted and time.monotonic() < deadline:
        aws.redeliver_pending()
        time.sleep(0.1)
    release.set()
    assert deferrals.get(keys[-1], 0) >= wanted
    assert aws.wait(keys, timeout=120)
    assert_each_ran_once(aws, keys)
