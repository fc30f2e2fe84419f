"""Normalise an office/HTML/image source to PDF with headless LibreOffice (container image)."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Store the PDF in the artifacts bucket; return where it is."""
    from drac.aws import keys
    from drac.documents.detect import DocumentFormat
    from drac.documents.normalise import normalise_to_pdf

    rt = _runtime()
    document_id = event["document_id"]
    correlate(document_id, stage="normalise")
    data = rt.bucket(event["bucket"]).get_bytes(event["key"])
    pdf = normalise_to_pdf(data, DocumentFormat(event["format"]))
    key = keys.pdf_key(document_id)
    rt.artifacts.put_bytes(key, pdf)
    return {
        "format": event["format"],
        "is_text": False,
        "needs_normalise": False,
        "pdf_bucket": rt.env.artifacts_bucket,
        "pdf_key": key,
    }
