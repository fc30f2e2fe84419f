"""Embed (Titan V2) and index one range of a plan version's chunks."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import MetricUnit, correlate, logger, metered_tokens, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.commit import IndexInput, index_range

check_at_cold_start("index_chunks")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the range and its chunk count; throttling is retried by Step Functions."""
    payload = IndexInput.model_validate(event)
    correlate(payload.input.document_id, stage="index_chunks")
    rt = _runtime()
    with metered_tokens(rt.ledger, "embedding"):
        result = index_range(rt, payload)
    metrics.add_metric(name="ChunksIndexed", unit=MetricUnit.Count, value=result.chunks)
    return result.model_dump(mode="json")
