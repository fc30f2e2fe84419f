"""Stages 1 and 2 orchestrated: any accepted document to Markdown with `<!-- Page N -->` markers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from drac.documents.check import MARKER, check_batch, clean_model_markdown, repair_markers
from drac.documents.detect import DocumentFormat, detect_format
from drac.documents.normalise import normalise_to_pdf
from drac.documents.offline import offline_markdown
from drac.documents.prompt import batch_prompt, conversion_system_prompt, page_marker
from drac.documents.render import PageImage, RenderOptions, batched, page_count, render_pages
from drac.documents.spreadsheets import SpreadsheetOptions, read_spreadsheet
from drac.documents.text import decode_text
from drac.errors import DocumentError
from drac.models import LedgerEntry
from drac.ports import Ledger, ModelCallError, ModelReply, VisionModel

__all__ = ["ConversionOptions", "ConversionResult", "convert_to_markdown", "decode_text"]

OFFLINE_MODEL = "offline"
Progress = Callable[[int, int], None]


class ConversionOptions(BaseModel):
    """Settings of stages 1 and 2 (defaults are the method's)."""

    batch_pages: int = Field(default=5, ge=1, le=20)
    max_in_flight: int = Field(default=5, ge=1, le=64)
    dpi: int = Field(default=200, ge=36, le=600)
    max_side_px: int = Field(default=1568, ge=64, le=8000)
    libreoffice_timeout_s: float = Field(default=180, gt=0)
    max_pages: int = Field(default=5000, ge=1)
    max_file_bytes: int = Field(default=500 * 1024 * 1024, ge=1)
    batch_attempts: int = Field(default=2, ge=1, le=5, description="tries per batch on bad answers")

    def render_options(self) -> RenderOptions:
        """Return the rendering settings these options imply."""
        return RenderOptions(dpi=self.dpi, max_side_px=self.max_side_px, max_pages=self.max_pages)


class ConversionResult(BaseModel):
    """A document's converted Markdown and how the conversion went."""

    markdown: str
    format: str
    pages: int
    status: Literal["ok", "partial"]
    warnings: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    model: str


class _BatchOutcome(BaseModel):
    pages: list[int]
    markdown: str
    warnings: list[str] = Field(default_factory=list)
    failure: str | None = None
    calls: list[LedgerEntry] = Field(default_factory=list)


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
) -> ConversionResult:
    """Convert one document to retrieval-friendly Markdown (raises DocumentError when impossible).

    Markdown and text are used as-is; spreadsheets are read as tables (`spreadsheet` says
    how; one page per sheet); other formats are normalised to PDF, rendered and converted
    in page batches by the vision model (or offline from the text layer when `vision` is
    None). A failed batch becomes error markers and the result is "partial".
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
            update={"libreoffice_timeout_s": options.libreoffice_timeout_s}
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
    pdf = normalise_to_pdf(
        data,
        detection.format,
        timeout_s=options.libreoffice_timeout_s,
        max_pages=options.max_pages,
    )
    if vision is None:
        return _convert_offline(pdf, detection.format, warnings, options, progress)
    return _convert_with_model(
        pdf, detection.format, warnings, options, vision, ledger, document_id, progress
    )


def _convert_offline(
    pdf: bytes,
    fmt: DocumentFormat,
    warnings: list[str],
    options: ConversionOptions,
    progress: Progress | None,
) -> ConversionResult:
    pages = offline_markdown(pdf, max_pages=options.max_pages)
    scanned = [page.number for page in pages if not page.has_text_layer]
    for page in pages:
        warnings.extend(page.warnings)
    if progress:
        progress(len(pages), len(pages))
    return ConversionResult(
        markdown="\n\n".join(page.markdown for page in pages) + "\n",
        format=fmt.value,
        pages=len(pages),
        status="partial" if scanned else "ok",
        warnings=warnings,
        failures=[],
        model=OFFLINE_MODEL,
    )


def _convert_with_model(
    pdf: bytes,
    fmt: DocumentFormat,
    warnings: list[str],
    options: ConversionOptions,
    vision: VisionModel,
    ledger: Ledger,
    document_id: str,
    progress: Progress | None,
) -> ConversionResult:
    total = page_count(pdf, options.max_pages)
    system = conversion_system_prompt()
    outcomes: dict[int, _BatchOutcome] = {}
    done_pages = 0

    def collect(future: Future[_BatchOutcome]) -> None:
        nonlocal done_pages
        outcome = future.result()
        for entry in outcome.calls:  # recorded here: ledgers need not be thread-safe
            ledger.record(entry)
        outcomes[outcome.pages[0]] = outcome
        done_pages += len(outcome.pages)
        if progress:
            progress(done_pages, total)

    batches: Iterator[list[PageImage]] = batched(
        render_pages(pdf, options.render_options()), options.batch_pages
    )
    with ThreadPoolExecutor(
        max_workers=options.max_in_flight, thread_name_prefix="drac-conv"
    ) as pool:
        in_flight: set[Future[_BatchOutcome]] = set()
        for batch in batches:  # rendering happens here, lazily, in this thread
            while len(in_flight) >= options.max_in_flight:
                finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    collect(future)
            in_flight.add(
                pool.submit(_convert_batch, batch, total, system, vision, document_id, options)
            )
        for future in in_flight:
            collect(future)
    failures = []
    parts = []
    for first in sorted(outcomes):
        outcome = outcomes[first]
        parts.append(outcome.markdown)
        warnings.extend(outcome.warnings)
        if outcome.failure:
            failures.append(outcome.failure)
    return ConversionResult(
        markdown="\n\n".join(parts) + "\n",
        format=fmt.value,
        pages=total,
        status="partial" if failures else "ok",
        warnings=warnings,
        failures=failures,
        model=vision.name,
    )


def _convert_batch(
    batch: list[PageImage],
    total: int,
    system: str,
    vision: VisionModel,
    document_id: str,
    options: ConversionOptions,
) -> _BatchOutcome:
    """Convert one batch; never raises: failures become error markers."""
    numbers = [page.number for page in batch]
    prompt = batch_prompt(numbers, total)
    images = [page.png for page in batch]
    text_chars = {page.number: page.text_chars for page in batch}
    reason = "no answer"
    calls: list[LedgerEntry] = []
    for _attempt in range(options.batch_attempts):
        started = time.perf_counter()
        try:
            reply = vision.convert(system, prompt, images)
        except ModelCallError as exc:
            calls.append(_entry(document_id, vision.name, started, outcome=f"error: {exc}"))
            reason = str(exc) or type(exc).__name__
            break  # the client already retried
        except Exception as exc:  # a client bug must not sink the document
            calls.append(_entry(document_id, vision.name, started, outcome=f"error: {exc!r}"))
            reason = f"unexpected {type(exc).__name__}: {exc}"
            break
        markdown = clean_model_markdown(reply.text)
        has_content = any(ch.isalnum() for ch in MARKER.sub("", markdown))
        if not markdown or (not has_content and any(text_chars.values())):
            calls.append(_entry(document_id, reply.model, started, reply=reply, outcome="empty"))
            reason = "the model returned no content"
            continue
        calls.append(_entry(document_id, reply.model, started, reply=reply, outcome="ok"))
        markdown, notes = repair_markers(markdown, numbers)
        report = check_batch(markdown, numbers, text_chars)
        label = f"pages {numbers[0]}-{numbers[-1]}" if len(numbers) > 1 else f"page {numbers[0]}"
        warnings = [f"{label}: {note}" for note in [*notes, *report.warnings]]
        return _BatchOutcome(pages=numbers, markdown=markdown, warnings=warnings, calls=calls)
    return _failed(numbers, reason, calls)


def _failed(numbers: list[int], reason: str, calls: list[LedgerEntry]) -> _BatchOutcome:
    safe = " ".join(reason.replace("--", "- -").split())[:300]
    markers = "\n\n".join(
        f"{page_marker(number)[:-4]}: conversion failed: {safe} -->" for number in numbers
    )
    span = f"{numbers[0]}-{numbers[-1]}" if len(numbers) > 1 else str(numbers[0])
    return _BatchOutcome(
        pages=numbers,
        markdown=markers,
        failure=f"pages {span}: conversion failed: {safe}",
        calls=calls,
    )


def _entry(
    document_id: str,
    model: str,
    started: float,
    *,
    reply: ModelReply | None = None,
    outcome: str,
) -> LedgerEntry:
    usage = reply.usage if reply else None
    latency = (reply.latency_ms if reply else 0.0) or (time.perf_counter() - started) * 1000
    return LedgerEntry(
        document_id=document_id,
        stage="conversion",
        model=model,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        latency_ms=latency,
        outcome=outcome[:500],
        at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
