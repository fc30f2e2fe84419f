"""Start one ingest execution per upload (SQS batch of S3 Object Created events), and apply
metadata that changes later (sidecar events, Object Tags Added / Deleted).

A repeated event of one upload maps to the same execution name and starts nothing twice. At
most `maxRunningDocuments` executions run at once: when the pipeline is full, or an AWS call
was throttled or failed transiently, the upload waits: a copy of its message is sent again
with a growing delay (1 minute, 2, 4 ... at most 15) and the original is deleted, so waiting
burns no receives; so does new metadata of a document still being ingested. Any other error
is counted (`StartsFailed`, alarmed) and the message comes back after the visibility
timeout: after the queue's few receives it is in the dead-letter queue.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from drac.aws.errors import TransientError, aws_errors_retried
from drac.aws.events import S3EventBridgeEvent
from drac.aws.lambda_support import MetricUnit, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.errors import MustWait
from drac.aws.stages.starter import WAITS_ATTRIBUTE, requeue, start_ingest

check_at_cold_start("starter")  # a missing resource name fails the init phase

# A batch whose every upload failed is reported as such, not raised (it is counted).
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def waits_of(record: SQSRecord) -> int:
    """How often this upload has waited already (its message attribute; 0 at first)."""
    attribute = record.message_attributes.get(WAITS_ATTRIBUTE) or {}
    value = str(attribute.get("stringValue") or "")
    return int(value) if value.isdigit() else 0


def start_record(record: SQSRecord) -> dict[str, Any]:
    """Start (or skip) the ingest of one upload; return what happened."""
    rt = _runtime()
    try:
        event = S3EventBridgeEvent.model_validate_json(record.body)
        try:
            with aws_errors_retried():
                result = start_ingest(rt, event)
        except (MustWait, TransientError) as exc:
            waits = waits_of(record) + 1
            seconds = requeue(rt, record.event_source_arn, record.body, waits)
            logger.info(
                "the event waits", extra={"seconds": seconds, "waits": waits, "reason": str(exc)}
            )
            metrics.add_metric(name="StartsDeferred", unit=MetricUnit.Count, value=1)
            return {"outcome": "waiting", "waits": waits}
    except Exception:
        # Never silent: counted (StartsFailed has an alarm) and logged; the message returns
        # after the visibility timeout and goes to the dead-letter queue after a few receives.
        receives = int(record.attributes.approximate_receive_count or 1)
        logger.exception("the upload could not be started", extra={"receives": receives})
        metrics.add_metric(name="StartsFailed", unit=MetricUnit.Count, value=1)
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
