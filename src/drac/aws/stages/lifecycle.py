"""End of a document's life cycle: its final status after ingest, and its deletion."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

from drac.aws.events import S3EventBridgeEvent
from drac.aws.lambda_support import correlate, logger
from drac.aws.runtime import Runtime
from drac.models import DocumentStatus


class FinaliseInput(BaseModel):
    """The Finalise / MarkFailed states' payload."""

    document_id: str
    outcome: Literal["SUCCEEDED", "FAILED"]
    failed_batches: int = 0
    plan_version: int | None = None
    chunks: int | None = None
    error: str = "Error"
    cause: str | None = ""


class FinalStatus(BaseModel):
    """The document's final status."""

    document_id: str
    status: str


class Deleted(BaseModel):
    """The documents a deletion marked DELETED."""

    document_ids: list[str]


def finalise_document(rt: Runtime, event: FinaliseInput) -> FinalStatus:
    """Mark the document FAILED (with the error), or INDEXED / PARTIAL (when batches failed)
    and delete the older documents uploaded under the same key."""
    document_id = event.document_id
    if event.outcome == "FAILED":
        error = f"{event.error}: {_message(event.cause)}"
        record = rt.registry.set_status(document_id, DocumentStatus.FAILED, error=error[:2000])
        logger.error("document failed", extra={"error": error})
        return FinalStatus(document_id=document_id, status=record.status.value)
    status = DocumentStatus.PARTIAL if event.failed_batches > 0 else DocumentStatus.INDEXED
    record = rt.registry.set_status(document_id, status)
    superseded = [
        other for other in rt.registry.by_source(record.source_path or "") if other != document_id
    ]
    for other in superseded:
        _delete(rt, other)
    logger.info("document done", extra={"status": status.value, "superseded": superseded})
    return FinalStatus(document_id=document_id, status=status.value)


def delete_document(rt: Runtime, event: S3EventBridgeEvent) -> Deleted:
    """Remove the chunks of the documents stored from a deleted object and mark them DELETED,
    unless the object still has a current version."""
    obj = event.detail
    if rt.bucket(obj.bucket).exists(obj.key):
        logger.info("object still has a current version; nothing to delete", extra={"key": obj.key})
        return Deleted(document_ids=[])
    deleted = []
    for document_id in rt.registry.by_source(obj.key):
        correlate(document_id, stage="delete")
        removed = _delete(rt, document_id)
        logger.info("document deleted", extra={"chunks_removed": removed})
        deleted.append(document_id)
    return Deleted(document_ids=deleted)


def _delete(rt: Runtime, document_id: str) -> int:
    """Remove a document's chunks from the index and mark it DELETED; return the count removed."""
    removed = rt.index().delete(document_id)
    rt.registry.set_status(document_id, DocumentStatus.DELETED, active_version=None)
    return removed


def _message(cause: str | None) -> str | None:
    """The readable part of a Step Functions cause (often a Lambda error as JSON)."""
    try:
        data = json.loads(cause)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return cause
    if isinstance(data, dict):
        return str(data.get("errorMessage") or data.get("Cause") or cause)
    return cause
