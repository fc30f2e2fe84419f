"""Start one ingest execution per upload: named by the document and the upload, so a repeated
event starts nothing twice while a re-upload of a FAILED or DELETED document starts anew.
Events that change a document's metadata (a sidecar's, tag events) go to
`drac.aws.stages.late_metadata` instead."""

from __future__ import annotations

import json
import random
from typing import Any, Literal

from pydantic import BaseModel

from drac.aws.events import IngestInput, S3EventBridgeEvent
from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics
from drac.aws.runtime import Runtime
from drac.aws.stages.errors import PipelineFull, WaitedTooLong
from drac.aws.stages.late_metadata import MetadataResult, apply_metadata_event, is_metadata_event
from drac.ids import ContentDigest, digest_of

READ_CHUNK = 1024 * 1024
BACKOFF_BASE_S = 60
BACKOFF_MAX_S = 900
"""Waiting messages come back after 1, 2, 4 ... minutes, at most every 15 minutes (the
longest delay SQS gives a message it is sent, SendMessage's DelaySeconds)."""
WAITS_ATTRIBUTE = "drac-waits"
"""Message attribute counting how often an upload waited (its copies carry it forward)."""
MAX_WAITS = 500
"""Waits before an upload stops waiting and counts as a failed start: at a quarter hour
apart, about four days (the queue keeps a message 14 days)."""


class StartResult(BaseModel):
    """What became of one upload event."""

    outcome: Literal["started", "duplicate", "stale", "ignored", "missing"]
    document_id: str | None = None
    execution: str | None = None


def execution_name(document_id: str, key: str, order: str) -> str:
    """The execution of one upload: the document, then a digest of the key and upload order."""
    return f"{document_id}-{digest_of([key, order], 16)}"


def start_ingest(rt: Runtime, event: S3EventBridgeEvent) -> StartResult | MetadataResult:
    """Start the ingest of one uploaded object version, keys only in the execution input.

    Folder keys and zero-byte objects are ignored; an event older than the key's last recorded
    upload is stale. A sidecar's events and tag events are metadata, never documents: they go
    to `drac.aws.stages.late_metadata`. Raises PipelineFull when the ingest machine already
    runs its maximum of documents, MetadataWaits when new metadata must wait for its
    document (the message then waits, see `backoff_seconds`).
    """
    obj = event.detail
    if is_metadata_event(event):
        return apply_metadata_event(rt, event)
    if event.detail_type != "Object Created" or obj.is_folder or obj.size == 0:
        logger.info(
            "not a document; ignored",
            extra={"key": obj.key, "size": obj.size, "detail_type": event.detail_type},
        )
        return StartResult(outcome="ignored")
    sfn = rt.client("stepfunctions")
    machine = rt.resources.ingest_state_machine_arn
    limit = rt.settings.cloud.max_running_documents
    running = sfn.list_executions(
        stateMachineArn=machine, statusFilter="RUNNING", maxResults=limit
    )["executions"]
    if len(running) >= limit:
        raise PipelineFull(f"{len(running)} documents in flight; this upload waits")
    digest = None
    for key in obj.key_forms:  # decoded, then as delivered: the version id decides
        digest = _hash_object(rt, obj.bucket, key, obj.version_id, obj.with_key(key).tenant)
        if digest is not None:
            obj = obj.with_key(key)
            break
    if digest is None:
        # Never silent: an upload whose object is found under no form of its key is counted
        # (UploadsNotFound has an alarm) and logged with both forms.
        logger.error(
            "no object under any form of the key; nothing ingested",
            extra={"key_forms": list(obj.key_forms), "version_id": obj.version_id},
        )
        metrics.add_metric(name="UploadsNotFound", unit=MetricUnit.Count, value=1)
        return StartResult(outcome="missing")
    document_id = digest.document_id
    correlate(document_id, stage="start", key=obj.key)
    claim = rt.registry.claim_source(obj.key, document_id, event.order)
    if not claim.claimed:
        logger.info("a later upload of this key is recorded; stale event ignored")
        return StartResult(outcome="stale", document_id=document_id)
    name = execution_name(document_id, obj.key, event.order)
    payload = IngestInput(
        document_id=document_id,
        tenant=obj.tenant,
        bucket=obj.bucket,
        key=obj.key,
        version_id=obj.version_id,
        sha256=digest.sha256,
        size=digest.size,
        previous_document=claim.previous,
        strategy=rt.settings.conversion.strategy.model_dump(mode="json"),
    )
    try:
        sfn.start_execution(
            stateMachineArn=machine,
            name=name,
            input=json.dumps(payload.model_dump(mode="json"), sort_keys=True),
        )
    except sfn.exceptions.ExecutionAlreadyExists:
        logger.info("this upload's execution exists already", extra={"execution": name})
        return StartResult(outcome="duplicate", document_id=document_id, execution=name)
    return StartResult(outcome="started", document_id=document_id, execution=name)


def _hash_object(
    rt: Runtime, bucket: str, key: str, version_id: str | None, tenant: str | None
) -> ContentDigest | None:
    """Stream the object version through the digest (memory stays flat for any size)."""
    s3 = rt.client("s3")
    request: dict[str, Any] = {"Bucket": bucket, "Key": key}
    if version_id:
        request["VersionId"] = version_id
    try:
        body = s3.get_object(**request)["Body"]
    except (s3.exceptions.NoSuchKey, s3.exceptions.ClientError) as exc:
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
        if code in ("NoSuchKey", "NoSuchVersion", "404"):
            return None
        raise
    digest = ContentDigest(tenant)
    for piece in body.iter_chunks(READ_CHUNK):
        digest.update(piece)
    return digest


def backoff_seconds(receive_count: int, rng: random.Random | None = None) -> int:
    """How long a waiting message stays invisible after its `receive_count`-th receive:
    exponential from a minute, capped at half an hour, with jitter so waiting uploads spread."""
    ceiling = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** max(0, receive_count - 1))
    return int((rng or random).uniform(ceiling / 2, ceiling))


def queue_url(queue_arn: str) -> str:
    """The URL of a queue from its ARN."""
    _, _, _, region, account, name = queue_arn.split(":", 5)
    return f"https://sqs.{region}.amazonaws.com/{account}/{name}"


def requeue(rt: Runtime, queue_arn: str, body: str, waits: int) -> int:
    """Send a copy of a message that must wait, delayed by `backoff_seconds(waits)` and
    carrying its count of waits; return the delay. The original is then deleted, so its
    receive count (and the queue's maxReceiveCount) counts failures only, never waits.

    Raises WaitedTooLong after MAX_WAITS waits."""
    if waits > MAX_WAITS:
        raise WaitedTooLong(f"waited {waits - 1} times (several days): no longer waiting")
    seconds = backoff_seconds(waits)
    rt.client("sqs").send_message(
        QueueUrl=queue_url(queue_arn),
        MessageBody=body,
        DelaySeconds=seconds,
        MessageAttributes={WAITS_ATTRIBUTE: {"DataType": "Number", "StringValue": str(waits)}},
    )
    return seconds
