"""XLSX/XLSM sheets streamed with openpyxl (read-only, cached formula values), cells shown
as the sheet shows them and merged ranges filled, each sheet spooled once so the Markdown
writer can read it again without openpyxl and without holding it in memory."""

from __future__ import annotations

import csv
import io
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, time, timedelta
from decimal import Decimal
from typing import IO, Any
from xml.etree import ElementTree

from openpyxl import load_workbook

from drac.documents.spreadsheets.grid import RowSource, SheetGrid
from drac.documents.spreadsheets.numfmt import format_cell
from drac.documents.spreadsheets.parts import MergedRange, merged_ranges, sheet_parts
from drac.errors import DocumentError

# Rows spooled in memory up to this size, on disk beyond it (an unlinked file: nothing is
# left behind even when the worker is killed).
_SPOOL_BYTES = 16 * 1024 * 1024
MAX_SPOOL_BYTES = 1024 * 1024 * 1024
"""The most one sheet's spooled rows may take on disk."""
MAX_SHEET_CELLS = 20_000_000
"""Cells one sheet may have (a 200,000-row table of 100 columns), counted while rows are read."""
MAX_MERGED_CELLS = 1_000_000
"""Cells one sheet's merged ranges may cover, checked before any row is read (a merged header
covers a few columns, a merged label some rows; one `A2:XFD999` in 1.5 KB covers 16 million)."""
_FORMATTED = (int, float, Decimal, date, time, timedelta)
_DAMAGED = (ElementTree.ParseError, zipfile.BadZipFile, EOFError, KeyError, ValueError)


@dataclass
class Workbook:
    """An open workbook: its title (None when its properties have none), and what was
    skipped, as warnings."""

    title: str | None
    warnings: list[str] = field(default_factory=list)
    sheets: Iterator[SheetGrid] = field(default_factory=lambda: iter(()))


@contextmanager
def open_workbook(data: bytes, max_sheets: int = 5000) -> Iterator[Workbook]:
    """Open XLSX/XLSM bytes; `sheets` yields the visible worksheets one at a time (each
    valid until the next is taken). Raises DocumentError for an unreadable workbook, or one
    of more than `max_sheets` sheets (the page limit)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises many kinds on damaged parts; all mean the same
        raise DocumentError(f"cannot read the workbook: {type(exc).__name__}: {exc}") from exc
    try:
        if len(book.worksheets) > max_sheets:
            raise DocumentError(
                f"the workbook has {len(book.worksheets):,} sheets, more than the "
                f"{max_sheets:,} page limit"
            )
        title = (book.properties.title or "").strip() or None
        workbook = Workbook(title=title)
        workbook.sheets = _sheets(book, archive, workbook.warnings)
        yield workbook
    finally:
        book.close()
        archive.close()


def _sheets(book: Any, archive: zipfile.ZipFile, warnings: list[str]) -> Iterator[SheetGrid]:
    try:
        parts = sheet_parts(archive)
    except _DAMAGED as exc:
        raise DocumentError(f"cannot read the workbook's sheet list: {exc}") from exc
    for sheet in book.worksheets:
        if sheet.sheet_state != "visible":
            warnings.append(f"sheet {sheet.title!r} is hidden: skipped")
            continue
        part = parts.get(sheet.title)
        with tempfile.SpooledTemporaryFile(
            max_size=_SPOOL_BYTES, mode="w+", newline="", encoding="utf-8"
        ) as spool:
            try:
                merges = merged_ranges(archive, part) if part else []
                _check_merges(sheet.title, merges)
                columns = _spool(sheet, merges, spool)
            except _DAMAGED as exc:
                raise DocumentError(f"sheet {sheet.title!r} is damaged: {exc}") from exc
            if not columns:
                warnings.append(f"sheet {sheet.title!r} is empty: skipped")
                continue
            yield SheetGrid(name=sheet.title, columns=columns, rows=_reader(spool))


def _check_merges(title: str, merges: list[MergedRange]) -> None:
    """Refuse merged ranges that would fill more cells than MAX_MERGED_CELLS, before a row
    is read."""
    total = 0
    for first_row, first_col, last_row, last_col in merges:
        total += (last_row - first_row + 1) * (last_col - first_col + 1)
        if total > MAX_MERGED_CELLS:
            raise DocumentError(
                f"sheet {title!r}: merged ranges would fill more than {MAX_MERGED_CELLS:,} "
                f"cells (one spans {last_row - first_row + 1:,} rows x "
                f"{last_col - first_col + 1:,} columns), more than a sheet may have"
            )


def _spool(sheet: Any, merges: list[MergedRange], spool: IO[str]) -> tuple[int, ...]:
    """Write the sheet's non-empty rows (shown texts, merges filled) to `spool`; return the
    columns holding any value."""
    writer = csv.writer(spool)
    starting: dict[int, list[MergedRange]] = {}
    for merge in merges:
        starting.setdefault(merge[0], []).append(merge)
    active: list[tuple[MergedRange, str]] = []
    used: set[int] = set()
    cells_seen = written = 0
    sheet.reset_dimensions()  # a wrong <dimension> would otherwise cut rows or columns off
    for number, cells in enumerate(sheet.iter_rows(), start=1):
        row = [_shown(cell) for cell in cells]
        cells_seen += len(row)
        if cells_seen > MAX_SHEET_CELLS:
            raise DocumentError(
                f"sheet {sheet.title!r} has more than {MAX_SHEET_CELLS:,} cells (reached at "
                f"row {number:,}), more than a sheet may have"
            )
        active = [(merge, value) for merge, value in active if merge[2] >= number]
        for merge in starting.pop(number, ()):
            first_col = merge[1]
            value = row[first_col - 1] if first_col <= len(row) else ""
            active.append((merge, value))
        for (_, first_col, _, last_col), value in active:
            if len(row) < last_col:
                row.extend([""] * (last_col - len(row)))
            row[first_col - 1 : last_col] = [value] * (last_col - first_col + 1)
        filled = [index for index, cell in enumerate(row) if cell.strip()]
        if filled:
            used.update(filled)
            written += writer.writerow(row[: filled[-1] + 1])
            if written > MAX_SPOOL_BYTES:
                raise DocumentError(
                    f"sheet {sheet.title!r} needs more than {MAX_SPOOL_BYTES / 1024**3:g} GiB "
                    f"of temporary space (reached at row {number:,})"
                )
    spool.seek(0)
    return tuple(sorted(used))


def _shown(cell: Any) -> str:
    value = cell.value
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, _FORMATTED) and not isinstance(value, bool):
        text = format_cell(value, cell.number_format)
    else:
        text = format_cell(value)
    return text.replace("\x00", "")


def _reader(spool: IO[str]) -> RowSource:
    def rows() -> Iterator[list[str]]:
        spool.seek(0)
        return csv.reader(spool)

    return rows
