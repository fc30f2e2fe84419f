"""Scans read offline by the real OCR engine: images and image-only pages made at test time.

A scan is made the way a scanner would: a page with a text layer (tests.pdfs) is rendered
by drac's renderer to a PNG, which is then given directly or wrapped as an image-only PDF.
The page's own text layer is the ground truth. Recall thresholds are below what the engine
measured on corpus pages (BENCHMARKS.md, OCR: 0.99 clean), so they catch a broken engine or
layout, not noise.
"""

from __future__ import annotations

import io
import random
import re
import socket
from collections import Counter

import pypdfium2 as pdfium
import pytest
from PIL import Image

from drac.documents.convert import ConversionOptions, ConversionResult, convert_to_markdown
from drac.documents.intake.normalise import image_to_pdf
from drac.documents.offline.pages import offline_markdown
from drac.documents.pdf.ocr import ocr_available, ocr_page
from drac.documents.pdf.render import RenderOptions, render_pages
from drac.ports import MemoryLedger
from tests.pdfs import Text, make_pdf, text_page

PROSE = [
    "Warranty and Service Terms",
    "Every Velvera device is covered for two years from the date of purchase.",
    "Repairs are free of charge when the fault is not caused by the customer.",
    "Bring the receipt and the device to an authorised service centre.",
    "Service centre code VLVR0001234 handles claims for the north region.",
]
TABLE = [("Model", "Price", "Warranty"), ("Velvera One", "499", "2 years"),
         ("Velvera Pad", "699", "3 years"), ("Velvera Buds", "129", "1 year")]  # fmt: skip
_WORD = re.compile(r"[a-z0-9]+")
RECALL = 0.95


def words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


def recall(truth: str, got: str) -> float:
    want = words(truth)
    return sum((want & words(got)).values()) / sum(want.values())


def source_page() -> bytes:
    """A one-page PDF with a text layer: a title, prose and a 3-column table."""
    lines = [Text(PROSE[0], 72, 720, size=16)]
    lines += [Text(text, 72, 690 - 16 * i, size=11) for i, text in enumerate(PROSE[1:])]
    for row, cells in enumerate(TABLE):
        lines += [Text(cell, 72 + 150 * col, 580 - 18 * row, size=11)
                  for col, cell in enumerate(cells)]  # fmt: skip
    return make_pdf([text_page(lines)])


def truth_text() -> str:
    return " ".join([*PROSE, *(" ".join(row) for row in TABLE)])


def scan_png(pdf: bytes, number: int = 1) -> bytes:
    """The page as a 200 DPI gray scan."""
    image = next(render_pages(pdf, RenderOptions(dpi=200, max_side_px=4000), pages=[number]))
    return image.png


def noise_png(seed: int = 7) -> bytes:
    """A page of random speckle: an image with no text in it."""
    rng = random.Random(seed)
    image = Image.new("L", (1700, 2200), 255)
    pixels = image.load()
    assert pixels is not None
    for _ in range(60_000):
        pixels[rng.randrange(1700), rng.randrange(2200)] = rng.randrange(256)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def joined(*pdfs: bytes) -> bytes:
    """One PDF with the pages of each, in order."""
    document = pdfium.PdfDocument.new()
    for data in pdfs:
        part = pdfium.PdfDocument(data)
        document.import_pages(part)
        part.close()
    buffer = io.BytesIO()
    document.save(buffer)
    document.close()
    return buffer.getvalue()


def convert(data: bytes, name: str) -> ConversionResult:
    return convert_to_markdown(
        data, name, options=ConversionOptions(), vision=None,
        ledger=MemoryLedger(), document_id="doc",
    )  # fmt: skip


@pytest.fixture(scope="module")
def scan() -> bytes:
    assert ocr_available(), "the OCR engine is installed by scripts/setup.sh (drac[ocr])"
    return scan_png(source_page())


def test_an_image_given_directly_is_read_with_its_table_rows_kept(scan: bytes):
    result = convert(scan, "scan.png")
    assert result.status == "ok"
    assert result.warnings == ["page 1 is a scan and was read by OCR: check its text"]
    assert result.markdown.startswith("<!-- Page 1 -->\n\n")
    assert recall(truth_text(), result.markdown) >= RECALL
    assert "VLVR0001234" in result.markdown
    assert "| Velvera Pad | 699 | 3 years |" in result.markdown


def test_a_jpeg_scan_in_an_image_only_pdf_is_read(scan: bytes):
    buffer = io.BytesIO()
    Image.open(io.BytesIO(scan)).save(buffer, format="JPEG", quality=70)
    result = convert(image_to_pdf(buffer.getvalue()), "scan.pdf")
    assert result.status == "ok" and "read by OCR" in result.warnings[0]
    assert recall(truth_text(), result.markdown) >= RECALL


def test_a_document_mixing_text_pages_and_a_scan_reads_only_the_scan(scan: bytes):
    text = make_pdf([text_page([Text("Boilers are serviced yearly.", 72, 700)])])
    mixed = joined(text, image_to_pdf(scan))
    result = convert(mixed, "mixed.pdf")
    first, second = result.markdown.split("<!-- Page 2 -->")
    assert first.strip() == offline_markdown(text)[0].markdown  # the text layer, untouched
    assert recall(truth_text(), second) >= RECALL
    assert result.status == "ok"
    assert result.warnings == ["page 2 is a scan and was read by OCR: check its text"]


def test_a_page_with_a_text_layer_and_a_scanned_picture_is_never_ocrd(scan: bytes):
    page = make_pdf([text_page([Text("Signed form attached below.", 72, 740)])])
    document = pdfium.PdfDocument(page)
    picture = pdfium.PdfImage.new(document)
    picture.set_bitmap(pdfium.PdfBitmap.from_pil(Image.open(io.BytesIO(scan))))
    picture.set_matrix(pdfium.PdfMatrix().scale(500, 600).translate(50, 50))
    document[0].insert_obj(picture)
    document[0].gen_content()
    buffer = io.BytesIO()
    document.save(buffer)
    result = convert(buffer.getvalue(), "form.pdf")
    assert result.markdown == "<!-- Page 1 -->\n\nSigned form attached below.\n"
    assert result.warnings == [] and result.status == "ok"


def test_an_unreadable_scan_is_partial_for_that_page_only(scan: bytes):
    document = joined(image_to_pdf(scan), image_to_pdf(noise_png()))
    result = convert(document, "two scans.pdf")
    assert result.status == "partial"
    assert result.warnings == [
        "page 2 has no text layer; it needs a vision model to be converted",
        "page 1 is a scan and was read by OCR: check its text",
    ]
    first, second = result.markdown.split("<!-- Page 2 -->")
    assert recall(truth_text(), first) >= RECALL
    assert "needs a vision model" in second and not _WORD.findall(second.split("-->")[-1])


def test_ocr_opens_no_network_connection(scan: bytes, monkeypatch: pytest.MonkeyPatch):
    """The models ship in the wheel: reading must work with every connection refused."""
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("network is not allowed")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    from drac.documents.pdf import ocr

    ocr._engine.cache_clear()  # load the models again, under the guard
    page = ocr_page(scan, 1, 612, 792)
    assert page.readable and recall(truth_text(), page.markdown) >= RECALL
    assert attempts == []
