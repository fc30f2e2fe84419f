"""Markdown to ordered, ID-addressed elements (stage 3 of the method, first half)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from drac.models import Element, ElementKind, ParseConfig
from drac.parsing.blocks import Block, split_blocks
from drac.parsing.split import split_text

# The body of a marker may not run into another comment opener: without that bound, text with
# many unclosed "<!-- Page N" made every attempt scan to the end (quadratic time).
PAGE_MARKER = re.compile(r"<!--\s*Page\s+(\d{1,9})\b(?:(?!<!--).)*?-->", re.IGNORECASE | re.DOTALL)
_GRID_BORDER = re.compile(r"^\s*\+[-=:+]+\+\s*$")
_GRID_HEADER_BORDER = re.compile(r"^\s*\+[=:+]+\+\s*$")

_KIND_OF_BLOCK = {
    "paragraph": ElementKind.PARAGRAPH,
    "list": ElementKind.LIST,
    "block_code": ElementKind.CODE,
    "block_quote": ElementKind.QUOTE,
    "block_html": ElementKind.HTML,
}


def normalise_newlines(text: str) -> str:
    """Return text with CRLF and CR line endings turned into LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_markdown(markdown: str, config: ParseConfig | None = None) -> list[Element]:
    """Parse Markdown into elements: headings h1.., content p1.. (split pieces p1.1..).

    Each element's text is a verbatim slice of `markdown` (which should already have LF line
    endings); the same input always yields the same IDs.
    """
    return list(_Parser(config or ParseConfig()).elements(markdown))


class _Parser:
    def __init__(self, config: ParseConfig) -> None:
        self.config = config
        self.page = 1
        self.headings: list[tuple[int, str]] = []  # (level, id) of the open heading chain
        self.heading_count = 0
        self.content_count = 0
        self.table_count = 0

    def elements(self, markdown: str) -> Iterator[Element]:
        for block in split_blocks(markdown):
            yield from self._block(block)

    def _block(self, block: Block) -> Iterator[Element]:
        text = block.text.strip()
        if block.type == "block_code" and text:
            # keep an indented code block's first indent: without it the text reads as prose
            raw = block.text.rstrip()
            text = raw[raw.rfind("\n", 0, len(raw) - len(raw.lstrip())) + 1 :]
        if not text or block.type == "thematic_break":
            return
        if block.type == "block_html" and _only_comments(text):
            self._follow_page_markers(text)
            return
        if block.type == "heading":
            yield self._heading(text, block.level or 1)
        elif block.type == "table":
            yield from self._pipe_table(text)
        elif block.type == "grid_table":
            yield from self._grid_table(text)
        else:
            yield from self._content(text, _KIND_OF_BLOCK.get(block.type, ElementKind.PARAGRAPH))
        self._follow_page_markers(text)

    def _follow_page_markers(self, text: str) -> None:
        for match in PAGE_MARKER.finditer(text):
            self.page = max(1, int(match.group(1)))

    def _ancestors(self) -> tuple[str, ...]:
        return tuple(heading_id for _, heading_id in self.headings)

    def _heading(self, text: str, level: int) -> Element:
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.heading_count += 1
        element = Element(
            id=f"h{self.heading_count}",
            kind=ElementKind.HEADING,
            text=text,
            page=self.page,
            level=level,
            ancestors=self._ancestors(),
        )
        self.headings.append((level, element.id))
        return element

    def _content(
        self,
        text: str,
        kind: ElementKind,
        table_id: str | None = None,
        table_header: str | None = None,
    ) -> Iterator[Element]:
        self.content_count += 1
        base_id = f"p{self.content_count}"
        limit = self.config.max_element_chars
        if table_header:
            limit -= len(table_header) + 1  # the row is shown under its header
        pieces = [text] if len(text) <= limit else split_text(text, limit)
        for index, piece in enumerate(pieces, start=1):
            yield Element(
                id=base_id if len(pieces) == 1 else f"{base_id}.{index}",
                kind=kind,
                text=piece,
                page=self.page,
                ancestors=self._ancestors(),
                table_id=table_id,
                table_header=table_header,
            )

    def _table_rows(self, header: str, rows: list[str]) -> Iterator[Element]:
        self.table_count += 1
        table_id = f"t{self.table_count}"
        limit = self.config.max_element_chars
        if not rows or len(header) + 1 + limit // 4 > limit:
            # A header-only table is content of its own. So is a header too wide to repeat
            # beside each row within the element limit: repeating it anyway made chunks
            # exceed the hard limit; its rows follow it, still sharing the table id.
            yield from self._content(header, ElementKind.TABLE_ROW, table_id=table_id)
            for row in rows:
                yield from self._content(row, ElementKind.TABLE_ROW, table_id)
            return
        for row in rows:
            yield from self._content(row, ElementKind.TABLE_ROW, table_id, header)

    def _pipe_table(self, text: str) -> Iterator[Element]:
        lines = text.split("\n")
        header = "\n".join(lines[:2])
        rows = [line for line in lines[2:] if line.strip()]
        yield from self._table_rows(header, rows)

    def _grid_table(self, text: str) -> Iterator[Element]:
        lines = text.split("\n")
        borders = [i for i, line in enumerate(lines) if _GRID_BORDER.match(line)]
        header_end = next((i for i in borders if _GRID_HEADER_BORDER.match(lines[i])), None)
        if header_end is None:
            # no ==== separator: the first row is the header by convention
            header_end = borders[1] if len(borders) > 1 else borders[0]
        header = "\n".join(lines[: header_end + 1])
        rows: list[str] = []
        start = header_end + 1
        for border in (b for b in borders if b > header_end):
            rows.append("\n".join(lines[start : border + 1]))
            start = border + 1
        if start < len(lines) and any(line.strip() for line in lines[start:]):
            rows.append("\n".join(lines[start:]))
        yield from self._table_rows(header, rows)


def _only_comments(text: str) -> bool:
    """True when text is nothing but HTML comments and whitespace (linear: no regex retries)."""
    position = 0
    while True:
        start = text.find("<!--", position)
        if start < 0:
            return not text[position:].strip()
        if text[position:start].strip():
            return False
        end = text.find("-->", start + 4)
        if end < 0:
            return False
        position = end + 3
