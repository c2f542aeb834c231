"""The workflow's cost at the deployed defaults, counted from execution histories."""

from __future__ import annotations

from pathlib import Path

import pytest
from pdf_factory import numbered_pdf

from papersift.settings import Settings
from papersift_cli.local_aws import LocalAws

pytestmark = pytest.mark.slow


def test_native_pages_cost_under_a_fifth_of_a_transition_each_at_the_default_batch_size(tmp_path: Path) -> None:
    """100 pages a batch (Settings' default): a 250-page native document in 3 batches costs
    2 + 1 + 3 + 1 + 1 = 8 transitions (Plan, Route, the Map and its batches, OcrNeeded, Assemble:
    no page needed OCR, so no OCR stage)."""
    with LocalAws(Settings()) as aws:
        path = tmp_path / "long.pdf"
        path.write_bytes(numbered_pdf(250))
        key = aws.drop(path)
        assert aws.wait([key], timeout=180)
        (execution,) = aws.results.executions()
        transitions = aws.results.state_transitions(execution["executionArn"])
    assert transitions == 8 and transitions / 250 <= 0.2
