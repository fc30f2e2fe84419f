"""Stage 1b: rasterise PDF pages to PNG, one page at a time (a generator, never the whole file)."""

from __future__ import annotations

import io
import math
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import pypdfium2 as pdfium
from pydantic import BaseModel, ConfigDict, Field

from drac.errors import DocumentError

PDFIUM_LOCK = threading.RLock()
"""PDFium is not thread-safe: every call into it, from any document, holds this lock."""

POINTS_PER_INCH = 72.0
T = TypeVar("T")


class RenderOptions(BaseModel):
    """How pages become images: resolution, size cap, PNG encoding and safety limits."""

    model_config = ConfigDict(frozen=True)

    dpi: int = Field(default=200, ge=36, le=600)
    max_side_px: int = Field(default=1568, ge=64, le=8000)
    grayscale: bool = Field(default=True, description="render in 8-bit gray (smaller, faster)")
    png_compress_level: int = Field(default=1, ge=0, le=9)
    max_page_side_in: float = Field(
        default=120.0, gt=0, description="pages larger than this (inches) are rejected as absurd"
    )
    max_pages: int = Field(default=5000, ge=1)


class PageImage(BaseModel):
    """One rendered page."""

    model_config = ConfigDict(frozen=True)

    number: int = Field(ge=1, description="1-based page number in the document")
    width_pt: float
    height_pt: float
    width_px: int
    height_px: int
    text_chars: int = Field(description="characters in the page's text layer (0 for a scan)")
    png: bytes = Field(repr=False)
    text_layer: str = Field(default="", repr=False, description="the page's text layer")


def render_scale(
    width_pt: float, height_pt: float, dpi: int = 200, max_side_px: int = 1568
) -> float:
    """Return pixels per point: `dpi`, unless the longest side would exceed `max_side_px`."""
    longest = max(width_pt, height_pt)
    if not (math.isfinite(longest) and longest > 0):
        raise DocumentError(f"page has an invalid size ({width_pt} x {height_pt} pt)")
    scale = dpi / POINTS_PER_INCH
    if longest * scale > max_side_px:
        scale = max_side_px / longest
        # pypdfium2 rounds the bitmap size up; keep the longest side within the cap.
        while math.ceil(longest * scale) > max_side_px:
            scale = math.nextafter(scale, 0.0)
    return scale


@contextmanager
def open_pdf(data: bytes, max_pages: int = 5000) -> Iterator[pdfium.PdfDocument]:
    """Open PDF bytes, raising DocumentError for corrupt, encrypted, empty or oversized files."""
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise DocumentError(_open_error_reason(exc, data)) from exc
        pages = len(document)
    try:
        if pages == 0:
            raise DocumentError("PDF has no pages")
        if pages > max_pages:
            raise DocumentError(f"PDF has {pages} pages, more than the {max_pages} page limit")
        yield document
    finally:
        with PDFIUM_LOCK:
            document.close()


_OPEN_ERRORS = {
    0: "PDF has no pages (empty or missing page tree)",
    2: "corrupt or unreadable PDF (file error)",
    3: "corrupt or unreadable PDF (not in PDF format or damaged)",
    4: "PDF is password-protected (encrypted); remove the password and try again",
    5: "PDF uses an unsupported security handler (encryption)",
    6: "corrupt PDF (page not found or damaged)",
}


def _open_error_reason(exc: pdfium.PdfiumError, data: bytes) -> str:
    code = getattr(exc, "err_code", None)
    encrypted = b"/Encrypt" in data
    if code in (4, 5) and not encrypted:
        code = 0  # PDFium's last-error code can be stale from an earlier document
    elif encrypted and code in (0, 1):
        code = 4
    if code in _OPEN_ERRORS:
        return _OPEN_ERRORS[code]
    return f"PDF cannot be opened ({exc})"


def page_count(data: bytes, max_pages: int = 5000) -> int:
    """Return the number of pages of a PDF (DocumentError when it cannot be opened)."""
    with open_pdf(data, max_pages) as document, PDFIUM_LOCK:
        return len(document)


def render_pages(
    data: bytes,
    options: RenderOptions | None = None,
    pages: Iterable[int] | None = None,
) -> Iterator[PageImage]:
    """Yield each page (1-based numbers, default all) as a PNG, one at a time, in order."""
    options = options or RenderOptions()
    with open_pdf(data, options.max_pages) as document:
        with PDFIUM_LOCK:
            total = len(document)
        numbers = range(1, total + 1) if pages is None else pages
        for number in numbers:
            if not 1 <= number <= total:
                raise DocumentError(f"page {number} does not exist (the PDF has {total} pages)")
            yield _render_one(document, number, options)


def _render_one(document: pdfium.PdfDocument, number: int, options: RenderOptions) -> PageImage:
    with PDFIUM_LOCK:
        page = document[number - 1]
        try:
            width_pt, height_pt = page.get_size()
            _check_page_size(number, width_pt, height_pt, options.max_page_side_in)
            scale = render_scale(width_pt, height_pt, options.dpi, options.max_side_px)
            textpage = page.get_textpage()
            try:
                text_layer = textpage.get_text_range().strip()
                text_chars = len(text_layer)
            finally:
                textpage.close()
            bitmap = page.render(scale=scale, grayscale=options.grayscale)
            try:
                image = bitmap.to_pil()
            finally:
                bitmap.close()
        except pdfium.PdfiumError as exc:
            raise DocumentError(f"page {number} cannot be rendered ({exc})") from exc
        finally:
            page.close()
    if options.grayscale and image.mode != "L":
        image = image.convert("L")
    elif not options.grayscale and image.mode != "RGB":
        image = image.convert("RGB")
    width_px, height_px = image.size
    if max(width_px, height_px) > options.max_side_px:
        raise DocumentError(f"page {number} rendered larger than {options.max_side_px} px")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=options.png_compress_level)
    return PageImage(
        number=number,
        width_pt=width_pt,
        height_pt=height_pt,
        width_px=width_px,
        height_px=height_px,
        text_chars=text_chars,
        png=buffer.getvalue(),
        text_layer=text_layer,
    )


def _check_page_size(number: int, width_pt: float, height_pt: float, limit_in: float) -> None:
    if not (math.isfinite(width_pt) and math.isfinite(height_pt)) or min(width_pt, height_pt) <= 0:
        raise DocumentError(f"page {number} has an invalid size ({width_pt} x {height_pt} pt)")
    longest_in = max(width_pt, height_pt) / POINTS_PER_INCH
    if longest_in > limit_in:
        raise DocumentError(
            f"page {number} is {width_pt / POINTS_PER_INCH:.0f} x {height_pt / POINTS_PER_INCH:.0f}"
            f" inches, larger than the {limit_in:g}-inch limit"
        )


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Yield consecutive lists of at most `size` items, lazily (the source is read as needed)."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def page_batches(pages: int, size: int) -> list[list[int]]:
    """Return the 1-based page numbers of a document grouped into batches of `size`."""
    return list(batched(range(1, pages + 1), size))
