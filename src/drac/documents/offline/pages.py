"""The offline converter: Markdown from a PDF's text layer, with no model.

Headings are recovered from font size and weight, lists from bullet glyphs and indentation,
paragraphs from line spacing, tables from cell layout; reading order is PDFium's text order.
Pages without a text layer (scans) get a marker comment and a warning: they need a vision
model. The package's modules, in the order a page passes through them: `glyphs` (characters
to `lines`), `hyphens`, `headings`, `blocks` and `tables`; this one joins the pages.

The text layer is cleaned where PDFium reports more or less than the text: its line-end hyphen
marker (U+0002) becomes a real hyphen or joins a wrapped word, as the document's own words
show (`hyphens.resolve_hyphens`); glyphs with no Unicode, or mapped to a ligature's letters outside
any word (a rupee sign the font lacks), are left out with a warning naming the page; no other
control character reaches the Markdown; a string at PDFium's 32,767-byte limit is warned about.
`drac eval-conversion` and bench/conversion_fidelity.py measure the result against source
Markdown.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pydantic import BaseModel, ConfigDict

from drac.documents.offline.blocks import Blocks
from drac.documents.offline.glyphs import PageNotes, page_lines
from drac.documents.offline.headings import HeadingScale, is_page_furniture
from drac.documents.offline.hyphens import resolve_hyphens
from drac.documents.offline.lines import ORDERED, WORD, Line
from drac.documents.offline.tables import Table, Vocabulary
from drac.documents.pdf.render import facts_here, open_pdf
from drac.documents.sandbox.containment.tasks import contained_task
from drac.documents.vision.prompt import page_marker


class OfflinePage(BaseModel):
    """The Markdown of one page from its text layer."""

    model_config = ConfigDict(frozen=True)

    number: int
    markdown: str
    has_text_layer: bool
    warnings: tuple[str, ...] = ()


def offline_markdown(
    data: bytes, max_pages: int = 5000, hyphenated: bool = True
) -> list[OfflinePage]:
    """Return one OfflinePage per page of the PDF, in order, each starting with its page marker.

    `hyphenated`: whether its typesetter may have broken words at line ends (False for
    LibreOffice's PDF of an office file or web page: it hyphenates no word by itself, so a
    line-end hyphen is real unless the document writes the word whole elsewhere)."""
    with open_pdf(data, max_pages) as document:
        heights = []
        pictured: list[bool] = []
        pages: list[list[Line]] = []
        notes: list[PageNotes] = []
        for index in range(len(document)):
            page = document[index]
            try:
                heights.append(page.get_height())
                note = PageNotes()
                pages.append(page_lines(page, note))
                notes.append(note)
                pictured.append(_has_images(page))
            finally:
                page.close()
    hyphenates = resolve_hyphens(pages, hyphenated)
    counts = Counter(
        word for lines in pages for line in lines for word in WORD.findall(line.text.casefold())
    )
    words = Vocabulary(counts, hyphenates)
    scale = HeadingScale.from_pages(pages)
    result: list[OfflinePage] = []
    carried: Table | None = None  # a table that ends its page, to go on at the next one's top
    for number, (lines, height, images, note) in enumerate(
        zip(pages, heights, pictured, notes, strict=True), start=1
    ):
        page_result, last, completed = _page_result(
            number, lines, height, scale, images, carried, words
        )
        if completed is not None and carried is not None:
            # the row a page break cut goes on this page's top: it is completed on the page
            # where its key cell stands
            before = result[-1]
            old = carried.markdown()
            if before.markdown.endswith(old):
                fixed = before.markdown[: -len(old)] + completed.markdown()
                result[-1] = before.model_copy(update={"markdown": fixed})
        carried = last
        if result and page_result.has_text_layer and result[-1].has_text_layer:
            result[-1], page_result = _join_broken_paragraph(result[-1], page_result)
        warnings = note.warnings(number)
        if warnings:
            page_result = page_result.model_copy(
                update={"warnings": (*page_result.warnings, *warnings)}
            )
        result.append(page_result)
    return result


def _has_images(page: pdfium.PdfPage) -> bool:
    """Whether the page draws any image (a page without text or images is simply blank)."""
    images = page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,))
    return next(iter(images), None) is not None


def _page_result(
    number: int,
    lines: list[Line],
    height: float,
    scale: HeadingScale,
    has_images: bool,
    carried: Table | None,
    words: Vocabulary | None = None,
) -> tuple[OfflinePage, Table | None, Table | None]:
    """The page's Markdown, and its last table when nothing follows it on the page."""
    marker = page_marker(number)
    if not any(line.text for line in lines) and not has_images:
        blank = OfflinePage(number=number, markdown=marker, has_text_layer=True)
        return blank, None, None
    if not any(line.text for line in lines):
        note = f"<!-- Page {number}: no text layer (scanned page?); needs a vision model -->"
        warning = f"page {number} has no text layer; it needs a vision model to be converted"
        scanned = OfflinePage(
            number=number,
            markdown=f"{marker}\n\n{note}",
            has_text_layer=False,
            warnings=(warning,),
        )
        return scanned, None, None
    lines = [line for line in lines if line.text and not is_page_furniture(line, height)]
    blocks = Blocks(scale, words)
    body = blocks.markdown(lines, carried)
    page = OfflinePage(number=number, markdown=f"{marker}\n\n{body}".rstrip(), has_text_layer=True)
    return page, blocks.last_table, blocks.completed


_SENTENCE_END = re.compile(r"[.!?:;][*_)\]\"'”’]*$")


def _join_broken_paragraph(
    previous: OfflinePage, page: OfflinePage
) -> tuple[OfflinePage, OfflinePage]:
    """The two pages with a paragraph the page break cut mid-sentence whole on the first.

    The page's first block goes on the previous page's last one when that is a paragraph not
    ending a sentence and this one starts in lower case (a sentence going on); the words that
    moved are a line or two, cited at the page where their paragraph starts.
    """
    head, _, last = previous.markdown.rpartition("\n\n")
    marker, _, body = page.markdown.partition("\n\n")
    first, _, rest = body.partition("\n\n")
    if (
        not head
        or not first[:1].islower()
        or "\n" in first
        or last.startswith(("#", "|", "<!--", "- ", "\\"))
        or ORDERED.match(last)
        or _SENTENCE_END.search(last)
    ):
        return previous, page
    joined = previous.model_copy(update={"markdown": f"{previous.markdown} {first}"})
    left = f"{marker}\n\n{rest}" if rest else marker
    return joined, page.model_copy(update={"markdown": left})


@contained_task
def offline_here(data: bytes, max_pages: int = 5000, hyphenated: bool = True) -> dict[str, Any]:
    """The offline converter's pages of a PDF and the PDF's warnings, in this process (the
    worker's side of the offline converter; `hyphenated` as
    `offline_markdown` takes it)."""
    facts = facts_here(data, max_pages)
    pages = offline_markdown(data, max_pages=max_pages, hyphenated=hyphenated)
    return {"pages": [page.model_dump() for page in pages], "warnings": facts.warnings}
