"""Mark a document INDEXED, PARTIAL or FAILED at the end of its ingest execution."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.lifecycle import FinaliseInput, finalise_document

check_at_cold_start("finalise")  # a missing resource name fails the init phase

STATUS_METRICS = {"FAILED": "DocumentsFailed", "PARTIAL": "DocumentsPartial"}


def status_metric(status: str) -> str:
    """The metric counting documents that ended with this status (PARTIAL has an alarm)."""
    return STATUS_METRICS.get(status, "DocumentsIndexed")


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """End the run (FAILED, or done) and retire documents no key holds; return the status."""
    payload = FinaliseInput.model_validate(event)
    correlate(payload.document_id, stage="finalise")
    result = finalise_document(_runtime(), payload)
    metrics.add_metric(name=status_metric(result.status), unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
