"""S3 Object Deleted (via SQS): remove the document's chunks and mark it DELETED."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from drac.aws.events import S3EventBridgeEvent
from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime

processor = BatchProcessor(event_type=EventType.SQS)


def delete_record(record: SQSRecord) -> list[str]:
    """Handle one deletion event; return the ids marked DELETED."""
    from drac.models import DocumentStatus

    rt = _runtime()
    event = S3EventBridgeEvent.model_validate(json.loads(record.body))
    obj = event.detail
    if rt.bucket(obj.bucket).exists(obj.key):
        logger.info("object still has a current version; nothing to delete", extra={"key": obj.key})
        return []
    deleted = []
    for document_id in rt.registry.by_source(obj.key):
        correlate(document_id, stage="delete")
        removed = rt.index().delete(document_id)
        rt.registry.set_status(document_id, DocumentStatus.DELETED, active_version=None)
        logger.info("document deleted", extra={"chunks_removed": removed})
        deleted.append(document_id)
    return deleted


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Process the SQS batch, reporting failed messages individually."""
    return process_partial_response(
        event=event, record_handler=delete_record, processor=processor, context=context
    )
