"""Make a plan version active and retire the other versions' chunks."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.commit import ActivateInput, activate_version

check_at_cold_start("activate_plan")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return whether the version became active and how many chunks were retired."""
    payload = ActivateInput.model_validate(event)
    correlate(payload.document_id, stage="activate_plan")
    return activate_version(_runtime(), payload).model_dump(mode="json")
