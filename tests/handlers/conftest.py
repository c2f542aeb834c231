"""Handler tests: the real handler modules against moto, events loaded from events/."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

REPO = Path(__file__).resolve().parents[2]
BUCKET = "papersift-local"
TABLE = "papersift-documents"


@dataclass
class FakeLambdaContext:
    function_name: str = "test"
    memory_limit_in_mb: int = 2048
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:test"
    aws_request_id: str = "52fdfc07-2182-154f-163f-5f0f9a621d72"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


def load_event(name: str) -> dict[str, Any]:
    return json.loads((REPO / "events" / f"{name}.json").read_text(encoding="utf-8"))


def load_handler(name: str) -> ModuleType:
    """Import functions/<name>/app.py fresh, so its module-level clients bind to moto."""
    module_name = f"papersift_handler_{name}"
    spec = importlib.util.spec_from_file_location(module_name, REPO / "functions" / name / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def lambda_context() -> FakeLambdaContext:
    return FakeLambdaContext()


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    for var in ("AWS_ENDPOINT_URL", "MOTO_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "PapersiftTest")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "papersift")
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        dynamodb = boto3.client("dynamodb")
        dynamodb.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                              KeySchema=[{"AttributeName": "doc_id", "KeyType": "HASH"}],
                              AttributeDefinitions=[{"AttributeName": "doc_id", "AttributeType": "S"}])
        sfn = boto3.client("stepfunctions")
        role = "arn:aws:iam::123456789012:role/papersift-workflow"
        machine = sfn.create_state_machine(name="papersift", roleArn=role,
                                           definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}))
        monkeypatch.setenv("TABLE_NAME", TABLE)
        monkeypatch.setenv("STATE_MACHINE_ARN", machine["stateMachineArn"])
        yield {"s3": s3, "sfn": sfn, "table": boto3.resource("dynamodb").Table(TABLE),
               "state_machine_arn": machine["stateMachineArn"]}
