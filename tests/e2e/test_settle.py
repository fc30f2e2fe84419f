"""The harness waits for the whole pipeline: an upload that waits its turn is sent back to its
queue with a delay, and while delayed SQS counts it only as ApproximateNumberOfMessagesDelayed
(SQS Developer Guide, "Amazon SQS delay queues"; GetQueueAttributes). A harness blind to it
once read a stack as idle with one document still to start."""

from __future__ import annotations

import json
from typing import Any

import boto3


def test_a_delayed_message_keeps_the_stack_busy_until_it_is_handled(cloud: Any) -> None:
    deployed, _bedrock, _opensearch, _pdf = cloud
    [ingest] = [p.source.queue for p in deployed.pollers
                if p.source.function.name.startswith("Drac-Starter")]
    folder = {"detail-type": "Object Created", "source": "aws.s3",
              "detail": {"bucket": {"name": deployed.documents_bucket},
                         "object": {"key": "incoming/acme/folder/", "size": 0}}}
    boto3.client("sqs", region_name=deployed.region).send_message(
        QueueUrl=ingest.url, MessageBody=json.dumps(folder), DelaySeconds=2)
    assert any("ApproximateNumberOfMessagesDelayed" in p and "'1'" in p
               for p in deployed.busy())
    deployed.settle(60)
    assert deployed.busy() == []
