"""Where leaf blocks end: fenced and indented code, HTML blocks, pipe and grid tables.

Each function takes the line a block opens on and returns the index of the first line after
it, or None when the line does not open that block after all (it is then paragraph text).
"""

from __future__ import annotations

import re

from drac.parsing.grammar import (
    BLOCK_TAGS,
    CLOSE_TAG_REST,
    GRID_BORDER,
    GRID_LINE,
    HTML_ENDS,
    OPEN_TAG_REST,
    RAW_TEXT_TAGS,
    is_blank_text,
    is_indented_code,
    leading_spaces,
)
from drac.parsing.source import Lines

_CLOSING_FENCE = {char: re.compile(rf" {{0,3}}({re.escape(char)}+)[ \t]*$") for char in "`~"}
_ALIGNMENT = re.compile(r":?-+:?")


def fenced_code_end(lines: Lines, index: int, fence: str, info: str) -> int | None:
    """End of a fenced code block (the document's end when it is never closed)."""
    if fence[0] == "`" and "`" in info:
        return None  # a backtick fence's info string cannot hold a backtick
    closing = _CLOSING_FENCE[fence[0]]
    for candidate in range(index + 1, lines.count):
        match = closing.match(lines.lines[candidate])
        if match and len(match.group(1)) >= len(fence):
            return candidate + 1
    return lines.count


def indented_code_end(lines: Lines, index: int) -> int:
    """End of indented code: following code lines and whitespace-only lines belong to it."""
    end = index + 1
    while end < lines.count and (
        is_indented_code(lines.lines[end]) or is_blank_text(lines.lines[end])
    ):
        end += 1
    return end


def html_end(lines: Lines, index: int, tag: str, after_paragraph: bool) -> int | None:
    """End of an HTML block whose opening `tag` ('<div', '</p', '<!--', ...) starts the line."""
    offset = lines.starts[index] + leading_spaces(lines.lines[index]) + len(tag)
    end_marker = HTML_ENDS.get(tag) or (">" if tag.startswith("<!") else None)
    if end_marker is not None:
        return _through_marker(lines, offset, end_marker)
    name = tag[2:].lower() if tag.startswith("</") else tag[1:].lower()
    if not tag.startswith("</") and name in RAW_TEXT_TAGS:
        return _through_marker(lines, offset, f"</{name}>")
    if name in BLOCK_TAGS:
        return lines.next_blank(index)
    if after_paragraph:
        return None  # a lone tag cannot interrupt a paragraph
    rest = lines.lines[index][offset - lines.starts[index] :]
    complete = CLOSE_TAG_REST if tag.startswith("</") else OPEN_TAG_REST
    return lines.next_blank(index) if complete.match(rest) else None


def _through_marker(lines: Lines, offset: int, marker: str) -> int:
    found = lines.source.find(marker, offset)
    return lines.count if found < 0 else lines.line_at(found) + 1


def grid_table_end(lines: Lines, index: int) -> int | None:
    """End of a grid table: a +---+ border, then lines that start with | or +."""
    line = lines.lines[index]
    indent = leading_spaces(line)
    if indent > 3 or not GRID_BORDER.match(line, indent) or not lines.has_newline(index):
        return None
    end = index + 1
    while end < lines.count and GRID_LINE.match(lines.lines[end]):
        end += 1
    return end if end > index + 1 else None


def pipe_table_end(lines: Lines, index: int) -> tuple[int, bool] | None:
    """End of a table whose rows start and end with '|', and whether it is a valid table.

    None: the line is text. An invalid table (its separator or a row does not match the
    header's cells) reads as a paragraph that runs over the following '|' rows too.
    """
    header = _pipe_row(lines.lines[index])
    if header is None or index + 1 >= lines.count or not lines.has_newline(index):
        return None
    separator = _pipe_row(lines.lines[index + 1])
    if separator is None:
        return None
    columns = _header_columns(header, separator)
    end = index + 2
    valid = columns is not None
    while end < lines.count:
        row = _pipe_row(lines.lines[end])
        if row is None:
            break
        end += 1
        if valid and _cell_count(row) != columns:
            valid = False
    if not valid:
        while end < lines.count and _pipe_row(lines.lines[end]) is not None:
            end += 1
    return end, valid


def bare_table_end(lines: Lines, index: int) -> int | None:
    """End of a table without outer pipes ('a | b'); None when it is not a valid table."""
    header = _bare_row(lines.lines[index])
    if header is None or index + 1 >= lines.count or not lines.has_newline(index):
        return None
    separator = _bare_row(lines.lines[index + 1])
    if separator is None:
        return None
    columns = _header_columns(header, separator)
    if columns is None:
        return None
    end = index + 2
    while end < lines.count:
        row = _bare_row(lines.lines[end])
        if row is None:
            break
        if _cell_count(row) != columns:
            return None
        end += 1
    return end


def _pipe_row(line: str) -> str | None:
    text = line.rstrip(" \t")
    if not text.startswith("|") and text.startswith((" ", "\t")):
        text = text.lstrip(" ")
    if not text.startswith("|") or not text.endswith("|"):
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
