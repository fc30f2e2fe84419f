"""Start one ingest execution per upload (SQS batch of S3 Object Created events), and apply
metadata that changes later (sidecar events, Object Tags Added / Deleted).

A repeated event of one upload maps to the same execution name and starts nothing twice. At
most `maxRunningDocuments` executions run at once: when the pipeline is full a message is
hidden for a growing while (1 minute, 2, 4 ... at most 30) and reported as not done, so it
waits without burning its receives; so does new metadata of a document still being ingested.
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
from drac.aws.stages.starter import MustWait, defer, start_ingest

# A batch whose every upload waits (a full pipeline) is no error: report them as not done.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def start_record(record: SQSRecord) -> dict[str, Any]:
    """Start (or skip) the ingest of one upload; return what happened."""
    event = S3EventBridgeEvent.model_validate_json(record.body)
    rt = _runtime()
    try:
        result = start_ingest(rt, event)
    except MustWait as exc:
        receives = int(record.attributes.approximate_receive_count or 1)
        seconds = defer(rt, record.event_source_arn, record.receipt_handle, receives)
        logger.info("the event waits", extra={"seconds": seconds, "receives": receives,
                                              "reason": str(exc)})
        metrics.add_metric(name="StartsDeferred", unit=MetricUnit.Count, value=1)
        raise
    if result.outcome == "started":
        metrics.add_metric(name="DocumentsStarted", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Process the SQS batch of S3 Object Created events, with partial batch failures."""
    return process_partial_response(
        event=event, record_handler=start_record, processor=processor, context=context
    )
