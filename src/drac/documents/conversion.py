"""What a converter is given and what it gives back, and the steps every page converter shares.

`convert_to_markdown` (`drac.documents.convert`) detects a document's format, then hands a
`Conversion` to the first `Converter` that takes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import normalise
from drac.documents.options import ConversionOptions
from drac.documents.pdf.layers import PageLayer
from drac.documents.row_sentences import GROWTH, rows_as_sentences
from drac.documents.spreadsheets import SpreadsheetOptions
from drac.documents.vision.escalate import Escalation
from drac.documents.vision.incremental import EarlierVersion, StoredBatch
from drac.documents.vision.verify import PageVerification
from drac.models import PageEscalation
from drac.ports import Ledger, VisionModel

Progress = Callable[[int, int], None]


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


@dataclass
class Conversion:
    """One document to convert: its bytes, detected format and what the caller asked."""

    data: bytes
    filename: str
    format: DocumentFormat
    options: ConversionOptions
    vision: VisionModel | None
    ledger: Ledger
    document_id: str
    progress: Progress | None = None
    spreadsheet: SpreadsheetOptions | None = None
    earlier: EarlierVersion | None = None
    escalation: Escalation | None = None
    warnings: list[str] = field(default_factory=list)
    """What detection found worth saying; a converter adds its own after these."""


class Converter(Protocol):
    """One route from bytes to Markdown; `convert_to_markdown` tries them in order."""

    def accepts(self, conversion: Conversion) -> bool:
        """Whether this route converts the document."""
        ...

    def convert(self, conversion: Conversion) -> ConversionResult:
        """The document's Markdown (raises DocumentError when impossible)."""
        ...


def convert_pages(
    conversion: Conversion, convert_pdf: Callable[[bytes, list[str]], ConversionResult]
) -> ConversionResult:
    """What every page converter does around its own work: normalise the document to a PDF,
    have `convert_pdf(pdf, warnings)` convert it, keep the PDF a non-PDF was rendered from,
    and write the tables' rows as `conversion.spreadsheet.table_rows` asks."""
    options = conversion.options
    pdf, normalise_warnings = normalise(
        conversion.data,
        conversion.format,
        timeout_s=options.libreoffice_timeout_s,
        max_pages=options.max_pages,
    )
    conversion.warnings.extend(normalise_warnings)
    result = convert_pdf(pdf, conversion.warnings)
    if conversion.format is not DocumentFormat.PDF:
        result.normalised_pdf = pdf
    return _tables_written(result, conversion.spreadsheet or SpreadsheetOptions())


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
