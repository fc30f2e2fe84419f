"""Read a document's scanned pages by OCR (container image: RapidOCR and onnxruntime are too
big for a zip function), so their conversion is checked against what the page says."""

from __future__ import annotations

from typing import Any

from drac.aws.errors import step_functions_task
from drac.aws.lambda_support import MetricUnit, correlate, logger, metrics, tracer
from drac.aws.resources import check_at_cold_start
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime
from drac.aws.stages.scans import ScansInput, read_scans

check_at_cold_start("read_scans")  # a missing resource name fails the init phase


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
@step_functions_task
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Store the words of each page read; return which pages were read and which not."""
    payload = ScansInput.model_validate(event)
    correlate(payload.document_id, stage="read_scans", first_page=payload.pages[0])
    done = read_scans(_runtime(), payload)
    metrics.add_metric(name="ScannedPagesRead", unit=MetricUnit.Count, value=len(done.read))
    metrics.add_metric(name="ScannedPagesUnread", unit=MetricUnit.Count, value=len(done.unread))
    return done.model_dump(mode="json")
