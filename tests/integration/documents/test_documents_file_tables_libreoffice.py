"""The file's own tables through the whole offline path, with the real LibreOffice: each comes
back as exactly its Markdown table, on the page of the PDF where LibreOffice put it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.ports import MemoryLedger
from tests.decks import Slide

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "documents"))
from file_table_fixtures import (
    docx_paragraph,
    docx_table,
    html_table,
    make_docx,
    make_html,
    make_pptx_with_tables,
)

pytestmark = pytest.mark.libreoffice

GRID = [["Model", "Range", "Price"], ["A350", "15,000 km", "$317M"], ["A380", "14,800 km", "$445M"]]
EXPECTED = (
    "| Model | Range | Price |\n| --- | --- | --- |\n"
    "| A350 | 15,000 km | $317M |\n| A380 | 14,800 km | $445M |"
)


def _pages(data: bytes, name: str) -> dict[int, str]:
    markdown = convert_to_markdown(
        data, name, options=ConversionOptions(), vision=None, ledger=MemoryLedger(),
        document_id="d1",
    ).markdown  # fmt: skip
    parts = re.split(r"<!-- Page (\d+) -->", markdown)
    return {
        int(number): text.strip() for number, text in zip(parts[1::2], parts[2::2], strict=True)
    }


@pytest.mark.parametrize("kind", ["docx", "pptx", "html"])
def test_a_3x3_table_comes_back_exactly_on_its_page(kind):
    filler = [docx_paragraph(f"Paragraph {n} of the first page.") for n in range(60)]
    if kind == "docx":
        data = make_docx("".join(filler) + docx_paragraph("Fleet.") + docx_table(GRID))
    elif kind == "pptx":
        data = make_pptx_with_tables([(Slide("Welcome", ["Hello."]), None), (Slide("Fleet"), GRID)])
    else:
        body = "".join(f"<p>Paragraph {n} of the first page.</p>" for n in range(60))
        data = make_html(body + "<p>Fleet.</p>" + html_table(GRID))
    pages = _pages(data, f"fleet.{kind}")
    assert len(pages) == 2
    assert EXPECTED in pages[2]
    assert "| Model" not in pages[1]


def test_a_table_over_two_pages_is_one_table_with_one_header_and_each_row_once():
    # LibreOffice repeats the header row (pandoc's w:tblHeader) on every page it breaks the
    # table over; the file holds one header, so the Markdown has one
    rows = [["Flight", "From", "To"]] + [[f"CW{n}", f"City {n}", f"Town {n}"] for n in range(90)]
    data = make_docx(docx_paragraph("Timetable.") + docx_table(rows))
    pages = _pages(data, "timetable.docx")
    assert len(pages) >= 2
    text = "\n".join(text for _, text in sorted(pages.items()))
    assert text.count("| Flight | From | To |") == 1
    assert "Flight From To" not in text.replace("|", "")  # no header row left as text either
    found = [line for line in text.split("\n") if line.startswith("| CW")]
    assert found == [f"| CW{n} | City {n} | Town {n} |" for n in range(90)]
    assert "| Flight | From | To |" in pages[1]


def test_a_cell_with_a_pipe_and_a_newline_comes_back_escaped():
    rows = [["Key", "Value"], ["a|b", "first line\nsecond line"], ["c", "d"]]
    pages = _pages(make_docx(docx_paragraph("Notes.") + docx_table(rows)), "notes.docx")
    assert (
        "| Key | Value |\n| --- | --- |\n| a\\|b | first line<br>second line |\n| c | d |"
        in (pages[1])
    )


def test_a_corpus_timetable_keeps_every_cell_with_its_key_and_header():
    from shared_paths import CLOUDWAY, require

    from drac.evaluation.fidelity import score_conversion

    stem = "Mumbai Inbound & Outbound Flights"
    source = (require(CLOUDWAY) / "md" / f"{stem}.md").read_text(encoding="utf-8")
    data = (CLOUDWAY / "docx" / f"{stem}.docx").read_bytes()
    pages = _pages(data, f"{stem}.docx")
    markdown = "\n\n".join(f"<!-- Page {n} -->\n\n{text}" for n, text in sorted(pages.items()))
    fidelity = score_conversion(source, markdown)
    assert fidelity.table_cells > 500
    assert fidelity.table_fidelity == 1.0  # 0.72 from the text layer's tables alone
    assert fidelity.word_recall > 0.999


def test_words_a_narrow_column_broke_apart_come_back_whole_as_the_file_holds_them():
    # a one-column box of branch addresses (no data table): LibreOffice breaks every word
    # wider than the column anywhere, and the text layer read "M u m ba i – M ah ar as ht ra"
    width = 500  # twentieths of a point: narrower than "Mumbai"
    rows = "".join(
        f'<w:tr><w:tc><w:tcPr><w:tcW w:w="{width}" w:type="dxa"/></w:tcPr>'
        f"{docx_paragraph(text)}</w:tc></w:tr>"
        for text in ("Andheri East branch", "Mumbai – Maharashtra", "Pune – Maharashtra")
    )
    box = (
        f'<w:tbl><w:tblPr><w:tblW w:w="{width}" w:type="dxa"/><w:tblLayout w:type="fixed"/>'
        f'</w:tblPr><w:tblGrid><w:gridCol w:w="{width}"/></w:tblGrid>{rows}</w:tbl>'
    )
    body = docx_paragraph("Our branches are open six days a week.") + box
    text = _pages(make_docx(body + docx_paragraph("Call us to book a visit.")), "branches.docx")[1]
    assert "Andheri East branch Mumbai – Maharashtra Pune – Maharashtra" in text, text
