"""Handler tests: the real handler modules against moto, events loaded from events/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from handler_env import BUCKET, TABLE
from moto import mock_aws


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
        definition = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
        machine = sfn.create_state_machine(name="papersift", roleArn=role, definition=definition)
        monkeypatch.setenv("TABLE_NAME", TABLE)
        monkeypatch.setenv("STATE_MACHINE_ARN", machine["stateMachineArn"])
        yield {"s3": s3, "sfn": sfn, "table": boto3.resource("dynamodb").Table(TABLE),
               "state_machine_arn": machine["stateMachineArn"]}
