"""Admission: never more than ``Settings.max_running_executions`` runs of the workflow at once.

Ingest (``functions/ingest/app.py``) parses the drop queue's notifications and asks this module
whether and how to start each object's run; the Step Functions client is passed in.

The count is the truth. Before its first start an invocation counts RUNNING executions with
ListExecutions, page by page only as far as the limit: a counter kept by ingest and the workflow
would leak a slot for every run that is aborted, times out or never reaches its last state. A drop
that finds no free slot is deferred (ingest sends it to the queue again with :func:`deferral_delay`
and acknowledges the original: handing it back would count receives, and a drop that only waited
would be dead-lettered). StartExecution refused for load (:data:`START_DEFERRED_CODES`) and a count that
fails defer the same way: waiting is never a failure.

Nothing run twice: the execution name is the document id, so a duplicate notification, a
redelivered message or a retried ingest meets ExecutionAlreadyExists (or, while that run is open
with the same input, the open run itself) and starts nothing.

ListExecutions is eventually consistent: executions another invocation started a moment ago may not
be listed yet. :class:`Admission` counts what its container started in the last few seconds as
running even when unlisted, and believes a count that found the workflow full for a while
(ListExecutions is throttled per account). docs/architecture.md, "Admission, idempotency and faults".
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from papersift.errors import THROTTLING_EXCEPTION
from papersift.steps.contracts import RunInput

#: StartExecution errors that mean "not now" rather than "never"
START_DEFERRED_CODES = frozenset({THROTTLING_EXCEPTION, "ExecutionLimitExceeded"})
#: ListExecutions' largest page
LIST_PAGE = 1000
#: SQS's longest message delay
MAX_DELAY_SECONDS = 900


class Slots:
    """The executions one invocation may still start, counted when a record first needs one (a
    batch of test events or unparseable bodies asks nothing of Step Functions)."""

    def __init__(self, count: Callable[[], int]) -> None:
        self._count = count
        self.free: int | None = None

    def available(self) -> bool:
        if self.free is None:
            self.free = self._count()
        return self.free > 0

    def take(self) -> None:
        self.free = (self.free or 0) - 1


class Start(StrEnum):
    """What became of one start."""

    STARTED = "started"
    #: the document's run exists already: nothing started, nothing to wait for
    DUPLICATE = "duplicate"
    #: Step Functions refused for load: defer the drop
    REFUSED = "refused"


@dataclass(frozen=True)
class StartResult:
    outcome: Start
    doc_id: str
    #: Step Functions' refusal, when refused
    reason: str = ""


class Admission:
    """Counts RUNNING executions against the limit, once per invocation, and starts runs.

    Two things carry over between invocations of a warm container (the handler keeps one
    Admission). A count that found the workflow full is believed for a quarter of the delay, so
    while a backlog cycles through the queue each container asks ListExecutions once per interval
    rather than once per batch. And the executions this container started in the last sixth of the
    delay count as running even when ListExecutions does not list them yet.

    ``uncountable`` is told when the running executions cannot be counted (the batch defers).
    """

    def __init__(self, client: Any, state_machine_arn: str, limit: int, delay_seconds: float,
                 clock: Callable[[], float] = time.monotonic,
                 uncountable: Callable[[Exception], None] = lambda exc: None) -> None:
        self.client = client
        self.state_machine_arn = state_machine_arn
        self.limit = limit
        self.full_seconds = delay_seconds / 4
        self.unlisted_seconds = delay_seconds / 6
        self.clock = clock
        self.uncountable = uncountable
        self._full_until = 0.0
        self._started: dict[str, float] = {}  # execution name -> when this container started it

    def free(self) -> int:
        """What an invocation may start: the limit less what runs (0 when it cannot be counted)."""
        now = self.clock()
        self._started = {name: at for name, at in self._started.items() if now - at < self.unlisted_seconds}
        if now < self._full_until:
            return 0
        try:
            running = self.running()
        except (BotoCoreError, ClientError) as exc:
            self.uncountable(exc)
            return 0
        free = max(0, self.limit - running)
        if not free:
            self._full_until = now + self.full_seconds
        return free

    def running(self) -> int:
        """RUNNING executions (up to the limit: counting stops there) with this container's unlisted starts."""
        names = set(self._started)
        request: dict[str, Any] = {"stateMachineArn": self.state_machine_arn, "statusFilter": "RUNNING",
                                   "maxResults": min(self.limit, LIST_PAGE)}
        while len(names) < self.limit:
            page = self.client.list_executions(**request)
            names.update(execution["name"] for execution in page["executions"])
            if not page.get("nextToken"):
                break
            request["nextToken"] = page["nextToken"]
        return len(names)

    def started(self, name: str) -> None:
        self._started[name] = self.clock()

    def start(self, run_input: RunInput, slots: Slots) -> StartResult:
        """Start the run (named after the document), or find it started already; a start takes a
        slot. Any other failure than :data:`START_DEFERRED_CODES` is raised (the record fails)."""
        doc_id = run_input.doc_id
        try:
            self.client.start_execution(stateMachineArn=self.state_machine_arn, name=doc_id,
                                        input=run_input.model_dump_json())
        except self.client.exceptions.ExecutionAlreadyExists:
            return StartResult(Start.DUPLICATE, doc_id)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in START_DEFERRED_CODES:
                raise
            return StartResult(Start.REFUSED, doc_id, str(exc))
        # (a duplicate while its run is open with the same input also lands here: no second run either)
        slots.take()
        self.started(doc_id)
        return StartResult(Start.STARTED, doc_id)


def deferral_delay(delay_seconds: int, jitter: Callable[[int, int], int] = random.randint) -> int:
    """A deferred drop's ``DelaySeconds``: the delay plus up to as many again, so a backlog does not
    come back in one wave; at most SQS's longest delay."""
    return min(MAX_DELAY_SECONDS, delay_seconds + jitter(0, delay_seconds))


def deferral_count(previous: str | None) -> int:
    """How many times a drop has been deferred, this time included (``previous``: the count its
    message carries, if any)."""
    return int(previous or 0) + 1
