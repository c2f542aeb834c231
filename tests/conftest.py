"""Fixtures shared by every test folder: the real-world corpus and a Lambda context."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_cases import CORPUS, corpus_present

from papersift_cli.local_aws import FakeLambdaContext


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The development corpus beside the repository; tests using it skip when it is absent."""
    if not corpus_present():
        pytest.skip(f"corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def lambda_context() -> FakeLambdaContext:
    """The context the local runner gives handlers, so tests and `papersift run` agree."""
    return FakeLambdaContext(function_name="papersift-test",
                             invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:papersift-test")
