"""The offline converter on PDFs LibreOffice makes of tiny HTML (its fonts, bold and tables)."""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape

import pytest

from drac.documents.intake.normalise import libreoffice_to_pdf
from drac.documents.offline.pages import offline_markdown
from drac.evaluation.fidelity import score_conversion

pytestmark = pytest.mark.libreoffice

SOURCE = """# Service Guide

## Opening Hours

Our centres open at nine and close at six on working days, and stay closed on holidays.

- Bring the **original invoice** with you.
- Back up your data before the visit.

## Contacts

| City | Phone | Hours |
| --- | --- | --- |
| Pune | 020-1234 | 9-6 |
| Delhi | 011-5678 | 10-7 |
"""

HTML = """<html><body>
<h1>Service Guide</h1>
<h2>Opening Hours</h2>
<p>Our centres open at nine and close at six on working days, and stay closed on holidays.</p>
<ul><li>Bring the <b>original invoice</b> with you.</li><li>Back up your data before the
visit.</li></ul>
<h2>Contacts</h2>
<table border="1"><thead><tr><th>City</th><th>Phone</th><th>Hours</th></tr></thead>
<tbody><tr><td>Pune</td><td>020-1234</td><td>9-6</td></tr>
<tr><td>Delhi</td><td>011-5678</td><td>10-7</td></tr></tbody></table>
</body></html>"""


def test_headings_lists_and_a_thead_table_come_back_from_libreoffices_pdf():
    pdf = libreoffice_to_pdf(HTML.encode(), ".html", timeout_s=120)
    markdown = "\n\n".join(page.markdown for page in offline_markdown(pdf))
    score = score_conversion(SOURCE, markdown)
    assert score.unprintable == 0
    assert score.word_recall == 1.0, markdown
    assert (score.headings, score.headings_found) == (3, 3), markdown
    assert (score.list_items, score.list_items_kept) == (2, 2), markdown
    assert score.table_cells_found == score.table_cells == 4, markdown


FLIGHTS_SOURCE = """## Outbound Flights

| Flight No. | Destination City | Departure (BOM) | Arrival (Local) | Aircraft Type | Travel Time |
| --- | --- | --- | --- | --- | --- |
| CW241 | New York (JFK) | 01:10 | 07:30 | Boeing 787-9 | 15h 50m |
| CW245 | San Francisco (SFO) | 00:25 | 06:25 | Airbus A350-1000 | 16h 30m |
| CW247 | Los Angeles (LAX) | 23:50 | 05:20 | Boeing 787-10 | 16h 00m |

**Available Colors**: Cloud Gray, Midnight Ocean, Sage Green, Coral Pink, Arctic White
"""


def _flights_html() -> str:
    """The corpus' HTML shape: centred header cells over narrow columns, wrapped body cells."""
    widths = (14, 19, 16, 16, 20, 13)
    header, *rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in FLIGHTS_SOURCE.splitlines()
        if line.startswith("|") and "---" not in line
    ]
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>\n" for row in rows)
    return (
        "<html><body><h2>Outbound Flights</h2><table><colgroup>"
        + "".join(f'<col style="width: {w}%" />' for w in widths)
        + "</colgroup><thead><tr>"
        + "".join(f"<th>{cell}</th>" for cell in header)
        + f"</tr></thead><tbody>{body}</tbody></table>"
        "<p><strong>Available Colors</strong>: Cloud Gray, Midnight Ocean, Sage Green,"
        " Coral Pink, Arctic White</p></body></html>"
    )


def test_a_table_of_centred_headers_and_wrapped_cells_keeps_every_cell_in_its_column():
    pdf = libreoffice_to_pdf(_flights_html().encode(), ".html", timeout_s=120)
    markdown = "\n\n".join(page.markdown for page in offline_markdown(pdf))
    score = score_conversion(FLIGHTS_SOURCE, markdown)
    assert score.table_cells == 15
    assert score.table_cells_found == 15, markdown
    assert score.paragraphs_split == 0, markdown  # the text after the table is no row of it
    assert "| CW245 | San Francisco (SFO) | 00:25 | 06:25 | Airbus A350-1000 | 16h 30m |" in (
        markdown
    ), markdown


_DOCX_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/'
    'vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_DOCX_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
)


def _docx(blocks: list[str | list[tuple[str, ...]]], widths: tuple[int, ...]) -> bytes:
    """A DOCX of paragraphs (str) and fixed-width tables (rows of cells; widths in twips)."""

    def paragraph(text: str) -> str:
        return f'<w:p><w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'

    def table(rows: list[tuple[str, ...]]) -> str:
        grid = "".join(f'<w:gridCol w:w="{w}"/>' for w in widths)
        body = "".join(
            "<w:tr>"
            + "".join(
                f'<w:tc><w:tcPr><w:tcW w:w="{w}" w:type="dxa"/></w:tcPr>{paragraph(c)}</w:tc>'
                for c, w in zip(row, widths, strict=True)
            )
            + "</w:tr>"
            for row in rows
        )
        return (
            f'<w:tbl><w:tblPr><w:tblW w:w="{sum(widths)}" w:type="dxa"/>'
            f'<w:tblLayout w:type="fixed"/></w:tblPr><w:tblGrid>{grid}</w:tblGrid>{body}</w:tbl>'
        )

    body = "".join(paragraph(b) if isinstance(b, str) else table(b) for b in blocks)
    xml = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w='
        f'"http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}'
        "</w:body></w:document>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("[Content_Types].xml", _DOCX_TYPES)
        package.writestr("_rels/.rels", _DOCX_RELS)
        package.writestr("word/document.xml", xml)
    return out.getvalue()


def test_words_broken_at_a_narrow_columns_edge_are_whole_and_the_text_above_is_no_cell():
    rows = [
        ("Destination City", "Country", "Flight Number"),
        ("Beijing (PEK)", "China", "CW2401"),
        ("Perth (PER)", "Australia", "CW2417"),
    ]
    source = (
        "Routes of the network are listed below.\n\n"
        + "\n".join(
            "| " + " | ".join(row) + " |" + ("\n| --- | --- | --- |" if n == 0 else "")
            for n, row in enumerate(rows)
        )
        + "\n\nEvery route is flown daily.\n"
    )
    blocks: list[str | list[tuple[str, ...]]] = [
        "Routes of the network are listed below.",
        rows,
        "Every route is flown daily.",
    ]
    document = _docx(blocks, (2400, 500, 2400))  # "Country" breaks at the column's edge
    pdf = libreoffice_to_pdf(document, ".docx", timeout_s=120)
    markdown = "\n\n".join(page.markdown for page in offline_markdown(pdf))
    score = score_conversion(source, markdown)
    assert (score.table_cells_found, score.table_cells) == (4, 4), markdown
    assert "Routes of the network are listed below.\n\n| Destination City | Country |" in markdown
