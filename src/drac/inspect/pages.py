"""Pages of a stored document: the PDF its images come from, the images themselves, each page's
Markdown, and the conversion notes (warnings, error markers) that belong to a page."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from drac.documents.pdf.render import RenderOptions, render_pages
from drac.documents.vision.check import page_texts
from drac.inspect.model import NoteKind, PageNote
from drac.local.workspace import Workspace
from drac.models import DocumentRecord

REPORT_RENDER = RenderOptions(dpi=100, max_side_px=1000, png_compress_level=6)
"""Page images for a report: readable on screen, light on disk."""

_NOTE_MARKER = re.compile(r"<!--\s*Page\s+(\d+)\s*:\s*(.*?)\s*-->", re.IGNORECASE | re.DOTALL)
_PAGE_PREFIX = re.compile(r"^pages?\s+(\d+)(?:\s*-\s*(\d+))?\b[:,]?\s*", re.IGNORECASE)


def stored_pdf(ws: Workspace, record: DocumentRecord) -> tuple[bytes | None, str]:
    """The PDF the document's pages were rendered from, and where it came from: `source` (a PDF
    source), `normalised` (the PDF an office/HTML/image source was turned into), `text` (Markdown
    and text have no pages) or `missing` (ingested before normalised PDFs were kept)."""
    if record.format in ("markdown", "text"):
        return None, "text"
    origin = "source" if record.format == "pdf" else "normalised"
    name = f"source/{record.source}" if origin == "source" else "normalised.pdf"
    try:
        return ws.artifacts.get_bytes(ws.document_key(record.document_id, name)), origin
    except KeyError:
        return None, "missing"


def write_page_images(
    pdf: bytes, folder: Path, sizes: dict[int, tuple[float, float]] | None = None
) -> Iterator[tuple[int, str]]:
    """Render every page into `folder` as `page-0001.png`, ...; yield (page, file name), and
    note each page's size in points in `sizes` (where its boxes are drawn)."""
    folder.mkdir(parents=True, exist_ok=True)
    for page in render_pages(pdf, REPORT_RENDER):
        name = f"page-{page.number:04d}.png"
        (folder / name).write_bytes(page.png)
        if sizes is not None:
            sizes[page.number] = (page.width_pt, page.height_pt)
        yield page.number, name


def markdown_by_page(markdown: str) -> dict[int, str]:
    """Each page's Markdown (all of it on page 1 when it has no page markers)."""
    pages = page_texts(markdown)
    return pages or {1: markdown}


def marker_notes(markdown: str) -> list[tuple[int, PageNote]]:
    """Notes written into the Markdown as `<!-- Page N: ... -->`, on their page."""
    notes = []
    for match in _NOTE_MARKER.finditer(markdown):
        text = " ".join(match.group(2).split())
        failed = "conversion failed" in text.lower()
        kind = NoteKind.ERROR if failed else NoteKind.PARTIAL
        notes.append((int(match.group(1)), PageNote(kind=kind, text=text)))
    return notes


def warning_notes(
    warnings: Sequence[str], pages: int
) -> tuple[list[tuple[int, PageNote]], list[PageNote]]:
    """Record warnings that name their pages (`page 3 ...`, `pages 1-5: ...`) on those pages;
    the others for the whole document. Failures repeat the Markdown's error markers and are
    left to them."""
    on_pages: list[tuple[int, PageNote]] = []
    general: list[PageNote] = []
    for warning in warnings:
        match = _PAGE_PREFIX.match(warning)
        first = int(match.group(1)) if match else 0
        last = int(match.group(2) or first) if match else 0
        if match and 1 <= first <= last <= max(pages, 1):
            if "conversion failed" in warning.lower():
                continue
            kind = NoteKind.PARTIAL if "no text layer" in warning else NoteKind.WARNING
            note = PageNote(kind=kind, text=warning)
            on_pages.extend((number, note) for number in range(first, last + 1))
        else:
            general.append(PageNote(kind=NoteKind.WARNING, text=warning))
    return on_pages, general
