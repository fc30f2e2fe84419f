"""Build small PDFs for tests with PDFium itself (text via the standard 14 fonts)."""

from __future__ import annotations

import ctypes
import io
from collections.abc import Sequence
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image, ImageDraw


@dataclass(frozen=True)
class Text:
    """One line of text at (x, y) points from the bottom-left corner."""

    text: str
    x: float
    y: float
    size: float = 10.0
    font: str = "Helvetica"


def make_pdf(
    pages: Sequence[tuple[float, float] | tuple[float, float, Sequence[Text]]],
    scanned: Sequence[int] = (),
) -> bytes:
    """Return PDF bytes with one page per (width, height[, texts]) entry.

    Pages whose 0-based index is in `scanned` also get a full-page image (as a scan has).
    """
    # PDFium slows down with every page added to one document (5,000 pages took minutes),
    # so pages are made in small documents and imported into the result.
    document = pdfium.PdfDocument.new()
    for start in range(0, len(pages), _PAGES_PER_PART):
        part = _make_part(pages[start:start + _PAGES_PER_PART],
                          {n - start for n in scanned})
        document.import_pages(part)
        part.close()
    out = io.BytesIO()
    document.save(out)
    document.close()
    return out.getvalue()


_PAGES_PER_PART = 100


def _make_part(
    pages: Sequence[tuple[float, float] | tuple[float, float, Sequence[Text]]],
    scanned: set[int],
) -> pdfium.PdfDocument:
    document = pdfium.PdfDocument.new()
    fonts: dict[str, object] = {}
    for number, spec in enumerate(pages):
        width, height = spec[0], spec[1]
        texts = spec[2] if len(spec) > 2 else ()  # type: ignore[misc]
        page = document.new_page(width, height)
        if number in scanned:
            _insert_scan_image(document, page, width, height)
        for item in texts:
            font = fonts.get(item.font)
            if font is None:
                font = pdfium_c.FPDFText_LoadStandardFont(document.raw, item.font.encode())
                fonts[item.font] = font
            obj = pdfium_c.FPDFPageObj_CreateTextObj(document.raw, font, item.size)
            encoded = (item.text + "\0").encode("utf-16-le")
            buffer = ctypes.create_string_buffer(encoded, len(encoded))
            pdfium_c.FPDFText_SetText(obj, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)))
            pdfium_c.FPDFPageObj_Transform(obj, 1, 0, 0, 1, item.x, item.y)
            pdfium_c.FPDFPage_InsertObject(page.raw, obj)
        pdfium_c.FPDFPage_GenerateContent(page.raw)
        page.close()
    return document


def _insert_scan_image(
    document: pdfium.PdfDocument, page: pdfium.PdfPage, w: float, h: float
) -> None:
    picture = Image.new("L", (85, 110), 255)
    ImageDraw.Draw(picture).rectangle((10, 10, 70, 20), fill=0)
    image = pdfium.PdfImage.new(document)
    image.set_bitmap(pdfium.PdfBitmap.from_pil(picture))
    image.set_matrix(pdfium.PdfMatrix().scale(w, h))
    page.insert_obj(image)


def text_page(lines: Sequence[Text], size: tuple[float, float] = (612, 792)) -> tuple:
    """Return a page spec with the given lines."""
    return (size[0], size[1], list(lines))
