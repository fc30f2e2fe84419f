"""Render every page of the PDF to PNG in the artifacts bucket (no LLM)."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return the page and batch counts."""
    from drac.aws.conversion import render_to_store
    from drac.aws.lambda_support import MetricUnit

    rt = _runtime()
    document_id = event["document_id"]
    correlate(document_id, stage="render")
    pdf = rt.bucket(event["pdf_bucket"]).get_bytes(event["pdf_key"])
    result = render_to_store(pdf, rt.artifacts, document_id, rt.env.batch_size)
    record = rt.registry.get(document_id)
    if record is not None:
        record.pages = result.page_count
        rt.registry.put(record)
    metrics.add_metric(name="PagesRendered", unit=MetricUnit.Count, value=result.page_count)
    return result.model_dump()
