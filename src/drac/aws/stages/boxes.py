"""Boxes in the cloud: Render stores each page's text-layer words next to its image, Parse
aligns the elements to them (`drac.documents.pdf.boxes`, the same code as the local runtime)."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from drac.aws.keys import PAGES
from drac.aws.runtime import Runtime
from drac.documents.pdf.boxes import align_elements
from drac.documents.pdf.layers import PageLayer, read_text_layers
from drac.documents.pdf.render import PdfSource
from drac.models import ParsedDocument

READERS = 16
"""Page layers read at once (S3 GETs are latency-bound)."""


def page_layer_key(document_id: str, page: int) -> str:
    """One page's text-layer words with their boxes, JSON (expired with the page images)."""
    return f"{PAGES}/{document_id}/{page:05d}.words.json"


def store_page_layers(
    rt: Runtime, document_id: str, pdf: PdfSource, pages: Iterable[int] | None = None
) -> int:
    """Read the words and boxes of the given pages (1-based, default all: a render slice
    passes its own) in the contained pdfium worker and store them; return the number of
    pages stored."""
    stored = 0
    for layer in read_text_layers(pdf, rt.settings.conversion.max_pages, pages):
        rt.artifacts.put_text(page_layer_key(document_id, layer.number), layer.model_dump_json())
        stored += 1
    return stored


def place_on_pages(rt: Runtime, document_id: str, parsed: ParsedDocument) -> ParsedDocument:
    """The parsed document with its elements aligned to the stored page layers; unchanged
    when none is stored (a document without pages)."""
    wanted = sorted({n for element in parsed.elements for n in (element.page, element.page + 1)})

    def read(page: int) -> PageLayer | None:
        try:
            return PageLayer.model_validate_json(
                rt.artifacts.get_text(page_layer_key(document_id, page))
            )
        except KeyError:
            return None

    with ThreadPoolExecutor(max_workers=READERS) as pool:
        layers = {layer.number: layer for layer in pool.map(read, wanted) if layer is not None}
    if not layers:
        return parsed
    elements = align_elements(parsed.elements, layers)
    return parsed.model_copy(update={"elements": tuple(elements)})
