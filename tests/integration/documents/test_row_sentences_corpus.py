"""Table rows as sentences on a real offline conversion of a corpus PDF (issue 17)."""

from __future__ import annotations

import re

import pytest
import shared_paths
from shared_paths import require

from drac.documents.convert import ConversionOptions, ConversionResult, convert_to_markdown
from drac.documents.spreadsheets import SpreadsheetOptions
from drac.models import Element, ElementKind, TableRows
from drac.parsing import parse_markdown
from drac.ports import MemoryLedger

CORPUS = require(shared_paths.CORPUS)
PDF = CORPUS / "CloudWay-24" / "pdf" / "Check Your Visa and Passport Requirements.pdf"

pytestmark = pytest.mark.skipif(not PDF.exists(), reason="corpus PDF not available")


def _convert(table_rows: TableRows) -> ConversionResult:
    return convert_to_markdown(
        PDF.read_bytes(),
        PDF.name,
        options=ConversionOptions(),
        vision=None,
        ledger=MemoryLedger(),
        document_id="d",
        spreadsheet=SpreadsheetOptions(table_rows=table_rows),
    )


def _cells(line: str) -> list[str]:
    inner = line.strip()[1:-1].replace("\\|", "\x00")
    return [cell.strip().replace("\x00", "|") for cell in inner.split("|")]


@pytest.fixture(scope="module")
def both() -> tuple[list[Element], list[Element]]:
    pipe, sentences = _convert("pipe"), _convert("sentences")
    assert pipe.status == sentences.status == "ok"
    assert re.findall(r"<!-- Page \d+ -->", pipe.markdown) == re.findall(
        r"<!-- Page \d+ -->", sentences.markdown
    )
    return parse_markdown(pipe.markdown), parse_markdown(sentences.markdown)


def test_every_cell_of_every_table_row_is_in_its_rows_sentence_beside_its_header(both):
    piped, written = both
    rows = [e for e in piped if e.kind is ElementKind.TABLE_ROW and e.table_header]
    assert len(rows) >= 15, "the PDF's tables were not found: pick another fixture"
    assert not any(e.kind is ElementKind.TABLE_ROW for e in written)
    by_page = [e for e in written if e.kind is ElementKind.PARAGRAPH]
    used: set[str] = set()
    for row in rows:
        header = _cells((row.table_header or "").split("\n")[0])
        cells = zip(header, _cells(row.text), strict=True)
        wanted = "; ".join(f"{name}: {value}" for name, value in cells if value) + "."
        matches = [e for e in by_page if e.text == wanted and e.page == row.page]
        assert matches, f"no sentence {wanted!r} on page {row.page}"
        used.add(matches[0].id)
    assert len(used) == len({(e.text, e.page) for e in rows})


def test_no_text_outside_the_tables_changes(both):
    piped, written = both
    kept = [(e.kind, e.text, e.page) for e in piped if e.kind is not ElementKind.TABLE_ROW]
    sentences = {e.text for e in written if re.match(r"^Country: ", e.text)}
    assert [(e.kind, e.text, e.page) for e in written if e.text not in sentences] == kept
