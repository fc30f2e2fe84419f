"""The vision route: a document's pages rendered and converted in batches by a vision model.

Batches are converted `max_in_flight` at a time while later pages render; a batch whose pages
render as one of the earlier version's did reuses its Markdown; scanned pages are checked
against what OCR reads; with an escalation, the doubtful pages go to a second model.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from drac.documents.conversion import Conversion, ConversionResult, Progress, convert_pages
from drac.documents.intake.detect import DocumentFormat
from drac.documents.options import ConversionOptions
from drac.documents.pdf.layers import PageLayer, ocr_layer
from drac.documents.pdf.ocr import ocr_available
from drac.documents.pdf.render import PageImage, batched, pdf_facts, render_pages
from drac.documents.pdf.scans import read_scanned_pages
from drac.documents.sandbox.containment.budget import Budget, charged_to
from drac.documents.sandbox.containment.budget import current as current_budget
from drac.documents.vision.batches import BatchResult, checked_against_ocr, join_batches
from drac.documents.vision.escalate import Escalation, escalation_reasons, merge_escalated
from drac.documents.vision.incremental import (
    EarlierVersion,
    StoredBatch,
    convert_or_reuse,
    is_reused,
)
from drac.models import LedgerEntry, PageEscalation
from drac.ports import Ledger, MemoryLedger, VisionModel

_BatchDone = tuple[BatchResult, MemoryLedger, StoredBatch | None, dict[int, PageLayer]]
"""A converted batch, its model calls, what to keep of it, and its scans' OCR layers."""


class VisionConverter:
    """Converts any paged document with the vision model given."""

    def accepts(self, conversion: Conversion) -> bool:
        """Whether a vision model was given."""
        return conversion.vision is not None

    def convert(self, conversion: Conversion) -> ConversionResult:
        """The document's Markdown as the vision model (and any escalation) wrote it."""
        vision = conversion.vision
        if vision is None:
            raise ValueError("the vision route needs a vision model")
        return convert_pages(
            conversion,
            lambda pdf, warnings: _convert_with_model(
                pdf,
                conversion.format,
                warnings,
                conversion.options,
                vision,
                conversion.ledger,
                conversion.document_id,
                conversion.progress,
                conversion.earlier,
                conversion.escalation,
            ),
        )


def _verified_by_ocr(
    pdf: bytes, result: BatchResult, scans: list[int], options: ConversionOptions
) -> tuple[BatchResult, dict[int, PageLayer]]:
    """The batch with its scanned pages (no text layer) checked against what OCR reads, and
    the words OCR read with their boxes (the pages' layers, as the cloud's ReadScans keeps)."""
    read = read_scanned_pages(pdf, scans, options, unread_past_budget=True)
    readable = {number: page for number, page in read.items() if page.readable}
    words = {number: page.words_text() for number, page in readable.items()}
    layers = {number: ocr_layer(page) for number, page in readable.items()}
    return checked_against_ocr(result, words), layers


def _convert_with_model(
    pdf: bytes,
    fmt: DocumentFormat,
    warnings: list[str],
    options: ConversionOptions,
    vision: VisionModel,
    ledger: Ledger,
    document_id: str,
    progress: Progress | None,
    earlier: EarlierVersion | None = None,
    escalation: Escalation | None = None,
) -> ConversionResult:
    """Render lazily and convert `max_in_flight` batches at a time (the method's 5); then the
    doubtful pages again with the `escalation`'s model, in batches of such pages."""
    facts = pdf_facts(pdf, options.max_pages)
    document = current_budget()
    # checking scans never fails a document: it has a budget of its own, pages past it unchecked
    checking = Budget(document.total_s) if document is not None else None
    total = facts.pages
    warnings.extend(facts.warnings)
    results: list[BatchResult] = []
    second: list[BatchResult] = []
    kept: list[StoredBatch] = []
    reused: list[LedgerEntry] = []
    ocr_layers: dict[int, PageLayer] = {}
    done_pages = 0

    def run(batch: list[PageImage], model: VisionModel = vision, reuse: bool = True) -> _BatchDone:
        calls = MemoryLedger()  # per batch: the workspace ledger is written from this thread
        result, stored = convert_or_reuse(
            model, batch, total, document_id, calls, earlier if reuse else None,
            attempts=options.batch_attempts,
        )  # fmt: skip
        scans = [page.number for page in batch if not page.text_chars]
        layers: dict[int, PageLayer] = {}
        if scans and options.verify_scans and ocr_available():
            with charged_to(checking):
                result, layers = _verified_by_ocr(pdf, result, scans, options)
        return result, calls, stored, layers

    def collect(future: Future[_BatchDone]) -> None:
        nonlocal done_pages
        result, calls, stored, layers = future.result()
        ocr_layers.update(layers)
        for entry in calls.entries:
            ledger.record(entry)
        results.append(result)
        if stored is not None:
            kept.append(stored)
        reused.extend(entry for entry in calls.entries if is_reused(entry))
        done_pages += len(result.pages)
        if progress:
            progress(done_pages, total)

    batches = batched(render_pages(pdf, options.render_options()), options.batch_pages)
    with ThreadPoolExecutor(
        max_workers=options.max_in_flight, thread_name_prefix="drac-conv"
    ) as pool:
        in_flight: set[Future[_BatchDone]] = set()
        for batch in batches:  # rendering happens here, lazily, in this thread
            while len(in_flight) >= options.max_in_flight:
                finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    collect(future)
            # each batch with this document's context: its CPU budget (`containment.budget`)
            in_flight.add(pool.submit(contextvars.copy_context().run, run, batch))
        for future in in_flight:
            collect(future)
        escalations: list[PageEscalation] = []
        if escalation is not None:
            reasons = escalation_reasons(results, escalation.threshold)
            doubtful = render_pages(pdf, options.render_options(), pages=list(reasons))
            runs = [
                pool.submit(contextvars.copy_context().run, run, batch, escalation.model, False)
                for batch in batched(doubtful, options.batch_pages)
            ]
            for future in runs:
                answer, calls, _, layers = future.result()
                ocr_layers.update(layers)  # the same page's words: OCR reads no model's answer
                for entry in calls.entries:
                    ledger.record(entry)
                second.append(answer)
            results, escalations = merge_escalated(
                results, second, reasons, vision.name, escalation.model.name
            )
    joined = join_batches(results)
    return ConversionResult(
        markdown=joined.markdown,
        format=fmt.value,
        pages=total,
        status="partial" if joined.failures else "ok",
        warnings=[*warnings, *joined.warnings],
        failures=joined.failures,
        verification=joined.verification,
        model=vision.name,
        batches=sorted(kept, key=lambda batch: batch.pages[0]),
        reused_batches=len(reused),
        ocr_layers=ocr_layers,
        escalations=escalations,
    )
