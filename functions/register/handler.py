"""Register a document: record it (idempotent on content hash) and say whether to normalise."""

from __future__ import annotations

from typing import Any

from drac.aws.lambda_support import correlate, logger, metrics, tracer
from drac.aws.runtime import lambda_runtime as _runtime  # tests replace _runtime


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Store the DocumentRecord; return the format and where the PDF to render is."""
    from drac.aws.conversion import store_text_document
    from drac.documents.convert import decode_text
    from drac.documents.detect import DocumentFormat, detect_format
    from drac.ids import sha256_hex
    from drac.models import DocumentRecord

    rt = _runtime()
    document_id = event["document_id"]
    correlate(document_id, stage="register")
    data = rt.bucket(event["bucket"]).get_bytes(event["key"])
    detection = detect_format(data, event["key"].rsplit("/", 1)[-1])
    record = DocumentRecord(
        document_id=document_id,
        source=event["key"].rsplit("/", 1)[-1],
        source_path=event["key"],
        sha256=sha256_hex(data),
        tenant=event.get("tenant"),
        format=detection.format.value,
        warnings=[detection.warning] if detection.warning else [],
    )
    rt.registry.put(record)
    text = detection.format.is_text
    if text:
        store_text_document(rt.artifacts, document_id, decode_text(data))
    is_pdf = detection.format is DocumentFormat.PDF
    logger.info("registered", extra={"format": record.format, "bytes": len(data)})
    return {
        "format": record.format,
        "is_text": text,
        "needs_normalise": not (text or is_pdf),
        "pdf_bucket": event["bucket"] if is_pdf else "",
        "pdf_key": event["key"] if is_pdf else "",
    }
