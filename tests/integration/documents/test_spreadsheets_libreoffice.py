"""ODS and XLS read through the real headless LibreOffice (to XLSX first), like XLSX."""

from __future__ import annotations

from datetime import date

import pytest
from sheet_workbooks import sales_rows, xlsx

from drac.documents.convert import ConversionOptions, convert_to_markdown
from drac.documents.intake.detect import DocumentFormat, detect_format
from drac.documents.intake.normalise import libreoffice_convert, normalise_to_pdf
from drac.documents.offline.pages import offline_markdown
from drac.documents.spreadsheets import SpreadsheetOptions, read_spreadsheet
from drac.models import ElementKind
from drac.parsing import parse_markdown
from drac.ports import MemoryLedger

pytestmark = pytest.mark.libreoffice


@pytest.fixture(scope="module")
def workbook() -> bytes:
    """Several sheets, a merged range, a formula, dates, a hidden and an empty sheet."""
    return xlsx(
        {
            "Sales": sales_rows(12),
            "Budget": [
                ["Team", "Plan", None, "Total"],
                [None, "H1", "H2", None],
                ["Ops", 1200, 1300, "=B3+C3"],
                ["IT", 800, 900, "=B4+C4"],
            ],
            "Dates": [["Event", "Day"], ["launch", date(2024, 1, 15)]],
            "Scratch": [["internal", "only"]],
            "Empty": [],
        },
        hidden=["Scratch"],
        merges={"Budget": ["B1:C1"]},
        formats={"Budget": {"D3": "#,##0", "D4": "#,##0"}, "Dates": {"B2": "yyyy-mm-dd"}},
        title="Plans",
    )


@pytest.mark.parametrize(
    ("target", "fmt"), [("ods", DocumentFormat.ODS), ("xls", DocumentFormat.XLS)]
)
def test_ods_and_xls_read_as_tables(workbook: bytes, target: str, fmt: DocumentFormat) -> None:
    data = libreoffice_convert(workbook, ".xlsx", target, timeout_s=120)
    assert detect_format(data, f"plans.{target}").format is fmt
    result = read_spreadsheet(data, fmt, f"plans.{target}", SpreadsheetOptions())
    assert result.format == target and result.sheets == 3
    assert any("'Scratch' is hidden" in w for w in result.warnings)
    elements = parse_markdown(result.markdown)
    headings = [e.text for e in elements if e.is_heading]
    assert headings[1:] == ["## Sales", "## Budget", "## Dates"]
    rows = {e.text for e in elements if e.kind is ElementKind.TABLE_ROW}
    assert "| Ops | 1200 | 1300 | 2,500 |" in rows  # the formula's value, LibreOffice computed
    assert "| launch | 2024-01-15 |" in rows
    budget = next(e for e in elements if e.text.startswith("| Ops |"))
    assert budget.table_header == "| Team | Plan | Plan | Total |\n|---|---|---|---|"
    sales = [e for e in elements if e.kind is ElementKind.TABLE_ROW and e.page == 1]
    assert len(sales) == 12 and all(e.text.count(" | ") == 15 for e in sales)


def test_an_ods_converts_without_rendering_one_page_per_sheet(workbook: bytes) -> None:
    data = libreoffice_convert(workbook, ".xlsx", "ods", timeout_s=120)
    result = convert_to_markdown(
        data, "plans.ods", options=ConversionOptions(), vision=None, ledger=MemoryLedger(),
        document_id="d1",
    )  # fmt: skip
    assert (result.format, result.pages, result.status, result.model) == ("ods", 3, "ok", "none")
    assert "<!-- Page 3 -->\n\n## Dates" in result.markdown


def test_a_semicolon_csv_still_renders_to_pages_with_its_own_delimiter() -> None:
    """`drac render` (and any caller of normalise_to_pdf) still gets pages for a CSV."""
    data = b"Name;City\nAna;Lisboa\nBen;Porto\n"
    pdf = normalise_to_pdf(data, DocumentFormat.CSV, timeout_s=120)
    [page] = offline_markdown(pdf)
    assert "Lisboa" in page.markdown and "Ana;Lisboa" not in page.markdown
