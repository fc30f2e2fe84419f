"""Plan one section into arrays of element IDs (rules, or the LLM planner on Bedrock)."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import correlate, logger, metered_tokens, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.planning import PlanSectionInput, plan_one_section

check_at_cold_start("plan_section")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Store the section's validated plan; return its index and chunk count."""
    payload = PlanSectionInput.model_validate(event)
    correlate(payload.input.document_id, stage="plan", section=payload.input.index)
    rt = _runtime()
    with metered_tokens(rt.ledger, "planning"):
        result = plan_one_section(rt, payload)
    return result.model_dump(mode="json")
