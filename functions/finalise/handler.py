"""Mark a document INDEXED, PARTIAL or FAILED at the end of its ingest execution."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


def _message(cause: str) -> str:
    """The readable part of a Step Functions cause (often a Lambda error as JSON)."""
    import json

    try:
        data = json.loads(cause)
    except (TypeError, ValueError):
        return cause
    if isinstance(data, dict):
        return str(data.get("errorMessage") or data.get("Cause") or cause)
    return cause


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Set the final status (superseding older uploads of the same key); return it."""
    from drac.aws.lambda_support import MetricUnit
    from drac.models import DocumentStatus

    rt = _runtime()
    document_id = event["document_id"]
    correlate(document_id, stage="finalise")
    if event["outcome"] == "FAILED":
        error = f"{event.get('error', 'Error')}: {_message(event.get('cause', ''))}"
        record = rt.registry.set_status(document_id, DocumentStatus.FAILED, error=error[:2000])
        metrics.add_metric(name="DocumentsFailed", unit=MetricUnit.Count, value=1)
        logger.error("document failed", extra={"error": error})
        return {"document_id": document_id, "status": record.status.value}
    partial = int(event.get("failed_batches", 0)) > 0
    status = DocumentStatus.PARTIAL if partial else DocumentStatus.INDEXED
    record = rt.registry.set_status(document_id, status)
    superseded = [
        other for other in rt.registry.by_source(record.source_path or "") if other != document_id
    ]
    for other in superseded:
        rt.index().delete(other)
        rt.registry.set_status(other, DocumentStatus.DELETED, active_version=None)
    metrics.add_metric(name="DocumentsIndexed", unit=MetricUnit.Count, value=1)
    logger.info("document done", extra={"status": status.value, "superseded": superseded})
    return {"document_id": document_id, "status": status.value}
