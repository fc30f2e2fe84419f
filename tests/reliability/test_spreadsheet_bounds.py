"""Spreadsheets are bounded before the work (issue 16): merged ranges, cells, columns and
sheets count against limits checked before rows are generated, and reading runs contained."""

from __future__ import annotations

import pytest
from sheet_workbooks import rewritten, xlsx

from drac.documents.intake.detect import DocumentFormat
from drac.documents.spreadsheets import SpreadsheetOptions, read_spreadsheet
from drac.errors import DocumentError

_SHEET = "xl/worksheets/sheet1.xml"


def merge_bomb(ref: str) -> bytes:
    """A tiny workbook whose one sheet declares one merged range `ref`."""
    book = xlsx({"Data": [["Name", "Value"], ["x", 1]]})
    merge = b'</sheetData><mergeCells count="1"><mergeCell ref="%s"/></mergeCells>' % ref.encode()
    return rewritten(book, _SHEET, lambda part: part.replace(b"</sheetData>", merge))


def _read(data: bytes, fmt: DocumentFormat = DocumentFormat.XLSX, **options: object):
    return read_spreadsheet(data, fmt, "book.xlsx", SpreadsheetOptions(**options))


@pytest.mark.parametrize("ref", ["A2:XFD999", "A2:XFD1048575"])
def test_a_merge_bomb_fails_before_any_row_is_read(ref: str):
    data = merge_bomb(ref)
    assert len(data) < 8000
    with pytest.raises(DocumentError, match=r"merged ranges would fill more than 1,000,000"):
        _read(data)  # before: 0.13 s a row, no limit at all


def test_an_honest_merge_still_fills_its_cells():
    data = xlsx({"Data": [["Region", "Q1", "Q2"], ["North", 1, 2], [None, 3, 4]]},
                merges={"Data": ["A2:A3"]})  # fmt: skip
    markdown = _read(data).markdown
    assert markdown.count("| North |") == 2


def test_the_page_limit_counts_sheets():
    data = xlsx({f"S{index}": [["Name"], [f"row {index}"]] for index in range(4)})
    assert _read(data, max_pages=4).sheets == 4
    with pytest.raises(DocumentError, match="the workbook has 4 sheets, more than the 3 page"):
        _read(data, max_pages=3)


def test_a_csv_wider_than_a_sheet_is_named():
    """Before: more than 18,278 columns (ZZZ) surfaced as "unexpected error (...)"."""
    data = ",".join(f"c{index}" for index in range(20_000)) + "\n" + "1," * 19_999 + "1\n"
    with pytest.raises(DocumentError, match="has 20,000 columns, more than the 16,384"):
        _read(data.encode(), DocumentFormat.CSV)
