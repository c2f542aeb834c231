"""Fixtures shared by every test folder: the real-world corpus and a Lambda context."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
CORPUS_DIR = (REPO_ROOT / ".." / "shared" / "corpus").resolve()


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The development corpus beside the repository; tests using it skip when it is absent."""
    if not (CORPUS_DIR / "MANIFEST.tsv").is_file():
        pytest.skip(f"corpus not found at {CORPUS_DIR}")
    return CORPUS_DIR


@dataclass
class FakeLambdaContext:
    """The attributes powertools reads from a Lambda context."""

    function_name: str = "papersift-test"
    memory_limit_in_mb: int = 3008
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:papersift-test"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


@pytest.fixture
def lambda_context() -> FakeLambdaContext:
    return FakeLambdaContext()
