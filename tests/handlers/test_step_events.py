"""The sample events under events/ are valid step contracts: SAM and the handler tests send
them, so a contract change that leaves them behind fails here rather than in a deploy."""

from __future__ import annotations

import pytest
from handler_env import REPO, load_event
from pydantic import BaseModel, ValidationError

from papersift.steps.contracts import (
    AssembleRequest,
    Batch,
    ExportRequest,
    OcrPlanRequest,
    OcrRequest,
    RunInput,
    UnpackRequest,
)

STEP_EVENTS: dict[str, type[BaseModel]] = {
    "workflow-input": RunInput,
    "plan-input": RunInput,
    "extract-input": Batch,
    "unpack-input": UnpackRequest,
    "assemble-input": AssembleRequest,
    "assemble-failure-input": AssembleRequest,
    "ocr-plan-input": OcrPlanRequest,
    "ocr-input": OcrRequest,
    "ocr-throttled-input": OcrRequest,
    "export-input": ExportRequest,
    "export-failure-input": ExportRequest,
}


@pytest.mark.parametrize(("name", "model"), STEP_EVENTS.items())
def test_sample_step_event_is_a_valid_request_of_its_step(name: str, model: type[BaseModel]) -> None:
    event = load_event(name)
    assert model.model_validate(event).model_dump(mode="json", exclude_unset=True) == event


def test_every_step_event_file_is_checked() -> None:
    """A new sample event for a step must be added to the table above."""
    notifications = {"s3-put", "sqs-s3-notification", "eventbridge-object-created", "sqs-eventbridge-object-created"}
    on_disk = {path.stem for path in (REPO / "events").glob("*.json")}
    assert on_disk - notifications == set(STEP_EVENTS)


def test_a_request_with_a_misspelt_field_is_refused_at_the_boundary() -> None:
    event = {**load_event("plan-input"), "sourcename": "typo.pdf"}
    with pytest.raises(ValidationError, match="sourcename"):
        RunInput.model_validate(event)
