"""Spreadsheets (XLSX, XLSM, ODS, XLS, CSV, TSV) straight to Markdown, one pure entry point
both runtimes call."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import PurePath

from pydantic import BaseModel, ConfigDict, Field

from drac.documents.intake.archive import check_inflation
from drac.documents.intake.delimited import DELIMITERS, read_rows, sniff_delimiter
from drac.documents.intake.detect import DocumentFormat
from drac.documents.intake.normalise import convert_with_libreoffice
from drac.documents.sandbox.containment import GIB, Limits, contained_call, in_worker, step
from drac.documents.sandbox.containment.tasks import contained_task
from drac.documents.spreadsheets.grid import SheetGrid, non_empty, used_columns
from drac.documents.spreadsheets.rows import RowStats
from drac.documents.spreadsheets.sheet import write_sheet
from drac.documents.text import decode_text
from drac.errors import DocumentError
from drac.models import Element, ElementKind, ParseConfig, Strategy, TableRows

SPREADSHEET_FORMATS = frozenset(f.value for f in DocumentFormat if f.is_spreadsheet)
"""Format names (as records store them) of the documents read as spreadsheets."""
MAX_COLUMNS = 16_384
"""Columns a sheet may have (Excel's own limit, column XFD)."""
SHEET_LIMITS = Limits(
    memory_bytes=2 * GIB,
    cpu_s=300.0,
    step_cpu_s=120.0,
    wall_s=600.0,
    preload=("drac.documents.spreadsheets.read", "drac.documents.spreadsheets.workbook"),
)
"""What reading one workbook may use (openpyxl runs in a contained worker)."""
_LIBREOFFICE_FIRST = {DocumentFormat.ODS: ".ods", DocumentFormat.XLS: ".xls"}
_DELIMITED = {DocumentFormat.CSV: DELIMITERS, DocumentFormat.TSV: "\t" + DELIMITERS}


class SpreadsheetOptions(BaseModel):
    """How a spreadsheet becomes Markdown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table_rows: TableRows = "pipe"
    max_element_chars: int = Field(
        default=ParseConfig().max_element_chars,
        ge=100,
        description="the parser's element limit: a row (with its header) never exceeds it",
    )
    libreoffice_timeout_s: float = Field(default=180, gt=0, description="for ODS and XLS")
    max_pages: int = Field(default=5000, ge=1, description="the page limit: sheets read")

    @classmethod
    def for_strategy(cls, strategy: Strategy, parse: ParseConfig) -> SpreadsheetOptions:
        """Options matching an ingest: the strategy's table rows, the parser's element limit."""
        return cls(table_rows=strategy.table_rows, max_element_chars=parse.max_element_chars)


class SpreadsheetResult(BaseModel):
    """A spreadsheet's Markdown, how many sheets (and rows) it holds, and what was skipped."""

    markdown: str
    format: str
    sheets: int = Field(ge=1, description="sheets written (1 for CSV and TSV)")
    rows: int = Field(ge=0, description="data rows written")
    warnings: list[str] = Field(default_factory=list)


def read_spreadsheet(
    data: bytes, fmt: DocumentFormat, filename: str, options: SpreadsheetOptions
) -> SpreadsheetResult:
    """Markdown for a spreadsheet: a title heading (the workbook's title, else the file
    name), a heading and a page marker per visible sheet, every data row a whole element.

    ODS and XLS go through LibreOffice to XLSX first. Raises DocumentError when the file
    cannot be read or holds no data.
    """
    if not fmt.is_spreadsheet:
        raise DocumentError(f"{fmt.value} is not a spreadsheet format")
    stem = _one_line(PurePath(filename).stem) or "Spreadsheet"
    if fmt in _DELIMITED:
        return _delimited(data, fmt, stem, options)
    if fmt.is_zip_container:
        check_inflation(data)  # before openpyxl or LibreOffice inflates anything
    warnings: list[str] = []
    if fmt in _LIBREOFFICE_FIRST:
        converted = convert_with_libreoffice(
            data, _LIBREOFFICE_FIRST[fmt], "xlsx", timeout_s=options.libreoffice_timeout_s
        )
        data, warnings = converted.data, list(converted.warnings)
    if in_worker():
        result = _workbook(data, fmt, stem, options)
    else:
        found = contained_call(
            workbook_here, data, fmt, stem, options,
            limits=SHEET_LIMITS, what="while opening the workbook",
        )  # fmt: skip
        result = SpreadsheetResult.model_validate(found)
    if not warnings:
        return result
    return result.model_copy(update={"warnings": [*warnings, *result.warnings]})


@contained_task
def workbook_here(
    data: bytes, fmt: DocumentFormat, stem: str, options: SpreadsheetOptions
) -> SpreadsheetResult:
    """An XLSX/XLSM workbook's Markdown, in this process (the contained worker's side)."""
    return _workbook(data, fmt, stem, options)


def _workbook(
    data: bytes, fmt: DocumentFormat, stem: str, options: SpreadsheetOptions
) -> SpreadsheetResult:
    out: list[str] = []
    totals = RowStats()
    sheets = 0
    # openpyxl is imported only when a workbook is read (about 70 ms, paid by no other document)
    from drac.documents.spreadsheets.workbook import open_workbook

    with open_workbook(data, options.max_pages) as book:
        out.append(f"# {_one_line(book.title or '') or stem}\n\n")
        for grid in book.sheets:
            sheets += 1
            step(f"writing sheet {sheets}")
            heading = f"<!-- Page {sheets} -->\n\n## {_one_line(grid.name) or f'Sheet {sheets}'}"
            _add(totals, _write(out, grid, heading, options))
        warnings = list(book.warnings)
    if not sheets:
        raise DocumentError("the workbook holds no data: every sheet is empty or hidden")
    return _result(out, fmt, sheets, totals, warnings, options)


def _delimited(
    data: bytes, fmt: DocumentFormat, stem: str, options: SpreadsheetOptions
) -> SpreadsheetResult:
    text = decode_text(data)
    delimiter = sniff_delimiter(text, _DELIMITED[fmt]) or (
        "\t" if fmt is DocumentFormat.TSV else ","
    )
    columns = used_columns(non_empty(read_rows(text, delimiter)))
    if not columns:
        raise DocumentError(f"the {fmt.value.upper()} file holds no data")
    if columns[-1] >= MAX_COLUMNS:
        raise DocumentError(
            f"the {fmt.value.upper()} file has {columns[-1] + 1:,} columns, more than the "
            f"{MAX_COLUMNS:,} a sheet may have"
        )
    grid = SheetGrid(name=stem, columns=columns, rows=lambda: non_empty(read_rows(text, delimiter)))
    out: list[str] = []
    stats = _write(out, grid, f"# {stem}", options)
    return _result(out, fmt, 1, stats, [], options)


def _write(out: list[str], grid: SheetGrid, heading: str, options: SpreadsheetOptions) -> RowStats:
    return write_sheet(
        out,
        grid,
        heading=heading,
        table_rows=options.table_rows,
        limit=options.max_element_chars,
    )


def _add(totals: RowStats, stats: RowStats) -> None:
    totals.rows += stats.rows
    totals.split_rows += stats.split_rows


def _result(
    out: list[str],
    fmt: DocumentFormat,
    sheets: int,
    stats: RowStats,
    warnings: list[str],
    options: SpreadsheetOptions,
) -> SpreadsheetResult:
    if stats.split_rows:
        warnings.append(
            f"{stats.split_rows} rows longer than the {options.max_element_chars}-character "
            "element limit were split by column groups, each repeating the first column"
        )
    return SpreadsheetResult(
        markdown=_joined(out),
        format=fmt.value,
        sheets=sheets,
        rows=stats.rows,
        warnings=warnings,
    )


def _joined(out: list[str]) -> str:
    """The pieces as one text ending in a single newline, copied once (it may be large)."""
    while out and not out[-1].strip():
        out.pop()
    if out:
        out[-1] = out[-1].rstrip("\n") + "\n"
    return "".join(out)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def stored_table_rows(elements: Iterable[Element]) -> TableRows:
    """How a spreadsheet's stored elements write its rows (pipe tables or sentences)."""
    rows = (element for element in elements if element.kind is ElementKind.TABLE_ROW)
    return "pipe" if next(iter(rows), None) is not None else "sentences"


def table_rows_advice(fmt: str, elements: Sequence[Element], strategy: Strategy) -> str | None:
    """What to tell a user re-planning a spreadsheet whose stored rows are written another
    way than `strategy.table_rows` asks (a re-plan keeps the stored elements); else None."""
    if fmt not in SPREADSHEET_FORMATS:
        return None
    stored = stored_table_rows(elements)
    if stored == strategy.table_rows:
        return None
    return (
        f"rows are stored as {stored}, not {strategy.table_rows}: a re-plan keeps the stored "
        f"elements; re-ingest with --force --table-rows {strategy.table_rows} to rewrite them"
    )
