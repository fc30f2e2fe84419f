"""Headings by font size and weight across the document, list markers, page furniture."""

from __future__ import annotations

from collections import Counter

from drac.documents.offline.lines import (
    BULLETS,
    DASH_BULLETS,
    HEADING_END,
    ORDERED,
    PAGE_NUMBER,
    Line,
)


def is_page_furniture(line: Line, height: float) -> bool:
    """A bare page number in the top or bottom margin is not content."""
    in_margin = line.baseline < 0.13 * height or line.baseline > 0.9 * height
    return in_margin and bool(PAGE_NUMBER.match(line.text))


class HeadingScale:
    """Maps a line's (size, bold) style to a heading level, from document-wide statistics."""

    def __init__(self, body_size: float, levels: dict[tuple[float, bool], int]) -> None:
        self.body_size = body_size
        self.levels = levels

    @classmethod
    def from_pages(cls, pages: list[list[Line]]) -> HeadingScale:
        weights: Counter[float] = Counter()
        for lines in pages:
            for line in lines:
                weights[line.size] += len(line.text)
        body = weights.most_common(1)[0][0] if weights else 10.0
        styles = {
            line.style
            for lines in pages
            for line in lines
            if line.text and _could_be_heading(line, body)
        }
        ordered = sorted(styles, key=lambda style: (-style[0], not style[1]))
        return cls(body, {style: min(rank, 4) for rank, style in enumerate(ordered, start=1)})

    def level(self, line: Line) -> int | None:
        if not _could_be_heading(line, self.body_size):
            return None
        return self.levels.get(line.style)


def _could_be_heading(line: Line, body: float) -> bool:
    text = line.text
    if not text or len(text) > 150:
        return False
    marker = list_marker(text)
    if marker is not None and not _numbered_title(line, marker[0]):
        return False
    if line.size >= body * 1.12:
        return True
    return line.bold and line.size >= body * 0.95 and not text.endswith(HEADING_END)


def _numbered_title(line: Line, marker: str) -> bool:
    """A numbered line set wholly in bold ("2. Baggage Drop") titles a section."""
    return marker[0].isdigit() and line.bold and not line.text.endswith(HEADING_END)


def list_marker(text: str) -> tuple[str, str] | None:
    """Return (marker, rest) when the line starts a list item."""
    first = text[0]
    if first in BULLETS:
        return "-", text[1:].strip()
    if first in DASH_BULLETS and len(text) > 1 and text[1] == " ":
        return "-", text[2:].strip()
    ordered = ORDERED.match(text)
    if ordered:
        return ordered.group(1), ordered.group(2)
    return None
