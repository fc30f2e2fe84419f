"""Metadata that changes after its document was registered: a sidecar uploaded, replaced or
deleted later, or the document's `drac-` tags added or deleted (S3's "Object Tags Added" /
"Object Tags Deleted" events).

The event only says *that* something changed; what the document's metadata is now is read
from S3 itself (`current_metadata`: the document key's current version's user metadata and
tags, and the sidecar's current version), never from the event. So an event however late,
repeated or out of order (tag events carry no sequencer) can only apply the present state:
an old event never brings old metadata back. Two invocations racing converge too: each keeps
writing until the state it read from S3 after its write is the one the record holds.

When the record then differs from what its active plan version's chunks were indexed with
(Prepare's `metadata.json` of that version), a re-plan of just that document is started on
the re-plan machine, with the active version's strategy: the stored elements are planned
again (section plans come from the plan cache), no page is converted, Prepare stores the new
version's chunks with the record's metadata, and IndexChunks indexes them with the vectors
their unchanged texts already have in the index (drac.aws.vectors: no chunk is embedded
again). A new version, not an in-place update of the active one's documents, because the
active-version switch is what retrieval trusts: a failed update would leave the live version
half updated with nothing to go back to. A document still being ingested, or
with a metadata re-plan running, makes the event wait (`MetadataWaits`), like an upload
waits for room.
"""

from __future__ import annotations

import json
import uuid
from typing import Literal

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.events import INCOMING_PREFIX, ReplanRequest, S3EventBridgeEvent
from drac.aws.identity import REPLAN_ADMIN_SOURCE
from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics
from drac.aws.object_metadata import current_metadata
from drac.aws.runtime import Runtime
from drac.aws.stages.errors import MetadataWaits
from drac.errors import MetadataError
from drac.ids import digest_of
from drac.metadata import SIDECAR_SUFFIX, Metadata, is_sidecar
from drac.models import DocumentRecord, DocumentStatus

TAG_EVENTS = ("Object Tags Added", "Object Tags Deleted")
REPLAN_NAME_PREFIX = "meta"
CONVERGE_ATTEMPTS = 5
IN_FLIGHT = (DocumentStatus.REGISTERED, DocumentStatus.CONVERTED)
"""Statuses of a document an ingest is still working on (its metadata is read, or its
chunks are being planned and indexed)."""


class MetadataResult(BaseModel):
    """What became of one metadata event."""

    outcome: Literal["reindexing", "unchanged", "no_document", "not_live", "refused", "ignored"]
    document_id: str | None = None
    execution: str | None = None


def is_metadata_event(event: S3EventBridgeEvent) -> bool:
    """Whether the event changes a document's metadata rather than uploading a document: any
    event of a sidecar key, or a tag event."""
    return event.detail_type in TAG_EVENTS or is_sidecar(event.detail.key)


def apply_metadata_event(rt: Runtime, event: S3EventBridgeEvent) -> MetadataResult:
    """Bring the metadata of the document the event concerns up to date with S3, and start a
    re-plan of it when its indexed chunks carry other metadata.

    Raises MetadataWaits while the document is being ingested or a metadata re-plan of it
    runs. Metadata that breaks a limit leaves the record and the index as they were (logged,
    counted as MetadataRefused).
    """
    obj = event.detail
    if event.detail_type in TAG_EVENTS and is_sidecar(obj.key):
        return MetadataResult(outcome="ignored")  # a sidecar's own tags are nobody's metadata
    if is_sidecar(obj.key):
        metrics.add_metric(name="SidecarsSeen", unit=MetricUnit.Count, value=1)
    found = _document(rt, event)
    if found is None:
        logger.info(
            "metadata for a key that holds no document; nothing to do",
            extra={"key": obj.key, "detail_type": event.detail_type},
        )
        metrics.add_metric(name="MetadataWithoutDocument", unit=MetricUnit.Count, value=1)
        return MetadataResult(outcome="no_document")
    key, record = found
    document_id = record.document_id
    correlate(document_id, stage="metadata", key=key)
    if record.status in IN_FLIGHT:
        raise MetadataWaits(f"{document_id} is being ingested; its metadata waits")
    if not record.live or record.active_version is None:
        logger.info(
            "the document is not live; its next ingest reads the metadata",
            extra={"status": record.status.value},
        )
        return MetadataResult(outcome="not_live", document_id=document_id)
    try:
        metadata = _converge(rt, obj.bucket, key, document_id)
    except MetadataError as exc:
        logger.error("metadata refused; the document keeps its metadata", extra={"error": str(exc)})
        metrics.add_metric(name="MetadataRefused", unit=MetricUnit.Count, value=1)
        return MetadataResult(outcome="refused", document_id=document_id)
    current = rt.registry.get(document_id)  # as the write left it (a re-plan may have ended)
    if metadata is None or current is None or current.active_version is None:
        return MetadataResult(outcome="no_document", document_id=document_id)
    record, version = current, current.active_version
    if _indexed_metadata(rt, document_id, version) == metadata:
        return MetadataResult(outcome="unchanged", document_id=document_id)
    execution = _start_replan(rt, record, version, metadata)
    metrics.add_metric(name="MetadataReindexed", unit=MetricUnit.Count, value=1)
    return MetadataResult(outcome="reindexing", document_id=document_id, execution=execution)


def _document(rt: Runtime, event: S3EventBridgeEvent) -> tuple[str, DocumentRecord] | None:
    """The document key and record the event's key is metadata of (a sidecar's document is
    its key without the suffix), trying the key decoded, then as delivered."""
    for key in event.detail.key_forms:
        document_key = key[: -len(SIDECAR_SUFFIX)] if is_sidecar(key) else key
        if not document_key.startswith(INCOMING_PREFIX) or document_key.endswith("/"):
            continue
        document_id = rt.registry.document_of(document_key)
        record = rt.registry.get(document_id) if document_id else None
        if record is not None:
            return document_key, record
    return None


def _converge(rt: Runtime, bucket: str, key: str, document_id: str) -> Metadata | None:
    """Store the key's current metadata on the record until a read of S3 after the write
    finds what the record holds; return it (None when the key has no current version)."""
    s3 = rt.client("s3")
    for _ in range(CONVERGE_ATTEMPTS):
        metadata = current_metadata(s3, bucket, key)
        if metadata is None:
            return None
        record = rt.registry.get(document_id)
        if record is None:
            return None
        if record.metadata == metadata:
            return metadata
        rt.registry.update(document_id, metadata=metadata)
        logger.info("metadata stored", extra={"keys": sorted(metadata)})
    raise RuntimeError(f"the metadata of {key} keeps changing; the event is tried again")


def _indexed_metadata(rt: Runtime, document_id: str, version: int) -> Metadata | None:
    """The metadata a plan version's chunks were indexed with (None when not stored)."""
    try:
        stored = json.loads(rt.artifacts.get_text(keys.chunk_metadata_key(document_id, version)))
    except (KeyError, ValueError):
        return None
    return stored if isinstance(stored, dict) else None


def _start_replan(rt: Runtime, record: DocumentRecord, version: int, metadata: Metadata) -> str:
    """Start the re-plan of one document with its active version's strategy, unless a
    metadata re-plan of it runs already (MetadataWaits: two would race for the next version;
    once it has ended the event finds the index up to date, or starts the next)."""
    sfn = rt.client("stepfunctions")
    machine = rt.resources.replan_state_machine_arn
    document_id = record.document_id
    prefix = f"{REPLAN_NAME_PREFIX}-{document_id}-"
    pages = sfn.get_paginator("list_executions").paginate(
        stateMachineArn=machine, statusFilter="RUNNING"
    )
    running = [
        run["name"]
        for page in pages
        for run in page["executions"]
        if run["name"].startswith(prefix)
    ]
    if running:
        raise MetadataWaits(f"a metadata re-plan of {document_id} runs ({running[0]})")
    strategy = rt.plans.get_plan(document_id, version).strategy
    request = ReplanRequest(
        document_ids=[document_id],
        tenant=record.tenant or None,
        all=not record.tenant,
        strategy=strategy.model_dump(mode="json"),
    )
    payload = {
        "source": REPLAN_ADMIN_SOURCE,
        "detail-type": "Replan Requested",
        "detail": request.model_dump(mode="json", exclude_none=True),
    }
    digest = digest_of([json.dumps(metadata, sort_keys=True, ensure_ascii=False)], 12)
    name = f"{prefix}v{version}-{digest}-{uuid.uuid4().hex[:8]}"
    sfn.start_execution(
        stateMachineArn=machine, name=name, input=json.dumps(payload, sort_keys=True)
    )
    logger.info(
        "re-plan started for new metadata", extra={"execution": name, "from_version": version}
    )
    return name
