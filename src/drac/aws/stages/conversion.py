"""Conversion stages: normalise a source to PDF, render its pages, convert page batches."""

from __future__ import annotations

import json

from pydantic import BaseModel

from drac.aws import keys
from drac.aws.conversion import RenderResult, convert_batch, record_failed_batch, render_to_store
from drac.aws.lambda_support import logger
from drac.aws.runtime import Runtime
from drac.aws.stages.register import DocumentLocation
from drac.documents.detect import DocumentFormat
from drac.documents.normalise import normalise_to_pdf


class NormaliseInput(BaseModel):
    """The Normalise state's payload: the uploaded object and its detected format."""

    document_id: str
    bucket: str
    key: str
    format: str


class RenderInput(BaseModel):
    """The Render state's payload: where the document's PDF is."""

    document_id: str
    pdf_bucket: str
    pdf_key: str


class BatchInput(BaseModel):
    """One item of the ConvertBatches map: a batch of a document's pages."""

    document_id: str
    page_count: int
    batch: int


class ConvertInput(BaseModel):
    """The ConvertBatch state's payload (the map item under `input`)."""

    input: BatchInput


class BatchFailedInput(BatchInput):
    """The MarkBatchFailed state's payload: the batch and the Step Functions error."""

    error: str = "Error"
    cause: str = ""


class BatchResult(BaseModel):
    """What became of one batch."""

    batch: int
    ok: bool


def normalise_document(rt: Runtime, event: NormaliseInput) -> DocumentLocation:
    """Store the source converted to PDF in the artifacts bucket."""
    data = rt.bucket(event.bucket).get_bytes(event.key)
    pdf = normalise_to_pdf(data, DocumentFormat(event.format))
    key = keys.pdf_key(event.document_id)
    rt.artifacts.put_bytes(key, pdf)
    return DocumentLocation(
        format=event.format,
        is_text=False,
        needs_normalise=False,
        pdf_bucket=rt.env.artifacts_bucket,
        pdf_key=key,
    )


def render_document(rt: Runtime, event: RenderInput) -> RenderResult:
    """Render every page of the PDF to PNG and record the page count on the document."""
    pdf = rt.bucket(event.pdf_bucket).get_bytes(event.pdf_key)
    result = render_to_store(pdf, rt.artifacts, event.document_id, rt.env.batch_size)
    record = rt.registry.get(event.document_id)
    if record is not None:
        record.pages = result.page_count
        rt.registry.put(record)
    return result


def convert_pages(rt: Runtime, event: ConvertInput) -> BatchResult:
    """Convert one batch of rendered pages to Markdown with the vision model.

    Raises ModelThrottled when Bedrock keeps throttling, so Step Functions backs off and retries.
    """
    item = event.input
    status = convert_batch(
        rt.artifacts,
        item.document_id,
        item.batch,
        item.page_count,
        rt.env.batch_size,
        rt.vision_model(),
        rt.ledger,
    )
    return BatchResult(batch=status.batch, ok=status.ok)


def record_batch_failure(rt: Runtime, event: BatchFailedInput) -> BatchResult:
    """Store error markers for a batch that kept failing, so the document becomes PARTIAL."""
    reason = _reason(event.error, event.cause)
    status = record_failed_batch(
        rt.artifacts, event.document_id, event.batch, event.page_count, rt.env.batch_size, reason
    )
    logger.warning("batch failed", extra={"reason": reason})
    return BatchResult(batch=status.batch, ok=False)


def _reason(error: str, cause: str) -> str:
    """The readable part of a Step Functions error and cause."""
    try:
        message = json.loads(cause).get("errorMessage", cause)
    except (ValueError, AttributeError):
        message = cause
    return f"{error}: {message}" if message else error
