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
        """Messages waiting or in flight in the drop queue."""
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=self.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])

    def redeliver(self, ingest: IngestCall) -> int:
        """Receive what is visible and hand it to ingest in an SQS-shaped event, deleting what ingest
        did not report as a batch item failure. Returns the number of messages received."""
        response = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0,
                                            AttributeNames=["All"])
        messages = response.get("Messages", [])
        if not messages:
            return 0
        event = {"Records": [{
            "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
            "attributes": m.get("Attributes", {}), "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
            "eventSource": "aws:sqs", "eventSourceARN": self.queue_arn, "awsRegion": self.region,
        } for m in messages]}
        payload, raised = ingest(event)
        if raised:
            return len(messages)
        failures = payload.get("batchItemFailures", []) if isinstance(payload, dict) else []
        failed = {f.get("itemIdentifier") for f in failures}
        for message in messages:
            if message["MessageId"] not in failed:
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
