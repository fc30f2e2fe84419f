"""OCR layout: recognised segments (page points) to rows, cells and Markdown; no engine runs."""

from __future__ import annotations

import pytest

from drac.documents.pdf.ocr import OcrSegment, group_rows, ocr_warnings, page_from_segments
from drac.parsing import PAGE_MARKER

LINE = 12.0


def seg(
    text: str,
    x: float,
    top: float,
    width: float | None = None,
    *,
    height: float = LINE,
    score: float = 0.98,
) -> OcrSegment:
    """A segment `width` points wide (about 5.5 points per character when not given)."""
    right = x + (width if width is not None else 5.5 * len(text))
    return OcrSegment(text=text, x0=x, top=top, x1=right, bottom=top + height, score=score)


def paragraph(top: float, lines: list[str]) -> list[OcrSegment]:
    return [seg(text, 72, top + i * LINE) for i, text in enumerate(lines)]


def test_touching_lines_of_one_size_become_one_paragraph_and_a_gap_starts_the_next():
    segments = [
        *paragraph(100, ["The boiler must be serviced", "once a year by an engineer."]),
        *paragraph(150, ["Keep the receipt."]),
    ]
    page = page_from_segments(3, segments)
    assert page.readable
    assert page.markdown == (
        "<!-- Page 3 -->\n\nThe boiler must be serviced once a year by an engineer.\n\n"
        "Keep the receipt."
    )


def test_table_rows_stay_rows_with_their_cells_in_columns():
    rows = [("Model", "Price", "Stock"), ("Velvera One", "499", "12"), ("Velvera Pad", "699", "0")]
    segments = [
        seg(cell, 72 + 150 * column, 200 + 18 * row)
        for row, cells in enumerate(rows)
        for column, cell in enumerate(cells)
    ]
    segments += paragraph(300, ["Prices include tax."])
    page = page_from_segments(1, segments)
    assert page.markdown.splitlines()[2:] == [
        "| Model | Price | Stock |",
        "|---|---|---|",
        "| Velvera One | 499 | 12 |",
        "| Velvera Pad | 699 | 0 |",
        "",
        "Prices include tax.",
    ]


def test_a_missing_cell_leaves_its_column_empty_instead_of_shifting_the_row():
    segments = [
        seg("Engine", 72, 100), seg("Price", 222, 100), seg("Seats", 372, 100),
        seg("V8", 72, 118), seg("320", 372, 118),
    ]  # fmt: skip
    lines = page_from_segments(1, segments).markdown.splitlines()
    assert lines[-1] == "| V8 |  | 320 |"


def test_words_of_one_line_read_as_separate_segments_are_joined_into_one_cell():
    segments = [seg("Total", 72, 100, 30), seg("seating", 106, 101, 40), seg("capacity", 150, 99)]
    [row] = group_rows(segments)
    assert [cell.text for cell in row.cells] == ["Total seating capacity"]


def test_bullets_become_list_items_and_a_large_line_a_heading():
    segments = [
        seg("Cabin Features", 72, 60, height=20),
        seg("• Lie-flat beds", 72, 100),
        seg("• Direct aisle access", 72, 114),
        *paragraph(150, ["Seats are assigned at check-in."]),
    ]
    page = page_from_segments(2, segments)
    assert page.markdown.split("\n\n")[1:] == [
        "# Cabin Features",
        "- Lie-flat beds\n- Direct aisle access",
        "Seats are assigned at check-in.",
    ]


def test_text_that_looks_like_a_page_marker_cannot_forge_one():
    segments = paragraph(100, ["<!-- Page 9 --> injected", "# not a heading either"])
    segments += paragraph(200, ["# starts like a heading"])
    page = page_from_segments(4, segments)
    assert [int(m.group(1)) for m in PAGE_MARKER.finditer(page.markdown)] == [4]
    assert "\n\\# starts like a heading" in page.markdown


def test_a_page_of_unsure_or_too_few_words_is_not_readable():
    noise = [seg("x#", 10 * i, 10 * i, score=0.55) for i in range(30)]
    assert not page_from_segments(5, noise).readable
    assert not page_from_segments(5, [seg("Hello", 72, 72)]).readable
    assert page_from_segments(5, noise).markdown == "<!-- Page 5 -->"
    dropped = [seg("ghost", 72, 72, score=0.3)] * 10
    assert page_from_segments(5, dropped).words == 0


def test_warnings_name_each_run_of_pages_read_by_ocr():
    assert ocr_warnings([2, 3, 4, 7]) == [
        "pages 2-4 are scans and were read by OCR: check their text",
        "page 7 is a scan and was read by OCR: check its text",
    ]
    assert ocr_warnings([]) == []


def test_cells_wrapped_onto_more_lines_stay_in_their_row():
    """Layouts measured on corpus tables: a wrapped label, a two-line header, a wrapped text
    cell continuing in lower case."""
    segments = [
        seg("Number of", 222, 100), seg("Max Weight", 372, 100),
        seg("Class", 72, 111), seg("Bags", 222, 111), seg("(per bag)", 372, 111),
        seg("CloudLux", 72, 124), seg("2", 222, 124), seg("10 kg each", 372, 124),
        seg("(First)", 72, 136),
        seg("Lounge", 72, 148), seg("Access to all lounges in", 222, 148), seg("Yes", 372, 148),
        seg("Access", 72, 160), seg("the network", 222, 160),
        seg("CloudSaver", 72, 172), seg("1", 222, 172), seg("7 kg", 372, 172),
    ]  # fmt: skip
    lines = page_from_segments(1, segments).markdown.splitlines()[2:]
    assert lines == [
        "| Class | Number of Bags | Max Weight (per bag) |",
        "|---|---|---|",
        "| CloudLux (First) | 2 | 10 kg each |",
        "| Lounge Access | Access to all lounges in the network | Yes |",
        "| CloudSaver | 1 | 7 kg |",
    ]


def test_rows_apart_by_a_gap_are_separate_rows_even_in_lower_case():
    segments = [
        seg("Item", 72, 100), seg("Note", 222, 100),
        seg("Matches", 72, 120), seg("one small box per person", 222, 120),
        seg("Lighters", 72, 140), seg("one per person", 222, 140),
    ]  # fmt: skip
    lines = page_from_segments(1, segments).markdown.splitlines()[2:]
    assert lines[2:] == ["| Matches | one small box per person |", "| Lighters | one per person |"]


@pytest.mark.subprocess
def test_an_engine_failure_leaves_that_page_unread_and_the_document_partial(monkeypatch):
    pytest.importorskip("numpy")  # comes with the ocr extra; the wrapper hands it the image

    from drac.documents.convert import ConversionOptions, convert_to_markdown
    from drac.documents.offline import converter as offline_converter
    from drac.documents.pdf import ocr
    from drac.ports import MemoryLedger
    from tests.pdfs import Text, make_pdf, text_page

    class Broken:
        def __call__(self, image: object) -> object:
            raise RuntimeError("onnxruntime exploded")

    engine = ocr._RapidOcr.__new__(ocr._RapidOcr)
    engine._engine, engine._lock = Broken(), __import__("threading").Lock()
    monkeypatch.setattr(ocr, "_engine", lambda: engine)
    monkeypatch.setattr(offline_converter, "ocr_available", lambda: True)
    pdf = make_pdf([text_page([Text("Kept text layer", 72, 700)]), (612, 792)], scanned=[1])
    result = convert_to_markdown(
        pdf, "mixed.pdf", options=ConversionOptions(), vision=None,
        ledger=MemoryLedger(), document_id="doc",
    )  # fmt: skip
    assert result.status == "partial"
    assert "Kept text layer" in result.markdown
    assert result.warnings == ["page 2 has no text layer; it needs a vision model to be converted"]
