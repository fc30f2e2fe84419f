"""Each page's text layer as pdfium reads it, for checking conversions against the page.

The text is read in the contained pdfium worker (`drac.documents.sandbox.containment`), never in
drac's own process; the page and document character limits of `drac.documents.pdf.render` apply.
"""

from __future__ import annotations

from collections.abc import Sequence

from drac.documents.pdf.render import open_pdf, pdf_limits
from drac.documents.sandbox.containment import contained_call, in_worker
from drac.documents.sandbox.containment.tasks import contained_task


def page_text_layers(
    pdf: bytes, pages: Sequence[int] | None = None, max_pages: int = 5000
) -> dict[int, str]:
    """The text layer of each page (1-based numbers, default all), lines separated by "\\n";
    DocumentError when the PDF cannot be read."""
    if in_worker():
        return page_text_here(pdf, pages, max_pages)
    found = contained_call(
        page_text_here, pdf, list(pages) if pages else None,
        max_pages, limits=pdf_limits(len(pdf)), what="while reading the text layer",
    )  # fmt: skip
    return {int(number): str(text) for number, text in found.items()}


@contained_task
def page_text_here(
    pdf: bytes, pages: Sequence[int] | None = None, max_pages: int = 5000
) -> dict[int, str]:
    """`page_text_layers` in this process (the worker's side)."""
    result: dict[int, str] = {}
    with open_pdf(pdf, max_pages) as document:
        numbers = pages or range(1, len(document) + 1)
        for number in numbers:
            if not 1 <= number <= len(document):
                continue
            page = document[number - 1]
            try:
                textpage = page.get_textpage()
                try:
                    text = textpage.get_text_range()
                finally:
                    textpage.close()
            finally:
                page.close()
            result[number] = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    return result
