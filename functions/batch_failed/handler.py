"""Write error markers for a batch that kept failing, so the document degrades to PARTIAL."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


def _reason(error: str, cause: str) -> str:
    """The readable part of a Step Functions error and cause."""
    import json

    try:
        message = json.loads(cause).get("errorMessage", cause)
    except (ValueError, AttributeError):
        message = cause
    return f"{error}: {message}" if message else error


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Return {batch, ok: false} after storing the markers."""
    from drac.aws.conversion import record_failed_batch
    from drac.aws.lambda_support import MetricUnit

    rt = _runtime()
    document_id = event["document_id"]
    correlate(document_id, stage="batch_failed", batch=event["batch"])
    reason = _reason(event.get("error", "Error"), event.get("cause", ""))
    status = record_failed_batch(
        rt.artifacts,
        document_id,
        int(event["batch"]),
        int(event["page_count"]),
        rt.env.batch_size,
        reason,
    )
    logger.warning("batch failed", extra={"reason": reason})
    metrics.add_metric(name="BatchesFailed", unit=MetricUnit.Count, value=1)
    return {"batch": status.batch, "ok": False}
