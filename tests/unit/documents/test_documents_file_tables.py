"""Tables read from a DOCX, PPTX or HTML file's own structure, and put on their pages."""

from __future__ import annotations

import io
import zipfile

import pytest
from file_table_fixtures import (
    docx_paragraph,
    docx_table,
    html_table,
    make_docx,
    make_html,
    make_pptx_with_tables,
)

from drac.documents.intake.detect import DocumentFormat
from drac.documents.office.file_tables import FileTable, read_file_tables, tables_here
from drac.documents.office.table_pages import place_tables, table_markdown
from tests.decks import Slide

GRID = [["Model", "Range", "Price"], ["A350", "15,000 km", "$317M"], ["A380", "14,800 km", "$445M"]]
EXPECTED = (
    "| Model | Range | Price |\n| --- | --- | --- |\n"
    "| A350 | 15,000 km | $317M |\n| A380 | 14,800 km | $445M |"
)


def test_a_3x3_table_with_a_header_is_read_from_each_format():
    docx = make_docx(docx_paragraph("Fleet") + docx_table(GRID))
    pptx = make_pptx_with_tables([(Slide("Intro"), None), (Slide("Fleet"), GRID)])
    html = make_html("<h1>Fleet</h1>" + html_table(GRID))
    want = FileTable(header=tuple(GRID[0]), rows=tuple(tuple(row) for row in GRID[1:]))
    assert tables_here(docx, "docx") == [want]
    assert tables_here(html, "html") == [want]
    assert tables_here(pptx, "pptx") == [want.model_copy(update={"slide": 2})]
    assert table_markdown(want.header, want.rows) == EXPECTED


def test_merged_cells_keep_their_text_in_the_first_column_and_in_every_row():
    html = make_html(
        "<table><tr><th>Class</th><th colspan='2'>Fare</th></tr>"
        "<tr><td rowspan='2'>Economy</td><td>Saver</td><td>100</td></tr>"
        "<tr><td>Flex</td><td>150</td></tr></table>"
    )
    (table,) = tables_here(html, "html")
    assert table.header == ("Class", "Fare", "")
    assert table.rows == (("Economy", "Saver", "100"), ("Economy", "Flex", "150"))
    merged = docx_table([["Class", "Fare"], ["Economy", "100"], ["", "150"]]).replace(
        '<w:tr><w:tc><w:tcPr/><w:p><w:r><w:t xml:space="preserve"></w:t></w:r></w:p>',
        "<w:tr><w:tc><w:tcPr><w:vMerge/></w:tcPr><w:p/>",
    )
    (table,) = tables_here(make_docx(merged), "docx")
    assert table.rows == (("Economy", "100"), ("Economy", "150"))


def test_layout_tables_and_one_column_tables_are_left_to_the_text_layer():
    inner = html_table(GRID)
    outer = f"<table><tr><td>Menu</td><td>{inner}</td></tr><tr><td>a</td><td>b</td></tr></table>"
    assert tables_here(make_html(outer), "html") == tables_here(make_html(inner), "html")
    single = make_html("<table><tr><th>Only</th></tr><tr><td>one</td></tr></table>")
    assert tables_here(single, "html") == []
    prose = " ".join(["word"] * 100)
    assert tables_here(make_html(html_table([["A", "B"], [prose, "x"]])), "html") == []


def test_a_cell_with_a_pipe_and_a_newline_is_escaped():
    rows = [["Key", "Value"], ["a|b", "first line\nsecond line"], ["c", "d"]]
    (table,) = tables_here(make_docx(docx_table(rows)), "docx")
    assert table.rows[0] == ("a|b", "first line\nsecond line")
    text = table_markdown(table.header, table.rows)
    assert "| a\\|b | first line<br>second line |" in text.split("\n")
    (from_html,) = tables_here(make_html(html_table(rows)), "html")
    assert from_html == table
    marker = table_markdown(("Key", "Value"), [("x", "<!-- Page 9 -->")])
    assert "<!--" not in marker  # a cell cannot fake a page marker


def test_the_text_layers_table_on_its_page_is_replaced_and_nothing_else():
    pages = [
        "<!-- Page 1 -->\n\n# Fleet\n\nOur aircraft.",
        "<!-- Page 2 -->\n\nThe long-haul fleet:\n\n| Model Range | Price |\n| --- | --- |\n"
        "| A350 15,000 km | $317M |\n\nA380 14,800 km $445M\n\nAfter the table.",
    ]
    table = FileTable(header=tuple(GRID[0]), rows=tuple(tuple(row) for row in GRID[1:]))
    out = place_tables(pages, [table])
    assert out[0] == pages[0]
    assert out[1] == f"<!-- Page 2 -->\n\nThe long-haul fleet:\n\n{EXPECTED}\n\nAfter the table."


def test_a_table_over_two_pages_is_one_table_with_one_header_on_its_first_page():
    # LibreOffice repeats the header row on the second page; the file holds it once
    rows = [["Flight", "From"]] + [[f"CW{n}", f"City {n}"] for n in range(1, 7)]
    table = FileTable(header=tuple(rows[0]), rows=tuple(tuple(row) for row in rows[1:]))
    first = "\n".join(f"CW{n} City {n}" for n in range(1, 5))
    pages = [
        f"<!-- Page 1 -->\n\nIntro.\n\nFlight From\n\n{first}",
        "<!-- Page 2 -->\n\n| Flight | From |\n| --- | --- |\n| CW5 | City 5 |\n"
        "| CW6 | City 6 |\n\nThe end.",
    ]
    out = place_tables(pages, [table])
    assert out[0] == "<!-- Page 1 -->\n\nIntro.\n\n" + table_markdown(rows[0], rows[1:])
    assert out[1] == "<!-- Page 2 -->\n\nThe end."
    assert "\n".join(out).count("| Flight | From |") == 1


def test_a_header_row_the_file_itself_repeats_stays_a_row():
    rows = [["Flight", "From"], ["CW1", "City 1"], ["Flight", "From"], ["CW2", "City 2"]]
    table = FileTable(header=tuple(rows[0]), rows=tuple(tuple(row) for row in rows[1:]))
    pages = [
        "<!-- Page 1 -->\n\nFlight From\n\nCW1 City 1",
        "<!-- Page 2 -->\n\nFlight From\n\nCW2 City 2\n\nThe end.",
    ]
    out = place_tables(pages, [table])
    assert out == [
        "<!-- Page 1 -->\n\n" + table_markdown(rows[0], rows[1:]),
        "<!-- Page 2 -->\n\nThe end.",
    ]


def test_a_table_whose_text_is_not_on_the_pages_leaves_them_as_they_are():
    table = FileTable(header=tuple(GRID[0]), rows=tuple(tuple(row) for row in GRID[1:]))
    pages = [
        "<!-- Page 1 -->\n\nModel Range Price are discussed here, with the A350 first.",
        "<!-- Page 2 -->\n\n| Model | Range |\n| --- | --- |\n| A350 | 15,000 km |",
    ]
    # page 1: a sentence holding the header's words; page 2: a third of the table only
    assert place_tables(pages, [table]) == pages


def test_a_caption_run_into_the_header_stays_as_text_above_the_table():
    table = FileTable(header=tuple(GRID[0]), rows=tuple(tuple(row) for row in GRID[1:]))
    pages = [
        "<!-- Page 1 -->\n\n| 1. Fleet Model | Range | Price |\n| --- | --- | --- |\n"
        "| A350 | 15,000 km | $317M |\n| A380 | 14,800 km | $445M |"
    ]
    assert place_tables(pages, [table]) == [f"<!-- Page 1 -->\n\n1. Fleet\n\n{EXPECTED}"]


def test_a_slides_table_is_looked_for_on_its_own_page_only():
    table = FileTable(header=tuple(GRID[0]), rows=tuple(tuple(row) for row in GRID[1:]), slide=2)
    text = "Model Range Price\n\nA350 15,000 km $317M\n\nA380 14,800 km $445M"
    pages = [f"<!-- Page 1 -->\n\n{text}", "<!-- Page 2 -->\n\nNo table here."]
    assert place_tables(pages, [table], slide_pages=True) == pages
    assert place_tables(pages, [table])[0] == f"<!-- Page 1 -->\n\n{EXPECTED}"


@pytest.mark.slow
def test_a_huge_row_count_or_deep_nesting_falls_back_within_the_limits():
    many = [["Key", "Value"]] + [[str(n), "x"] for n in range(6000)]
    tables, warnings = read_file_tables(make_docx(docx_table(many)), DocumentFormat.DOCX)
    assert (tables, warnings) == ([], [])  # past the row cap: the text layer's table stays
    nested = make_html("<table><tr><td>" * 50_000 + "deep" + "</td></tr></table>" * 50_000)
    tables, warnings = read_file_tables(nested, DocumentFormat.HTML)
    assert tables == [] and warnings == []
    deep = make_docx("<w:tbl><w:tr><w:tc>" * 200_000 + "</w:tc></w:tr></w:tbl>" * 200_000)
    tables, warnings = read_file_tables(deep, DocumentFormat.DOCX)
    assert tables == []  # the worker refuses or crashes alone; the call returns cleanly
    assert all("could not be read" in warning for warning in warnings)


def test_a_part_declaring_entities_or_a_zip_bomb_gives_no_tables():
    entity = (
        '<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY e "Model">]>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        "<w:body>" + docx_table([["&e;", "B"], ["1", "2"]]) + "</w:body></w:document>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", entity)
    assert tables_here(buffer.getvalue(), "docx") == []
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b" " * (40 * 1024 * 1024))
    assert len(bomb.getvalue()) < 1024 * 1024
    assert tables_here(bomb.getvalue(), "docx") == []
    assert tables_here(b"not a zip", "pptx") == []


@pytest.mark.slow
def test_a_file_past_the_workers_limits_keeps_the_text_layers_tables_with_a_warning(
    monkeypatch,
):
    from drac.documents.office import file_tables
    from drac.documents.sandbox.containment import GIB, Limits

    tight = Limits(memory_bytes=1 * GIB, cpu_s=0.3, step_cpu_s=0.3, wall_s=30.0,
                   preload=("drac.documents.office.file_tables",))  # fmt: skip
    monkeypatch.setattr(file_tables, "FILE_TABLE_LIMITS", tight)
    rows = "".join(f"<tr><td>{n}</td><td>x</td></tr>" for n in range(4000))
    html = make_html(f"<table><tr><th>Key</th><th>Value</th></tr>{rows}</table>" * 40)
    tables, warnings = read_file_tables(html, DocumentFormat.HTML)
    assert tables == []
    assert len(warnings) == 1 and "CPU" in warnings[0] and "text layer" in warnings[0]


def test_a_header_line_taken_for_a_heading_is_replaced_but_a_heading_after_the_table_stays():
    rows = (("Pencil Pro", "$109"), ("Pad Pro Max", "$399"), ("Stand", "$72"))
    table = FileTable(header=("Product", "Price (USD)"), rows=rows)
    pages = [
        "<!-- Page 1 -->\n\n**Product Price**\n\n#### (USD)\n\nPencil Pro $109\n\n"
        "Pad Pro Max $399\n\n### Stand\n\nOur stands."
    ]
    # the third row is not on the page (the text layer lost it): the heading holding its
    # word stays a heading, and the table holds the rows the page shows
    want = table_markdown(table.header, rows[:2])
    assert place_tables(pages, [table]) == [
        f"<!-- Page 1 -->\n\n{want}\n\n### Stand\n\nOur stands."
    ]


def test_a_table_whose_words_a_narrow_column_broke_anywhere_is_still_found_and_placed():
    """LibreOffice's PDF of a wide DOCX table (store_locations): "S t o r e I D", "Be ng alu ru",
    cells of two rows run together; the file's table replaces all of it, no word is lost."""
    rows = [
        ["Store ID", "City", "Phone"],
        ["VL-001", "Bengaluru", "080-46620013"],
        ["VL-002", "Mumbai", "022-35012142"],
        ["VL-003", "Hyderabad", "040-78932216"],
    ]
    table = FileTable(header=tuple(rows[0]), rows=tuple(tuple(row) for row in rows[1:]))
    broken = (
        "S t o r e I D Ci ty Pho ne\n\nV L - 0 0 1 Be ng alu ru 080 - 466 200 13\n\n"
        "V L - Mum bai 022 - 002 350 121 42\n\nV L - 0 0 3 Hy de ra bad 040 - 789 322 16"
    )
    pages = [f"<!-- Page 1 -->\n\nOur stores:\n\n{broken}\n\nVisit us."]
    out = place_tables(pages, [table])
    assert out == [
        f"<!-- Page 1 -->\n\nOur stores:\n\n{table_markdown(rows[0], rows[1:])}\n\nVisit us."
    ]


def test_pieces_of_a_word_are_joined_whole_even_where_a_piece_is_a_table_word_too():
    # awards_and_recognition.docx: LibreOffice breaks "Country" in a narrow column into
    # "Co unt ry", and "Co" is a word of the table ("Red Dot GmbH & Co. KG")
    header, row = (
        ("Award", "Organization", "Country"),
        ("Red Dot", "Red Dot GmbH & Co. KG", "Germany"),
    )
    table = FileTable(header=header, rows=(row,))
    pages = [
        "<!-- Page 1 -->\n\nAward Organizat ion Co unt ry\n\n"
        "Red Dot Red Dot GmbH & Co. KG Ge rm an y"
    ]
    assert place_tables(pages, [table]) == ["<!-- Page 1 -->\n\n" + table_markdown(header, [row])]


def test_a_header_whose_first_word_is_broken_into_letters_is_found():
    # store_locations.docx: "Store ID" in a narrow column reads "S t o r e I D"
    header, row = ("Store ID", "Store Name"), ("VL-001", "Velvera Experience Center")
    table = FileTable(header=header, rows=(row,))
    pages = [
        "<!-- Page 1 -->\n\nS t o r e I D Store Name\n\nV L - 0 0 1 Velvera Experie nce Center"
    ]
    assert place_tables(pages, [table]) == ["<!-- Page 1 -->\n\n" + table_markdown(header, [row])]


def test_a_number_broken_into_pieces_and_over_a_line_end_is_one_piece():
    # store_locations.docx: "0261-4021711" reads "02 61 40 21 71", its "1" on the next line
    header = ("Center", "Contact Number", "Lead")
    row = ("Velocity Mobile Care", "0261-4021711", "Keval Dholakia")
    table = FileTable(header=header, rows=(row,))
    pages = [
        "<!-- Page 1 -->\n\nCenter Contact Number Lead\n\n"
        "Velocity Mobile Care 02 61 40 21 71\n\n1 Keval Dholakia"
    ]
    assert place_tables(pages, [table]) == ["<!-- Page 1 -->\n\n" + table_markdown(header, [row])]


def test_a_table_whose_last_columns_the_page_cut_off_is_placed_whole():
    # store_locations.html: LibreOffice shows 8 of the service centers' 11 columns
    header = ("Center", "City", "Phone", "Email", "Facility Type", "Walk-in Wait")
    rows = tuple(
        (f"Center {n}", city, f"0261-40217{n}", f"c{n}@velvera.com", "Premium", f"{n}5 min")
        for n, city in enumerate(["Pune", "Surat", "Kochi", "Noida"], start=1)
    )
    table = FileTable(header=header, rows=rows)
    shown = "\n\n".join(f"{row[0]} {row[1]} {row[2]}" for row in rows)
    pages = [f"<!-- Page 1 -->\n\nCenter City Phone\n\n{shown}\n\nAfter the table."]
    expected = table_markdown(header, rows)
    assert place_tables(pages, [table]) == [f"<!-- Page 1 -->\n\n{expected}\n\nAfter the table."]
    # more than half of the columns missing is not a clipped table: the text layer's stays
    two = "\n\n".join(f"{row[0]} {row[1]}" for row in rows)
    narrow = [f"<!-- Page 1 -->\n\nCenter City\n\n{two}"]
    assert place_tables(narrow, [table]) == narrow
