"""A scan's elements are placed on OCR's words: the boxes sit where the page's own text
was (the page was rendered from a PDF with a text layer, the ground truth)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from click.testing import CliRunner

from drac.cli import _register_commands, cli
from drac.documents.pdf.ocr import ocr_available
from drac.documents.pdf.render import RenderOptions, render_pages
from tests.pdfs import Text, make_pdf, text_page

_register_commands()
LINES = [
    "Every Velvera device is covered for two years from the date of purchase.",
    "Repairs are free of charge when the fault is not caused by the customer.",
    "Bring the receipt and the device to an authorised service centre today.",
]


@pytest.mark.skipif(not ocr_available(), reason="the OCR engine (drac[ocr]) is not installed")
def test_a_scans_boxes_come_from_ocr_words_where_the_text_is(tmp_path: Path) -> None:
    source = make_pdf(
        [text_page([Text(line, 72, 700 - 60 * i, 12) for i, line in enumerate(LINES)])]
    )
    (image,) = render_pages(source, RenderOptions(dpi=200, max_side_px=4000))
    scan = tmp_path / "scan.png"
    scan.write_bytes(image.png)
    ws = tmp_path / "ws"
    runner = CliRunner()
    result = runner.invoke(cli, ["ingest", str(scan), "-w", str(ws), "--no-embed"])
    assert result.exit_code == 0, result.output
    normalised = next((ws / "documents").glob("*/normalised.pdf")).read_bytes()
    page = pdfium.PdfDocument(normalised)[0]
    scale = page.get_width() / 612  # the scan's page is the image at its DPI
    database = sqlite3.connect(ws / "drac.sqlite")
    rows = [json.loads(row[0]) for row in database.execute("SELECT data FROM elements")]
    database.close()
    placed = [row for row in rows if not row["text"].startswith("#")]
    assert placed and all(row["boxes"]["source"] == "ocr" for row in placed)
    boxes = [box for row in placed for entry in row["boxes"]["pages"] for box in entry["boxes"]]
    assert all(row["boxes"]["status"] == "aligned" for row in placed)
    assert len(boxes) == len(LINES)
    for box, number in zip(sorted(boxes, key=lambda b: b[1]), range(len(LINES)), strict=True):
        baseline = (792 - (700 - 60 * number)) * scale
        assert box[1] < baseline < box[3] + 2 * scale
        assert abs(box[0] - 72 * scale) < 6 * scale
    exported = [
        json.loads(line)
        for line in runner.invoke(cli, ["export", "-w", str(ws)]).output.splitlines()
    ]
    assert sorted(
        b for c in exported for e in c["boxes"] for b in map(tuple, e["boxes"])
    ) == sorted(map(tuple, boxes))
