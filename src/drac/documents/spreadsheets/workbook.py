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

# Rows spooled in memory up to this size, on disk beyond it.
_SPOOL_BYTES = 16 * 1024 * 1024
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
def open_workbook(data: bytes) -> Iterator[Workbook]:
    """Open XLSX/XLSM bytes; `sheets` yields the visible worksheets one at a time (each
    valid until the next is taken). Raises DocumentError for an unreadable workbook."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises many kinds on damaged parts; all mean the same
        raise DocumentError(f"cannot read the workbook: {type(exc).__name__}: {exc}") from exc
    try:
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
                columns = _spool(sheet, merges, spool)
            except _DAMAGED as exc:
                raise DocumentError(f"sheet {sheet.title!r} is damaged: {exc}") from exc
            if not columns:
                warnings.append(f"sheet {sheet.title!r} is empty: skipped")
                continue
            yield SheetGrid(name=sheet.title, columns=columns, rows=_reader(spool))


def _spool(sheet: Any, merges: list[MergedRange], spool: IO[str]) -> tuple[int, ...]:
    """Write the sheet's non-empty rows (shown texts, merges filled) to `spool`; return the
    columns holding any value."""
    writer = csv.writer(spool)
    starting: dict[int, list[MergedRange]] = {}
    for merge in merges:
        starting.setdefault(merge[0], []).append(merge)
    active: list[tuple[MergedRange, str]] = []
    used: set[int] = set()
    sheet.reset_dimensions()  # a wrong <dimension> would otherwise cut rows or columns off
    for number, cells in enumerate(sheet.iter_rows(), start=1):
        row = [_shown(cell) for cell in cells]
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
            writer.writerow(row[: filled[-1] + 1])
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
