"""Conversion stages: normalise a source to PDF, render its pages, convert page batches.

Rendering is two steps: Render counts the pages and splits the batches into slices
(`fanout.render_slices`); the ingest machine then renders the slices in parallel, one Render
invocation (and one pdfium worker) per slice, so no invocation grows with the document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from drac.aws import keys
from drac.aws.document_access import DocumentScope
from drac.aws.errors import retried_by_step_functions
from drac.aws.lambda_support import logger
from drac.aws.pdf_files import pdf_file
from drac.aws.runtime import Runtime
from drac.aws.stages.boxes import store_page_layers
from drac.aws.stages.escalation import EscalationItem, convert_group_size, doubtful_batch
from drac.aws.stages.fanout import (
    MAX_ITEMS,
    SCAN_PAGES_PER_READ,
    ItemGroup,
    item_groups,
    render_slices,
    scan_group_pages,
)
from drac.aws.versions import earlier_batch, keep_batch
from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import normalise
from drac.documents.pdf.render import RenderOptions, page_batches, pdf_facts, render_pages
from drac.documents.sandbox.containment import document_budget
from drac.documents.vision.batches import BatchResult, StoredPage, checked_against_ocr, failed_batch
from drac.documents.vision.incremental import convert_or_reuse, page_digests
from drac.errors import DocumentError


class NormaliseInput(BaseModel):
    """The Normalise state's payload: the uploaded object version and its detected format."""

    document_id: str
    bucket: str
    key: str
    version_id: str | None = None
    format: str


class PdfLocation(BaseModel):
    """Where a document's PDF is (the upload's own version, when the upload is the PDF: the
    key may hold a later upload by the time it is rendered)."""

    pdf_bucket: str
    pdf_key: str
    pdf_version_id: str | None = None
    warnings: list[str] = Field(
        default_factory=list,
        description="what normalising removed from the document (external references); the "
        "machine carries them to Parse, which records them (neither converter writes the record)",
    )


class RenderInput(PdfLocation):
    """The CountPages state's payload."""

    document_id: str
    execution: str


class Rendered(BaseModel):
    """Page and batch counts, the render slices the RenderSlices map iterates over and the
    batch groups of the ConvertGroups map (both in batch numbers), how many scanned pages
    one ReadScans invocation reads, and Normalise's warnings passed on for Parse to record."""

    page_count: int
    source_warnings: list[str] = Field(default_factory=list)
    batch_count: int
    groups: list[ItemGroup]
    slices: list[ItemGroup]
    scan_group_pages: int = SCAN_PAGES_PER_READ


class SliceInput(BaseModel):
    """The RenderSlice state's payload: the batches `slice.first` .. `slice.last` of a PDF."""

    document_id: str
    page_count: int
    pdf_bucket: str
    pdf_key: str
    pdf_version_id: str | None = None
    slice: ItemGroup


class SliceRendered(BaseModel):
    """What one slice rendered, and which of its pages are scans (no text layer: ReadScans
    reads them by OCR so their conversion is checked too)."""

    pages: int
    scans: list[int] = Field(default_factory=list)
    has_scans: bool = Field(
        default=False, description="whether `scans` names a page (a flag the machine can test)"
    )


class PdfSource(Protocol):
    """A payload that names a document's PDF."""

    pdf_bucket: str
    pdf_key: str


class BatchItem(BaseModel):
    """One item of the ConvertBatches map: a batch of a document's pages."""

    document_id: str
    page_count: int
    batch: int


class ConvertInput(BaseModel):
    """The ConvertBatch state's payload (the map item under `input`)."""

    input: BatchItem


class BatchFailedInput(BatchItem):
    """The MarkBatchFailed state's payload: the batch and the Step Functions error."""

    error: str = "Error"
    cause: str = ""


class BatchDone(BaseModel):
    """What became of one batch, and the batch as an EscalatePages item when pages of it
    deserve the second model (none without escalation)."""

    batch: int
    ok: bool
    escalate: list[EscalationItem] = Field(default_factory=list)
    doubtful: bool = Field(
        default=False, description="whether `escalate` names the batch (a flag the machine tests)"
    )


def normalise_document(rt: Runtime, event: NormaliseInput) -> PdfLocation:
    """Convert the upload to PDF (LibreOffice, Pillow) and store it in the artifacts bucket;
    return where it is and the normalisation's warnings (external references removed). It
    reads only the upload's version and writes only the document's PDF."""
    key = keys.pdf_key(event.document_id)
    rt = rt.for_document(
        event.document_id,
        DocumentScope(
            reads=((event.bucket, event.key),), writes=((rt.resources.artifacts_bucket, key),)
        ),
    )
    data = rt.bucket(event.bucket).get_bytes(event.key, version_id=event.version_id)
    with document_budget(rt.settings.conversion.cpu_budget(len(data))):
        pdf, warnings = normalise(
            data, DocumentFormat(event.format), max_pages=rt.settings.conversion.max_pages
        )
    rt.artifacts.put_bytes(key, pdf)
    return PdfLocation(pdf_bucket=rt.resources.artifacts_bucket, pdf_key=key, warnings=warnings)


def render_document(rt: Runtime, event: RenderInput) -> Rendered:
    """Count the PDF's pages (in the contained pdfium worker) and return the render slices and
    conversion groups, with Normalise's warnings passed on (Parse records both: Render has no
    access to the documents table). Raises DocumentError past the page limit or the batch
    fan-out limit. It reads only the document's PDF (streamed to a file: `pdf_file`) and
    writes nothing."""
    rt = rt.for_document(event.document_id, DocumentScope(reads=_pdf(event), writes=()))
    source = rt.bucket(event.pdf_bucket)
    with (
        pdf_file(source, event.pdf_key, event.pdf_version_id) as pdf,
        document_budget(rt.settings.conversion.cpu_budget(pdf.stat().st_size)),
    ):
        count = pdf_facts(pdf, rt.settings.conversion.max_pages).pages
    size = rt.settings.conversion.batch_size
    batches = len(page_batches(count, size))
    if batches > MAX_ITEMS:
        raise DocumentError(
            f"{count} pages in batches of {size} make {batches} batches, more"
            f" than {MAX_ITEMS}: raise the batchSize setting"
        )
    return Rendered(
        page_count=count,
        source_warnings=event.warnings,
        batch_count=batches,
        groups=item_groups(batches, convert_group_size(rt.settings)),  # a convert run per group
        slices=render_slices(batches, rt.settings.conversion.batch_size),
        scan_group_pages=scan_group_pages(count),
    )


def render_slice(rt: Runtime, event: SliceInput) -> SliceRendered:
    """Render the pages of one slice's batches to `pages/<doc>/<n>.png`, write each batch's
    text-layer sizes and each page's words with their boxes beside them; return the slice's
    scanned pages (DocumentError names a page that failed). It reads only the document's PDF
    (streamed to a file, of which pdfium reads the slice's pages: `pdf_file`) and writes only
    under `pages/<doc>/`."""
    rt = rt.for_document(event.document_id, page_scope(rt, event.document_id, event))
    with pdf_file(rt.bucket(event.pdf_bucket), event.pdf_key, event.pdf_version_id) as pdf:
        return _render_slice(rt, event, pdf)


def _render_slice(rt: Runtime, event: SliceInput, pdf: Path) -> SliceRendered:
    first, last = event.slice.first, event.slice.last
    batches = page_batches(event.page_count, rt.settings.conversion.batch_size)[first : last + 1]
    numbers = [number for batch in batches for number in batch]
    options = RenderOptions(max_pages=rt.settings.conversion.max_pages)
    text_chars: dict[int, int] = {}
    scans: list[int] = []
    with document_budget(rt.settings.conversion.cpu_budget(pdf.stat().st_size)):  # per invocation
        for page in render_pages(pdf, options, pages=numbers):
            rt.artifacts.put_bytes(keys.page_key(event.document_id, page.number), page.png)
            if page.text_layer:  # what the vision model's answer is checked against
                rt.artifacts.put_text(
                    keys.page_text_key(event.document_id, page.number), page.text_layer
                )
            text_chars[page.number] = page.text_chars
            if not page.text_chars:  # the local runtime's rule for a page OCR checks
                scans.append(page.number)
        for index, batch in enumerate(batches, start=first):
            sizes = {str(number): text_chars[number] for number in batch}
            rt.artifacts.put_text(keys.page_meta_key(event.document_id, index), json.dumps(sizes))
        store_page_layers(rt, event.document_id, pdf, pages=numbers)  # placed by Parse
    return SliceRendered(pages=len(numbers), scans=scans, has_scans=bool(scans))


def page_scope(rt: Runtime, document_id: str, pdf: PdfSource) -> DocumentScope:
    """Read the document's PDF, write its pages' artefacts (`pages/<doc>/*`)."""
    prefix = f"{keys.page_key(document_id, 1).rsplit('/', 1)[0]}/*"
    return DocumentScope(reads=_pdf(pdf), writes=((rt.resources.artifacts_bucket, prefix),))


def _pdf(event: PdfSource) -> tuple[tuple[str, str], ...]:
    return ((event.pdf_bucket, event.pdf_key),)


def convert_pages(rt: Runtime, event: ConvertInput) -> BatchDone:
    """Convert one batch of rendered pages with the vision model and store the result.

    Raises ModelThrottled or TransientError when the model call may succeed later, so Step
    Functions backs off and retries; any other model failure is stored as error markers.
    A batch whose pages render as one of the earlier version's batches did (wherever it was;
    for an earlier version kept by batch number, the batch of the same number) reuses its
    Markdown. Its scanned pages are checked against the words ReadScans stored.
    """
    item = event.input
    pages = batch_pages(rt, item)
    vision = rt.vision_model()
    earlier = earlier_batch(rt, item.document_id, page_digests(pages), vision.name, item.batch)
    with retried_by_step_functions():
        result, kept = convert_or_reuse(
            vision,
            pages,
            item.page_count,
            item.document_id,
            rt.ledger,
            earlier,
            on_retryable="raise",
        )
    keep_batch(rt, item.document_id, kept)
    scans = [page.number for page in pages if not page.text_chars]
    result = checked_against_ocr(result, ocr_words(rt, item.document_id, scans))
    _store(rt, item, result)
    escalate = doubtful_batch(rt.settings, item.document_id, item.page_count, item.batch, result)
    return BatchDone(
        batch=item.batch, ok=result.failure is None, escalate=escalate, doubtful=bool(escalate)
    )


def record_batch_failure(rt: Runtime, event: BatchFailedInput) -> BatchDone:
    """Store error markers for a batch whose retries ran out, so the document is PARTIAL."""
    numbers = page_batches(event.page_count, rt.settings.conversion.batch_size)[event.batch]
    reason = _reason(event.error, event.cause)
    result = failed_batch(numbers, reason)
    _store(rt, event, result)
    logger.warning("batch failed", extra={"batch": event.batch, "reason": reason})
    escalate = doubtful_batch(rt.settings, event.document_id, event.page_count, event.batch, result)
    return BatchDone(batch=event.batch, ok=False, escalate=escalate, doubtful=bool(escalate))


def batch_pages(rt: Runtime, item: BatchItem) -> list[StoredPage]:
    """The batch's rendered pages: their images, text-layer sizes and text layers."""
    numbers = page_batches(item.page_count, rt.settings.conversion.batch_size)[item.batch]
    text_layer = json.loads(rt.artifacts.get_text(keys.page_meta_key(item.document_id, item.batch)))
    return [
        StoredPage(
            number=number,
            png=rt.artifacts.get_bytes(keys.page_key(item.document_id, number)),
            text_chars=int(text_layer.get(str(number), 0)),
            text_layer=_page_text(rt, item.document_id, number),
        )
        for number in numbers
    ]


def _page_text(rt: Runtime, document_id: str, number: int) -> str:
    """The page's stored text layer ("" for a scan, or a page rendered before it was kept)."""
    try:
        return rt.artifacts.get_text(keys.page_text_key(document_id, number))
    except KeyError:
        return ""


def ocr_words(rt: Runtime, document_id: str, scans: list[int]) -> dict[int, str]:
    """The words ReadScans stored for each scanned page it could read (none for the others)."""
    words: dict[int, str] = {}
    for number in scans:
        try:
            words[number] = rt.artifacts.get_text(keys.page_ocr_key(document_id, number))
        except KeyError:
            continue
    return words


def _store(rt: Runtime, item: BatchItem, result: BatchResult) -> None:
    rt.artifacts.put_text(keys.batch_key(item.document_id, item.batch), result.model_dump_json())


def _reason(error: str, cause: str) -> str:
    """The readable part of a Step Functions error and cause."""
    try:
        message = json.loads(cause).get("errorMessage", cause)
    except (ValueError, AttributeError):
        message = cause
    return f"{error}: {message}" if message else error
