"""Save plan version N+1 of a planning run and store its chunks in ranges to index."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.commit import PrepareInput, prepare_plan

check_at_cold_start("prepare_plan")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the version, chunk count and the chunk ranges to index."""
    payload = PrepareInput.model_validate(event)
    correlate(payload.document_id, stage="prepare_plan")
    return prepare_plan(_runtime(), payload).model_dump(mode="json")
