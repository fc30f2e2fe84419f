"""The offline route: a document converted from its PDF's text layer, with no model.

Before the PDF is read, what the file itself says better than its PDF is read from it: a
deck's slide titles and paragraphs (PPTX), the file's own tables (DOCX, PPTX, HTML), its
headings and lists (DOCX, HTML); scanned pages are read by OCR.
"""

from __future__ import annotations

from drac.documents.conversion import Conversion, ConversionResult, Progress, convert_pages
from drac.documents.intake.detect import DocumentFormat
from drac.documents.office.file_structure import FileBlock, read_file_structure
from drac.documents.office.file_tables import FileTable, read_file_tables
from drac.documents.office.file_words import file_vocabulary, respell
from drac.documents.office.slide_lines import apply_slide
from drac.documents.office.slides import SlideText, read_slide_headings
from drac.documents.office.structure_pages import place_structure
from drac.documents.office.table_pages import place_tables
from drac.documents.offline.pages import OfflinePage, offline_here
from drac.documents.options import ConversionOptions
from drac.documents.pdf.layers import ocr_layer
from drac.documents.pdf.ocr import ocr_available, ocr_warnings
from drac.documents.pdf.render import pdf_limits
from drac.documents.pdf.scans import read_scanned_pages
from drac.documents.sandbox.containment import contained_call

OFFLINE_MODEL = "offline"


class OfflineConverter:
    """Converts any paged document when no vision model is given."""

    def accepts(self, conversion: Conversion) -> bool:
        """Whether no vision model was given."""
        return conversion.vision is None

    def convert(self, conversion: Conversion) -> ConversionResult:
        """The document's Markdown from its text layer, with the file's own structure."""
        return convert_pages(conversion, lambda pdf, warnings: _read(conversion, pdf, warnings))


def _read(conversion: Conversion, pdf: bytes, warnings: list[str]) -> ConversionResult:
    """The pre-reads from the file itself, then its PDF converted offline."""
    data, fmt = conversion.data, conversion.format
    headings: list[SlideText] = []
    if fmt is DocumentFormat.PPTX:
        headings, heading_warnings = read_slide_headings(data)
        warnings.extend(heading_warnings)
    tables, table_warnings = read_file_tables(data, fmt)
    warnings.extend(table_warnings)
    structure, structure_warnings = read_file_structure(data, fmt)
    warnings.extend(structure_warnings)
    return convert_offline(
        pdf, fmt, warnings, conversion.options, conversion.progress, headings, tables, structure
    )


def convert_offline(
    pdf: bytes,
    fmt: DocumentFormat,
    warnings: list[str],
    options: ConversionOptions,
    progress: Progress | None,
    headings: list[SlideText],
    tables: list[FileTable] | None = None,
    structure: list[FileBlock] | None = None,
) -> ConversionResult:
    """The text layer's Markdown; scans read by OCR; a deck's slide titles and paragraphs
    given to its pages (headings, lists, wrapped lines joined), and the file's own tables
    (DOCX, PPTX, HTML), headings and lists (DOCX, HTML) put in place of the text layer's, and
    words the text layer broke apart put back whole as the file holds them (DOCX)."""
    found = contained_call(
        offline_here, pdf, options.max_pages,
        fmt is DocumentFormat.PDF,  # LibreOffice breaks no word at a line end by itself
        limits=pdf_limits(len(pdf)), what="while opening the PDF",
    )  # fmt: skip
    pages = [OfflinePage.model_validate(page) for page in found["pages"]]
    warnings.extend(str(warning) for warning in found["warnings"])
    slide_pages = len(headings) == len(pages)
    if not slide_pages:  # not one slide per page: keep the converter's headings
        headings = [SlideText() for _ in pages]
    if tables:
        placed = place_tables([page.markdown for page in pages], tables, slide_pages=slide_pages)
        pages = [
            page.model_copy(update={"markdown": text})
            for page, text in zip(pages, placed, strict=True)
        ]
    if structure:
        placed = place_structure([page.markdown for page in pages], structure)
        pages = [
            page.model_copy(update={"markdown": text})
            for page, text in zip(pages, placed, strict=True)
        ]
    if structure and fmt is DocumentFormat.DOCX:  # every word of its pages is the file's
        vocabulary = file_vocabulary(tables or [], structure)
        mended = respell([page.markdown for page in pages], vocabulary)
        pages = [
            page.model_copy(update={"markdown": text})
            for page, text in zip(pages, mended, strict=True)
        ]
    scanned = [page.number for page in pages if not page.has_text_layer]
    read = read_scanned_pages(pdf, scanned, options) if scanned and ocr_available() else {}
    markdown = []
    for page in pages:
        ocr = read.get(page.number)
        if ocr is not None and ocr.readable:
            markdown.append(ocr.markdown)
            continue
        markdown.append(apply_slide(page.markdown, headings[page.number - 1]))
        warnings.extend(page.warnings)
    warnings.extend(ocr_warnings(sorted(n for n, page in read.items() if page.readable)))
    unread = [number for number in scanned if not (number in read and read[number].readable)]
    if progress:
        progress(len(pages), len(pages))
    return ConversionResult(
        ocr_layers={n: ocr_layer(page) for n, page in read.items() if page.readable},
        markdown="\n\n".join(markdown) + "\n",
        format=fmt.value,
        pages=len(pages),
        status="partial" if unread else "ok",
        warnings=warnings,
        failures=[],
        model=OFFLINE_MODEL,
    )
