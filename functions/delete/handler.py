"""S3 Object Deleted (via SQS): forget the key; retire its document when no key holds it."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from drac.aws.events import S3EventBridgeEvent
from drac.aws.lambda_support import logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.lifecycle import delete_object

check_at_cold_start("delete")  # a missing resource name fails the init phase

processor = BatchProcessor(event_type=EventType.SQS)


def delete_record(record: SQSRecord) -> dict[str, Any]:
    """Handle one deletion event; return the document retired, if any."""
    event = S3EventBridgeEvent.model_validate_json(record.body)
    return delete_object(_runtime(), event).model_dump(mode="json")


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Process the SQS batch, reporting failed messages individually."""
    return process_partial_response(
        event=event, record_handler=delete_record, processor=processor, context=context
    )
