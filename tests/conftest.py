"""Fixtures shared by every test folder: the real-world corpus and a Lambda context."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus_cases import CORPUS, corpus_present


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The development corpus beside the repository; tests using it skip when it is absent."""
    if not corpus_present():
        pytest.skip(f"corpus not found at {CORPUS}")
    return CORPUS


@dataclass
class LambdaContext:
    """What powertools reads from a Lambda context (powertools' own test pattern)."""

    function_name: str = "papersift-test"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:papersift-test"
    aws_request_id: str = "52fdfc07-2182-154f-163f-5f0f9a621d72"

    def get_remaining_time_in_millis(self) -> int:
        return 600_000


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()
