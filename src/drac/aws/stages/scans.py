"""Read a document's scanned pages by OCR, so the vision model's answer for them is checked
like a born-digital page's (issue 21).

Render tells which pages have no text layer; the ReadScans map of the ingest machine sends
them here in groups (`fanout.scan_group_pages`), before conversion. The OCR is the local
runtime's own (`drac.documents.pdf.scans.read_scanned_pages`: each page rendered and read in a
contained worker). Each page read is stored twice: its words as text, which Convert checks
the answer against (`drac.documents.vision.batches.checked_against_ocr`, source "ocr"), and
its words with their boxes in place of the empty text layer, which Parse places the page's
elements on.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from drac.aws import keys
from drac.aws.lambda_support import logger
from drac.aws.pdf_files import pdf_file
from drac.aws.runtime import Runtime
from drac.aws.stages.boxes import page_layer_key
from drac.aws.stages.conversion import page_scope
from drac.documents.options import ConversionOptions
from drac.documents.pdf.layers import ocr_layer
from drac.documents.pdf.scans import read_scanned_pages
from drac.documents.sandbox.containment import document_budget


class ScansInput(BaseModel):
    """The ReadScanPages state's payload: the document's PDF and some of its scanned pages."""

    document_id: str
    pdf_bucket: str
    pdf_key: str
    pdf_version_id: str | None = None
    pages: list[int] = Field(min_length=1, description="1-based page numbers")


class ScansRead(BaseModel):
    """Which of the pages OCR read (the others stay unchecked, as in the local runtime)."""

    read: list[int]
    unread: list[int]


def read_scans(rt: Runtime, event: ScansInput) -> ScansRead:
    """Read the given scanned pages by OCR and store each readable page's words (for the
    conversion check) and its word boxes (for Parse); return which pages were read. It reads
    only the document's PDF (streamed to a file: `pdf_file`) and writes only under
    `pages/<doc>/`."""
    rt = rt.for_document(event.document_id, page_scope(rt, event.document_id, event))
    options = ConversionOptions(max_pages=rt.settings.conversion.max_pages)
    source = rt.bucket(event.pdf_bucket)
    with (
        pdf_file(source, event.pdf_key, event.pdf_version_id) as pdf,
        document_budget(rt.settings.conversion.cpu_budget(pdf.stat().st_size)),
    ):
        found = read_scanned_pages(pdf, event.pages, options, unread_past_budget=True)
    read = sorted(number for number, page in found.items() if page.readable)
    for number in read:
        page = found[number]
        rt.artifacts.put_text(keys.page_ocr_key(event.document_id, number), page.words_text())
        rt.artifacts.put_text(
            page_layer_key(event.document_id, number), ocr_layer(page).model_dump_json()
        )
    unread = [number for number in event.pages if number not in read]
    if unread:
        logger.info("scanned pages OCR could not read", extra={"pages": unread})
    return ScansRead(read=read, unread=unread)
