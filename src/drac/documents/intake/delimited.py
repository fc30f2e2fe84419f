"""Delimited text (CSV, TSV): which delimiter splits it into rows, and the rows themselves."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator

from drac.errors import DocumentError

DELIMITERS = ",;\t|"
SAMPLE_CHARS = 64 * 1024
# Share of a sample's rows that must have the most common width: exports often end with a
# ragged total or note line, prose split at commas almost never reaches it.
_CONSISTENT_SHARE = 0.9


def sniff_delimiter(text: str, candidates: str = DELIMITERS) -> str | None:
    """The delimiter (one of `candidates`) that splits the start of `text` into rows of one
    consistent width of at least two columns, or None when none does."""
    sample, rows_may_be_cut = _sample(text)
    ordered = list(dict.fromkeys([*_sniffed(sample, candidates), *candidates]))
    for delimiter in ordered:
        width, share, _ = _widths(sample, delimiter, rows_may_be_cut)
        if width >= 2 and share >= _CONSISTENT_SHARE:
            return delimiter
    return None


def is_single_column(text: str) -> bool:
    """True when the start of `text` has no candidate delimiter at all (a one-column file)."""
    sample, _ = _sample(text)
    return not any(delimiter in sample for delimiter in DELIMITERS)


def looks_like_tsv(text: str) -> bool:
    """True when text is plainly tab-separated data: at least three rows, every row of one
    width of two columns or more, none starting with a tab (indented prose)."""
    sample, rows_may_be_cut = _sample(text)
    if any(line.startswith("\t") for line in sample.split("\n")):
        return False
    width, share, rows = _widths(sample, "\t", rows_may_be_cut)
    return width >= 2 and share == 1.0 and rows >= 3


def read_rows(text: str, delimiter: str) -> Iterator[list[str]]:
    """Rows of delimited text (RFC 4180 quoting: "" inside quotes, newlines inside quotes).

    Raises DocumentError naming the row when the text cannot be read as delimited rows.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=False)
    try:
        yield from reader
    except csv.Error as exc:
        raise DocumentError(f"cannot read row {reader.line_num} as delimited text: {exc}") from exc


def _sample(text: str) -> tuple[str, bool]:
    """The first SAMPLE_CHARS of text cut at a line end, and whether rows were cut there."""
    if len(text) <= SAMPLE_CHARS:
        return text, False
    cut = text.rfind("\n", 0, SAMPLE_CHARS)
    return text[: cut if cut > 0 else SAMPLE_CHARS], True


def _sniffed(sample: str, candidates: str) -> list[str]:
    try:
        return [csv.Sniffer().sniff(sample, delimiters=candidates).delimiter]
    except csv.Error:
        return []


def _widths(sample: str, delimiter: str, rows_may_be_cut: bool) -> tuple[int, float, int]:
    """Most common width of the sample's non-empty rows, the share of rows having it, rows."""
    try:
        rows = [row for row in read_rows(sample, delimiter) if any(cell.strip() for cell in row)]
    except DocumentError:
        return 0, 0.0, 0
    if rows_may_be_cut and len(rows) > 1:
        rows.pop()  # the sample may end inside a quoted field
    if not rows:
        return 0, 0.0, 0
    width, count = Counter(len(row) for row in rows).most_common(1)[0]
    return width, count / len(rows), len(rows)
