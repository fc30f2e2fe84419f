"""Small files that cost a lot of work: each is bounded page by page, only a document's total
CPU budget stops them (RELIABILITY.md, "A document's CPU budget")."""

from __future__ import annotations

import io
import random

from hostile_office import docx_with_body
from hostile_pdf import flate_stream, pdf_document
from PIL import Image

_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def tiny_image_pages_pdf(pages: int = 400, seed: int = 3) -> bytes:
    """`pages` letter-size pages, each drawing its own 4 x 4 gray image over the whole page
    and no text (about 140 KB at 400): every page is a scan that OCR reads at 200 DPI."""
    rng = random.Random(seed)
    first_page = 4
    kids = " ".join(f"{first_page + 2 * index} 0 R" for index in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        flate_stream(b"q 612 0 0 792 0 0 cm /I Do Q"),
    ]
    for index in range(pages):
        number = first_page + 2 * index
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject "
            b"<< /I %d 0 R >> >> /Contents 3 0 R >>" % (number + 1)
        )
        objects.append(
            flate_stream(
                rng.randbytes(16),
                b"/Subtype /Image /Width 4 /Height 4 /ColorSpace /DeviceGray /BitsPerComponent 8 ",
            )
        )
    return pdf_document(objects)


def many_frames_tiff(frames: int = 3000, side: int = 16, seed: int = 5) -> bytes:
    """A multi-page TIFF of `frames` small gray frames of noise (about 1.3 MB at 3,000): each
    frame becomes a scanned page."""
    rng = random.Random(seed)
    images = [Image.frombytes("L", (side, side), rng.randbytes(side * side)) for _ in range(frames)]
    out = io.BytesIO()
    images[0].save(out, format="TIFF", save_all=True, append_images=images[1:], dpi=(200, 200))
    return out.getvalue()


def nested_tables_docx(depth: int = 3000) -> bytes:
    """A DOCX whose body is one table nested `depth` deep (about 10 KB at 3,000)."""
    opening = "<w:tbl><w:tr><w:tc>" * depth
    closing = "<w:p><w:r><w:t>deep</w:t></w:r></w:p></w:tc></w:tr></w:tbl>" + (
        "<w:p/></w:tc></w:tr></w:tbl>" * (depth - 1)
    )
    xml = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f"<w:document {_W}><w:body>{opening}{closing}<w:p/></w:body></w:document>"
    )
    return docx_with_body(xml.encode())
