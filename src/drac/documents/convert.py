"""Stages 1 and 2 orchestrated: any accepted document to Markdown with `<!-- Page N -->` markers.

The routes are converters (`drac.documents.conversion.Converter`), tried in order: text is
used as-is, spreadsheets are read as tables, any other document is converted from its pages,
offline (`drac.documents.offline.converter`) or by a vision model
(`drac.documents.vision.converter`).
"""

from __future__ import annotations

from drac.documents.conversion import Conversion, ConversionResult, Converter, Progress
from drac.documents.intake.detect import detect_format
from drac.documents.offline.converter import OfflineConverter
from drac.documents.options import ConversionOptions
from drac.documents.spreadsheets import SpreadsheetOptions, read_spreadsheet
from drac.documents.text import decode_text
from drac.documents.vision.converter import VisionConverter
from drac.documents.vision.escalate import Escalation
from drac.documents.vision.incremental import EarlierVersion
from drac.errors import DocumentError
from drac.ports import Ledger, VisionModel

__all__ = [
    "CONVERTERS",
    "ConversionOptions",
    "ConversionResult",
    "convert_to_markdown",
    "decode_text",
]


class TextConverter:
    """Markdown and text, used as they are."""

    def accepts(self, conversion: Conversion) -> bool:
        """Whether the document is Markdown or text."""
        return conversion.format.is_text

    def convert(self, conversion: Conversion) -> ConversionResult:
        """The decoded text as the document's Markdown, one page."""
        return ConversionResult(
            markdown=decode_text(conversion.data),
            format=conversion.format.value,
            pages=1,
            status="ok",
            warnings=conversion.warnings,
            model="none",
        )


class SpreadsheetConverter:
    """Spreadsheets, read as tables (one page per sheet), never rendered."""

    def accepts(self, conversion: Conversion) -> bool:
        """Whether the document is a spreadsheet."""
        return conversion.format.is_spreadsheet

    def convert(self, conversion: Conversion) -> ConversionResult:
        """The workbook's sheets as Markdown tables, written as `conversion.spreadsheet` says."""
        options = conversion.options
        sheet_options = (conversion.spreadsheet or SpreadsheetOptions()).model_copy(
            update={
                "libreoffice_timeout_s": options.libreoffice_timeout_s,
                "max_pages": options.max_pages,
            }
        )
        sheets = read_spreadsheet(
            conversion.data, conversion.format, conversion.filename, sheet_options
        )
        return ConversionResult(
            markdown=sheets.markdown,
            format=sheets.format,
            pages=sheets.sheets,
            status="ok",
            warnings=[*conversion.warnings, *sheets.warnings],
            model="none",
        )


CONVERTERS: tuple[Converter, ...] = (
    TextConverter(),
    SpreadsheetConverter(),
    OfflineConverter(),
    VisionConverter(),
)
"""The routes, in the order they are tried: the first that accepts a document converts it."""


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
    vision model converted doubtfully are converted again by its model
    (`drac.documents.vision.escalate`).
    """
    if len(data) > options.max_file_bytes:
        raise DocumentError(
            f"file is {len(data) / 1048576:.1f} MiB, more than the "
            f"{options.max_file_bytes / 1048576:.0f} MiB limit"
        )
    detection = detect_format(data, filename)
    conversion = Conversion(
        data=data,
        filename=filename,
        format=detection.format,
        options=options,
        vision=vision,
        ledger=ledger,
        document_id=document_id,
        progress=progress,
        spreadsheet=spreadsheet,
        earlier=earlier,
        escalation=escalation,
        warnings=[detection.warning] if detection.warning else [],
    )
    for converter in CONVERTERS:
        if converter.accepts(conversion):
            return converter.convert(conversion)
    raise DocumentError(f"no converter takes a {detection.format.value} document")
