"""What the table builders share: cell positions grouped into columns, wrapped rows joined
into the row above, and a grid of cells written as a Markdown pipe table.

The builders are the text layer's (`drac.documents.offline.tables`), the file structure's
(`drac.documents.office.file_tables`, written by `drac.documents.office.table_pages`) and
OCR's (`drac.documents.pdf.ocr`); each keeps what is its own (what a cell is, where a row
ends, which row is the header) and the escaping its source needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence


def position_groups(positions: Iterable[float], spread: float) -> list[list[float]]:
    """The positions in ascending order, grouped: each group holds the positions within
    `spread` of its first (where cells start at one column)."""
    groups: list[list[float]] = []
    for x in sorted(positions):
        if groups and x - groups[-1][0] <= spread:
            groups[-1].append(x)
        else:
            groups.append([x])
    return groups


def joined_rows(above: Sequence[str], below: Sequence[str]) -> list[str]:
    """Two rows of one width as one: each cell's text, a space, the cell's text below it
    (an empty side adds nothing)."""
    return [f"{old} {new}".strip() for old, new in zip(above, below, strict=True)]


def escape_pipes(text: str) -> str:
    """`text` with each pipe escaped, so it stays inside its cell."""
    return text.replace("|", "\\|")


def pipe_row(cells: Iterable[str]) -> str:
    """One pipe-table row of cell texts (already escaped)."""
    return "| " + " | ".join(cells) + " |"


def pipe_table(
    rows: Sequence[Sequence[str]], cell: Callable[[str], str], *, delimiter: str = " --- "
) -> str:
    """A Markdown pipe table of `rows`, the first the header, each cell written by `cell`;
    the delimiter row has `delimiter` between the pipes of each of the header's columns."""
    lines = [pipe_row(cell(text) for text in row) for row in rows]
    lines.insert(1, "|" + f"{delimiter}|" * len(rows[0]))
    return "\n".join(lines)
