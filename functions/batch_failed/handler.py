"""Write error markers for a batch that kept failing, so the document degrades to PARTIAL."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.conversion import BatchFailedInput, record_batch_failure

check_at_cold_start("batch_failed")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return {batch, ok: false} after storing the markers."""
    payload = BatchFailedInput.model_validate(event)
    correlate(payload.document_id, stage="batch_failed", batch=payload.batch)
    result = record_batch_failure(_runtime(), payload)
    metrics.add_metric(name="BatchesFailed", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
