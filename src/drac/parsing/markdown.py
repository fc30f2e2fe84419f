"""Markdown to ordered, ID-addressed elements (stage 3 of the method, first half)."""

from __future__ import annotations

import re

from pydantic import TypeAdapter

from drac.errors import DocumentError
from drac.models import Element, ElementKind, ParseConfig
from drac.parsing.blocks import split_blocks
from drac.parsing.split import split_text

# The body of a marker may not run into another comment opener: without that bound, text with
# many unclosed "<!-- Page N" made every attempt scan to the end (quadratic time).
PAGE_MARKER = re.compile(r"<!--\s*Page\s+(\d{1,9})\b(?:(?!<!--).)*?-->", re.IGNORECASE | re.DOTALL)
_GRID_BORDER = re.compile(r"^\s*\+[-=:+]+\+\s*$")
_GRID_HEADER_BORDER = re.compile(r"^\s*\+[=:+]+\+\s*$")

# Validating the elements of a document in one call costs a third less than one by one.
_ELEMENTS = TypeAdapter(list[Element])

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
    parser = _Parser(config or ParseConfig())
    for kind, text, level in split_blocks(markdown):
        parser.block(kind, text, level)
    return _ELEMENTS.validate_python(parser.elements)


class _Parser:
    def __init__(self, config: ParseConfig) -> None:
        self.limit = config.max_element_chars
        self.max_elements = config.max_elements
        self.elements: list[dict[str, object]] = []  # validated as Elements all at once
        self.page = 1
        self.headings: list[tuple[int, str]] = []  # (level, id) of the open heading chain
        self.chain: tuple[str, ...] = ()  # the ids of self.headings
        self.heading_count = 0
        self.content_count = 0
        self.table_count = 0

    def block(self, kind: str, source: str, level: int | None) -> None:
        if len(self.elements) >= self.max_elements:
            raise DocumentError(
                f"the document has more than {self.max_elements:,} elements (headings, "
                "paragraphs, table rows), the most one document may have: split it"
            )
        text = source.strip()
        if kind == "block_code" and text:
            # keep an indented code block's first indent: without it the text reads as prose
            raw = source.rstrip()
            text = raw[raw.rfind("\n", 0, len(raw) - len(raw.lstrip())) + 1 :]
        if not text or kind == "thematic_break":
            return
        if kind == "block_html" and _only_comments(text):
            self._follow_page_markers(text)
            return
        if kind == "heading":
            self._heading(text, level or 1)
        elif kind == "table":
            self._pipe_table(text)
        elif kind == "grid_table":
            self._grid_table(text)
        else:
            self._content(text, _KIND_OF_BLOCK.get(kind, ElementKind.PARAGRAPH))
        self._follow_page_markers(text)

    def _follow_page_markers(self, text: str) -> None:
        if "<!--" not in text:
            return
        for match in PAGE_MARKER.finditer(text):
            self.page = max(1, int(match.group(1)))

    def _heading(self, text: str, level: int) -> None:
        headings = self.headings
        if headings and headings[-1][0] >= level:
            while headings and headings[-1][0] >= level:
                headings.pop()
            self.chain = tuple(heading_id for _, heading_id in headings)
        self.heading_count += 1
        heading_id = f"h{self.heading_count}"
        self.elements.append(
            {
                "id": heading_id,
                "kind": ElementKind.HEADING,
                "text": text,
                "page": self.page,
                "level": level,
                "ancestors": self.chain,
            }
        )
        headings.append((level, heading_id))
        self.chain = (*self.chain, heading_id)

    def _content(
        self,
        text: str,
        kind: ElementKind,
        table_id: str | None = None,
        table_header: str | None = None,
    ) -> None:
        self.content_count += 1
        base_id = f"p{self.content_count}"
        limit = self.limit
        if table_header:
            limit -= len(table_header) + 1  # the row is shown under its header
        pieces = [text] if len(text) <= limit else split_text(text, limit)
        for index, piece in enumerate(pieces, start=1):
            self.elements.append(
                {
                    "id": base_id if len(pieces) == 1 else f"{base_id}.{index}",
                    "kind": kind,
                    "text": piece,
                    "page": self.page,
                    "ancestors": self.chain,
                    "table_id": table_id,
                    "table_header": table_header,
                }
            )

    def _table_rows(self, header: str, rows: list[str]) -> None:
        self.table_count += 1
        table_id = f"t{self.table_count}"
        limit = self.limit
        if not rows or len(header) + 1 + limit // 4 > limit:
            # A header-only table is content of its own. So is a header too wide to repeat
            # beside each row within the element limit: repeating it anyway made chunks
            # exceed the hard limit; its rows follow it, still sharing the table id.
            self._content(header, ElementKind.TABLE_ROW, table_id=table_id)
            for row in rows:
                self._content(row, ElementKind.TABLE_ROW, table_id)
            return
        for row in rows:
            self._content(row, ElementKind.TABLE_ROW, table_id, header)

    def _pipe_table(self, text: str) -> None:
        lines = text.split("\n")
        header = "\n".join(lines[:2])
        rows = [line for line in lines[2:] if line.strip()]
        self._table_rows(header, rows)

    def _grid_table(self, text: str) -> None:
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
        self._table_rows(header, rows)


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
