"""The shapes of the Markdown lines the offline converter writes, shared by the modules that
place a file's own structure on a page's Markdown (list items, table rows)."""

from __future__ import annotations

import re

__all__ = ["DELIMITER_ROW", "LIST_LINE", "row_cells"]

LIST_LINE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")
"""A list item: a bullet or a number, then a space."""
DELIMITER_ROW = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$")
"""A table's delimiter row ("| --- | :---: |")."""
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def row_cells(line: str) -> list[str]:
    """The cells of a Markdown table row, stripped (an escaped "\\|" stays in its cell)."""
    return [cell.strip() for cell in _CELL_SPLIT.split(line.strip().strip("|"))]
