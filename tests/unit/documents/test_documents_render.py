import inspect
import io
import math
from pathlib import Path

import pytest
from pdfs import make_pdf
from PIL import Image

from drac.documents.pdf import render as render_module
from drac.documents.pdf.render import (
    RenderOptions,
    batched,
    page_batches,
    page_count,
    render_pages,
    render_scale,
)
from drac.errors import DocumentError

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("size_pt", "expected_px"),
    [
        ((612, 792), (1212, 1568)),  # US Letter portrait: 200 DPI would be 1700 x 2200
        ((792, 612), (1568, 1212)),  # landscape
        ((595.28, 841.89), (1109, 1568)),  # A4
        ((297.64, 419.53), (827, 1166)),  # A6: under the cap, 200 DPI
        ((72, 7200), (16, 1568)),  # a 1 x 100 inch strip
        ((400, 400), (1112, 1112)),  # square, under the cap (1111.1 rounds up)
    ],
)
def test_pages_render_at_200_dpi_capped_at_1568_px(size_pt, expected_px):
    pdf = make_pdf([size_pt])
    [page] = list(render_pages(pdf))
    assert (page.width_px, page.height_px) == expected_px
    image = Image.open(io.BytesIO(page.png))
    assert image.size == expected_px
    assert max(image.size) <= 1568
    assert image.format == "PNG" and image.mode == "L"


def test_render_scale_is_the_dpi_when_under_the_cap_and_the_cap_otherwise():
    assert render_scale(100, 100) == pytest.approx(200 / 72)
    letter = render_scale(612, 792)
    assert 1567.99 < 792 * letter <= 1568
    for width, height in [(612, 792), (123.4, 5678.9), (1000.3, 999.9), (2000, 3), (1e-3, 1e5)]:
        assert math.ceil(max(width, height) * render_scale(width, height)) <= 1568


def test_dpi_and_max_side_are_configurable():
    pdf = make_pdf([(612, 792)])
    [page] = list(render_pages(pdf, RenderOptions(dpi=72, max_side_px=5000)))
    assert (page.width_px, page.height_px) == (612, 792)
    [page] = list(render_pages(pdf, RenderOptions(max_side_px=800)))
    assert page.height_px == 800


def test_rgb_rendering_is_available():
    [page] = list(render_pages(make_pdf([(100, 100)]), RenderOptions(grayscale=False)))
    assert Image.open(io.BytesIO(page.png)).mode == "RGB"


def test_an_absurd_page_size_is_rejected():
    pdf = make_pdf([(612, 792), (200 * 72, 200 * 72)])
    pages = render_pages(pdf)
    assert next(pages).number == 1
    with pytest.raises(DocumentError, match="page 2 is 200 x 200 inches"):
        next(pages)


def test_pages_stream_one_at_a_time(monkeypatch):
    """The worker's side renders lazily; `render_pages` only relays it through a pipe that
    holds at most a page or so (test_containment shows the worker waits for its reader)."""
    rendered: list[int] = []
    original = render_module._render_one

    def counting(document, number, options):
        rendered.append(number)
        return original(document, number, options)

    monkeypatch.setattr(render_module, "_render_one", counting)
    pages = render_module.render_here(make_pdf([(300, 300)] * 40))
    assert inspect.isgenerator(pages)
    assert rendered == []
    first = next(pages)
    assert first.number == 1 and rendered == [1]
    batch = next(batched(pages, 5))
    assert [page.number for page in batch] == [2, 3, 4, 5, 6]
    assert rendered == [1, 2, 3, 4, 5, 6]
    pages.close()


def test_selected_pages_render_in_the_given_order():
    pdf = make_pdf([(100, 100), (200, 100), (300, 100)])
    assert [page.width_pt for page in render_pages(pdf, pages=[3, 1])] == [300, 100]
    with pytest.raises(DocumentError, match="page 4 does not exist"):
        list(render_pages(pdf, pages=[4]))


def test_batching():
    assert page_batches(12, 5) == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12]]
    assert page_batches(5, 5) == [[1, 2, 3, 4, 5]]
    assert page_batches(3, 1) == [[1], [2], [3]]
    with pytest.raises(ValueError):
        list(batched([1], 0))


def test_a_corrupt_pdf_is_a_document_error():
    with pytest.raises(DocumentError, match="corrupt or unreadable PDF"):
        page_count(b"%PDF-1.7\nthis is not a pdf at all")
    truncated = make_pdf([(100, 100)])[:120]
    with pytest.raises(DocumentError):
        list(render_pages(truncated))


def test_an_encrypted_pdf_is_a_document_error_naming_the_password():
    data = (DATA / "encrypted.pdf").read_bytes()
    with pytest.raises(DocumentError, match="password-protected"):
        list(render_pages(data))


def test_a_zero_page_pdf_is_a_document_error():
    with pytest.raises(DocumentError, match="no pages"):
        page_count(make_pdf([]))


def test_the_page_limit_is_enforced():
    with pytest.raises(DocumentError, match="more than the 2 page limit"):
        list(render_pages(make_pdf([(100, 100)] * 3), RenderOptions(max_pages=2)))


def test_text_layer_length_is_reported_per_page():
    from pdfs import Text

    pdf = make_pdf([(300, 300, [Text("Hello world", 10, 100)]), (300, 300)])
    assert [page.text_chars for page in render_pages(pdf)] == [11, 0]
