"""Convert a batch's doubtful pages again with the second model (escalation) on Bedrock."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import ModelThrottled, TransientError, step_functions_task
from drac.aws.lambda_support import (
    MetricUnit,
    correlate,
    logger,
    metered_tokens,
    metrics,
    tracer,
)
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.escalation import EscalateInput, escalate_batch

check_at_cold_start("escalate")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return {batch, escalated, kept}; raises ModelThrottled / TransientError for Step
    Functions to retry."""
    payload = EscalateInput.model_validate(event)
    correlate(payload.input.document_id, stage="escalate", batch=payload.input.batch)
    rt = _runtime()
    try:
        with metered_tokens(rt.ledger, "escalation"):
            result = escalate_batch(rt, payload)
    except (ModelThrottled, TransientError) as exc:
        metrics.add_metric(name=type(exc).__name__, unit=MetricUnit.Count, value=1)
        raise
    metrics.add_metric(name="PagesEscalated", unit=MetricUnit.Count, value=result.escalated)
    metrics.add_metric(name="EscalatedAnswersKept", unit=MetricUnit.Count, value=result.kept)
    return result.model_dump(mode="json")
