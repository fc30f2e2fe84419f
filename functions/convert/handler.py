"""Convert one batch of rendered pages to Markdown with the vision model on Bedrock."""

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
from drac.aws.stages.conversion import ConvertInput, convert_pages

check_at_cold_start("convert")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return {batch, ok}; raises ModelThrottled / TransientError for Step Functions to retry."""
    payload = ConvertInput.model_validate(event)
    correlate(payload.input.document_id, stage="convert", batch=payload.input.batch)
    rt = _runtime()
    try:
        with metered_tokens(rt.ledger, "conversion"):
            result = convert_pages(rt, payload)
    except (ModelThrottled, TransientError) as exc:
        metrics.add_metric(name=type(exc).__name__, unit=MetricUnit.Count, value=1)
        raise
    name = "BatchesConverted" if result.ok else "BatchesFailed"
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
