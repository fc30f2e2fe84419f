"""A PDF page's words with their boxes, read from the text layer in the contained pdfium
worker (or taken from OCR), for placing elements on their pages (`drac.documents.pdf.boxes`).

Boxes follow `drac.provenance`: PDF points from the top-left corner of the page as rendered.
pdfium is imported only where pages are read, so the cloud's Parse, which aligns stored
layers, loads none of it.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from drac.documents.pdf.ocr import OcrPage
from drac.documents.sandbox.containment import contained_stream, in_worker, step
from drac.documents.sandbox.containment.tasks import contained_task

if TYPE_CHECKING:
    from drac.documents.pdf.render import CheckedDocument, PdfSource

Word = tuple[str, float, float, float, float, int]
"""A word's text, x0, top, x1, bottom (points, top-left origin) and its line on the page."""

LINE_END_HYPHENS = frozenset({0x02, 0xFFFE})
"""What pdfium reports for a hyphen that ends a line: it joins the word across the break, so
the word is split there again (one part a line, joined again when words are compared)."""
_DEVICE_SCALE = 64
"""Device pixels per point when pdfium maps page space to the rendered page (1/64 pt)."""


class PageLayer(BaseModel):
    """One page's words in reading order, as the text layer (or OCR) has them."""

    model_config = ConfigDict(frozen=True)

    number: int = Field(ge=1)
    width_pt: float = 0.0
    height_pt: float = 0.0
    source: Literal["text_layer", "ocr"] = "text_layer"
    words: tuple[Word, ...] = ()


def read_text_layers(
    pdf: PdfSource, max_pages: int = 5000, pages: Iterable[int] | None = None
) -> Iterator[PageLayer]:
    """Yield each page's text-layer words (1-based `pages`, default all), read by pdfium in a
    contained worker, one page at a time."""
    from drac.documents.pdf.render import source_limits

    numbers = None if pages is None else list(pages)
    if in_worker():
        yield from text_layers_here(pdf, max_pages, numbers)
        return
    items = contained_stream(
        text_layers_here, pdf, max_pages, numbers,
        limits=source_limits(pdf), what="while reading the text layer",
    )  # fmt: skip
    for item in items:
        yield PageLayer.model_validate(item)


@contained_task
def text_layers_here(
    pdf: PdfSource, max_pages: int = 5000, pages: Iterable[int] | None = None
) -> Iterator[PageLayer]:
    """`read_text_layers` in this process (the worker's side)."""
    from drac.documents.pdf.render import open_pdf

    with open_pdf(pdf, max_pages) as document:
        total = len(document)
        for number in range(1, total + 1) if pages is None else pages:
            if 1 <= number <= total:
                yield _page_layer(document, number)


def _page_layer(document: CheckedDocument, number: int) -> PageLayer:
    page = document[number - 1]
    try:
        width, height = page.get_size()
        textpage = page.get_textpage()  # counted against the character limits
        try:
            step(f"reading the words of page {number}")
            words = _words(page, textpage, width, height)
        finally:
            textpage.close()
    finally:
        page.close()
    return PageLayer(number=number, width_pt=width, height_pt=height, words=tuple(words))


def _words(page: object, textpage: object, width: float, height: float) -> list[Word]:
    """Characters grouped into words at whitespace, each with the union of pdfium's boxes of
    its characters (FPDFText_GetRect over the word's range: one call a word, not a character)
    mapped to the rendered page, and its line (counted at pdfium's line breaks)."""
    import pypdfium2.raw as pdfium_c

    to_device = _DeviceMap(page, width, height)
    text = _text(textpage)
    words: list[Word] = []
    left, top, right, bottom = (ctypes.c_double() for _ in range(4))
    line = 0

    def flush(start: int, end: int, word: str) -> None:
        rects = pdfium_c.FPDFText_CountRects(textpage, start, end - start)
        box: list[float] | None = None
        for rect in range(rects):
            if not pdfium_c.FPDFText_GetRect(textpage, rect, left, top, right, bottom):
                continue
            edges = [left.value, bottom.value, right.value, top.value]
            box = edges if box is None else [
                min(box[0], edges[0]), min(box[1], edges[1]),
                max(box[2], edges[2]), max(box[3], edges[3]),
            ]  # fmt: skip
        if box is not None:
            x0, y0, x1, y1 = to_device.box(*box)
            words.append((word, x0, y0, x1, y1, line))

    for match in _TOKEN.finditer(text):
        if match.group(3):
            line += 1
            continue
        begin, finish = match.span(1)
        if match.group(2):  # a line-end hyphen: the word's first part, on this line
            flush(begin, finish + 1, match.group(1) + "-")
            line += 1
        else:
            flush(begin, finish, match.group(1))
    return words


_TOKEN = re.compile("([^\\s\x00\x02\ufffe]+)([\x02\ufffe])?|(\n)")
"""A word (and the line-end hyphen pdfium put after it), or a line break."""


def _text(textpage: object) -> str:
    """The page's characters, one per pdfium character index (so a match's span is the
    characters' range): decoded at once, or one by one where a character is not in the
    Basic Multilingual Plane (two UTF-16 units, one index)."""
    import pypdfium2.raw as pdfium_c

    count = pdfium_c.FPDFText_CountChars(textpage)
    if count <= 0:
        return ""
    buffer = ctypes.create_string_buffer(2 * (count + 1))
    written = pdfium_c.FPDFText_GetText(
        textpage, 0, count, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort))
    )
    text = buffer.raw[: 2 * max(0, written - 1)].decode("utf-16-le", errors="replace")
    if len(text) == count:
        return text
    codes = (pdfium_c.FPDFText_GetUnicode(textpage, index) for index in range(count))
    return "".join(_char(code) or "\x00" for code in codes)


def _char(code: int) -> str:
    if code <= 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return ""
    return chr(code)


class _DeviceMap:
    """Page space to the rendered page in points (crop box and /Rotate applied): the affine
    map pdfium's own FPDF_PageToDevice applies, taken from three points at 1/64 point."""

    def __init__(self, page: object, width: float, height: float) -> None:
        import pypdfium2.raw as pdfium_c

        size = (max(1, round(width * _DEVICE_SCALE)), max(1, round(height * _DEVICE_SCALE)))
        x, y = ctypes.c_int(), ctypes.c_int()

        def point(px: float, py: float) -> tuple[float, float]:
            pdfium_c.FPDF_PageToDevice(page, 0, 0, size[0], size[1], 0, px, py, x, y)
            return x.value / _DEVICE_SCALE, y.value / _DEVICE_SCALE

        self.origin = point(0.0, 0.0)
        along_x, along_y = point(_SPAN, 0.0), point(0.0, _SPAN)
        self.dx = ((along_x[0] - self.origin[0]) / _SPAN, (along_x[1] - self.origin[1]) / _SPAN)
        self.dy = ((along_y[0] - self.origin[0]) / _SPAN, (along_y[1] - self.origin[1]) / _SPAN)

    def box(self, left: float, bottom: float, right: float, top: float) -> tuple[float, ...]:
        """A page-space box on the rendered page, rounded to 0.1 point."""
        (ox, oy), (xx, xy), (yx, yy) = self.origin, self.dx, self.dy
        ax, ay = ox + left * xx + bottom * yx, oy + left * xy + bottom * yy
        bx, by = ox + right * xx + top * yx, oy + right * xy + top * yy
        return (
            round(min(ax, bx), 1),
            round(min(ay, by), 1),
            round(max(ax, bx), 1),
            round(max(ay, by), 1),
        )


_SPAN = 4096.0
"""Page-space distance over which the map's axes are measured (precision 1/64 pt over it)."""


def ocr_layer(page: OcrPage) -> PageLayer:
    """The words OCR read on a page (each segment's box shared out by character count)."""
    words: list[Word] = []
    for line, row in enumerate(page.rows):
        for cell in row.cells:
            parts = cell.text.split()
            total = sum(len(part) for part in parts) + max(0, len(parts) - 1)
            if not total:
                continue
            per_char = (cell.x1 - cell.x0) / total
            offset = 0
            for part in parts:
                x0 = cell.x0 + offset * per_char
                x1 = x0 + len(part) * per_char
                words.append((part, round(x0, 1), round(cell.top, 1), round(x1, 1),
                              round(cell.bottom, 1), line))  # fmt: skip
                offset += len(part) + 1
    return PageLayer(number=page.number, source="ocr", words=tuple(words))
