"""Where an element's text is on its page: bounding boxes, kept apart from chunk text.

Boxes are in PDF points (1/72 inch), relative to the page as it is rendered (its crop box,
its /Rotate applied), origin at the page's top-left corner, x to the right and y down, as
`[x0, top, x1, bottom]`; one box per line of text. They are provenance only: nothing here
ever enters a chunk's text or its embedding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Box = tuple[float, float, float, float]
"""x0, top, x1, bottom in points from the page's top-left corner (y down)."""

BoxSource = Literal["text_layer", "ocr"]
"""What an element's text was aligned to: the PDF's text layer, or the words OCR read."""

MAX_BOXES_PER_PAGE = 200
"""Boxes one element (or chunk) keeps per page; past it, neighbouring lines are merged, so
an element item stays far below DynamoDB's 400 KB item limit (about 30 bytes a box)."""


class BoxStatus(StrEnum):
    """How much of an element's text was found on its page."""

    ALIGNED = "aligned"
    """At least 90 % of its words were found; the boxes are theirs."""
    PARTIAL = "partial"
    """At least half of its words were found; the boxes cover only those."""
    NOT_ALIGNED = "not_aligned"
    """Too little (or nothing) was found, or the page has no text to align to: no boxes."""


class PageBoxes(BaseModel):
    """The line boxes of some text on one page."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    page: int = Field(ge=1)
    boxes: tuple[Box, ...]


class ElementBoxes(BaseModel):
    """Where one element's text was found: per page its line boxes, or why it was not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: BoxStatus
    source: BoxSource | None = Field(default=None, description="what the text was aligned to")
    coverage: float = Field(ge=0.0, le=1.0, description="share of the element's words found")
    pages: tuple[PageBoxes, ...] = ()
    reason: str | None = Field(default=None, description="why it is not aligned")
    header: tuple[PageBoxes, ...] = Field(
        default=(),
        description="a table row's: the boxes of its table's header lines, which a chunk "
        "writes before the row",
    )


def not_aligned(reason: str, source: BoxSource | None = None) -> ElementBoxes:
    """The boxes of an element that could not be placed on its page (there are none)."""
    return ElementBoxes(status=BoxStatus.NOT_ALIGNED, source=source, coverage=0.0, reason=reason)


def union_by_page(groups: Iterable[Sequence[PageBoxes]]) -> tuple[PageBoxes, ...]:
    """The boxes of several elements together, one entry per page in page order (duplicates
    dropped, at most MAX_BOXES_PER_PAGE a page)."""
    by_page: dict[int, dict[Box, None]] = {}
    for group in groups:
        for entry in group:
            boxes = by_page.setdefault(entry.page, {})
            for box in entry.boxes:
                boxes[box] = None
    return tuple(
        PageBoxes(page=page, boxes=capped(list(by_page[page]))) for page in sorted(by_page)
    )


def capped(boxes: Sequence[Box], limit: int = MAX_BOXES_PER_PAGE) -> tuple[Box, ...]:
    """At most `limit` boxes: past it, boxes next to each other in order are merged."""
    merged = list(boxes)
    while len(merged) > limit:
        paired: list[Box] = []
        for index in range(0, len(merged), 2):
            pair = merged[index : index + 2]
            paired.append(enclosing(pair))
        merged = paired
    return tuple(merged)


def enclosing(boxes: Sequence[Box]) -> Box:
    """The smallest box holding all of `boxes` (not empty)."""
    return (
        min(box[0] for box in boxes),
        min(box[1] for box in boxes),
        max(box[2] for box in boxes),
        max(box[3] for box in boxes),
    )
