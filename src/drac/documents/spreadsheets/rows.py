"""One data row as Markdown the parser turns into whole elements: a pipe-table row under
its header, or a "Column: value; ..." sentence, split by column groups (each repeating the
key column) when it would not fit the element limit."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from drac.parsing import split_text

_NEWLINES = re.compile(r"\r\n|\r|\n")
_PIPE = re.compile(r"(\\*)\|")
Fits = Callable[[list[tuple[str, str]]], bool]
# Below this many characters per piece, repeating the key would drown the cell's text.
_MIN_PIECE = 100
# A paragraph starting like this would become a heading, a code fence, an HTML block, a quote,
# a list item or a thematic break (which is no content at all).
_BLOCK_START = re.compile(r"#|```|~~~|<|>|(?:[-*_][ \t]*){3,}$|(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def pipe_cell(text: str) -> str:
    """A cell's text as one pipe-table cell: newlines as <br>, pipes escaped (backslashes
    before a pipe doubled, so the pipe stays escaped), comment openers defused."""
    text = _NEWLINES.sub("<br>", text.strip())
    text = _PIPE.sub(lambda match: match.group(1) * 2 + "\\|", text)
    return text.replace("<!--", "&lt;!--")


def sentence_text(text: str) -> str:
    """A cell's text inside a one-line sentence: newlines as <br>, comment openers defused."""
    return _NEWLINES.sub("<br>", text.strip()).replace("<!--", "&lt;!--")


def paragraph(text: str) -> str:
    """One-line text as a paragraph the parser keeps as such (a leading block marker is
    backslash-escaped, as Markdown escapes it)."""
    if not _BLOCK_START.match(text):
        return text
    digits = len(text) - len(text.lstrip("0123456789"))
    return text[:digits] + "\\" + text[digits:]  # an ordinal is escaped at its dot


def sentence(pairs: Sequence[tuple[str, str]]) -> str:
    """'Header: value; Header: value.' for the pairs whose value is not empty (a value whose
    header has no name stands alone)."""
    parts = (f"{name}: {value}" if name else value for name, value in pairs if value)
    return paragraph("; ".join(parts) + ".")


@dataclass
class RowStats:
    """Rows written, and rows that had to be split by column groups."""

    rows: int = 0
    split_rows: int = 0


@dataclass
class PipeRows:
    """Writes rows as a pipe table whose header the parser repeats on every row element."""

    header: list[str]
    limit: int
    out: list[str]
    stats: RowStats = field(default_factory=RowStats)
    _open: bool = False

    def __post_init__(self) -> None:
        self.header = [pipe_cell(name) for name in self.header]
        self._block = _header_block(self.header)
        # The parser shows a header beside each row only while it leaves room for a row.
        self._header_fits = _header_fits(len(self._block), self.limit)

    def add(self, row: Sequence[str]) -> None:
        """Write one data row (cells in header order)."""
        cells = [pipe_cell(cell) for cell in row]
        line = _row_line(cells)
        self.stats.rows += 1
        if self._header_fits and len(self._block) + 1 + len(line) <= self.limit:
            if not self._open:
                self.out.append(self._block + "\n")
                self._open = True
            self.out.append(line + "\n")
            return
        self.close()
        self.stats.split_rows += 1
        for part in _pipe_parts(self.header, cells, self.limit):
            self.out.append(part + "\n\n")

    def close(self) -> None:
        """End the open table, if any (a blank line)."""
        if self._open:
            self.out.append("\n")
            self._open = False


@dataclass
class SentenceRows:
    """Writes rows as sentences, one paragraph each."""

    header: list[str]
    limit: int
    out: list[str]
    stats: RowStats = field(default_factory=RowStats)

    def __post_init__(self) -> None:
        self.header = [sentence_text(name) for name in self.header]

    def add(self, row: Sequence[str]) -> None:
        """Write one data row (cells in header order)."""
        pairs = list(zip(self.header, (sentence_text(cell) for cell in row), strict=True))
        self.stats.rows += 1
        text = sentence(pairs)
        if len(text) <= self.limit:
            self.out.append(text + "\n\n")
            return
        self.stats.split_rows += 1
        for group in _groups(pairs, lambda group: len(sentence(group)) <= self.limit):
            for text in _sentences(group, self.limit):
                self.out.append(text + "\n\n")

    def close(self) -> None:
        """Nothing to end: every sentence is its own paragraph."""


def _header_block(names: Sequence[str]) -> str:
    return _row_line(names) + "\n" + "|" + "---|" * len(names)


def _row_line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _header_fits(header_chars: int, limit: int) -> bool:
    return header_chars + 1 + limit // 4 <= limit


def _pipe_parts(header: list[str], cells: list[str], limit: int) -> list[str]:
    """The row as small tables of the key column plus a group of columns; a cell too long
    for any table becomes a sentence the parser may split (still verbatim)."""
    pairs = list(zip(header, cells, strict=True))
    parts: list[str] = []
    for group in _groups(pairs, lambda group: _pipe_fits(group, limit)):
        if _pipe_fits(group, limit):
            names = [name for name, _ in group]
            parts.append(_header_block(names) + "\n" + _row_line([v for _, v in group]))
        else:
            parts.extend(_sentences(group, limit))
    return parts


def _sentences(group: list[tuple[str, str]], limit: int) -> list[str]:
    """The group as one sentence; a single cell too long for one is cut (at spaces, lines,
    sentence ends) into sentences that each repeat the key, when the key leaves room."""
    text = sentence(group)
    if len(text) <= limit or len(group) != 2:
        return [text]
    key, (name, value) = group
    room = limit - len(sentence([key, (name, "x")])) + 1
    if room < _MIN_PIECE:
        return [text]  # the key itself is huge: the parser cuts the sentence instead
    return [sentence([key, (name, piece)]) for piece in split_text(value, room)]


def _pipe_fits(pairs: Sequence[tuple[str, str]], limit: int) -> bool:
    """True when a one-row table of `pairs` is one element: header and row within the limit,
    and a header the parser keeps beside the row."""
    count = len(pairs)
    header = sum(len(name) for name, _ in pairs) + 3 * count + 1 + 1 + 1 + 4 * count
    row = sum(len(value) for _, value in pairs) + 3 * count + 1
    return _header_fits(header, limit) and header + 1 + row <= limit


def _groups(pairs: list[tuple[str, str]], fits: Fits) -> list[list[tuple[str, str]]]:
    """Greedy groups of the non-empty columns after the key, each led by the key pair."""
    key, rest = pairs[0], [pair for pair in pairs[1:] if pair[1]]
    groups: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = [key]
    for pair in rest:
        if len(current) > 1 and not fits([*current, pair]):
            groups.append(current)
            current = [key]
        current.append(pair)
    groups.append(current)
    return groups
