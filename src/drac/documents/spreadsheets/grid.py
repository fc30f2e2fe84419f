"""A sheet as the Markdown writer reads it: shown cell texts, row by row, any number of times."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

RowSource = Callable[[], Iterator[list[str]]]


@dataclass(frozen=True)
class SheetGrid:
    """One sheet: its name, the columns holding any value, and a fresh pass over its rows.

    `rows()` yields the non-empty rows only, each cell the text the sheet shows (merged
    ranges already filled); `columns` are 0-based indexes of the columns to keep.
    """

    name: str
    columns: tuple[int, ...]
    rows: RowSource


def used_columns(rows: Iterable[list[str]]) -> tuple[int, ...]:
    """0-based indexes of the columns that hold a non-blank cell in any row."""
    used: set[int] = set()
    for row in rows:
        used.update(index for index, cell in enumerate(row) if cell.strip())
    return tuple(sorted(used))


def non_empty(rows: Iterable[list[str]]) -> Iterator[list[str]]:
    """The rows that hold at least one non-blank cell."""
    return (row for row in rows if any(cell.strip() for cell in row))
