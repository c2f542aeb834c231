"""What Lambda's SQS poller does on AWS, done by hand: moto delivers a message to the event source
mapping only at the moment it is sent, so a message left visible after a failed ingest would
never be retried. Past ``maxReceiveCount`` receives moto moves it to the dead-letter queue."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: ingest as the poller calls it: an SQS event in, (response payload, whether it raised) out
IngestCall = Callable[[dict[str, Any]], tuple[Any, bool]]


class QueuePoller:
    def __init__(self, sqs: Any, queue_url: str, queue_arn: str, dlq_url: str, region: str) -> None:
        self.sqs = sqs
        self.queue_url = queue_url
        self.queue_arn = queue_arn
        self.dlq_url = dlq_url
        self.region = region

    def pending(self) -> int:
        """Messages waiting, delayed (drops ingest deferred) or in flight in the drop queue."""
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                 "ApproximateNumberOfMessagesDelayed"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=names)["Attributes"]
        return sum(int(attributes[name]) for name in names)

    def redeliver(self, ingest: IngestCall) -> int:
        """Receive what is visible and hand it to ingest in an SQS-shaped event, deleting what ingest
        did not report as a batch item failure and making that visible again at once (on AWS after
        the visibility timeout). Returns the number of messages received.

        The batch is hidden while ingest runs, as Lambda's poller hides it: a message ingest sends
        meanwhile (a deferred drop) is handed to the event source mapping at once by moto, which
        must not receive this batch a second time."""
        response = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10,
                                            AttributeNames=["All"], MessageAttributeNames=["All"])
        messages = response.get("Messages", [])
        if not messages:
            return 0
        event = {"Records": [{
            "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
            "attributes": m.get("Attributes", {}), "messageAttributes": _lambda_attributes(m),
            "md5OfBody": m["MD5OfBody"], "eventSource": "aws:sqs", "eventSourceARN": self.queue_arn,
            "awsRegion": self.region,
        } for m in messages]}
        payload, raised = ingest(event)
        failures = payload.get("batchItemFailures", []) if isinstance(payload, dict) and not raised else []
        failed = {f.get("itemIdentifier") for f in failures}
        for message in messages:
            if raised or message["MessageId"] in failed:
                self.sqs.change_message_visibility(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"],
                                                   VisibilityTimeout=0)
            else:
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return len(messages)

    def dead_letters(self) -> list[dict[str, Any]]:
        """The bodies in the dead-letter queue (parsed; unparseable ones are skipped), left in it:
        each is received once (hidden for a moment, so the next receive returns the others) and
        then made visible again."""
        bodies: list[dict[str, Any]] = []
        handles: list[str] = []
        while messages := self.sqs.receive_message(QueueUrl=self.dlq_url, MaxNumberOfMessages=10,
                                                   VisibilityTimeout=60).get("Messages", []):
            for message in messages:
                handles.append(message["ReceiptHandle"])
                try:
                    body = json.loads(message["Body"])
                except json.JSONDecodeError:
                    continue
                if isinstance(body, dict):
                    bodies.append(body)
        for handle in handles:
            self.sqs.change_message_visibility(QueueUrl=self.dlq_url, ReceiptHandle=handle, VisibilityTimeout=0)
        return bodies


def _lambda_attributes(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A received message's attributes as Lambda's SQS event spells them."""
    return {name: {"stringValue": value.get("StringValue"), "binaryValue": value.get("BinaryValue"),
                   "stringListValues": [], "binaryListValues": [], "dataType": value["DataType"]}
            for name, value in message.get("MessageAttributes", {}).items()}
