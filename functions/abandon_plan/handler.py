"""Delete the chunks of a plan version whose commit failed."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.commit import AbandonInput, abandon_version

check_at_cold_start("abandon_plan")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return how many chunks were deleted."""
    payload = AbandonInput.model_validate(event)
    correlate(payload.document_id, stage="abandon_plan")
    return abandon_version(_runtime(), payload).model_dump(mode="json")
