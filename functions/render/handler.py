"""Render every page of the PDF to PNG in the artifacts bucket (no LLM)."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.conversion import RenderInput, render_document


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the page and batch counts."""
    payload = RenderInput.model_validate(event)
    correlate(payload.document_id, stage="render")
    result = render_document(_runtime(), payload)
    metrics.add_metric(name="PagesRendered", unit=MetricUnit.Count, value=result.page_count)
    return result.model_dump(mode="json")
