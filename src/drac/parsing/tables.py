"""drac's table rules for markdown-it-py's block parser: pipe, bare and grid tables.

These replace markdown-it's GFM table rule, whose rows run on over any following text line
(a sentence right after a table became a row): a pipe table's rows start and end with '|', a
bare table's ('a | b') rows each have the header's cell count, and a grid table (+---+ borders,
which CommonMark does not know) runs over lines starting with '|' or '+'. They are the rules
drac's element ids were first made with (mistune 3's table plugin, plus grid tables). Each
rule takes the line a table may open on; when it holds, it pushes one token whose `map` is
the table's line range. Every pattern is linear: no repetition can match the same text twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markdown_it.rules_block import StateBlock

# Possessive repetitions: Python's engine would otherwise keep a backtracking entry per
# repetition (a 1 MB border took 170 MiB).
_GRID_BORDER = re.compile(r"\+[-=:]++\+(?:[-=:]*+\+)*+[ \t]*$")
_GRID_LINE = re.compile(r" {0,3}[|+]")
_ALIGNMENT = re.compile(r":?-+:?")


def _line(state: StateBlock, index: int) -> str:
    return state.src[state.bMarks[index] : state.eMarks[index]]


def _opens(state: StateBlock, start: int, end: int) -> bool:
    """A table may open on `start`: not indented as code, a next line, and its newline."""
    return (
        state.sCount[start] - state.blkIndent < 4
        and start + 1 < end
        and state.eMarks[start] < len(state.src)
    )


def _push(state: StateBlock, kind: str, start: int, end: int, silent: bool) -> bool:
    if not silent:
        token = state.push(kind, "", 0)
        token.map = [start, end]
    state.line = end
    return True


def grid_table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A grid table: a +---+ border line, then lines starting with '|' or '+'."""
    if not _opens(state, start, end):
        return False
    src = state.src
    first = state.bMarks[start] + state.tShift[start]
    if src[first : first + 1] != "+" or not _GRID_BORDER.match(src, first, state.eMarks[start]):
        return False
    line = start + 1
    while line < end and _GRID_LINE.match(src, state.bMarks[line], state.eMarks[line]):
        line += 1
    return line > start + 1 and _push(state, "grid_table", start, line, silent)


def pipe_table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A table whose rows start and end with '|'. Its separator must fit the header's cells
    and every row must have as many; when one does not, its lines are paragraph text."""
    if not _opens(state, start, end):
        return False
    header = _pipe_row(_line(state, start))
    separator = _pipe_row(_line(state, start + 1)) if header is not None else None
    if header is None or separator is None:
        return False
    columns = _header_columns(header, separator)
    if columns is None:
        return False
    line = _body_end(state, start + 2, end, columns, _pipe_row)
    return line is not None and _push(state, "table", start, line, silent)


def bare_table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A table without outer pipes ('a | b'), every row with the header's cell count."""
    if not _opens(state, start, end):
        return False
    header = _bare_row(_line(state, start))
    if header is not None and _pipe_row(header) is not None:
        return False  # a '|' row read as a pipe table, or else as text
    separator = _bare_row(_line(state, start + 1)) if header is not None else None
    if header is None or separator is None or not header.strip()[:1]:
        return False
    columns = _header_columns(header, separator)
    if columns is None:
        return False
    line = _body_end(state, start + 2, end, columns, _bare_row)
    return line is not None and _push(state, "table", start, line, silent)


def _pipe_row(line: str) -> str | None:
    text = line.rstrip(" \t")
    if not text.startswith("|") and text.startswith((" ", "\t")):
        text = text.lstrip(" ")
    if not text.startswith("|") or not text.endswith("|") or len(text) < 2:
        return None
    return text[1:-1]


def _bare_row(line: str) -> str | None:
    text = line.rstrip(" \t")
    return text if "|" in text else None


def _header_columns(header: str, separator: str) -> int | None:
    """Number of columns when separator fits header (same cells, each :---: or empty)."""
    cells = _cells(separator)
    if _cell_count(header) != len(cells):
        return None
    if not all(not cell or _ALIGNMENT.fullmatch(cell) for cell in cells):
        return None
    return len(cells)


def _cells(row: str) -> list[str]:
    if "\\" not in row:
        return [cell.strip() for cell in row.split("|")]
    cells: list[str] = []
    start = 0
    for position, char in enumerate(row):
        if char == "|" and not _escaped(row, position):
            cells.append(row[start:position].strip())
            start = position + 1
    cells.append(row[start:].strip())
    return cells


def _cell_count(row: str) -> int:
    if "\\" not in row:
        return row.count("|") + 1
    return len(_cells(row))


def _escaped(row: str, position: int) -> bool:
    backslashes = 0
    while position - backslashes - 1 >= 0 and row[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _body_end(
    state: StateBlock, line: int, end: int, columns: int, row_of: Callable[[str], str | None]
) -> int | None:
    """The line after a table's body rows from `line` on (rows as `row_of` reads them), or
    None when a row has another cell count than the header's (then no table at all)."""
    while line < end:
        row = row_of(_line(state, line))
        if row is None:
            break
        if _cell_count(row) != columns:
            return None
        line += 1
    return line
