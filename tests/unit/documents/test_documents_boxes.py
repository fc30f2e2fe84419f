"""Boxes on elements: checked against pdfium's own character boxes on PDFs made here, where
the true positions of the text are known."""

from __future__ import annotations

import ctypes
import json

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from pdfs import Text, make_pdf, text_page

from drac.assemble import assemble_chunks
from drac.aws.dynamo import DynamoElementTable
from drac.documents.pdf.boxes import align_elements, markdown_words, place_elements
from drac.documents.pdf.layers import PageLayer, ocr_layer, read_text_layers
from drac.documents.pdf.ocr import OcrSegment, page_from_segments
from drac.models import DocumentRecord, Element, ParseConfig, PlanVersion, SectionPlan, Strategy
from drac.parsing import parse_markdown
from drac.provenance import MAX_BOXES_PER_PAGE, BoxStatus, capped

HEIGHT = 792.0
LINES = [
    Text("Warranty terms", 72, 700, 18),
    Text("The warranty lasts two years from the", 72, 650),
    Text("date of purchase and covers all parts.", 72, 636),
]


def parsed(markdown: str) -> list[Element]:
    return parse_markdown(markdown, ParseConfig())


def pdfium_line_boxes(pdf: bytes, page_index: int = 0) -> list[tuple[float, ...]]:
    """Ground truth: the union of pdfium's character boxes per text line, top-left origin."""
    document = pdfium.PdfDocument(pdf)
    page = document[page_index]
    height = page.get_height()
    textpage = page.get_textpage()
    lines: list[list[float]] = [[]]
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    boxes: list[tuple[float, ...]] = []
    current: list[float] | None = None
    for index in range(textpage.count_chars()):
        char = chr(pdfium_c.FPDFText_GetUnicode(textpage, index))
        if char in "\r\n":
            if current:
                boxes.append(tuple(current))
            current = None
            continue
        if char.isspace():
            continue
        pdfium_c.FPDFText_GetCharBox(textpage, index, left, right, bottom, top)
        box = [left.value, height - top.value, right.value, height - bottom.value]
        current = box if current is None else [
            min(current[0], box[0]), min(current[1], box[1]),
            max(current[2], box[2]), max(current[3], box[3]),
        ]  # fmt: skip
    if current:
        boxes.append(tuple(current))
    textpage.close()
    page.close()
    document.close()
    del lines
    return boxes


def test_boxes_are_pdfiums_character_boxes_per_line() -> None:
    pdf = make_pdf([text_page(LINES)])
    truth = pdfium_line_boxes(pdf)
    elements = parsed(
        "<!-- Page 1 -->\n\n# Warranty terms\n\n"
        "The **warranty** lasts two years from the date of purchase and covers all parts.\n"
    )
    heading, paragraph = place_elements(elements, pdf)
    assert heading.boxes is not None and paragraph.boxes is not None
    assert heading.boxes.status is BoxStatus.ALIGNED and heading.boxes.coverage == 1.0
    assert paragraph.boxes.status is BoxStatus.ALIGNED and paragraph.boxes.source == "text_layer"
    assert [entry.page for entry in paragraph.boxes.pages] == [1]
    found = [*heading.boxes.pages[0].boxes, *paragraph.boxes.pages[0].boxes]
    assert len(found) == len(truth) == 3
    for mine, theirs in zip(found, truth, strict=True):
        assert mine == pytest.approx(theirs, abs=0.1)
    # and where the text was put: the line's x and its baseline inside the box
    for box, line in zip(found, LINES, strict=True):
        assert box[0] == pytest.approx(line.x, abs=1.0)
        assert box[1] < HEIGHT - line.y < box[3]


def test_an_element_not_on_the_page_is_not_aligned_and_has_no_box() -> None:
    pdf = make_pdf([text_page(LINES)])
    elements = parsed("<!-- Page 1 -->\n\nA refund is paid within fourteen days of the claim.\n")
    (element,) = place_elements(elements, pdf)
    assert element.boxes is not None
    assert element.boxes.status is BoxStatus.NOT_ALIGNED
    assert element.boxes.pages == () and element.boxes.coverage == 0.0
    assert "page 1" in (element.boxes.reason or "")


def test_a_scanned_page_says_it_has_no_text_layer() -> None:
    pdf = make_pdf([(612, 792)], scanned=[0])
    (element,) = place_elements(parsed("<!-- Page 1 -->\n\nWords a model read.\n"), pdf)
    assert element.boxes is not None and element.boxes.status is BoxStatus.NOT_ALIGNED
    assert element.boxes.reason == "the page has no text layer on page 1"


def test_markdown_syntax_pipes_and_hyphenation_do_not_count() -> None:
    pdf = make_pdf([text_page([
        Text("Plan", 72, 700), Text("Price", 300, 700),
        Text("Basic", 72, 680), Text("12.50", 300, 680),
        Text("The replace-", 72, 640), Text("ment is free.", 72, 626),
    ])])  # fmt: skip
    markdown = (
        "<!-- Page 1 -->\n\n| Plan | Price |\n| --- | --- |\n| Basic | 12.50 |\n\n"
        "The [replacement](https://example.com/x) is *free*.\n"
    )
    row, sentence = [e for e in place_elements(parsed(markdown), pdf)]
    assert markdown_words(row.text) == ["basic", "12", "50"]
    assert row.boxes is not None and row.boxes.status is BoxStatus.ALIGNED
    (box,) = row.boxes.pages[0].boxes
    assert box[0] == pytest.approx(72, abs=1) and box[2] > 300  # both cells of the row
    (header,) = row.boxes.header  # the header a chunk writes before the row: its line
    assert header.page == 1 and len(header.boxes) == 1
    assert header.boxes[0][1] < HEIGHT - 700 < header.boxes[0][3] < box[1]
    assert sentence.boxes is not None and sentence.boxes.status is BoxStatus.ALIGNED
    assert len(sentence.boxes.pages[0].boxes) == 2  # the two lines of the hyphenated word


def test_a_models_changed_words_are_tolerated_and_counted() -> None:
    pdf = make_pdf([text_page(LINES)])
    element = parsed(
        "<!-- Page 1 -->\n\nThe warranty lasts 2 years from the date of purchase and covers "
        "every part.\n"
    )
    (placed,) = place_elements(element, pdf)
    assert placed.boxes is not None
    assert placed.boxes.status is BoxStatus.PARTIAL
    assert 0.5 <= placed.boxes.coverage < 0.9
    assert len(placed.boxes.pages[0].boxes) == 2


def test_a_paragraph_run_across_the_page_break_gets_boxes_on_both_pages() -> None:
    pdf = make_pdf([
        text_page([Text("Claims are made in writing to the", 72, 100)]),
        text_page([Text("service desk within thirty days.", 72, 740)]),
    ])  # fmt: skip
    (element,) = place_elements(
        parsed(
            "<!-- Page 1 -->\n\nClaims are made in writing to the service desk within thirty "
            "days.\n\n<!-- Page 2 -->\n"
        ),
        pdf,
    )
    assert element.boxes is not None and element.boxes.status is BoxStatus.ALIGNED
    assert [entry.page for entry in element.boxes.pages] == [1, 2]


def test_repeated_text_is_placed_in_reading_order() -> None:
    pdf = make_pdf([text_page([Text("Total", 72, 700), Text("Total", 72, 500)])])
    first, second = place_elements(parsed("<!-- Page 1 -->\n\nTotal\n\n---\n\nTotal\n"), pdf)
    assert first.boxes and second.boxes
    assert first.boxes.pages[0].boxes[0][1] < second.boxes.pages[0].boxes[0][1]


def test_ocr_words_place_an_ocr_page() -> None:
    segments = [
        OcrSegment(text="Invoice number 4711", x0=50, top=60, x1=250, bottom=75, score=0.95),
        OcrSegment(text="Amount due 120.00 EUR", x0=50, top=90, x1=260, bottom=105, score=0.95),
    ]
    page = page_from_segments(1, segments)
    layer = ocr_layer(page)
    assert layer.source == "ocr" and layer.words[0][0] == "Invoice"
    (element,) = align_elements(parsed("<!-- Page 1 -->\n\nAmount due 120.00 EUR\n"), {1: layer})
    assert element.boxes is not None and element.boxes.source == "ocr"
    (box,) = element.boxes.pages[0].boxes
    assert box == pytest.approx((50, 90, 260, 105), abs=0.5)


def test_layers_are_read_in_the_contained_worker_page_by_page() -> None:
    pdf = make_pdf([text_page(LINES), text_page([Text("Second", 72, 700)])])
    layers = list(read_text_layers(pdf, pages=[2]))
    assert [layer.number for layer in layers] == [2]
    assert layers[0].words[0][0] == "Second" and layers[0].width_pt == 612


def test_chunks_carry_the_union_per_page_and_keep_their_text_verbatim() -> None:
    pdf = make_pdf([text_page(LINES), text_page([Text("Second page text", 72, 700)])])
    markdown = (
        "<!-- Page 1 -->\n\n# Warranty terms\n\nThe warranty lasts two years from the date of "
        "purchase and covers all parts.\n\nNot on any page at all.\n\n<!-- Page 2 -->\n\n"
        "Second page text\n"
    )
    plain = parsed(markdown)
    placed = place_elements(plain, pdf)
    record = DocumentRecord(document_id="d1", source="w.pdf", sha256="0" * 64)
    content = tuple(e.id for e in plain if not e.is_heading)
    plan = PlanVersion(
        document_id="d1", version=1, strategy=Strategy(), created_at="",
        sections=(SectionPlan(section_id="s1", chunks=(content,), planner="rules"),),
    )  # fmt: skip
    (without,) = assemble_chunks(record, plain, plan)
    (chunk,) = assemble_chunks(record, placed, plan)
    assert chunk.text == without.text and chunk.chunk_id == without.chunk_id
    assert without.boxes == () and without.unaligned == ()
    assert [entry.page for entry in chunk.boxes] == [1, 2]
    # the paragraph's two lines; the heading is the breadcrumb (context), not the body
    assert chunk.boxes[0].boxes == placed[1].boxes.pages[0].boxes  # type: ignore[union-attr]
    assert chunk.unaligned == ("p2",)
    for box in chunk.boxes[0].boxes:
        assert f"{box[0]}" not in chunk.text
    assert "boxes" in json.loads(chunk.model_dump_json())


def test_an_element_without_pages_is_stored_as_before() -> None:
    (element,) = parsed("Plain text.\n")
    assert "boxes" not in element.model_dump_json()
    assert Element.model_validate_json(element.model_dump_json()) == element


def test_boxes_are_capped_and_an_element_item_fits_dynamodb() -> None:
    many = [(float(i), float(i), float(i + 1), float(i + 1)) for i in range(1000)]
    kept = capped(many)
    assert len(kept) <= MAX_BOXES_PER_PAGE
    assert kept[0][0] == 0.0 and kept[-1][2] == 1000.0
    # the worst element: one word a line, a line a word, as long as the parser allows
    words = [f"w{i}" for i in range(1200)]
    layer = PageLayer(
        number=1, words=tuple((w, 10.5, 11.5 + i, 100.5, 12.5 + i, i) for i, w in enumerate(words))
    )
    element = Element(id="p1", kind="paragraph", text=" ".join(words), page=1)
    (placed,) = align_elements([element], {1: layer})
    assert placed.boxes is not None and len(placed.boxes.pages[0].boxes) <= MAX_BOXES_PER_PAGE

    class Table:
        def __init__(self) -> None:
            self.items: list[dict[str, object]] = []

        def query(self, **_: object) -> dict[str, object]:
            return {"Items": []}

        def batch_writer(self) -> Table:
            return self

        def __enter__(self) -> Table:
            return self

        def __exit__(self, *_: object) -> None:
            pass

        def put_item(self, Item: dict[str, object]) -> None:
            self.items.append(Item)

    table = Table()
    DynamoElementTable(table).put_elements("d1", [placed])
    size = len(json.dumps(table.items[0]).encode())
    assert size < 400 * 1024 / 4  # DynamoDB's item limit is 400 KB; far below it


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_boxes_hold_the_rendered_ink_on_a_rotated_page(rotation: int) -> None:
    """On the page as pdfium renders it (its /Rotate applied, 1 pixel a point), every dark
    pixel is inside the element's boxes (grown by a point), and each box holds ink."""
    pdf = make_pdf([text_page(LINES)])
    document = pdfium.PdfDocument(pdf)
    document[0].set_rotation(rotation)
    out = __import__("io").BytesIO()
    document.save(out)
    rotated = out.getvalue()
    image = pdfium.PdfDocument(rotated)[0].render(scale=1, grayscale=True).to_pil()
    elements = parsed(
        "<!-- Page 1 -->\n\n# Warranty terms\n\n"
        "The warranty lasts two years from the date of purchase and covers all parts.\n"
    )
    boxes = [box for e in place_elements(elements, rotated) if e.boxes
             for entry in e.boxes.pages for box in entry.boxes]  # fmt: skip
    assert len(boxes) == 3
    width, height = image.size
    assert (width, height) == ((612, 792) if rotation in (0, 180) else (792, 612))
    pixels = image.load()
    for x in range(width):
        for y in range(height):
            if pixels[x, y] < 128:
                assert any(b[0] - 1 <= x + 0.5 <= b[2] + 1 and b[1] - 1 <= y + 0.5 <= b[3] + 1
                           for b in boxes), (x, y)  # fmt: skip
    for x0, top, x1, bottom in boxes:
        inside = [
            pixels[x, y] for x in range(int(x0), int(x1)) for y in range(int(top), int(bottom))
        ]
        assert min(inside) < 128


def test_words_cut_across_lines_match_and_a_word_is_never_matched_inside_another() -> None:
    pdf = make_pdf([text_page([
        Text("Subtotal 40", 72, 700),
        Text("VL-", 72, 660), Text("001 Store, Mon-", 72, 646), Text("Sun", 72, 632),
        Text("Total 40", 72, 600),
    ])])  # fmt: skip
    store, total = place_elements(
        parsed("<!-- Page 1 -->\n\nVL-001 Store, Mon-Sun\n\n---\n\nTotal 40\n"), pdf
    )
    assert store.boxes is not None and store.boxes.status is BoxStatus.ALIGNED
    assert len(store.boxes.pages[0].boxes) == 3
    assert total.boxes is not None and total.boxes.status is BoxStatus.ALIGNED
    (box,) = total.boxes.pages[0].boxes
    assert box[1] == pytest.approx(HEIGHT - 600 - 7.5, abs=1.5)  # the line "Total 40"
