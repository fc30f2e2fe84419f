"""Parse the converted Markdown into elements (DynamoDB) and sections (S3)."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.parse import ParseInput, parse_converted

check_at_cold_start("parse")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return element, section and failed-batch counts and the section groups to plan."""
    payload = ParseInput.model_validate(event)
    correlate(payload.document_id, stage="parse")
    return parse_converted(_runtime(), payload).model_dump(mode="json")
