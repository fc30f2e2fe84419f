"""Scanned pages (no text layer) rendered and read by OCR, each in a contained worker."""

from __future__ import annotations

from drac.documents.options import ConversionOptions
from drac.documents.pdf.ocr import OcrPage, ocr_page
from drac.documents.pdf.render import PdfSource, RenderOptions, render_pages
from drac.documents.sandbox.containment import GIB, BudgetExceeded, Limits, contained_call
from drac.errors import DocumentError

OCR_DPI = 200
OCR_MAX_SIDE_PX = 4000
"""Scans are rendered for OCR at 200 DPI (the resolution measured in BENCHMARKS.md, OCR)."""

OCR_LIMITS = Limits(
    memory_bytes=4 * GIB,  # onnxruntime maps about 1.6 GiB of address space for one page
    cpu_s=120.0,
    step_cpu_s=120.0,
    wall_s=300.0,
    preload=("drac.documents.pdf.ocr", "numpy", "onnxruntime", "rapidocr"),
    # the engine's native libraries, and what onnxruntime reads to size its thread pool
    readable=(
        *("/usr/lib", "/lib", "/lib64", "/usr/lib64"),
        *("/proc/cpuinfo", "/sys/devices/system/cpu"),
    ),
)
"""What reading one scanned page by OCR may use, in a contained worker."""


def read_scanned_pages(
    pdf: PdfSource,
    numbers: list[int],
    options: ConversionOptions,
    *,
    unread_past_budget: bool = False,
) -> dict[int, OcrPage]:
    """Render the given pages (scans: no text layer) and read each by OCR.

    The one place the offline path calls OCR; a page OCR fails on is left out (unread). When
    the document's CPU budget is spent, BudgetExceeded; with `unread_past_budget` (checking
    pages, which never fails a document) the pages not read by then are left out instead.
    """
    render = RenderOptions(dpi=OCR_DPI, max_side_px=OCR_MAX_SIDE_PX, max_pages=options.max_pages)
    read: dict[int, OcrPage] = {}
    for number in numbers:
        try:
            image = next(render_pages(pdf, render, pages=[number]))
            found = contained_call(
                ocr_page, image.png, number, image.width_pt,
                image.height_pt, limits=OCR_LIMITS, what=f"while reading page {number} by OCR",
            )  # fmt: skip
            read[number] = OcrPage.model_validate(found)
        except BudgetExceeded:
            if unread_past_budget:
                break  # no other page may be read either
            raise
        except DocumentError:
            continue  # the page stays marked as unread; the others are still read
    return read
