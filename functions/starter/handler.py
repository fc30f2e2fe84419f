"""Start one ingest execution per new upload, named by its content-hash document id.

A duplicated event, or the same content uploaded again, maps to the same execution name and is
never processed twice. At most MAX_RUNNING_DOCUMENTS executions run at once: when the pipeline
is full the message goes back to the queue and is retried after its visibility timeout.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from drac.aws.events import S3EventBridgeEvent
from drac.aws.lambda_support import MetricUnit, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.starter import PipelineFull, start_ingest

processor = BatchProcessor(event_type=EventType.SQS)


def start_record(record: SQSRecord) -> dict[str, Any]:
    """Start (or skip) the ingest of one uploaded object; return what happened."""
    event = S3EventBridgeEvent.model_validate_json(record.body)
    try:
        result = start_ingest(_runtime(), event)
    except PipelineFull:
        metrics.add_metric(name="StartsDeferred", unit=MetricUnit.Count, value=1)
        raise
    if result.outcome == "started":
        metrics.add_metric(name="DocumentsStarted", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Process the SQS batch of S3 Object Created events, with partial batch failures."""
    return process_partial_response(
        event=event, record_handler=start_record, processor=processor, context=context
    )
