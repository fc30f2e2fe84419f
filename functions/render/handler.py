"""Render a PDF's pages to PNG in the artifacts bucket (no LLM), in two steps: count the pages
and split them into slices (CountPages), then render one slice (RenderSlice, in parallel)."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.conversion import RenderInput, SliceInput, render_document, render_slice

check_at_cold_start("render")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """A slice's payload (it names `slice`): the pages rendered; otherwise the page and batch
    counts with the slices and conversion groups."""
    if "slice" in event:
        piece = SliceInput.model_validate(event)
        correlate(piece.document_id, stage="render", batch=piece.slice.first)
        rendered = render_slice(_runtime(), piece)
        metrics.add_metric(name="PagesRendered", unit=MetricUnit.Count, value=rendered.pages)
        return rendered.model_dump(mode="json")
    payload = RenderInput.model_validate(event)
    correlate(payload.document_id, stage="render")
    return render_document(_runtime(), payload).model_dump(mode="json")
