"""Start one ingest execution per new upload, named by its content-hash document id.

A duplicated event, or the same content uploaded again, maps to the same execution name and is
never processed twice. At most MAX_RUNNING_DOCUMENTS executions run at once: when the pipeline
is full the message goes back to the queue and is retried after its visibility timeout.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from drac.aws.events import IngestInput, S3EventBridgeEvent
from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.errors import DracError

processor = BatchProcessor(event_type=EventType.SQS)


class PipelineFull(DracError):
    """Too many documents are being ingested; retry this message later."""


def start_record(record: SQSRecord) -> str:
    """Start (or skip) the ingest of one uploaded object; return what happened."""
    from drac.ids import document_id_for
    from drac.models import DocumentStatus

    rt = _runtime()
    obj = S3EventBridgeEvent.model_validate(json.loads(record.body)).detail
    try:
        data = rt.bucket(obj.bucket).get_bytes(obj.key)
    except KeyError:
        logger.info("object is gone; nothing to ingest", extra={"key": obj.key})
        return "gone"
    document_id = document_id_for(data, obj.tenant)
    correlate(document_id, stage="start", key=obj.key)
    existing = rt.registry.get(document_id)
    if existing and existing.status in (DocumentStatus.INDEXED, DocumentStatus.PARTIAL):
        logger.info("already ingested", extra={"status": existing.status.value})
        return "duplicate"
    sfn = rt.client("stepfunctions")
    arn = rt.env.ingest_state_machine_arn
    running = sfn.list_executions(
        stateMachineArn=arn, statusFilter="RUNNING", maxResults=rt.env.max_running_documents
    )["executions"]
    if len(running) >= rt.env.max_running_documents:
        metrics.add_metric(name="StartsDeferred", unit=MetricUnit.Count, value=1)
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
        return "duplicate"
    metrics.add_metric(name="DocumentsStarted", unit=MetricUnit.Count, value=1)
    return "started"


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Process the SQS batch of S3 Object Created events, with partial batch failures."""
    return process_partial_response(
        event=event, record_handler=start_record, processor=processor, context=context
    )
