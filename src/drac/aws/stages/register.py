"""Register an uploaded document and say where its PDF to render is."""

from __future__ import annotations

from pydantic import BaseModel

from drac.aws.conversion import store_text_document
from drac.aws.events import UploadedDocument
from drac.aws.lambda_support import logger
from drac.aws.runtime import Runtime
from drac.documents.convert import decode_text
from drac.documents.detect import DocumentFormat, detect_format
from drac.ids import sha256_hex
from drac.models import DocumentRecord


class RegisterInput(UploadedDocument):
    """The Register state's payload: the document id and the uploaded object."""


class DocumentLocation(BaseModel):
    """The document's format and where the PDF to render is (empty when there is none yet)."""

    format: str
    is_text: bool
    needs_normalise: bool
    pdf_bucket: str
    pdf_key: str


def register_document(rt: Runtime, event: RegisterInput) -> DocumentLocation:
    """Record the document (idempotent on its content-hash id); a text source is stored as
    its own converted Markdown."""
    data = rt.bucket(event.bucket).get_bytes(event.key)
    filename = event.key.rsplit("/", 1)[-1]
    detection = detect_format(data, filename)
    record = DocumentRecord(
        document_id=event.document_id,
        source=filename,
        source_path=event.key,
        sha256=sha256_hex(data),
        tenant=event.tenant,
        format=detection.format.value,
        warnings=[detection.warning] if detection.warning else [],
    )
    rt.registry.put(record)
    text = detection.format.is_text
    if text:
        store_text_document(rt.artifacts, event.document_id, decode_text(data))
    is_pdf = detection.format is DocumentFormat.PDF
    logger.info("registered", extra={"format": record.format, "bytes": len(data)})
    return DocumentLocation(
        format=record.format,
        is_text=text,
        needs_normalise=not (text or is_pdf),
        pdf_bucket=event.bucket if is_pdf else "",
        pdf_key=event.key if is_pdf else "",
    )
