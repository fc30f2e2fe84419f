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

# One top-level block: its kind, the verbatim source it came from, and a heading's level.
# A plain tuple: a document has thousands of blocks and named tuples cost more to make.
Block = tuple[str, str, int | None]


def split_blocks(source: str) -> list[Block]:
    """Split normalised Markdown into top-level blocks, each with its verbatim source slice."""
    lines = Lines(source)
    scanner = _Scanner(lines)
    scanner.scan()
    starts = lines.starts
    return [
        (kind, source[starts[first] : starts[end]], level)
        for kind, first, end, level in scanner.tokens
    ]


Token = list  # [kind, first line, end line, heading level]: a block being read


class _Scanner:
    """Reads one construct per step; paragraphs grow by lines no construct claims.

    Blank lines and thematic breaks are read but not kept: they only end a paragraph.
    """

    def __init__(self, lines: Lines) -> None:
        self.lines = lines
        self.tokens: list[Token] = []
        self.paragraph: Token | None = None  # the paragraph text lines would extend
        self._rules = {
            "fenced": self._fenced,
            "atx": self._atx,
            "setext": self._setext,
            "hr": self._hr,
            "quote": self._quote,
            "list": self._list,
            "html": self._html,
            "blank": self._blank,
            "table": self._pipe_table,
            "nptable": self._bare_table,
            "ref": self._reference,
        }

    def _add(self, kind: str, first: int, end: int, level: int | None = None) -> int:
        self.tokens.append([kind, first, end, level])
        self.paragraph = None
        return end

    def _text(self, first: int, end: int) -> int:
        """Lines [first, end) are paragraph text: they extend a paragraph just before them."""
        if self.paragraph is not None:
            self.paragraph[2] = end
        else:
            self.paragraph = ["paragraph", first, end, None]
            self.tokens.append(self.paragraph)
        return end

    def scan(self) -> None:
        """Read every construct of the source, in order."""
        lines = self.lines
        texts, blank, count = lines.lines, lines.blank, lines.count
        rules, match_rule = self._rules, RULES.match
        index = 0
        while index < count:
            line = texts[index]
            text = line.lstrip(" ")
            indent = len(line) - len(text)
            # grammar.is_indented_code, written out: this runs on every line
            if (indent >= 4 and len(line) > 4) or (text[:1] == "\t" and len(text) > 1):
                if self.paragraph is not None:
                    index = self._text(index, index + 1)  # indented code cannot interrupt text
                else:
                    index = self._add("block_code", index, indented_code_end(lines, index))
                continue
            if blank[index]:  # only the blank-line rule can match: skip the others
                index = self._blank(index, None)  # type: ignore[assignment]
                continue
            if text[:1] == "+":
                end = grid_table_end(lines, index)
                if end is not None:
                    index = self._add("grid_table", index, end)
                    continue
            match = match_rule(line, indent if indent < 3 else 3)
            end = rules[match.lastgroup](index, match) if match else None  # type: ignore[index]
            index = self._text(index, index + 1) if end is None else end

    # Each rule reads the construct its pattern named on line index, or returns None when it
    # does not hold there (the line is then paragraph text).

    def _fenced(self, index: int, match: Match[str]) -> int | None:
        end = fenced_code_end(self.lines, index, match.group("fence"), match.group("info"))
        return None if end is None else self._add("block_code", index, end)

    def _atx(self, index: int, match: Match[str]) -> int:
        return self._add("heading", index, index + 1, len(match.group("hashes")))

    def _setext(self, index: int, match: Match[str]) -> int | None:
        if self.paragraph is not None:
            heading = self.paragraph
            heading[0], heading[2] = "heading", index + 1
            heading[3] = 1 if match.group("underline")[-1] == "=" else 2
            self.paragraph = None
            return index + 1
        line = self.lines.lines[index]
        other = HR_OR_LIST.match(line, leading_spaces(line))
        if other is None:
            return None
        return self._hr(index, other) if other.lastgroup == "hr" else self._list(index, other)

    def _hr(self, index: int, match: Match[str]) -> int:
        self.paragraph = None
        return index + 1

    def _quote(self, index: int, match: Match[str]) -> int:
        return self._add("block_quote", index, quote_end(self.lines, index))

    def _list(self, index: int, match: Match[str]) -> int | None:
        marker, item = match.group("marker"), match.group("item")
        starts_other_than_one = len(marker) > 1 and int(marker[:-1]) != 1
        if (not item.strip() or starts_other_than_one) and self.paragraph is not None:
            return None  # an empty item, or one numbered from 2 on, cannot interrupt text
        return self._add("list", index, list_end(self.lines, index, marker, item))

    def _html(self, index: int, match: Match[str]) -> int | None:
        end = html_end(self.lines, index, match.group("tag"), self.paragraph is not None)
        return None if end is None else self._add("block_html", index, end)

    def _blank(self, index: int, match: Match[str] | None) -> int | None:
        lines = self.lines
        if not lines.blank[index]:
            return None  # whitespace without a newline, at the very end: text
        end = index + 1
        while end < lines.count and lines.blank[end]:
            end += 1
        self.paragraph = None
        return end

    def _pipe_table(self, index: int, match: Match[str]) -> int | None:
        found = pipe_table_end(self.lines, index)
        if found is None:
            return None
        end, valid = found
        return self._add("table", index, end) if valid else self._text(index, end)

    def _bare_table(self, index: int, match: Match[str]) -> int | None:
        end = bare_table_end(self.lines, index)
        return None if end is None else self._add("table", index, end)

    def _reference(self, index: int, match: Match[str]) -> None:
        return None  # a link reference definition reads as text
