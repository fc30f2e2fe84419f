"""The paper's retrieval-aware table rule for converted documents: each row of a Markdown pipe
table becomes one self-contained sentence carrying its column headers ("Header: value; ...."),
in the words a spreadsheet's rows use (`drac.documents.spreadsheets.rows`).

Applied once, to a converted document's Markdown (the offline converter's or a vision model's),
before it is parsed into the stored elements: chunk text is rebuilt from those, so the sentences
are what every chunk holds. Only top-level pipe tables change; page markers, code blocks, lists,
quotes and every other byte stay as they were.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from drac.documents.intake.detect import DocumentFormat
from drac.documents.spreadsheets.rows import RowStats, SentenceRows, paragraph, sentence_text
from drac.models import DocumentRecord, TableRows
from drac.parsing.blocks import split_blocks

_ALIGNMENT = frozenset(":-")
GROWTH = 8
MIN_GROWTH_CHARS = 4 * 1024 * 1024
"""The sentences may make a document at most this much longer (every row repeats its headers:
a hostile table of long headers and many short rows would otherwise grow without bound);
tables past it stay pipe tables, with a warning."""


class RowSentences(NamedTuple):
    """A rewritten document, its rows written, and the tables left as pipe tables."""

    markdown: str
    stats: RowStats
    kept_tables: int = 0


def rows_as_sentences(markdown: str, limit: int) -> RowSentences:
    """`markdown` with each top-level pipe table's rows written as one sentence each (rows
    longer than `limit` characters split by column groups, each repeating the first column),
    and how many rows were written. Everything that is not such a table is kept verbatim.

    Ragged rows keep every cell (a missing cell is empty, an extra one has no header); empty
    cells are left out of their row's sentence; a table without header names writes its
    values alone; a header-only table becomes one sentence of its names. Tables past the growth
    budget (`GROWTH`) are kept as they are and counted.
    """
    if "|" not in markdown:
        return RowSentences(markdown, RowStats())
    out: list[str] = []
    stats = RowStats()
    budget = max(MIN_GROWTH_CHARS, GROWTH * len(markdown))
    kept = 0
    cursor = 0  # the end of what `out` holds
    position = 0  # the end of the last block seen
    for kind, text, _ in split_blocks(markdown):
        # blocks are verbatim slices, in order, apart only by blank lines and thematic breaks
        start = markdown.find(text, position)
        position = start + len(text)
        if kind not in ("table", "paragraph") or "|" not in text:
            continue
        found = _table_lines(text)
        if found is None:
            continue
        before, table, after = found
        growth = _most_growth(table)
        if growth > budget:
            kept += 1
            continue
        budget -= growth
        out.append(markdown[cursor:start])
        sentences = _sentences(table, limit, stats)
        pieces = [piece for piece in (before.rstrip("\n"), *sentences, after.rstrip("\n")) if piece]
        if start > cursor and not _blank_line_before(markdown, start):
            out.append("\n")  # the first sentence must not continue a paragraph above
        out.append("\n\n".join(pieces) + "\n")
        cursor = position
        if cursor < len(markdown) and not _starts_blank(markdown, cursor):
            out.append("\n")  # nor the last one run into the block below
    if not out:
        return RowSentences(markdown, stats, kept)
    out.append(markdown[cursor:])
    return RowSentences("".join(out), stats, kept)


def _most_growth(lines: Sequence[str]) -> int:
    """At most how many characters the table's sentences add: each row repeats every name."""
    names = sum(len(name) + 4 for name in _row_cells(lines[0]) or [])
    return max(0, len(lines) - 2) * names + names


def _blank_line_before(markdown: str, position: int) -> bool:
    previous = markdown.rfind("\n", 0, position - 1)
    return not markdown[previous + 1 : position].strip()


def stored_rows_differ(record: DocumentRecord, asked: TableRows) -> bool:
    """True when the document's stored elements write table rows another way than `asked`,
    so ingesting it again must convert it again. Never for Markdown and text (used as-is),
    nor for a spreadsheet no ingest recorded the option of (its rows tell: see
    `table_rows_advice`); any other document recorded by none was written as pipe tables."""
    try:
        fmt = DocumentFormat(record.format)
    except ValueError:
        return False
    if fmt.is_text or (fmt.is_spreadsheet and record.table_rows is None):
        return False
    return (record.table_rows or "pipe") != asked


def replan_advice(record: DocumentRecord, asked: TableRows) -> str | None:
    """What to tell a user re-planning a document whose stored rows `stored_rows_differ`
    from `asked` (a re-plan keeps the stored elements); else None."""
    if not stored_rows_differ(record, asked):
        return None
    return (
        f"rows are stored as {record.table_rows or 'pipe'}, not {asked}: a re-plan keeps the "
        f"stored elements; re-ingest with --force --table-rows {asked} to rewrite them"
    )


def _starts_blank(markdown: str, position: int) -> bool:
    end = markdown.find("\n", position)
    line = markdown[position:] if end < 0 else markdown[position:end]
    return not line.strip()


def _table_lines(text: str) -> tuple[str, list[str], str] | None:
    """A block's text split around its pipe table (a header row, a separator row with the same
    cells, then '|' rows of any width): the text before, the table's lines, the text after.
    None when the block holds no such table."""
    lines = text.split("\n")
    for index in range(len(lines) - 1):
        header = _row_cells(lines[index])
        separator = _row_cells(lines[index + 1])
        if header is None or separator is None or len(header) != len(separator):
            continue
        if not all(cell and set(cell) <= _ALIGNMENT and "-" in cell for cell in separator):
            continue
        end = index + 2
        while end < len(lines) and _row_cells(lines[end]) is not None:
            end += 1
        return "\n".join(lines[:index]), lines[index:end], "\n".join(lines[end:])
    return None


def _row_cells(line: str) -> list[str] | None:
    """The cells of a '| a | b |' line, escaped pipes unescaped; None for any other line."""
    text = line.strip(" \t")
    if len(text) < 2 or not text.startswith("|") or not text.endswith("|"):
        return None
    if _escaped(text, len(text) - 1):
        return None
    inner = text[1:-1]
    cells: list[str] = []
    start = 0
    for position, char in enumerate(inner):
        if char == "|" and not _escaped(inner, position):
            cells.append(inner[start:position])
            start = position + 1
    cells.append(inner[start:])
    return [_unescaped(cell).strip() for cell in cells]


def _escaped(text: str, position: int) -> bool:
    backslashes = 0
    while position - backslashes - 1 >= 0 and text[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _unescaped(cell: str) -> str:
    r"""A cell's text as written outside a table: `\|` is `|` (a pipe table's own escape; every
    other backslash escape means the same in a paragraph and is kept)."""
    return cell.replace("\\|", "|") if "\\|" in cell else cell


def _sentences(lines: Sequence[str], limit: int, stats: RowStats) -> list[str]:
    """The table's rows as sentences (its header row names the columns)."""
    header = _row_cells(lines[0]) or []
    rows = [cells for cells in (_row_cells(line) or [] for line in lines[2:]) if any(cells)]
    if not rows:
        names = [sentence_text(name) for name in header if name]
        return [paragraph("; ".join(names) + ".")] if names else []
    width = max(len(header), *(len(cells) for cells in rows))
    header = header + [""] * (width - len(header))
    out: list[str] = []
    writer = SentenceRows(header, limit, out, stats)
    for cells in rows:
        writer.add(cells + [""] * (width - len(cells)))
    writer.close()
    return [piece.rstrip("\n") for piece in out]
