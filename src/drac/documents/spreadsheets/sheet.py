"""One sheet as Markdown: its heading, caption lines, the header row (or a note that there is
none), then every data row as a pipe-table row or a sentence."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain

from drac.documents.spreadsheets.grid import SheetGrid
from drac.documents.spreadsheets.rows import (
    PipeRows,
    RowStats,
    SentenceRows,
    paragraph,
    sentence_text,
)
from drac.models import TableRows

# A cell a header row would not hold: a number, an amount, a percentage, a date, a time.
_DATA_LIKE = re.compile(
    r"^[-+(]?[$€£¥]?\s?\d[\d,.\s]*%?\)?$"
    r"|^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}\b"
    r"|^\d{1,2}:\d{2}\b"
    r"|^(?:TRUE|FALSE)$"
)
# Years stand as column headers (Region | 2023 | 2024) beside a text cell.
_YEAR = re.compile(r"^(?:1[89]|2[01])\d\d$")
_MAX_CAPTIONS = 5


def write_sheet(
    out: list[str],
    grid: SheetGrid,
    *,
    heading: str | None,
    table_rows: TableRows,
    limit: int,
) -> RowStats:
    """Append the sheet's Markdown to `out`: `heading` (if any) first, then its rows."""
    rows = _projected(grid)
    captions: list[str] = []
    first: list[str] | None = None
    for row in rows:
        caption = _caption(row, len(grid.columns))
        if caption is None or len(captions) >= _MAX_CAPTIONS:
            first = row
            break
        captions.append(caption)
    if heading:
        out.append(heading + "\n\n")
    out.extend(paragraph(sentence_text(caption)) + "\n\n" for caption in captions)
    if first is None:
        return RowStats()
    from openpyxl.utils import get_column_letter  # lazily: CSV needs no openpyxl at import

    letters = [get_column_letter(index + 1) for index in grid.columns]
    if is_header(first):
        header = [name.strip() or letter for name, letter in zip(first, letters, strict=True)]
        data: Iterator[list[str]] = rows
    else:
        header = letters
        data = chain([first], rows)
        out.append("This table has no header row; its columns are named by their letters.\n\n")
    writer = (SentenceRows if table_rows == "sentences" else PipeRows)(header, limit, out)
    for row in data:
        writer.add(row)
    writer.close()
    return writer.stats


def is_header(row: list[str]) -> bool:
    """True when a sheet's first row reads as column names: no cell looks like data (a year
    counts as a name when a text cell stands beside it)."""
    cells = [cell.strip() for cell in row if cell.strip()]
    data_like = [cell for cell in cells if _DATA_LIKE.match(cell)]
    if not data_like:
        return bool(cells)
    text_beside = len(data_like) < len(cells)
    return text_beside and all(_YEAR.match(cell) for cell in data_like)


def _caption(row: list[str], columns: int) -> str | None:
    """A title line above a table (one value, alone or merged across the row) in a sheet of
    three or more columns; None for a row of the table itself."""
    values = {cell.strip() for cell in row if cell.strip()}
    if columns >= 3 and len(values) == 1:
        return values.pop()
    return None


def _projected(grid: SheetGrid) -> Iterator[list[str]]:
    """The sheet's rows cut to its used columns (short rows padded), blank rows left out."""
    columns = grid.columns
    for row in grid.rows():
        width = len(row)
        cells = [row[index] if index < width else "" for index in columns]
        if any(cell.strip() for cell in cells):
            yield cells
