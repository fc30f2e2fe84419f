"""Start one ingest execution per new upload, named by its content-hash document id."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

from drac.aws.events import IngestInput, S3EventBridgeEvent
from drac.aws.lambda_support import correlate, logger
from drac.aws.runtime import Runtime
from drac.errors import DracError
from drac.ids import document_id_for
from drac.models import DocumentStatus


class PipelineFull(DracError):
    """Too many documents are being ingested; retry this message later."""


class StartResult(BaseModel):
    """What became of one upload: started, a duplicate, or gone before it could start."""

    outcome: Literal["started", "duplicate", "gone"]


def start_ingest(rt: Runtime, event: S3EventBridgeEvent) -> StartResult:
    """Start the ingest of an uploaded object once (the same content maps to the same
    execution name), keys only in the execution input.

    Raises PipelineFull when the ingest state machine already runs its maximum of documents.
    """
    obj = event.detail
    try:
        data = rt.bucket(obj.bucket).get_bytes(obj.key)
    except KeyError:
        logger.info("object is gone; nothing to ingest", extra={"key": obj.key})
        return StartResult(outcome="gone")
    document_id = document_id_for(data, obj.tenant)
    correlate(document_id, stage="start", key=obj.key)
    existing = rt.registry.get(document_id)
    if existing and existing.status in (DocumentStatus.INDEXED, DocumentStatus.PARTIAL):
        logger.info("already ingested", extra={"status": existing.status.value})
        return StartResult(outcome="duplicate")
    sfn = rt.client("stepfunctions")
    arn = rt.env.ingest_state_machine_arn
    running = sfn.list_executions(
        stateMachineArn=arn, statusFilter="RUNNING", maxResults=rt.env.max_running_documents
    )["executions"]
    if len(running) >= rt.env.max_running_documents:
        raise PipelineFull(f"{len(running)} documents in flight; retrying later")
    payload = IngestInput(
        document_id=document_id,
        tenant=obj.tenant,
        bucket=obj.bucket,
        key=obj.key,
        strategy=rt.env.strategy().model_dump(mode="json"),
    )
    try:
        sfn.start_execution(
            stateMachineArn=arn,
            name=document_id,
            input=json.dumps(payload.model_dump(mode="json"), sort_keys=True),
        )
    except sfn.exceptions.ExecutionAlreadyExists:
        logger.info("execution already exists; not started again")
        return StartResult(outcome="duplicate")
    return StartResult(outcome="started")
