"""Stages 1 and 2 orchestrated: any accepted document to Markdown with `<!-- Page N -->` markers."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Literal

from pydantic import BaseModel, Field

from drac.documents.batches import BatchResult, checked_against_ocr, join_batches
from drac.documents.containment import GIB, BudgetExceeded, Limits, contained_call
from drac.documents.containment.budget import Budget, charged_to
from drac.documents.containment.budget import current as current_budget
from drac.documents.detect import DocumentFormat, detect_format
from drac.documents.escalate import Escalation, escalation_reasons, merge_escalated
from drac.documents.file_structure import FileBlock, read_file_structure
from drac.documents.file_tables import FileTable, read_file_tables
from drac.documents.file_words import file_vocabulary, respell
from drac.documents.incremental import (
    EarlierVersion,
    StoredBatch,
    convert_or_reuse,
    is_reused,
)
from drac.documents.layers import PageLayer, ocr_layer
from drac.documents.normalise import normalise
from drac.documents.ocr import OcrPage, ocr_available, ocr_warnings
from drac.documents.offline import OfflinePage
from drac.documents.options import ConversionOptions
from drac.documents.render import (
    PageImage,
    PdfSource,
    RenderOptions,
    batched,
    pdf_facts,
    pdf_limits,
    render_pages,
)
from drac.documents.row_sentences import GROWTH, rows_as_sentences
from drac.documents.slide_lines import apply_slide
from drac.documents.slides import SlideText, read_slide_headings
from drac.documents.spreadsheets import SpreadsheetOptions, read_spreadsheet
from drac.documents.structure_pages import place_structure
from drac.documents.table_pages import place_tables
from drac.documents.text import decode_text
from drac.documents.verify import PageVerification
from drac.errors import DocumentError
from drac.models import LedgerEntry, PageEscalation
from drac.ports import Ledger, MemoryLedger, VisionModel

__all__ = ["ConversionOptions", "ConversionResult", "convert_to_markdown", "decode_text"]

OFFLINE_MODEL = "offline"
OCR_DPI = 200
OCR_MAX_SIDE_PX = 4000
"""Scans are rendered for OCR at 200 DPI (the resolution measured in BENCHMARKS.md, OCR)."""
Progress = Callable[[int, int], None]
_BatchDone = tuple[BatchResult, MemoryLedger, StoredBatch | None, dict[int, PageLayer]]
"""A converted batch, its model calls, what to keep of it, and its scans' OCR layers."""


class ConversionResult(BaseModel):
    """A document's converted Markdown and how the conversion went."""

    markdown: str
    format: str
    pages: int
    status: Literal["ok", "partial"]
    warnings: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    model: str
    verification: list[PageVerification] = Field(
        default_factory=list, description="a vision model's pages checked against their text"
    )
    normalised_pdf: bytes | None = Field(
        default=None, repr=False, description="the PDF a non-PDF source was rendered from"
    )
    ocr_layers: dict[int, PageLayer] = Field(
        default_factory=dict, repr=False, description="the words OCR read, by page (boxes)"
    )
    batches: list[StoredBatch] = Field(
        default_factory=list, repr=False, description="what the next version may reuse"
    )
    reused_batches: int = Field(default=0, description="batches taken from the earlier version")
    escalations: list[PageEscalation] = Field(
        default_factory=list, description="pages converted again by the second model"
    )


def convert_to_markdown(
    data: bytes,
    filename: str,
    *,
    options: ConversionOptions,
    vision: VisionModel | None,
    ledger: Ledger,
    document_id: str,
    progress: Progress | None = None,
    spreadsheet: SpreadsheetOptions | None = None,
    earlier: EarlierVersion | None = None,
    escalation: Escalation | None = None,
) -> ConversionResult:
    """Convert one document to retrieval-friendly Markdown (raises DocumentError when impossible).

    Markdown and text are used as-is; spreadsheets are read as tables (`spreadsheet` says
    how; one page per sheet); other formats are normalised to PDF, rendered and converted
    in page batches by the vision model (or offline from the text layer when `vision` is
    None), their tables' rows written as `spreadsheet.table_rows` asks. A failed batch becomes
    error markers and the result is "partial". A batch whose pages render as a batch of the
    `earlier` version did reuses that batch's Markdown. With an `escalation`, the pages the
    vision model converted doubtfully are converted again by its model (`drac.documents.escalate`).
    """
    if len(data) > options.max_file_bytes:
        raise DocumentError(
            f"file is {len(data) / 1048576:.1f} MiB, more than the "
            f"{options.max_file_bytes / 1048576:.0f} MiB limit"
        )
    detection = detect_format(data, filename)
    warnings = [detection.warning] if detection.warning else []
    if detection.format.is_text:
        return ConversionResult(
            markdown=decode_text(data),
            format=detection.format.value,
            pages=1,
            status="ok",
            warnings=warnings,
            model="none",
        )
    if detection.format.is_spreadsheet:
        sheet_options = (spreadsheet or SpreadsheetOptions()).model_copy(
            update={
                "libreoffice_timeout_s": options.libreoffice_timeout_s,
                "max_pages": options.max_pages,
            }
        )
        sheets = read_spreadsheet(data, detection.format, filename, sheet_options)
        return ConversionResult(
            markdown=sheets.markdown,
            format=sheets.format,
            pages=sheets.sheets,
            status="ok",
            warnings=[*warnings, *sheets.warnings],
            model="none",
        )
    pdf, normalise_warnings = normalise(
        data,
        detection.format,
        timeout_s=options.libreoffice_timeout_s,
        max_pages=options.max_pages,
    )
    warnings.extend(normalise_warnings)
    if vision is None:
        headings: list[SlideText] = []
        if detection.format is DocumentFormat.PPTX:
            headings, heading_warnings = read_slide_headings(data)
            warnings.extend(heading_warnings)
        tables, table_warnings = read_file_tables(data, detection.format)
        warnings.extend(table_warnings)
        structure, structure_warnings = read_file_structure(data, detection.format)
        warnings.extend(structure_warnings)
        result = _convert_offline(
            pdf, detection.format, warnings, options, progress, headings, tables, structure
        )
    else:
        result = _convert_with_model(
            pdf,
            detection.format,
            warnings,
            options,
            vision,
            ledger,
            document_id,
            progress,
            earlier,
            escalation,
        )
    if detection.format is not DocumentFormat.PDF:
        result.normalised_pdf = pdf
    return _tables_written(result, spreadsheet or SpreadsheetOptions())


def _tables_written(result: ConversionResult, tables: SpreadsheetOptions) -> ConversionResult:
    """The conversion with its tables' rows as `tables.table_rows` asks: one sentence per row
    for "sentences" (the batches kept for the next version hold the converter's own answer,
    so reusing one never reuses the other form)."""
    if tables.table_rows != "sentences":
        return result
    markdown, stats, kept = rows_as_sentences(result.markdown, tables.max_element_chars)
    warnings = list(result.warnings)
    if kept:
        warnings.append(
            f"{kept} tables kept as pipe tables: their rows as sentences would have made the "
            f"document more than {GROWTH} times longer"
        )
    if stats.split_rows:
        warnings.append(
            f"{stats.split_rows} table rows longer than the {tables.max_element_chars}-character "
            "element limit were written as several sentences, each repeating the first column"
        )
    return result.model_copy(update={"markdown": markdown, "warnings": warnings})


def _convert_offline(
    pdf: bytes,
    fmt: DocumentFormat,
    warnings: list[str],
    options: ConversionOptions,
    progress: Progress | None,
    headings: list[SlideText],
    tables: list[FileTable] | None = None,
    structure: list[FileBlock] | None = None,
) -> ConversionResult:
    """The text layer's Markdown; scans read by OCR; a deck's slide titles and paragraphs
    given to its pages (headings, lists, wrapped lines joined), and the file's own tables
    (DOCX, PPTX, HTML), headings and lists (DOCX, HTML) put in place of the text layer's, and
    words the text layer broke apart put back whole as the file holds them (DOCX)."""
    found = contained_call(
        "drac.documents.render:offline_here", pdf, options.max_pages,
        fmt is DocumentFormat.PDF,  # LibreOffice breaks no word at a line end by itself
        limits=pdf_limits(len(pdf)), what="while opening the PDF",
    )  # fmt: skip
    pages = [OfflinePage.model_validate(page) for page in found["pages"]]
    warnings.extend(str(warning) for warning in found["warnings"])
    slide_pages = len(headings) == len(pages)
    if not slide_pages:  # not one slide per page: keep the converter's headings
        headings = [SlideText() for _ in pages]
    if tables:
        placed = place_tables([page.markdown for page in pages], tables, slide_pages=slide_pages)
        pages = [
            page.model_copy(update={"markdown": text})
            for page, text in zip(pages, placed, strict=True)
        ]
    if structure:
        placed = place_structure([page.markdown for page in pages], structure)
        pages = [
            page.model_copy(update={"markdown": text})
            for page, text in zip(pages, placed, strict=True)
        ]
    if structure and fmt is DocumentFormat.DOCX:  # every word of its pages is the file's
        vocabulary = file_vocabulary(tables or [], structure)
        mended = respell([page.markdown for page in pages], vocabulary)
        pages = [
            page.model_copy(update={"markdown": text})
            for page, text in zip(pages, mended, strict=True)
        ]
    scanned = [page.number for page in pages if not page.has_text_layer]
    read = read_scanned_pages(pdf, scanned, options) if scanned and ocr_available() else {}
    markdown = []
    for page in pages:
        ocr = read.get(page.number)
        if ocr is not None and ocr.readable:
            markdown.append(ocr.markdown)
            continue
        markdown.append(apply_slide(page.markdown, headings[page.number - 1]))
        warnings.extend(page.warnings)
    warnings.extend(ocr_warnings(sorted(n for n, page in read.items() if page.readable)))
    unread = [number for number in scanned if not (number in read and read[number].readable)]
    if progress:
        progress(len(pages), len(pages))
    return ConversionResult(
        ocr_layers={n: ocr_layer(page) for n, page in read.items() if page.readable},
        markdown="\n\n".join(markdown) + "\n",
        format=fmt.value,
        pages=len(pages),
        status="partial" if unread else "ok",
        warnings=warnings,
        failures=[],
        model=OFFLINE_MODEL,
    )


OCR_LIMITS = Limits(
    memory_bytes=4 * GIB,  # onnxruntime maps about 1.6 GiB of address space for one page
    cpu_s=120.0,
    step_cpu_s=120.0,
    wall_s=300.0,
    preload=("drac.documents.ocr", "numpy", "onnxruntime", "rapidocr"),
    # the engine's native libraries, and what onnxruntime reads to size its thread pool
    readable=(
        *("/usr/lib", "/lib", "/lib64", "/usr/lib64"),
        *("/proc/cpuinfo", "/sys/devices/system/cpu"),
    ),
)
"""What reading one scanned page by OCR may use, in a contained worker."""


def read_scanned_pages(
    pdf: PdfSource,
    numbers: list[int],
    options: ConversionOptions,
    *,
    unread_past_budget: bool = False,
) -> dict[int, OcrPage]:
    """Render the given pages (scans: no text layer) and read each by OCR.

    The one place the offline path calls OCR; a page OCR fails on is left out (unread). When
    the document's CPU budget is spent, BudgetExceeded; with `unread_past_budget` (checking
    pages, which never fails a document) the pages not read by then are left out instead.
    """
    render = RenderOptions(dpi=OCR_DPI, max_side_px=OCR_MAX_SIDE_PX, max_pages=options.max_pages)
    read: dict[int, OcrPage] = {}
    for number in numbers:
        try:
            image = next(render_pages(pdf, render, pages=[number]))
            found = contained_call(
                "drac.documents.ocr:ocr_page", image.png, number, image.width_pt,
                image.height_pt, limits=OCR_LIMITS, what=f"while reading page {number} by OCR",
            )  # fmt: skip
            read[number] = OcrPage.model_validate(found)
        except BudgetExceeded:
            if unread_past_budget:
                break  # no other page may be read either
            raise
        except DocumentError:
            continue  # the page stays marked as unread; the others are still read
    return read


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
