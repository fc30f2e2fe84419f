"""Stage 1b: rasterise PDF pages to PNG, one page at a time (a generator, never the whole file).

Every call into pdfium runs in a contained worker (`drac.documents.sandbox.containment`): one
document at a time in each worker, under memory, CPU and time limits, without network or files
(but the PDF's own folder when the PDF is given as a file, which pdfium reads as it needs).
pdfium closes a document before its worker takes the next one; a PDF given as bytes grants
no folder, so one worker serves every such document of a run, and a worker a document crashed
or stopped is replaced. PDFium is not thread-safe, but each worker is single-threaded, so no
lock is shared between documents. What a page may cost is checked as soon as pdfium can tell
(`PAGE_LIMITS`).
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple, TypeAlias, TypeVar

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pydantic import BaseModel, ConfigDict, Field

from drac.documents.pdf.limits import PDF_LIMITS
from drac.documents.sandbox.containment import (
    Limits,
    contained_call,
    contained_stream,
    in_worker,
    step,
)
from drac.documents.sandbox.containment.tasks import contained_task
from drac.errors import DocumentError

POINTS_PER_INCH = 72.0
T = TypeVar("T")
PdfSource: TypeAlias = bytes | Path
"""A PDF as its bytes (the worker gets a copy), or as a file that pdfium in the worker opens
and reads as it needs (its resident memory holds the pages it reads, not the whole file)."""

MAX_PAGE_OBJECTS = 50_000
"""Content objects (text runs, paths, images, forms) one page may hold, counted right after
pdfium parses the page, before any text or pixel is produced."""
MAX_PAGE_CHARS = 200_000
"""Characters one page's text layer may hold (a dense page holds about 5,000)."""
MAX_DOCUMENT_CHARS = 2_000_000
"""Characters a whole PDF may hold (about 650 dense pages): bounds the offline converter's
time (about 17 us a character) and memory however often pages repeat a shared form."""
MAX_PAGE_IMAGE_PIXELS = 120_000_000
"""Pixels of the images one page draws (the input image limit), checked before rendering."""
MIB = 1024 * 1024
FUNCTION_MEMORY_VARIABLE = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
"""Lambda sets it to the function's memory in MB (read as 10^6 bytes: the smaller reading)."""
MEMORY_HEADROOM = 128 * MIB
"""Kept free beside the caller and its worker (the pipe's buffers, the caller's growth)."""
WORKER_OVERHEAD = 256 * MIB
"""What a pdfium worker needs besides its copy of the PDF, if it is given one (measured: 60 MB
of address space for a small PDF; pdfium's parse of a large one takes more)."""


def fitted_limits(
    limits: Limits, pdf_bytes: int, function_bytes: int | None, caller_bytes: int
) -> Limits:
    """`limits` with the worker's address space cut to what a function of `function_bytes`
    has left beside its own resident `caller_bytes` (the PDF among them), so caller and worker
    together stay within the function; unchanged outside a function or when the limit fits.
    DocumentError names the sizes when less is left than a worker needs for this PDF."""
    if not function_bytes:
        return limits
    room = function_bytes - caller_bytes - MEMORY_HEADROOM
    room -= room % (64 * MIB)  # a few sizes only, so idle workers are reused
    if room >= limits.memory_bytes:
        return limits
    needed = pdf_bytes + WORKER_OVERHEAD
    if room < needed:
        raise DocumentError(
            f"the function's {function_bytes / MIB:,.0f} MiB of memory leave"
            f" {max(room, 0) / MIB:,.0f} MiB for the pdfium worker beside the"
            f" {caller_bytes / MIB:,.0f} MiB the function holds, less than the"
            f" {needed / MIB:,.0f} MiB it needs for a {pdf_bytes / MIB:,.0f} MiB PDF:"
            " raise the function's memory"
        )
    return dataclasses.replace(limits, memory_bytes=room)


def pdf_limits(pdf_bytes: int, limits: Limits = PDF_LIMITS) -> Limits:
    """The pdfium worker's limits for a PDF of `pdf_bytes` in this process: fitted to the
    Lambda function's memory when running in one (`fitted_limits`)."""
    memory_mb = os.environ.get(FUNCTION_MEMORY_VARIABLE, "")
    function_bytes = int(memory_mb) * 1_000_000 if memory_mb.isdigit() else None
    return fitted_limits(limits, pdf_bytes, function_bytes, _resident_bytes())


def source_limits(pdf: PdfSource, limits: Limits = PDF_LIMITS) -> Limits:
    """The pdfium worker's limits for `pdf` (`pdf_limits`): a file's folder is readable to
    the worker, and none of the file is counted in the worker's memory (it is not copied)."""
    if isinstance(pdf, bytes):
        return pdf_limits(len(pdf), limits)
    readable = (*limits.readable, str(pdf.parent))
    return pdf_limits(0, dataclasses.replace(limits, readable=readable))


def _resident_bytes() -> int:
    """This process's resident memory in bytes (0 where /proc is not there)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


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


class CheckedDocument(pdfium.PdfDocument):
    """A PdfDocument whose pages are checked against the page limits as they load, and that
    names each page it loads as the worker's current step."""

    chars = 0

    def get_page(self, index: int) -> pdfium.PdfPage:
        """The page at 0-based `index`, refused when it holds too many objects."""
        number = index + 1
        step(f"reading page {number}")
        try:
            page = super().get_page(index)
        except pdfium.PdfiumError as exc:
            raise DocumentError(
                f"page {number} cannot be read (damaged page or looping page tree)"
            ) from exc
        objects = pdfium_c.FPDFPage_CountObjects(page)
        if objects > MAX_PAGE_OBJECTS:
            page.close()
            raise DocumentError(
                f"page {number} holds {objects:,} content objects, more than the "
                f"{MAX_PAGE_OBJECTS:,} a page may have"
            )
        page.__class__ = CheckedPage
        page.number = number
        return page

    def encryption_warning(self) -> str | None:
        """A warning when the PDF is encrypted yet opened without a password."""
        if pdfium_c.FPDF_GetSecurityHandlerRevision(self) < 0:
            return None
        return (
            "the PDF is encrypted with an empty user password: it was opened without one, "
            "and the restrictions its author set (copying, printing) are not kept"
        )


class CheckedPage(pdfium.PdfPage):
    """A page whose text layer is refused when it holds too many characters."""

    number = 0

    def get_textpage(self) -> pdfium.PdfTextPage:
        """The page's text layer, counted against the page and document character limits."""
        textpage = super().get_textpage()
        count = textpage.count_chars()
        document = self.pdf
        chars = getattr(document, "chars", 0) + count
        if isinstance(document, CheckedDocument):
            document.chars = chars
        number = self.number
        if count > MAX_PAGE_CHARS:
            textpage.close()
            raise DocumentError(
                f"page {number} holds {count:,} characters, more than the "
                f"{MAX_PAGE_CHARS:,} a page may have"
            )
        if chars > MAX_DOCUMENT_CHARS:
            textpage.close()
            raise DocumentError(
                f"the PDF holds more than {MAX_DOCUMENT_CHARS:,} characters (reached at page "
                f"{number}), the most a document may have"
            )
        return textpage


@contextmanager
def open_pdf(data: PdfSource, max_pages: int = 5000) -> Iterator[CheckedDocument]:
    """Open a PDF (bytes or a file), raising DocumentError for corrupt, encrypted, empty or
    oversized files."""
    step("opening the PDF")
    try:
        document = CheckedDocument(data)
    except pdfium.PdfiumError as exc:
        raise DocumentError(_open_error_reason(exc, data)) from exc
    try:
        pages = len(document)
        if pages == 0:
            raise DocumentError("PDF has no pages")
        if pages > max_pages:
            raise DocumentError(f"PDF has {pages} pages, more than the {max_pages} page limit")
        yield document
    finally:
        document.close()


_OPEN_ERRORS = {
    0: "PDF has no pages (empty or missing page tree)",
    2: "corrupt or unreadable PDF (file error)",
    3: "corrupt or unreadable PDF (not in PDF format or damaged)",
    4: "PDF is password-protected (encrypted); remove the password and try again",
    5: "PDF uses an unsupported security handler (encryption)",
    6: "corrupt PDF (page not found or damaged)",
}


def _open_error_reason(exc: pdfium.PdfiumError, data: PdfSource) -> str:
    code = getattr(exc, "err_code", None)
    encrypted = _mentions(data, b"/Encrypt")
    if code in (4, 5) and not encrypted:
        code = 0  # PDFium's last-error code can be stale from an earlier document
    elif encrypted and code in (0, 1):
        code = 4
    if code in _OPEN_ERRORS:
        return _OPEN_ERRORS[code]
    return f"PDF cannot be opened ({exc})"


def _mentions(data: PdfSource, word: bytes) -> bool:
    """Whether the PDF's bytes hold `word` (a file is read a megabyte at a time)."""
    if isinstance(data, bytes):
        return word in data
    tail = b""
    try:
        with open(data, "rb") as file:
            while chunk := file.read(MIB):
                if word in tail + chunk:
                    return True
                tail = chunk[1 - len(word) :]
    except OSError:
        pass
    return False


class PdfFacts(BaseModel):
    """What opening a PDF tells: its pages, and warnings about it (e.g. an empty password)."""

    pages: int
    warnings: list[str] = Field(default_factory=list)


def page_count(data: bytes, max_pages: int = 5000) -> int:
    """Return the number of pages of a PDF (DocumentError when it cannot be opened)."""
    return pdf_facts(data, max_pages).pages


def pdf_facts(data: PdfSource, max_pages: int = 5000) -> PdfFacts:
    """Open the PDF in a contained worker: its page count and warnings (DocumentError when
    it cannot be opened)."""
    if in_worker():  # already contained (e.g. an OCR task that renders): no nested worker
        return facts_here(data, max_pages)
    found = contained_call(
        facts_here, data, max_pages,
        limits=source_limits(data), what="while opening the PDF",
    )  # fmt: skip
    return PdfFacts.model_validate(found)


@contained_task
def facts_here(data: PdfSource, max_pages: int = 5000) -> PdfFacts:
    """`pdf_facts` in this process (the worker's side)."""
    with open_pdf(data, max_pages) as document:
        warning = document.encryption_warning()
        return PdfFacts(pages=len(document), warnings=[warning] if warning else [])


def render_pages(
    data: PdfSource,
    options: RenderOptions | None = None,
    pages: Iterable[int] | None = None,
) -> Iterator[PageImage]:
    """Yield each page (1-based numbers, default all) as a PNG, one at a time, in order,
    rendered in a contained worker (DocumentError names a page that failed and why)."""
    options = options or RenderOptions()
    numbers = None if pages is None else list(pages)
    if in_worker():  # already contained: render here
        yield from render_here(data, options, numbers)
        return
    items = contained_stream(
        render_here, data, options, numbers,
        limits=source_limits(data), what="while opening the PDF",
    )  # fmt: skip
    for item in items:
        yield PageImage.model_validate(item)


@contained_task
def render_here(
    data: PdfSource, options: RenderOptions | None = None, pages: Iterable[int] | None = None
) -> Iterator[PageImage]:
    """`render_pages` in this process (the worker's side)."""
    options = options or RenderOptions()
    with open_pdf(data, options.max_pages) as document:
        total = len(document)
        numbers = range(1, total + 1) if pages is None else pages
        for number in numbers:
            if not 1 <= number <= total:
                raise DocumentError(f"page {number} does not exist (the PDF has {total} pages)")
            yield _render_one(document, number, options)


class RenderedDocument(NamedTuple):
    """A PDF being rendered: what opening it told, and its pages as they come."""

    facts: PdfFacts
    pages: Generator[PageImage, None, None]
    """Every page in order, rendered one at a time as they are read; closing it early stops
    the work (and the worker it ran in)."""


def render_document(data: PdfSource, options: RenderOptions | None = None) -> RenderedDocument:
    """Open the PDF in a contained worker and render all its pages there, one at a time:
    its facts (`pdf_facts`; DocumentError when it cannot be opened) before any page, in the
    one call that renders them (`render_pages` names a page that fails and why)."""
    options = options or RenderOptions()
    if in_worker():
        items: Iterator[object] = render_document_here(data, options)
    else:
        items = contained_stream(
            render_document_here, data, options,
            limits=source_limits(data), what="while opening the PDF",
        )  # fmt: skip
    try:
        facts = PdfFacts.model_validate(next(items))
    except BaseException:
        _close(items)
        raise
    return RenderedDocument(facts, _page_images(items))


def _page_images(items: Iterator[object]) -> Generator[PageImage, None, None]:
    try:
        for item in items:
            yield PageImage.model_validate(item)
    finally:
        _close(items)


def _close(items: Iterator[object]) -> None:
    close = getattr(items, "close", None)
    if callable(close):
        close()


@contained_task
def render_document_here(
    data: PdfSource, options: RenderOptions | None = None
) -> Iterator[PdfFacts | PageImage]:
    """`render_document` in this process (the worker's side): the facts, then every page."""
    options = options or RenderOptions()
    with open_pdf(data, options.max_pages) as document:
        warning = document.encryption_warning()
        total = len(document)
        yield PdfFacts(pages=total, warnings=[warning] if warning else [])
        for number in range(1, total + 1):
            yield _render_one(document, number, options)


def _render_one(document: CheckedDocument, number: int, options: RenderOptions) -> PageImage:
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
        _check_image_pixels(page, number)
        step(f"rendering page {number}")
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


def _check_image_pixels(page: pdfium.PdfPage, number: int) -> None:
    """Refuse a page whose images (also inside forms) add up to more than the pixel limit:
    pdfium decodes each image whole to draw it, however small it is drawn."""
    pixels = 0
    for image in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,)):
        try:
            width, height = image.get_px_size()
        except pdfium.PdfiumError:
            continue
        pixels += width * height
        if pixels > MAX_PAGE_IMAGE_PIXELS:
            raise DocumentError(
                f"page {number} draws images of more than {MAX_PAGE_IMAGE_PIXELS:,} pixels "
                f"(one is {width:,} x {height:,}), more than a page may have"
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
