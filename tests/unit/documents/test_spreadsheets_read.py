"""Spreadsheets read as tables: generated workbooks, CSV and TSV, checked through the parser."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from sheet_workbooks import patched, sales_rows, with_cached_values, xlsx

from drac.documents.intake.detect import DocumentFormat
from drac.documents.spreadsheets import (
    SpreadsheetOptions,
    read_spreadsheet,
    stored_table_rows,
    table_rows_advice,
)
from drac.errors import DocumentError
from drac.models import Element, ElementKind, ParseConfig, Strategy
from drac.parsing import parse_markdown

LIMIT = 1200


def read(data: bytes, fmt: DocumentFormat, name: str = "book.xlsx", **options: object):
    return read_spreadsheet(data, fmt, name, SpreadsheetOptions(**options))


def elements(markdown: str, limit: int = LIMIT) -> list[Element]:
    return parse_markdown(markdown, ParseConfig(max_element_chars=limit))


def rows_of(items: list[Element]) -> list[Element]:
    return [e for e in items if e.kind is ElementKind.TABLE_ROW]


def cells(row: Element) -> list[str]:
    return [cell.strip() for cell in row.text.strip().strip("|").split(" | ")]


def test_each_sheet_gets_a_heading_and_its_own_page() -> None:
    data = xlsx(
        {"North": [["Item", "Qty"], ["bolts", 4]], "South": [["Item", "Qty"], ["nuts", 9]]},
        title="Stock 2024",
    )
    result = read(data, DocumentFormat.XLSX)
    assert result.sheets == 2 and result.rows == 2 and result.format == "xlsx"
    parsed = elements(result.markdown)
    headings = [(e.text, e.page) for e in parsed if e.is_heading]
    assert headings == [("# Stock 2024", 1), ("## North", 1), ("## South", 2)]
    [north, south] = rows_of(parsed)
    assert north.text == "| bolts | 4 |" and north.table_header == "| Item | Qty |\n|---|---|"
    assert south.page == 2 and south.ancestors == ("h1", "h3")


def test_the_file_name_is_the_title_when_the_workbook_has_none() -> None:
    result = read(xlsx({"Data": [["a", "b"], ["x", "y"]]}), DocumentFormat.XLSX, "q3 sales.xlsx")
    assert result.markdown.startswith("# q3 sales\n")


def test_hidden_and_empty_sheets_are_skipped_with_a_warning() -> None:
    data = xlsx(
        {"Visible": [["k", "v"], ["a", 1]], "Secret": [["k", "v"], ["b", 2]], "Blank": []},
        hidden=["Secret"],
    )
    result = read(data, DocumentFormat.XLSX)
    assert result.sheets == 1 and "Secret" not in result.markdown and "| b |" not in result.markdown
    assert any("'Secret' is hidden" in w for w in result.warnings)
    assert any("'Blank' is empty" in w for w in result.warnings)


def test_a_workbook_with_nothing_visible_is_a_document_error() -> None:
    data = xlsx({"Blank": [], "Secret": [["a"]]}, hidden=["Secret"])
    with pytest.raises(DocumentError, match="every sheet is empty or hidden"):
        read(data, DocumentFormat.XLSX)


def test_merged_cells_are_filled_into_every_row_and_column() -> None:
    data = xlsx(
        {
            "Plan": [
                ["Region", "Sales", None, "Owner"],
                [None, "Q1", "Q2", None],
                ["North", 10, 20, "Ana"],
                [None, 11, 21, "Ben"],
                ["South", 12, 22, "Chen"],
            ]
        },
        merges={"Plan": ["B1:C1", "A3:A4"]},
    )
    parsed = elements(read(data, DocumentFormat.XLSX).markdown)
    header = rows_of(parsed)[0].table_header or ""
    assert header.startswith("| Region | Sales | Sales | Owner |")
    assert [cells(row)[0] for row in rows_of(parsed)] == ["", "North", "North", "South"]


def test_formulas_show_their_cached_values_in_the_cell_format() -> None:
    data = xlsx(
        {"Sheet": [["Units", "Price", "Total"], [1200, 2.5, "=A2*B2"]]},
        formats={"Sheet": {"C2": "#,##0.00"}},
    )
    data = with_cached_values(data, "xl/worksheets/sheet1.xml", {"C2": "3000"})
    [row] = rows_of(elements(read(data, DocumentFormat.XLSX).markdown))
    assert row.text == "| 1200 | 2.5 | 3,000.00 |"


def test_numbers_and_dates_read_as_the_sheet_shows_them() -> None:
    data = xlsx(
        {
            "Sheet": [
                ["Day", "Revenue", "Margin", "Shipped"],
                [date(2024, 1, 15), 1234567.891, 0.125, datetime(2024, 2, 3, 14, 5)],
            ]
        },
        formats={
            "Sheet": {"A2": "d-mmm-yy", "B2": "#,##0.00", "C2": "0.0%", "D2": "m/d/yyyy h:mm"}
        },
    )
    [row] = rows_of(elements(read(data, DocumentFormat.XLSX).markdown))
    assert cells(row) == ["15-Jan-24", "1,234,567.89", "12.5%", "2/3/2024 14:05"]


def test_empty_rows_and_columns_are_dropped() -> None:
    data = xlsx({"S": [[], ["Name", None, "Age"], [], [None, None, None], ["Ana", None, 31]]})
    markdown = read(data, DocumentFormat.XLSX).markdown
    assert "| Name | Age |\n|---|---|\n| Ana | 31 |" in markdown


def test_a_sheet_without_a_header_row_says_so_and_names_columns_by_letter() -> None:
    data = xlsx({"Log": [[None, 101, "boot", 3.5], [None, 102, "halt", 1.25]]})
    parsed = elements(read(data, DocumentFormat.XLSX).markdown)
    assert any("no header row" in e.text for e in parsed if e.kind is ElementKind.PARAGRAPH)
    rows = rows_of(parsed)
    assert [r.text for r in rows] == ["| 101 | boot | 3.5 |", "| 102 | halt | 1.25 |"]
    assert rows[0].table_header == "| B | C | D |\n|---|---|---|"


def test_year_columns_still_make_a_header() -> None:
    data = xlsx({"S": [["Region", 2023, 2024], ["North", 5, 7]]})
    [row] = rows_of(elements(read(data, DocumentFormat.XLSX).markdown))
    assert row.table_header == "| Region | 2023 | 2024 |\n|---|---|---|"


def test_a_title_line_above_the_table_is_a_caption_not_the_header() -> None:
    data = xlsx(
        {"S": [["Quarterly sales 2024"], ["Region", "Units", "Price"], ["North", 5, 2]]},
        merges={"S": ["A1:C1"]},
    )
    parsed = elements(read(data, DocumentFormat.XLSX).markdown)
    assert parsed[2].text == "Quarterly sales 2024"
    [row] = rows_of(parsed)
    assert row.table_header == "| Region | Units | Price |\n|---|---|---|"


def test_pipes_newlines_and_backslashes_inside_cells_keep_a_row_one_table_row() -> None:
    tricky = ["a | b", "line one\nline two", "C:\\dir\\|x", "<!-- Page 9 -->", "ends with \\"]
    data = xlsx({"S": [["k", "p", "n", "b", "c", "e"], ["row1", *tricky]]})
    parsed = elements(read(data, DocumentFormat.XLSX).markdown)
    [row] = rows_of(parsed)
    assert row.page == 1  # a page marker inside a cell is not one
    assert row.text == (
        "| row1 | a \\| b | line one<br>line two | C:\\dir\\\\\\|x | &lt;!-- Page 9 --> "
        "| ends with \\ |"
    )
    assert len(_split_cells(row.text)) == 6


def _split_cells(line: str) -> list[str]:
    """Cells as mistune's table plugin splits them (a pipe after an odd run of \\ is text)."""
    body, found, start, i = line.strip()[1:-1], [], 0, 0
    while i < len(body):
        if body[i] == "|":
            slashes = len(body[:i]) - len(body[:i].rstrip("\\"))
            if slashes % 2 == 0:
                found.append(body[start:i])
                start = i + 1
        i += 1
    return [*found, body[start:]]


def test_wide_rows_are_split_by_column_groups_repeating_the_key_column() -> None:
    header = ["Employee ID"] + [f"Quarterly assessment criterion number {i}" for i in range(60)]
    rows = [header] + [[f"E{n:04d}"] + [f"score {n}-{i}" for i in range(60)] for n in range(3)]
    result = read(xlsx({"Wide": rows}), DocumentFormat.XLSX, max_element_chars=LIMIT)
    assert any("split by column groups" in w for w in result.warnings)
    parsed = elements(result.markdown)
    parts = rows_of(parsed)
    assert len(parts) > 3
    for part in parts:
        assert "." not in part.id  # never cut by the parser
        assert part.table_header and part.table_header.startswith("| Employee ID |")
        assert len(part.table_header) + 1 + len(part.text) <= LIMIT
    for n in range(3):
        mine = [p for p in parts if cells(p)[0] == f"E{n:04d}"]
        shown = [cell for p in mine for cell in cells(p)[1:]]
        assert shown == [f"score {n}-{i}" for i in range(60)]  # every cell once, in order


def test_a_cell_too_long_for_any_table_row_becomes_sentences_repeating_the_key() -> None:
    essay = " ".join(f"word{i}" for i in range(700))
    data = xlsx({"S": [["Key", "Note", "Size"], ["k1", essay, 3]]})
    parsed = elements(read(data, DocumentFormat.XLSX).markdown, LIMIT)
    assert all(len(e.text) + len(e.table_header or "") + 1 <= LIMIT for e in parsed)
    pieces = [e.text for e in parsed if e.kind is ElementKind.PARAGRAPH]
    assert len(pieces) > 1 and all("." not in e.id for e in parsed)
    assert all(p.startswith("Key: k1; Note: word") and p.endswith(".") for p in pieces)
    assert " ".join(p.removeprefix("Key: k1; Note: ")[:-1] for p in pieces) == essay
    assert any(cells(row) == ["k1", "3"] for row in rows_of(parsed))


def test_sentences_write_each_row_as_one_paragraph_verbatim_to_the_cells() -> None:
    rows = sales_rows(5)
    result = read(xlsx({"Sales": rows}), DocumentFormat.XLSX, table_rows="sentences")
    paragraphs = [e for e in elements(result.markdown) if e.kind is ElementKind.PARAGRAPH]
    assert len(paragraphs) == 5 and not rows_of(elements(result.markdown))
    first = rows[1]
    assert paragraphs[0].text.startswith(
        f"Region: {first[0]}; Product: Widget-0; Quarter: Q1; Units: {first[3]}; "
    )
    for paragraph, row in zip(paragraphs, rows[1:], strict=True):
        for name, value in zip(rows[0], row, strict=True):
            if value not in (0, ""):
                assert f"{name}: {value}" in paragraph.text


def test_a_wide_row_as_sentences_is_split_into_sentences_repeating_the_key() -> None:
    header = ["ID"] + [f"Measurement {i}" for i in range(120)]
    data = xlsx({"S": [header, ["X1"] + [f"value-{i}" for i in range(120)]]})
    result = read(data, DocumentFormat.XLSX, table_rows="sentences", max_element_chars=400)
    paragraphs = [e for e in elements(result.markdown, 400) if e.kind is ElementKind.PARAGRAPH]
    assert len(paragraphs) > 2
    assert all(p.text.startswith("ID: X1; Measurement") and len(p.text) <= 400 for p in paragraphs)


def test_a_csv_with_semicolons_and_a_quoted_newline() -> None:
    data = b'Name;City;Comment\nAna;Lisboa;"first line\nsecond line"\nBen;Porto;ok\n'
    result = read(data, DocumentFormat.CSV, "people.csv")
    assert result.format == "csv" and result.sheets == 1
    parsed = elements(result.markdown)
    assert parsed[0].text == "# people"
    assert [r.text for r in rows_of(parsed)] == [
        "| Ana | Lisboa | first line<br>second line |",
        "| Ben | Porto | ok |",
    ]


def test_a_tsv_keeps_commas_inside_cells() -> None:
    data = b"Part\tDescription\tPrice\nP-1\tbolt, steel\t1,20\nP-2\tnut\t0,40\n"
    rows = rows_of(elements(read(data, DocumentFormat.TSV, "parts.tsv").markdown))
    assert [r.text for r in rows] == ["| P-1 | bolt, steel | 1,20 |", "| P-2 | nut | 0,40 |"]


def test_a_csv_with_a_bom_and_crlf_and_a_single_column() -> None:
    data = b"\xef\xbb\xbfName\r\nAna\r\nBen\r\n"
    rows = rows_of(elements(read(data, DocumentFormat.CSV, "names.csv").markdown))
    assert [r.text for r in rows] == ["| Ana |", "| Ben |"]
    assert rows[0].table_header == "| Name |\n|---|"


def test_a_csv_that_is_not_utf8_is_refused_as_text_is() -> None:
    with pytest.raises(DocumentError, match="not valid UTF-8"):
        read("Stadt,Preis\nMünchen,3\n".encode("latin-1"), DocumentFormat.CSV, "x.csv")


def test_a_non_spreadsheet_format_is_refused() -> None:
    with pytest.raises(DocumentError, match="not a spreadsheet"):
        read(b"# hi\n", DocumentFormat.MARKDOWN, "x.md")


def test_the_same_bytes_give_the_same_markdown() -> None:
    data = xlsx({"Sales": sales_rows(30)})
    assert read(data, DocumentFormat.XLSX).markdown == read(data, DocumentFormat.XLSX).markdown


def test_stored_rows_tell_how_a_spreadsheet_was_read_and_a_replan_says_to_reingest() -> None:
    data = xlsx({"Sales": sales_rows(3)})
    piped = elements(read(data, DocumentFormat.XLSX).markdown)
    sentences = elements(read(data, DocumentFormat.XLSX, table_rows="sentences").markdown)
    assert stored_table_rows(piped) == "pipe" and stored_table_rows(sentences) == "sentences"
    assert table_rows_advice("xlsx", piped, Strategy()) is None
    advice = table_rows_advice("xlsx", piped, Strategy(table_rows="sentences"))
    assert advice and "--force" in advice and "--table-rows sentences" in advice
    assert table_rows_advice("markdown", piped, Strategy(table_rows="sentences")) is None


def test_a_damaged_workbook_is_a_document_error() -> None:
    data = xlsx({"S": [["a", "b"], ["x", "y"]]})
    broken = patched(data, "xl/worksheets/sheet1.xml", b"<sheetData>", b"<sheetData><row><c r=")
    with pytest.raises(DocumentError, match="sheet 'S' is damaged"):
        read(broken, DocumentFormat.XLSX)
    # the container is checked (bombs, damage) before openpyxl opens it
    with pytest.raises(DocumentError, match="corrupt ZIP container"):
        read(b"PK\x03\x04 not a zip at all", DocumentFormat.XLSX)


@pytest.mark.parametrize("caption", ["# Totals", "```", "---", "<div>"])
def test_a_caption_or_header_starting_like_markdown_syntax_stays_a_paragraph(caption: str):
    data = xlsx({"S": [[caption], ["# of units", "Item", "Price"], [5, "bolt", 2]]})
    plain = elements(read(data, DocumentFormat.XLSX).markdown)
    assert [e.level for e in plain if e.is_heading] == [1, 2]
    assert plain[2].kind is ElementKind.PARAGRAPH and plain[2].text == "\\" + caption
    prose = elements(read(data, DocumentFormat.XLSX, table_rows="sentences").markdown)
    assert [e.level for e in prose if e.is_heading] == [1, 2]
    assert prose[-1].text == "\\# of units: 5; Item: bolt; Price: 2."


def test_a_workbook_carrying_a_decompression_bomb_is_refused_before_it_is_opened() -> None:
    import io
    import zipfile

    honest = xlsx({"S": [["a", "b"], ["x", "y"]]})
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(honest)) as source, zipfile.ZipFile(
        out, "w", zipfile.ZIP_DEFLATED
    ) as bomb:
        for item in source.infolist():
            bomb.writestr(item, source.read(item))
        bomb.writestr("xl/media/pad.bin", bytes(64 * 1024 * 1024))  # ~1,000:1
    with pytest.raises(DocumentError, match=r"pad\.bin.*decompression bomb"):
        read(out.getvalue(), DocumentFormat.XLSX)
    assert "| x | y |" in read(honest, DocumentFormat.XLSX).markdown
