"""A burst of uploads against a small pipeline, on a simulated clock.

The real starter handler takes SQS batches from a simulated queue (visibility timeouts,
receive counts, a dead-letter queue after the stack's maxReceiveCount, delayed messages with
attributes: a waiting upload is sent again, delayed) and starts executions
on a simulated Step Functions whose executions end after a simulated duration. The uploads
and the source registry are in memory (their moto-backed adapters are tested elsewhere; here
they would only make the test slow). Nothing waits for real: the clock jumps to the next
event.
"""

from __future__ import annotations

import heapq
import io
import json
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.response import StreamingBody
from handlers import LambdaContext, load_handler

from drac.aws.runtime import CloudResources, Runtime
from drac.aws.stages import starter as starter_stage
from drac.ports import SourceClaim
from drac.settings import Settings
from infra.intake import INGEST_RECEIVES

UPLOADS = 2000
MAX_RUNNING = 8
STARTERS = 2  # the event source mapping's maximum concurrency
BATCH = 5
VISIBILITY_S = 6 * 60  # the ingest queue's visibility timeout (the starter's timeout + 1 min)
POLL_S = 20


@dataclass
class Message:
    id: str
    body: str
    visible_at: float = 0.0
    receives: int = 0
    receipt: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class SimulatedQueue:
    """SQS as the event source mapping sees it, on the simulated clock."""

    clock: list[float]
    messages: dict[str, Message] = field(default_factory=dict)
    dead_letters: list[Message] = field(default_factory=list)
    hidden_for: list[int] = field(default_factory=list)
    peak_receives: int = 0

    def receive(self, count: int) -> list[Message]:
        now = self.clock[0]
        visible = sorted((m for m in self.messages.values() if m.visible_at <= now),
                         key=lambda m: m.visible_at)[:count]
        taken = []
        for message in visible:
            message.receives += 1
            self.peak_receives = max(self.peak_receives, message.receives)
            if message.receives > INGEST_RECEIVES:
                self.dead_letters.append(self.messages.pop(message.id))
                continue
            message.visible_at = now + VISIBILITY_S
            message.receipt += 1
            taken.append(message)
        return taken

    def delete(self, message: Message) -> None:
        self.messages.pop(message.id, None)

    def change_message_visibility(self, QueueUrl: str, ReceiptHandle: str,
                                  VisibilityTimeout: int) -> dict[str, Any]:
        message_id, receipt = ReceiptHandle.rsplit("#", 1)
        message = self.messages[message_id]
        assert int(receipt) == message.receipt, "a stale receipt handle"
        assert 0 <= VisibilityTimeout <= 12 * 3600, "SQS allows up to 12 hours"
        message.visible_at = self.clock[0] + VisibilityTimeout
        self.hidden_for.append(VisibilityTimeout)
        return {}

    def send_message(self, QueueUrl: str, MessageBody: str, DelaySeconds: int = 0,
                     MessageAttributes: dict[str, Any] | None = None) -> dict[str, Any]:
        assert 0 <= DelaySeconds <= 900, "SQS delays a message up to 15 minutes"
        message_id = f"copy-{len(self.hidden_for)}-{self.clock[0]}"
        attributes = {name: {"stringValue": value["StringValue"],
                             "dataType": value["DataType"]}
                      for name, value in (MessageAttributes or {}).items()}
        self.messages[message_id] = Message(message_id, MessageBody,
                                            visible_at=self.clock[0] + DelaySeconds,
                                            attributes=attributes)
        self.hidden_for.append(DelaySeconds)
        return {"MessageId": message_id}


class MemoryObjects:
    """The uploads, served as S3's GetObject serves them (a streaming body)."""

    class exceptions:
        NoSuchKey = KeyError
        ClientError = KeyError

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:
        data = self.objects[Key]
        return {"Body": StreamingBody(io.BytesIO(data), len(data))}


class MemorySources:
    """Source claims in memory (the registry port's claim, nothing else is used here)."""

    def __init__(self) -> None:
        self.claims: dict[str, tuple[str, str]] = {}

    def claim_source(self, source: str, document_id: str, order: str) -> SourceClaim:
        stored = self.claims.get(source)
        if stored is not None and stored[1] > order:
            return SourceClaim(claimed=False)
        self.claims[source] = (document_id, order)
        return SourceClaim(claimed=True)


@dataclass
class SimulatedStepFunctions:
    """Executions that run for a while on the simulated clock."""

    clock: list[float]
    rng: random.Random
    ends: dict[str, float] = field(default_factory=dict)
    peak_running: int = 0

    class exceptions:
        class ExecutionAlreadyExists(Exception):
            pass

    def running(self) -> list[str]:
        return [name for name, end in self.ends.items() if end > self.clock[0]]

    def list_executions(self, stateMachineArn: str, statusFilter: str,
                        maxResults: int) -> dict[str, Any]:
        assert statusFilter == "RUNNING"
        return {"executions": [{"name": n} for n in self.running()[:maxResults]]}

    def start_execution(self, stateMachineArn: str, name: str,
                        input: str) -> dict[str, Any]:
        if name in self.ends:
            raise self.exceptions.ExecutionAlreadyExists(name)
        self.ends[name] = self.clock[0] + self.rng.uniform(120, 600)
        self.peak_running = max(self.peak_running, len(self.running()))
        return {"executionArn": f"arn:{name}"}


@pytest.mark.slow
def test_a_burst_of_2000_uploads_all_start_without_dead_letters() -> None:
    rng = random.Random(42)
    clock = [0.0]
    queue = SimulatedQueue(clock)
    sfn = SimulatedStepFunctions(clock, rng)
    uploads = MemoryObjects()
    rt = Runtime(CloudResources(ingest_state_machine_arn="arn:ingest"),
                 Settings(max_running_documents=MAX_RUNNING), session=None)
    rt._clients.update({"stepfunctions": sfn, "sqs": queue, "s3": uploads})
    rt.__dict__["registry"] = MemorySources()
    for number in range(UPLOADS):
        key = f"incoming/burst/doc-{number:04d}.md"
        uploads.objects[key] = f"# Doc {number}\n\ntext {number}\n".encode()
        body = {"detail-type": "Object Created", "source": "aws.s3", "time": "",
                "detail": {"bucket": {"name": "docs"},
                           "object": {"key": key, "size": 20, "sequencer": f"{number:016X}"}}}
        queue.messages[str(number)] = Message(str(number), json.dumps(body))
    handler = load_handler("starter")
    handler._runtime = lambda: rt
    handler.logger.setLevel("WARNING")  # tens of thousands of "upload waits" lines otherwise
    original = starter_stage.random.uniform
    starter_stage.random.uniform = rng.uniform  # type: ignore[assignment]
    try:
        events = [0.0]
        while queue.messages:
            clock[0] = heapq.heappop(events)
            for _ in range(STARTERS):
                batch = queue.receive(BATCH)
                if not batch:
                    break
                records = [{"messageId": m.id, "receiptHandle": f"{m.id}#{m.receipt}",
                            "body": m.body,
                            "attributes": {"ApproximateReceiveCount": str(m.receives)},
                            "messageAttributes": m.attributes, "md5OfBody": "",
                            "eventSource": "aws:sqs",
                            "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:ingest",
                            "awsRegion": "us-east-1"} for m in batch]
                result = handler.handler({"Records": records}, LambdaContext())
                failed = {item["itemIdentifier"] for item in result["batchItemFailures"]}
                for message in batch:
                    if message.id not in failed:
                        queue.delete(message)
            upcoming = [m.visible_at for m in queue.messages.values()]
            upcoming += [end for end in sfn.ends.values() if end > clock[0]]
            if upcoming:
                heapq.heappush(events, max(clock[0] + POLL_S, min(upcoming)))
    finally:
        starter_stage.random.uniform = original  # type: ignore[assignment]
        handler.logger.setLevel("INFO")

    assert queue.dead_letters == []
    assert len(sfn.ends) == UPLOADS, "every upload started exactly once"
    # waiting burned no receives: a message that waited was sent again as a fresh copy
    assert queue.peak_receives == 1
    assert sfn.peak_running <= MAX_RUNNING
    assert sfn.peak_running == MAX_RUNNING, "the pipeline was kept full"
    # waiting messages were hidden for growing times, up to the cap, not re-received at once
    assert max(queue.hidden_for) >= starter_stage.BACKOFF_MAX_S // 2
    hours = clock[0] / 3600
    assert hours < 48


def test_a_warm_starter_logs_nothing_of_its_last_invocations_document() -> None:
    # Powertools keeps appended keys on the logger, which outlives an invocation
    queue, uploads = SimulatedQueue([0.0]), MemoryObjects()
    sfn = SimulatedStepFunctions([0.0], random.Random(1))
    rt = Runtime(CloudResources(ingest_state_machine_arn="arn:ingest"),
                 Settings(max_running_documents=MAX_RUNNING), session=None)
    rt._clients.update({"stepfunctions": sfn, "sqs": queue, "s3": uploads})
    rt.__dict__["registry"] = MemorySources()
    uploads.objects["incoming/acme/a.md"] = b"# A\n\ntext\n"
    uploads.objects["incoming/acme/folder/"] = b""
    handler = load_handler("starter")
    handler._runtime = lambda: rt
    written = io.StringIO()
    previous = handler.logger.registered_handler.setStream(written)
    for number, key in enumerate(["incoming/acme/a.md", "incoming/acme/folder/"]):
        body = {"detail-type": "Object Created", "source": "aws.s3", "time": "",
                "detail": {"bucket": {"name": "docs"},
                           "object": {"key": key, "size": 10, "sequencer": f"{number:016X}"}}}
        record = {"messageId": str(number), "receiptHandle": f"{number}#1",
                  "body": json.dumps(body), "attributes": {"ApproximateReceiveCount": "1"},
                  "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
                  "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:ingest",
                  "awsRegion": "us-east-1"}
        handler.handler({"Records": [record]}, LambdaContext())
    handler.logger.registered_handler.setStream(previous)
    lines = [json.loads(line) for line in written.getvalue().splitlines()]
    ignored = [line for line in lines if line["message"] == "not a document; ignored"]
    assert ignored and ignored[0]["key"] == "incoming/acme/folder/"
    assert "document_id" not in ignored[0] and "stage" not in ignored[0], ignored[0]
