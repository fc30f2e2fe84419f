"""Assemble chunks verbatim, embed them (Titan V2), index them, then retire the old version."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.commit import CommitPlanInput, commit_plan


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Save plan version N+1, index its chunks, delete version N's; return counts."""
    payload = CommitPlanInput.model_validate(event)
    correlate(payload.document_id, stage="commit")
    result = commit_plan(_runtime(), payload)
    metrics.add_metric(name="ChunksIndexed", unit=MetricUnit.Count, value=result.chunks)
    return result.model_dump(mode="json")
