"""Top-level Markdown blocks with their exact source spans, from a linear line scanner.

Only the top level is parsed: a list or block quote is one block whatever it holds, so the
scanner never recurses, needs no parser library and runs in time and memory linear in the
input. The rules are those of mistune 3's block parser with its table plugin, which produced
the element ids until then (tests/unit/parsing/data/element_snapshot.json holds them), plus
grid tables. Deliberate differences: a link reference definition is paragraph text (mistune
dropped it or glued it to the block before), and blocks always come in document order (when a
list ended a block quote and was itself ended by another block, mistune put the list first or
failed).
"""

from __future__ import annotations

from re import Match
from typing import NamedTuple

from drac.parsing.containers import list_end, quote_end
from drac.parsing.grammar import HR_OR_LIST, RULES, leading_spaces
from drac.parsing.leaves import (
    bare_table_end,
    fenced_code_end,
    grid_table_end,
    html_end,
    indented_code_end,
    pipe_table_end,
)
from drac.parsing.source import Lines


class Block(NamedTuple):
    """One top-level block: its kind and the verbatim source it came from."""

    type: str
    text: str
    start: int
    level: int | None = None


def split_blocks(source: str) -> list[Block]:
    """Split normalised Markdown into top-level blocks, each with its verbatim source slice."""
    lines = Lines(source)
    scanner = _Scanner(lines)
    index = 0
    while index < lines.count:
        index = scanner.step(index)
    return [
        Block(kind, lines.text(first, end), lines.starts[first], level)
        for kind, first, end, level in scanner.tokens
        if kind != "blank_line"
    ]


class _Scanner:
    """Reads one construct per step; paragraphs grow by lines no construct claims."""

    def __init__(self, lines: Lines) -> None:
        self.lines = lines
        self.tokens: list[list[str | int | None]] = []  # [kind, first line, end line, level]

    def _after_paragraph(self) -> bool:
        return bool(self.tokens) and self.tokens[-1][0] == "paragraph"

    def _add(self, kind: str, first: int, end: int, level: int | None = None) -> int:
        self.tokens.append([kind, first, end, level])
        return end

    def _text(self, first: int, end: int) -> int:
        """Lines [first, end) are paragraph text: they extend a paragraph just before them."""
        if self._after_paragraph():
            self.tokens[-1][2] = end
            return end
        return self._add("paragraph", first, end)

    def step(self, index: int) -> int:
        """Read the construct starting on line index; return the line after it."""
        line = self.lines.lines[index]
        text = line.lstrip(" ")
        indent = len(line) - len(text)
        if (indent >= 4 and len(line) > 4) or (text[:1] == "\t" and len(text) > 1):
            if self._after_paragraph():
                return self._text(index, index + 1)  # indented code cannot interrupt text
            return self._add("block_code", index, indented_code_end(self.lines, index))
        if text[:1] == "+":
            end = grid_table_end(self.lines, index)
            if end is not None:
                return self._add("grid_table", index, end)
        match = RULES.match(line, min(indent, 3))
        end = self._rule(index, match) if match else None
        return self._text(index, index + 1) if end is None else end

    def _rule(self, index: int, match: Match[str]) -> int | None:
        """Apply the construct the line's first matching pattern names; None if it fails."""
        kind = match.lastgroup
        lines = self.lines
        if kind == "fenced":
            end = fenced_code_end(lines, index, match.group("fence"), match.group("info"))
            return None if end is None else self._add("block_code", index, end)
        if kind == "atx":
            return self._add("heading", index, index + 1, len(match.group("hashes")))
        if kind == "setext":
            return self._setext(index, match.group("underline"))
        if kind == "hr":
            return self._add("thematic_break", index, index + 1)
        if kind == "quote":
            return self._add("block_quote", index, quote_end(lines, index))
        if kind == "list":
            return self._list(index, match.group("marker"), match.group("item"))
        if kind == "html":
            end = html_end(lines, index, match.group("tag"), self._after_paragraph())
            return None if end is None else self._add("block_html", index, end)
        if kind == "blank":
            return self._blank(index)
        if kind == "table":
            found = pipe_table_end(lines, index)
            if found is None:
                return None
            end, valid = found
            return self._add("table", index, end) if valid else self._text(index, end)
        if kind == "nptable":
            end = bare_table_end(lines, index)
            return None if end is None else self._add("table", index, end)
        return None  # a link reference definition reads as text

    def _setext(self, index: int, underline: str) -> int | None:
        if self._after_paragraph():
            heading = self.tokens[-1]
            heading[0], heading[2] = "heading", index + 1
            heading[3] = 1 if underline[-1] == "=" else 2
            return index + 1
        line = self.lines.lines[index]
        match = HR_OR_LIST.match(line, leading_spaces(line))
        if match is None:
            return None
        if match.lastgroup == "hr":
            return self._add("thematic_break", index, index + 1)
        return self._list(index, match.group("marker"), match.group("item"))

    def _list(self, index: int, marker: str, item: str) -> int | None:
        starts_other_than_one = len(marker) > 1 and int(marker[:-1]) != 1
        if (not item.strip() or starts_other_than_one) and self._after_paragraph():
            return None  # an empty item, or one numbered from 2 on, cannot interrupt text
        return self._add("list", index, list_end(self.lines, index, marker, item))

    def _blank(self, index: int) -> int | None:
        if not self.lines.has_newline(index):
            return None
        end = index + 1
        while end < self.lines.count and self.lines.blank[end]:
            end += 1
        return self._add("blank_line", index, end)
