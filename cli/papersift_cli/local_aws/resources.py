"""The stack's resources, created directly in moto (deploying the synthesized CloudFormation
template into moto does not work): the same names, limits and function settings, read from
``infra.deployment``, and the same workflow definition, from ``infra.workflow``."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from infra import deployment
from infra.workflow import load_definition
from papersift import listing
from papersift.layout import INCOMING_PREFIX

REGION = "us-east-1"
ACCOUNT_ID = "123456789012"


def state_machine_arn(prefix: str) -> str:
    """Known before the machine exists: the handlers' environment names it at import."""
    return f"arn:aws:states:{REGION}:{ACCOUNT_ID}:stateMachine:{deployment.STATE_MACHINE.named(prefix)}"


def function_name(prefix: str, spec: deployment.FunctionSpec) -> str:
    return f"{prefix}-{spec.name}"


@dataclass(frozen=True)
class Resources:
    bucket: str
    table_name: str
    queue_url: str
    queue_arn: str
    dlq_url: str
    state_machine_arn: str
    #: short function name (``deployment.FunctionSpec.name``) -> ARN
    function_arns: Mapping[str, str]


def create_resources(client: Callable[[str], Any], prefix: str, environment: Mapping[str, str],
                     export: bool = False) -> Resources:
    """Bucket (versioned, notifying the queue of drops), queue and DLQ, table, the functions (a dummy
    zip: the code runs in-process), the state machine (with the export step when ``export``,
    Settings.export_parquet, as the stack builds it) and the queue -> ingest event source mapping."""
    s3, sqs, ddb = client("s3"), client("sqs"), client("dynamodb")
    bucket = deployment.BUCKET.named(prefix)
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    table_name = deployment.TABLE.named(prefix)
    ddb.create_table(
        TableName=table_name,
        KeySchema=[{"AttributeName": deployment.TABLE_KEY, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in listing.KEY_ATTRIBUTES],
        # the API's listing: the stack's sparse indexes (papersift.listing)
        GlobalSecondaryIndexes=[{
            "IndexName": index.name,
            "KeySchema": [{"AttributeName": index.partition, "KeyType": "HASH"},
                          {"AttributeName": index.sort, "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(listing.PROJECTED)},
        } for index in listing.INDEXES],
        BillingMode="PAY_PER_REQUEST",
    )
    dlq_url = sqs.create_queue(QueueName=deployment.DEAD_LETTER_QUEUE.named(prefix))["QueueUrl"]
    redrive = {"deadLetterTargetArn": _queue_arn(sqs, dlq_url), "maxReceiveCount": deployment.MAX_RECEIVE_COUNT}
    queue_url = sqs.create_queue(
        QueueName=deployment.QUEUE.named(prefix),
        Attributes={"VisibilityTimeout": str(deployment.QUEUE_VISIBILITY_TIMEOUT_SECONDS),
                    "RedrivePolicy": json.dumps(redrive)},
    )["QueueUrl"]
    queue_arn = _queue_arn(sqs, queue_url)
    s3.put_bucket_notification_configuration(
        Bucket=bucket,
        NotificationConfiguration={
            "QueueConfigurations": [{
                "QueueArn": queue_arn,
                "Events": ["s3:ObjectCreated:*"],
                "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": INCOMING_PREFIX}]}},
            }]
        },
    )
    # S3 sends an s3:TestEvent when notifications are configured; AWS's would reach ingest
    # before any document, here it would ride along with the first one. Drop it.
    sqs.purge_queue(QueueUrl=queue_url)
    role_arn = _create_role(client("iam"), prefix)
    function_arns = _create_functions(client("lambda"), prefix, role_arn, environment)
    steps = (*deployment.WORKFLOW_FUNCTIONS, *deployment.OPTIONAL_FUNCTIONS)  # every function is created here
    arns = {spec.placeholder: function_arns[spec.name] for spec in steps}
    machine = client("stepfunctions").create_state_machine(
        name=deployment.STATE_MACHINE.named(prefix), definition=load_definition(arns, export), roleArn=role_arn,
        type="STANDARD",
    )
    client("lambda").create_event_source_mapping(EventSourceArn=queue_arn, FunctionName=function_arns["ingest"],
                                                 BatchSize=deployment.INGEST_BATCH_SIZE, Enabled=True)
    return Resources(bucket=bucket, table_name=table_name, queue_url=queue_url, queue_arn=queue_arn,
                     dlq_url=dlq_url, state_machine_arn=machine["stateMachineArn"], function_arns=function_arns)


def _queue_arn(sqs: Any, url: str) -> str:
    return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


def _create_role(iam: Any, prefix: str) -> str:
    trust = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"Service": ["lambda.amazonaws.com", "states.amazonaws.com"]}}]}
    return str(iam.create_role(RoleName=f"{prefix}-role", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"])


def _create_functions(lam: Any, prefix: str, role_arn: str, environment: Mapping[str, str]) -> dict[str, str]:
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    raise RuntimeError('runs in-process')\n")
    # informational: the handlers share this process's environment
    variables = {k: v for k, v in environment.items() if not k.startswith("AWS_")}
    arns: dict[str, str] = {}
    for spec in deployment.FUNCTIONS:
        response = lam.create_function(
            FunctionName=function_name(prefix, spec),
            Runtime=deployment.RUNTIME,
            Role=role_arn,
            Handler=deployment.HANDLER,
            Code={"ZipFile": buffer.getvalue()},
            Timeout=spec.timeout_seconds,
            MemorySize=spec.memory_mb,
            Environment={"Variables": variables},
        )
        arns[spec.name] = response["FunctionArn"]
    return arns
