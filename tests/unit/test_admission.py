"""papersift.admission: counting running executions, starting runs, when a drop waits (ingest's
handler behaviour over moto is tests/handlers/test_handlers.py)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from papersift.admission import MAX_DELAY_SECONDS, Admission, Slots, Start, deferral_count, deferral_delay
from papersift.steps.contracts import RunInput


class _ListedRuns:
    """ListExecutions over ``total`` RUNNING executions, in pages as Step Functions gives them."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.calls: list[dict[str, Any]] = []

    def list_executions(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        start, size = int(kwargs.get("nextToken", 0)), kwargs["maxResults"]
        names = range(start, min(start + size, self.total))
        page: dict[str, Any] = {"executions": [{"name": f"run-{n}"} for n in names]}
        if start + size < self.total:
            page["nextToken"] = str(start + size)
        return page


class _AlreadyExists(ClientError):
    pass


class _Starts(_ListedRuns):
    """StartExecution that records its calls, or fails with ``error`` (an AWS error code)."""

    class exceptions:  # a client's modeled exceptions
        ExecutionAlreadyExists = _AlreadyExists

    def __init__(self, error: str | None = None) -> None:
        super().__init__(0)
        self.error = error
        self.started: list[dict[str, Any]] = []

    def start_execution(self, **kwargs: Any) -> dict[str, Any]:
        if self.error == "ExecutionAlreadyExists":
            raise _AlreadyExists({"Error": {"Code": self.error, "Message": "exists"}}, "StartExecution")
        if self.error:
            raise ClientError({"Error": {"Code": self.error, "Message": "no"}}, "StartExecution")
        self.started.append(kwargs)
        return {"executionArn": "arn"}


def test_admission_pages_list_executions_only_until_the_limit_and_believes_full_for_a_while() -> None:
    """Limits above one page (1,000): pages are read until the limit is counted, no further; a
    count that found the workflow full is believed for a quarter of the delay."""
    runs = _ListedRuns(5000)
    assert Admission(runs, "arn", limit=2500, delay_seconds=40).free() == 0
    assert [call["maxResults"] for call in runs.calls] == [1000, 1000, 1000]
    runs = _ListedRuns(1200)
    assert Admission(runs, "arn", limit=2500, delay_seconds=40).free() == 1300
    assert len(runs.calls) == 2
    now = [0.0]
    runs = _ListedRuns(7)
    admission = Admission(runs, "arn", limit=5, delay_seconds=40, clock=lambda: now[0])
    assert admission.free() == 0 and len(runs.calls) == 1
    now[0] = 9.0
    assert admission.free() == 0 and len(runs.calls) == 1
    runs.total, now[0] = 3, 10.5
    assert admission.free() == 2 and len(runs.calls) == 2


def test_admission_counts_its_own_recent_starts_until_listed() -> None:
    """ListExecutions is eventually consistent: what this container started a moment ago counts as
    running even before it is listed, and stops counting after a sixth of the delay."""
    now = [0.0]
    admission = Admission(_ListedRuns(1), "arn", limit=3, delay_seconds=60, clock=lambda: now[0])
    admission.started("fresh")
    assert admission.free() == 1
    now[0] = 11.0
    assert admission.free() == 2


def test_a_count_that_fails_frees_nothing_and_says_why() -> None:
    class Unreachable:
        def list_executions(self, **kwargs: Any) -> dict[str, Any]:
            raise EndpointConnectionError(endpoint_url="https://states")

    told: list[Exception] = []
    assert Admission(Unreachable(), "arn", limit=3, delay_seconds=60, uncountable=told.append).free() == 0
    assert [type(exc) for exc in told] == [EndpointConnectionError]


def test_a_start_is_named_after_the_document_and_takes_a_slot() -> None:
    client, slots = _Starts(), Slots(lambda: 2)
    run_input = RunInput.for_object("bucket", "incoming/a.pdf", "v1", "etag")
    assert slots.available()
    admission = Admission(client, "arn:machine", limit=2, delay_seconds=60)
    result = admission.start(run_input, slots)
    assert (result.outcome, result.doc_id, slots.free) == (Start.STARTED, run_input.doc_id, 1)
    assert client.started == [{"stateMachineArn": "arn:machine", "name": run_input.doc_id,
                               "input": run_input.model_dump_json()}]
    assert admission.running() == 1, "its own start counts before it is listed"


@pytest.mark.parametrize(("error", "outcome"), [("ExecutionAlreadyExists", Start.DUPLICATE),
                                                ("ThrottlingException", Start.REFUSED),
                                                ("ExecutionLimitExceeded", Start.REFUSED)])
def test_a_duplicate_or_a_refusal_for_load_starts_nothing_and_takes_no_slot(error: str, outcome: Start) -> None:
    slots = Slots(lambda: 1)
    slots.available()
    result = Admission(_Starts(error), "arn", limit=1, delay_seconds=60).start(
        RunInput.for_object("bucket", "a.pdf"), slots)
    assert result.outcome is outcome and slots.free == 1
    assert (error in result.reason) == (outcome is Start.REFUSED)


def test_any_other_start_failure_is_raised() -> None:
    with pytest.raises(ClientError, match="AccessDenied"):
        Admission(_Starts("AccessDeniedException"), "arn", limit=1, delay_seconds=60).start(
            RunInput.for_object("bucket", "a.pdf"), Slots(lambda: 1))


def test_a_deferred_drop_waits_the_delay_plus_jitter_within_sqs_longest_delay() -> None:
    assert deferral_delay(30, jitter=lambda low, high: low) == 30
    assert deferral_delay(30, jitter=lambda low, high: high) == 60
    assert deferral_delay(600, jitter=lambda low, high: high) == MAX_DELAY_SECONDS == 900
    assert all(30 <= deferral_delay(30) <= 60 for _ in range(50))


def test_the_deferral_count_goes_up_by_one_from_what_the_message_carries() -> None:
    assert [deferral_count(None), deferral_count(""), deferral_count("0"), deferral_count("4")] == [1, 1, 1, 5]
