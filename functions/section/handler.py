"""Re-plan path: rebuild sections from stored elements for a strategy's section budget."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.planning import SectionInput, section_document

check_at_cold_start("section")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the planning run's section count and groups (nothing is converted again)."""
    payload = SectionInput.model_validate(event)
    correlate(payload.document_id, stage="section")
    return section_document(_runtime(), payload).model_dump(mode="json")
