"""The end of an ingest (done or failed) and the deletion of an upload."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

from drac.aws.events import S3EventBridgeEvent
from drac.aws.lambda_support import correlate, logger
from drac.aws.runtime import Runtime
from drac.commit import clean_up_failure, release_source, retire_if_orphaned


class FinaliseInput(BaseModel):
    """The Finalise / MarkFailed states' payload."""

    document_id: str
    execution: str
    outcome: Literal["SUCCEEDED", "FAILED"]
    previous_document: str | None = None
    error: str = "Error"
    cause: str | None = ""


class FinalStatus(BaseModel):
    """The document's status when this run ended, and the documents it retired."""

    document_id: str
    status: str
    retired: list[str]


class Deleted(BaseModel):
    """The document retired by a deletion (None when another key still holds it)."""

    key: str
    retired: str | None = None


def finalise_document(rt: Runtime, event: FinaliseInput) -> FinalStatus:
    """End an ingest run: on failure mark the document FAILED (if this run still owns it)
    and delete what it indexed; either way retire the document the key held before when no
    key holds it any more, and, after a success, this one too (its key may have moved on to
    a later upload while it was ingested)."""
    document_id = event.document_id
    candidates = [event.previous_document]
    if event.outcome == "FAILED":
        error = f"{event.error}: {_message(event.cause)}"
        if rt.registry.mark_failed(document_id, error, owner=event.execution):
            clean_up_failure(rt.registry, rt.index(), document_id)
            logger.error("document failed", extra={"error": error})
    else:
        candidates.append(document_id)
    index = rt.index()
    retired = [
        candidate
        for candidate in dict.fromkeys(filter(None, candidates))
        if retire_if_orphaned(rt.registry, index, candidate)
    ]
    record = rt.registry.get(document_id)
    status = record.status.value if record else "UNKNOWN"
    logger.info("ingest ended", extra={"status": status, "retired": retired})
    return FinalStatus(document_id=document_id, status=status, retired=retired)


def delete_object(rt: Runtime, event: S3EventBridgeEvent) -> Deleted:
    """An object (version) was deleted: unless a current version remains, forget the key
    (ignoring a delete older than the key's last recorded upload) and retire its document if
    no other key holds it."""
    obj = event.detail
    if obj.is_folder:
        return Deleted(key=obj.key)
    bucket = rt.bucket(obj.bucket)
    for key in obj.key_forms:  # decoded, then as delivered; a form still present is kept
        if bucket.exists(key):
            logger.info("the key still has a current version; kept", extra={"key": key})
            continue
        retired = release_source(rt.registry, rt.index(), key, event.order)
        if retired:
            correlate(retired, stage="delete")
            logger.info("document retired", extra={"key": key})
            return Deleted(key=key, retired=retired)
    return Deleted(key=obj.key)


def _message(cause: str | None) -> str | None:
    """The readable part of a Step Functions cause (often a Lambda error as JSON)."""
    try:
        data = json.loads(cause)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return cause
    if isinstance(data, dict):
        return str(data.get("errorMessage") or data.get("Cause") or cause)
    return cause
